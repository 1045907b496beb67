/* agentmeterd: the resident meter. Discovers every harness root, watches
 * them with inotify, tail-reads grown files into the LMDB ledger, answers
 * the control socket, and tells systemd how it is doing. `--once` ingests
 * everything once and exits. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "budget-conf.h"
#include "budget.h"
#include "commands.h"
#include "control.h"
#include "ingest.h"
#include "ledger.h"
#include "log.h"
#include "metrics.h"
#include "paths.h"
#include "progress.h"
#include "prices.h"
#include "proto.h"
#include "registry.h"
#include "report.h"
#include "statelock.h"
#include "status.h"
#include "team.h"
#include "watch-roots.h"
#include "statusline-answer.h"
#include "watch.h"
#include "timefmt.h"

#define SLICE_BYTES (8u << 20)          /* read at most this much per loop turn */
#define SLICE_MS 4                      /* ... and after the initial scan, work this long */
#define SYNC_USEC (1000000ULL)          /* mdb_env_sync at most every second */
#define MAX_WARNINGS 16

struct daemon {
        sd_event *event;
        struct ledger *ledger;
        struct ingest *ingest;
        struct watch *watch;
        struct control *control;
        struct budget *budget;
        struct prices *prices;  /* NULL: no table (logged), rows stay unpriced */
        struct metrics *metrics;
        struct team *team;      /* the team ledger (team.conf), or NULL */
        struct statusline_state statusline;
        struct report_cache *report_cache; /* for the ledger handle above */
        sd_event_source *drain, *reconcile_timer, *sync_timer, *retry_timer, *reconcile_soon;
        struct command_env commands;
        uint64_t reconcile_usec;
        uint64_t commits_at_sync;
        bool initial_scan_done;
        bool roots_dirty;       /* a directory appeared: re-check missing roots */
        bool watch_degraded;    /* a watch could not be added: said once */
        int64_t start_ms;
        uint64_t last_status_pct;
        char state_dir[PATH_MAX];
        char socket_path[PATH_MAX];
        char *warnings[MAX_WARNINGS + 1];
        size_t n_warnings;
};

static void add_warning(struct daemon *d, const char *w)
{
        for (size_t i = 0; i < d->n_warnings; i++)
                if (strcmp(d->warnings[i], w) == 0)
                        return;
        if (d->n_warnings < MAX_WARNINGS)
                d->warnings[d->n_warnings++] = strdup(w);
}

/* ---- live pipeline -------------------------------------------------------- */

static void schedule_drain(struct daemon *d)
{
        if (d->drain)
                sd_event_source_set_enabled(d->drain, SD_EVENT_ONESHOT);
}

static void notify_progress(struct daemon *d, bool force)
{
        uint64_t done, known, pct;
        if (d->initial_scan_done && !force)
                return; /* ingest_progress walks every source: after each drain it
                         * made one appended line cost in proportion to the history */
        ingest_progress(d->ingest, &done, &known);
        pct = known ? done * 100 / known : 100;
        if (!force && pct == d->last_status_pct)
                return;
        d->last_status_pct = pct;
        if (!d->initial_scan_done)
                sd_notifyf(0, "STATUS=Initial scan: %llu of %llu MB (%llu%%)",
                           (unsigned long long)(done >> 20), (unsigned long long)(known >> 20),
                           (unsigned long long)pct);
        else
                sd_notifyf(0, "STATUS=Watching %zu directories; %llu rows added since start",
                           watch_count(d->watch),
                           (unsigned long long)ingest_counters(d->ingest)->rows_added);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *u)
{
        struct daemon *d = u;
        (void)s, (void)usec;
        ingest_queue_retries(d->ingest);
        schedule_drain(d);
        return 0;
}

/* A source that failed and changed again during its backoff is read when
 * the backoff ends, not only at the next event or reconcile: a file or
 * database caught half-written would otherwise wait for the reconcile. */
