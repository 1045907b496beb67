/* agentmeterd: the resident meter. Discovers every harness root, watches
 * them with inotify, tail-reads grown files into the LMDB ledger, answers
 * the control socket, and tells systemd how it is doing. `--once` ingests
 * everything once and exits. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "budget-conf.h"
#include "budget/budget.h"
#include "ingest/cache-shed.h"
#include "control.h"
#include "daemon.h"
#include "ingest/ingest.h"
#include "ledger/ledger.h"
#include "log.h"
#include "metrics.h"
#include "once.h"
#include "options.h"
#include "paths.h"
#include "ingest/pipeline.h"
#include "prices.h"
#include "registry.h"
#include "report/report.h"
#include "statelock.h"
#include "status.h"
#include "team-push/team.h"
#include "timefmt.h"
#include "watch/watch.h"

/* The Prometheus textfile: --metrics-file, else $AGENTMETER_METRICS_FILE
 * (what `agentmeterctl install --metrics-dir` records), else in the state
 * directory; "" means none. */
static int setup_metrics(struct daemon *d, const struct options *o)
{
        const char *file = o->metrics_file ? o->metrics_file : getenv("AGENTMETER_METRICS_FILE");
        const char *user = o->metrics_user ? o->metrics_user : getenv("AGENTMETER_METRICS_USER");
        char def[PATH_MAX + 16];
        int r;

        if (!file) {
                snprintf(def, sizeof(def), "%s/metrics.prom", d->state_dir);
                file = def;
        }
        struct metrics_config mc = { .path = file, .user = user, .start_ms = d->start_ms,
                                     .report_cache = d->report_cache };
        r = metrics_new(d->event, d->ingest, &mc, &d->metrics);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot set up the metrics");
        if (*file)
                log_info("metrics: %s", file);
        return 0;
}

static int setup_live(struct daemon *d)
{
        struct watch_callbacks wcb = pipeline_watch_callbacks(d);
        struct control_handlers ch = { .handle = commands_handle, .stream = commands_stream,
                                       .u = &d->commands };
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot create the event loop");
        r = sd_event_set_watchdog(d->event, true);
        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot set up the watchdog, going on without");

        r = paths_socket_dir_prepare(d->socket_path);
        if (r == -EPERM) {
                log_error("the directory of %s is not a private directory of ours (mode 0700, owned "
                          "by uid %u); not listening there", d->socket_path, (unsigned)getuid());
                return r;
        }
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot create the directory of %s", d->socket_path);
        r = control_new(d->event, d->socket_path, &ch, &d->control);
        if (r == -EADDRINUSE) {
                log_error("another agentmeterd is already answering on %s; not starting a second one",
                          d->socket_path);
                return r;
        }
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot listen on %s", d->socket_path);

        r = watch_new(d->event, &wcb, &d->watch);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot initialise inotify");
        r = pipeline_add_sources(d);
        if (r < 0)
                return r;

        char budgets[PATH_MAX];
        if (budget_conf_path(budgets, sizeof(budgets)) < 0 ||
            budget_new(d->event, d->ledger, budgets, &d->budget) < 0)
                log_warning("cannot set up budgets; going on without");
        d->report_cache = report_cache_new(); /* NULL: reports read every rollup */
        if (!d->report_cache)
                log_warning("cannot set up the report cache; going on without");
        d->commands = (struct command_env){
                .ledger = d->ledger, .ingest = d->ingest, .watch = d->watch,
                .state_dir = d->state_dir, .socket_path = d->socket_path, .start_ms = d->start_ms,
                .initial_scan_done = &d->initial_scan_done,
                .warnings = (const char *const *)d->warnings, .rescan = pipeline_rescan, .u = d,
                .budget = d->budget, .prices = d->prices,
                .statusline = &d->statusline, /* .metrics once it exists (main) */
                .report_cache = d->report_cache, .team = d->team,
        };
        team_start(d->team, d->event); /* pushes only with a team.conf */
        /* discovery and watches first, then READY; reading continues after */
        r = pipeline_start(d);
        if (r < 0)
                return r;
        log_info("agentmeterd %s ready: ledger %s, socket %s, %zu directories watched", AM_VERSION,
                 ledger_path(d->ledger), d->socket_path, watch_count(d->watch));
        return 0;
}

/* The read pool for scans: one worker per online CPU but one, the main
 * thread's (it commits, and reads jobs itself while it has nothing to
 * commit), none on a single CPU; failing to start one is no error. */
static void setup_read_threads(struct daemon *d, int threads)
{
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned n = threads >= 0 ? (unsigned)threads : cpus > 1 ? (unsigned)(cpus <= 16 ? cpus - 1 : 15) : 0;
        int r = ingest_set_read_threads(d->ingest, n);

        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot start %u read threads; reading on the main thread", n);
}