static void arm_retry(struct daemon *d)
{
        int64_t due = ingest_retry_due(d->ingest);
        uint64_t usec;
        int r = 0;

        if (due <= 0)
                return;
        usec = (uint64_t)due * 1000;
        if (!d->retry_timer)
                r = sd_event_add_time(d->event, &d->retry_timer, CLOCK_REALTIME, usec, 100000, on_retry,
                                      d);
        else
                r = sd_event_source_set_time(d->retry_timer, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->retry_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot arm the retry timer; the reconcile retries instead");
}

static int on_drain(sd_event_source *s, void *u)
{
        struct daemon *d = u;
        (void)s;
        int more = ingest_run(d->ingest, SLICE_BYTES);
        arm_retry(d);
        if (more) {
                schedule_drain(d); /* yield to other events, then go on */
        } else if (!d->initial_scan_done) {
                d->initial_scan_done = true;
                /* from now on a reconcile of thousands of unchanged files,
                 * or a new root's history, yields every few ms: an answer
                 * waits that long at most (the initial scan keeps whole
                 * slices, which commit fewer, larger groups) */
                ingest_set_slice_ms(d->ingest, SLICE_MS);
                const struct tail_counters *c = ingest_counters(d->ingest);
                log_info("initial scan done: %llu bytes read, %llu rows added, %llu lines "
                         "(%llu malformed, %llu over-long skipped)",
                         (unsigned long long)c->bytes_read, (unsigned long long)c->rows_added,
                         (unsigned long long)c->lines, (unsigned long long)c->malformed,
                         (unsigned long long)c->oversized);
                notify_progress(d, true);
                return 0;
        }
        notify_progress(d, false);
        return 0;
}

static int watch_dir_hook(void *u, const struct root *root, const char *path, int depth)
{
        struct daemon *d = u;
        (void)root, (void)depth;
        if (!d->watch)
                return 0;
        int r = watch_add(d->watch, path);
        if (r < 0 && r != -ENOENT && r != -ENOTDIR)
                log_full(LOG_WARNING, root->adapter->id, path, r,
                         "cannot watch directory; it is covered by the periodic reconcile");
        return 0;
}

static void rearm_roots(struct daemon *d)
{
        watch_roots(d->watch, ingest_roots(d->ingest));
}

static void on_watch_event(void *u, const char *path, bool is_dir, uint32_t mask)
{
        struct daemon *d = u;
        if (is_dir) {
                if (mask & (IN_CREATE | IN_MOVED_TO)) {
                        if (roots_cover_path(ingest_roots(d->ingest), path))
                                d->roots_dirty = true;
                        (void)ingest_notice_path(d->ingest, path, true);
                }
                return;
        }
        if (mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
                d->roots_dirty = true;
                return;
        }
        if (!(mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_ATTRIB)))
                return;
        (void)ingest_path_changed(d->ingest, path, mask & (IN_MODIFY | IN_CREATE | IN_MOVED_TO));
}

static int on_reconcile_soon(sd_event_source *s, void *u)
{
        struct daemon *d = u;
        (void)s;
        (void)ingest_reconcile(d->ingest);
        schedule_drain(d);
        return 0;
}

/* Called from inside watch_add, which runs inside scans: never reconcile
 * here (a scan that runs out of watches would recurse into itself). An
 * overflowed queue asks for one reconcile on the next loop turn; a watch
 * that cannot be added (out of watches, no permission) leaves that
 * directory to the periodic reconcile, said once in the log and status. */
static void on_watch_lost(void *u, const char *why)
{
        struct daemon *d = u;
        if (strstr(why, "overflow")) {
                log_warning("%s: reconciling all sources", why);
                if (d->reconcile_soon)
                        sd_event_source_set_enabled(d->reconcile_soon, SD_EVENT_ONESHOT);
                return;
        }
        if (d->watch_degraded)
                return;
        d->watch_degraded = true;
        log_warning("%s: directories without a watch are checked by the periodic reconcile "
                    "(every %llu s)", why, (unsigned long long)(d->reconcile_usec / 1000000));
        if (strstr(why, "watches"))
                add_warning(d, "out of inotify watches: some directories are only checked by the "
                               "periodic reconcile (raise fs.inotify.max_user_watches)");
        else
                add_warning(d, "some directories could not be watched: they are only checked by the "
                               "periodic reconcile");
}

static void on_watch_batch(void *u)
{
        struct daemon *d = u;
        if (d->roots_dirty) {
                d->roots_dirty = false;
                rearm_roots(d);
                (void)ingest_reconcile(d->ingest);
        }
        schedule_drain(d);
}