int main(int argc, char **argv)
{
        struct options o = { .level = LOG_INFO, .target = LOG_TARGET_AUTO, .reconcile_sec = 60,
                            .read_threads = -1 };
        struct daemon d = { .start_ms = timefmt_now_ms() };
        struct ingest_hooks hooks = pipeline_ingest_hooks(&d);
        int r;

        r = options_parse(argc, argv, &o);
        if (r)
                return r;
        if ((o.once || o.rebuild_rollups) && o.target == LOG_TARGET_AUTO)
                o.target = LOG_TARGET_CONSOLE;
        log_setup(o.target, o.level);
        d.reconcile_usec = (uint64_t)o.reconcile_sec * 1000000ULL;

        if (o.state_dir)
                snprintf(d.state_dir, sizeof(d.state_dir), "%s", o.state_dir);
        else if ((r = paths_state_dir(d.state_dir, sizeof(d.state_dir))) < 0)
                return log_errno(LOG_ERR, r, "cannot determine the state directory"), 1;
        if (o.socket)
                snprintf(d.socket_path, sizeof(d.socket_path), "%s", o.socket);
        else if ((r = paths_socket(d.socket_path, sizeof(d.socket_path))) < 0)
                return log_errno(LOG_ERR, r, "cannot determine the socket path"), 1;

        r = paths_mkdir_p(d.state_dir, 0700);
        if (r < 0) {
                log_errno(LOG_ERR, r, "cannot create state directory %s", d.state_dir);
                return 1;
        }
        if (statelock_acquire(d.state_dir) < 0)
                return 1;
        r = ledger_open(d.state_dir, 0, &d.ledger);
        if (r < 0) {
                log_errno(LOG_ERR, r, "cannot open the ledger in %s%s%s", d.state_dir,
                          ledger_open_error() ? ": " : "",
                          ledger_open_error() ? ledger_open_error() : "");
                return 1;
        }
        cache_shed_note_start(&d);
        if (o.rebuild_rollups) {
                r = ledger_rebuild_rollups(d.ledger);
                if (r < 0)
                        log_errno(LOG_ERR, r, "cannot rebuild the rollups: %s", ledger_error(d.ledger));
                else
                        r = ledger_sync(d.ledger);
                if (r >= 0)
                        printf("agentmeterd: rollups and session sums rebuilt from the rows of %s.\n",
                               ledger_path(d.ledger));
                goto out;
        }
        (void)status_record_install_env(d.ledger);
        r = ingest_new(d.ledger, &registry_process_env, &hooks, &d.ingest);
        if (r < 0) {
                log_errno(LOG_ERR, r, "out of memory");
                goto out;
        }
        r = ingest_discover(d.ingest);
        if (r < 0)
                goto out;
        setup_read_threads(&d, o.read_threads);
        if (prices_new(&d.prices) == 0) {
                ingest_set_prices(d.ingest, prices_table(d.prices));
                (void)prices_reprice_if_changed(d.prices, d.ledger);
        }
        (void)team_new(d.ledger, &d.team); /* the outbox on or off with team.conf */

        if (o.once) {
                struct timespec start;
                r = once_run(&d, &start);
                /* while the ledger's pages are on their way to the disk */
                if (r >= 0 && setup_metrics(&d, &o) >= 0)
                        (void)metrics_write(d.metrics);
                if (r >= 0)
                        r = once_finish(&d, &start);
                if (r >= 0) /* last: for the daemon that follows */
                        cache_shed_after_bulk(&d, "scan");
                goto out;
        }
        r = setup_live(&d);
        if (r < 0)
                goto out;
        r = setup_metrics(&d, &o);
        if (r < 0)
                goto out;
        d.commands.metrics = d.metrics;
        (void)metrics_write(d.metrics);
        r = sd_event_loop(d.event);
        if (r < 0)
                log_errno(LOG_ERR, r, "event loop failed");
        (void)metrics_write(d.metrics);
        (void)ledger_sync(d.ledger);
        log_info("stopped; ledger synced");
out:
        pipeline_remove_sources(&d);
        d.team = team_free(d.team);
        d.budget = budget_free(d.budget);
        d.metrics = metrics_free(d.metrics);
        statusline_state_done(&d.statusline);
        d.control = control_free(d.control);
        d.watch = watch_free(d.watch);
        d.ingest = ingest_free(d.ingest);
        d.prices = prices_free(d.prices);
        report_cache_free(d.report_cache);
        d.ledger = ledger_close(d.ledger);
        d.event = sd_event_unref(d.event);
        for (size_t i = 0; i < d.n_warnings; i++)
                free(d.warnings[i]);
        return r < 0 ? 1 : 0;
}