static int on_reconcile(sd_event_source *s, uint64_t usec, void *u)
{
        struct daemon *d = u;
        rearm_roots(d);
        (void)ingest_reconcile(d->ingest);
        schedule_drain(d);
        sd_event_source_set_time(s, usec + d->reconcile_usec);
        sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

static int on_sync(sd_event_source *s, uint64_t usec, void *u)
{
        struct daemon *d = u;
        uint64_t commits = ingest_counters(d->ingest)->commits;
        if (commits != d->commits_at_sync) {
                int r = ledger_sync(d->ledger);
                if (r < 0)
                        log_errno(LOG_WARNING, r, "ledger sync failed, retrying");
                else
                        d->commits_at_sync = commits;
        }
        sd_event_source_set_time(s, usec + SYNC_USEC);
        sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

static void on_rows(void *u, const struct usage_row *rows, const uint8_t *outcomes, size_t n)
{
        struct daemon *d = u;
        budget_on_rows(d->budget, rows, outcomes, n);
        if (!d->control || control_subscribers(d->control) == 0)
                return;
        for (size_t i = 0; i < n; i++) {
                if (outcomes[i] != ROW_ADDED && outcomes[i] != ROW_MERGED)
                        continue;
                json_object *ev = proto_event("row", report_row_json(&rows[i]));
                control_broadcast(d->control, ev);
                json_object_put(ev);
        }
}

/* ---- control commands ------------------------------------------------------ */

/* Discovery again (new agents, profiles, changed configs), watches
 * re-armed, and every source read with all its consumed bytes checked. */
static void rescan(void *u)
{
        struct daemon *d = u;
        (void)ingest_discover(d->ingest);
        rearm_roots(d);
        (void)ingest_reconcile(d->ingest);
        ingest_verify_all(d->ingest);
        schedule_drain(d);
}

/* ---- signals -------------------------------------------------------------- */

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
        struct daemon *d = u;
        (void)s;
        log_info("received %s, stopping", strsignal((int)si->ssi_signo));
        sd_notify(0, "STOPPING=1");
        sd_event_exit(d->event, 0);
        return 0;
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
        struct daemon *d = u;
        (void)s, (void)si;
        sd_notify(0, "RELOADING=1");
        log_info("reloading: re-running discovery and reconciling");
        if (d->prices && prices_reload(d->prices) > 0)
                (void)prices_reprice(d->prices, d->ledger, NULL);
        rescan(d);
        (void)budget_reload(d->budget);
        team_reload(d->team);
        sd_notify(0, "READY=1");
        return 0;
}

/* ---- main ----------------------------------------------------------------- */

struct options {
        bool once;
        bool rebuild_rollups;
        int level;
        enum log_target target;
        unsigned reconcile_sec;
        const char *state_dir;
        const char *socket;
        const char *metrics_file; /* "" = none */
        const char *metrics_user;
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: agentmeterd [OPTIONS]\n"
                "Meters what AI coding agents spend, into an LMDB ledger.\n\n"
                "  --once                     ingest every source once, print a summary, exit\n"
                "      --rebuild-rollups      recompute rollups and session sums from the rows, exit\n"
                "  -v, --verbose              log debug messages\n"
                "  -q, --quiet                log warnings and errors only\n"
                "      --log-target=auto|console|journal\n"
                "      --reconcile-interval=SECONDS  full re-check period (default 60)\n"
                "      --state-dir=DIR        ledger directory (default $STATE_DIRECTORY or\n"
                "                             ${XDG_STATE_HOME:-~/.local/state}/agentmeterd)\n"
                "      --socket=PATH          control socket (default $RUNTIME_DIRECTORY or\n"
                "                             $XDG_RUNTIME_DIR/agentmeterd, control.sock)\n"
                "      --list-variables       print every discovery variable and its harness\n"
                "      --metrics-file=PATH    Prometheus textfile to keep current (default\n"
                "                             $AGENTMETER_METRICS_FILE or STATE_DIR/metrics.prom)\n"
                "      --no-metrics-file      write no metrics file (`agentmeterctl metrics` works)\n"
                "      --metrics-user=NAME    the metrics' user label (default\n"
                "                             $AGENTMETER_METRICS_USER or login@hostname)\n"
                "      --version              print the version\n"
                "  -h, --help                 this help\n"
                "See agentmeterd(8).\n");
}

/* The discovery variables, as install records them: "NAME<TAB>harness"
 * ("*" for HOME, which every harness reads). */
static void list_variables(void)
{
        const char *const *vars = registry_env_vars();
        for (size_t i = 0; vars[i]; i++) {
                const char *owner = registry_env_owner(vars[i]);
                printf("%s\t%s\n", vars[i], owner ? owner : "*");
        }
}

static int parse_options(int argc, char **argv, struct options *o)
{
        enum { OPT_ONCE = 256, OPT_REBUILD, OPT_TARGET, OPT_RECONCILE, OPT_STATE, OPT_SOCKET,
               OPT_VERSION, OPT_LIST_VARS, OPT_METRICS_FILE, OPT_NO_METRICS, OPT_METRICS_USER };
        static const struct option longopts[] = {
                { "once", no_argument, NULL, OPT_ONCE },
                { "rebuild-rollups", no_argument, NULL, OPT_REBUILD },
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "log-target", required_argument, NULL, OPT_TARGET },
                { "reconcile-interval", required_argument, NULL, OPT_RECONCILE },
                { "state-dir", required_argument, NULL, OPT_STATE },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "version", no_argument, NULL, OPT_VERSION },
                { "list-variables", no_argument, NULL, OPT_LIST_VARS },
                { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
                { "no-metrics-file", no_argument, NULL, OPT_NO_METRICS },
                { "metrics-user", required_argument, NULL, OPT_METRICS_USER },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c;
        while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) >= 0) {
                switch (c) {
                case OPT_ONCE: o->once = true; break;
                case OPT_REBUILD: o->rebuild_rollups = true; break;
                case 'v': o->level = LOG_DEBUG; break;
                case 'q': o->level = LOG_WARNING; break;
                case OPT_TARGET:
                        if (log_target_parse(optarg, &o->target) < 0) {
                                fprintf(stderr, "agentmeterd: bad --log-target '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_RECONCILE: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (*end || v == 0 || v > 86400) {
                                fprintf(stderr, "agentmeterd: bad --reconcile-interval '%s' (1..86400)\n", optarg);
                                return 2;
                        }
                        o->reconcile_sec = (unsigned)v;
                        break;
                }
                case OPT_STATE: o->state_dir = optarg; break;
                case OPT_SOCKET: o->socket = optarg; break;
                case OPT_METRICS_FILE: o->metrics_file = optarg; break;
                case OPT_NO_METRICS: o->metrics_file = ""; break;
                case OPT_METRICS_USER: o->metrics_user = optarg; break;
                case OPT_VERSION: printf("agentmeterd %s\n", AM_VERSION); exit(0);
                case OPT_LIST_VARS: list_variables(); exit(0);
                case 'h': usage(stdout); exit(0);
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "agentmeterd: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        return 0;
}

static int run_once(struct daemon *d)
{
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ingest_set_group_rows(d->ingest, 8192); /* no clients to serve: bigger groups (~35 MB) */
        int r = ingest_reconcile(d->ingest);
        if (r < 0)
                return log_errno(LOG_ERR, r, "scan failed");
        struct progress pg;
        progress_start(&pg, STDERR_FILENO);
        while (ingest_run(d->ingest, SLICE_BYTES) > 0)
                progress_update(&pg, d->ingest);
        progress_end(&pg);
        r = ledger_sync(d->ledger);
        if (r < 0)
                return log_errno(LOG_ERR, r, "ledger sync failed");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        const struct tail_counters *c = ingest_counters(d->ingest);
        uint64_t files = 0, errors = 0, not_source = 0;
        for (size_t i = 0; registry_adapters[i]; i++) {
                struct adapter_stats st;
                ingest_adapter_stats(d->ingest, registry_adapters[i], &st);
                files += st.files;
                errors += st.errors;
                not_source += st.not_source;
        }
        printf("agentmeterd: %llu files (%llu not transcripts, %llu unreadable), %llu bytes read, "
               "%llu rows added (%llu already counted, %llu merged), %llu tool calls, %llu lines "
               "(%llu malformed, %llu over-long skipped), %llu rewritten files re-read, %llu renames, "
               "in %.3f s.\n",
               (unsigned long long)files, (unsigned long long)not_source,
               (unsigned long long)errors, (unsigned long long)c->bytes_read,
               (unsigned long long)c->rows_added, (unsigned long long)c->rows_dup,
               (unsigned long long)c->rows_merged, (unsigned long long)c->calls_added,
               (unsigned long long)c->lines, (unsigned long long)c->malformed,
               (unsigned long long)c->oversized, (unsigned long long)c->resets,
               (unsigned long long)c->renames, secs);
        return 0;
}

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
        struct watch_callbacks wcb = {
                .on_event = on_watch_event, .on_lost = on_watch_lost,
                .on_batch_done = on_watch_batch, .u = d,
        };
        struct control_handlers ch = { .handle = commands_handle, .stream = commands_stream,
                                       .u = &d->commands };
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM), sigaddset(&mask, SIGINT), sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);

        r = sd_event_default(&d->event);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot create the event loop");
        sd_event_add_signal(d->event, NULL, SIGTERM, on_term, d);
        sd_event_add_signal(d->event, NULL, SIGINT, on_term, d);
        sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d);
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
        r = sd_event_add_defer(d->event, &d->drain, on_drain, d);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot add the drain source");
        sd_event_source_set_priority(d->drain, SD_EVENT_PRIORITY_IDLE);
        sd_event_source_set_enabled(d->drain, SD_EVENT_OFF);
        r = sd_event_add_time_relative(d->event, &d->reconcile_timer, CLOCK_MONOTONIC,
                                       d->reconcile_usec, 100000, on_reconcile, d);
        if (r >= 0)
                r = sd_event_add_time_relative(d->event, &d->sync_timer, CLOCK_MONOTONIC, SYNC_USEC,
                                               100000, on_sync, d);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot add timers");

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
                .warnings = (const char *const *)d->warnings, .rescan = rescan, .u = d,
                .budget = d->budget, .prices = d->prices,
                .statusline = &d->statusline, /* .metrics once it exists (main) */
                .report_cache = d->report_cache, .team = d->team,
        };
        r = sd_event_add_defer(d->event, &d->reconcile_soon, on_reconcile_soon, d);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot add the reconcile source");
        sd_event_source_set_enabled(d->reconcile_soon, SD_EVENT_OFF);
        team_start(d->team, d->event); /* pushes only with a team.conf */

        /* discovery and watches first, then READY; reading continues after */
        rearm_roots(d);
        r = ingest_reconcile(d->ingest);
        if (r < 0)
                return log_errno(LOG_ERR, r, "initial scan failed");
        schedule_drain(d);
        sd_notify(0, "READY=1");
        notify_progress(d, true);
        log_info("agentmeterd %s ready: ledger %s, socket %s, %zu directories watched", AM_VERSION,
                 ledger_path(d->ledger), d->socket_path, watch_count(d->watch));
        return 0;
}

int main(int argc, char **argv)
{
        struct options o = { .level = LOG_INFO, .target = LOG_TARGET_AUTO, .reconcile_sec = 60 };
        struct daemon d = { .start_ms = timefmt_now_ms() };
        struct ingest_hooks hooks = { .on_dir = watch_dir_hook, .on_rows = on_rows, .u = &d };
        int r;

        r = parse_options(argc, argv, &o);
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
        if (prices_new(&d.prices) == 0) {
                ingest_set_prices(d.ingest, prices_table(d.prices));
                (void)prices_reprice_if_changed(d.prices, d.ledger);
        }
        (void)team_new(d.ledger, &d.team); /* the outbox on or off with team.conf */

        if (o.once) {
                r = run_once(&d);
                if (r >= 0 && setup_metrics(&d, &o) >= 0)
                        (void)metrics_write(d.metrics);
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
        sd_event_source_disable_unref(d.drain); /* each NULL-safe */
        sd_event_source_disable_unref(d.reconcile_timer);
        sd_event_source_disable_unref(d.sync_timer);
        sd_event_source_disable_unref(d.retry_timer);
        sd_event_source_disable_unref(d.reconcile_soon);
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
