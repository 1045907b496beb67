/* The live pipeline (pipeline.h): inotify events and timers queue
 * sources, the drain reads them in slices of bytes and time so answers
 * never wait long, signals stop or reload. */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "budget/budget.h"
#include "ingest/cache-shed.h"
#include "control.h"
#include "ledger/ledger.h"
#include "log.h"
#include "ingest/pipeline.h"
#include "prices.h"
#include "proto.h"
#include "report/report.h"
#include "team-push/team.h"
#include "timefmt.h"
#include "watch/roots.h"

#define SYNC_USEC (1000000ULL) /* mdb_env_sync at most every second */
#define RELOAD_GAP_USEC (1000000ULL) /* SIGHUP reloads at most every second */
#define PROGRESS_GAP_MS 500 /* the initial scan's progress walks every source: not per slice */

static void add_warning(struct daemon *d, const char *w)
{
        for (size_t i = 0; i < d->n_warnings; i++)
                if (strcmp(d->warnings[i], w) == 0)
                        return;
        if (d->n_warnings < DAEMON_MAX_WARNINGS)
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
        /* and during the initial scan, after every slice it made a scan of
         * many small files quadratic (21,000 files: 38 s under ASan) */
        int64_t now = timefmt_mono_ms();
        if (!force && now - d->last_status_ms < PROGRESS_GAP_MS)
                return;
        d->last_status_ms = now;
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
        (void)s;
        (void)usec;
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
                r = sd_event_add_time(d->event, &d->retry_timer, CLOCK_REALTIME, usec, 1000, on_retry,
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
        int more = ingest_run(d->ingest, DAEMON_SLICE_BYTES);
        arm_retry(d);
        /* LMDB's page pool freed once when the initial scan ends, later only
         * after a commit wrote the index's backlog (once per 65,536 rows) */
        cache_shed_memory(d, !more && !d->initial_scan_done);
        if (more) {
                schedule_drain(d); /* yield to other events, then go on */
        } else if (!d->initial_scan_done) {
                d->initial_scan_done = true;
                /* from now on a reconcile of thousands of unchanged files,
                 * or a new root's history, yields every few ms: an answer
                 * waits that long at most (the initial scan keeps whole
                 * slices, which commit fewer, larger groups) */
                ingest_set_slice_ms(d->ingest, DAEMON_SLICE_MS);
                const struct tail_counters *c = ingest_counters(d->ingest);
                log_info("initial scan done: %llu bytes read, %llu rows added, %llu lines "
                         "(%llu malformed, %llu over-long skipped)",
                         (unsigned long long)c->bytes_read, (unsigned long long)c->rows_added,
                         (unsigned long long)c->lines, (unsigned long long)c->malformed,
                         (unsigned long long)c->oversized);
                notify_progress(d, true);
                cache_shed_after_bulk(d, "initial scan");
                return 0;
        }
        notify_progress(d, false);
        return 0;
}

static int watch_dir_hook(void *u, const struct root *root, const char *path, int depth)
{
        struct daemon *d = u;
        (void)root;
        (void)depth;
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
                        if (roots_files_below(ingest_roots(d->ingest), path))
                                d->rediscover = true;
                        (void)ingest_path_event(d->ingest, path, true, true);
                }
                return;
        }
        if (mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
                d->roots_dirty = true;
                return;
        }
        /* an editor's settings.json (a custom storage path) changed, came or went */
        if ((mask & (IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)) &&
            root_list_has_file(ingest_roots(d->ingest), path)) {
                d->rediscover = true;
                return;
        }
        if (!(mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_ATTRIB)))
                return;
        (void)ingest_path_event(d->ingest, path, false, mask & (IN_MODIFY | IN_CREATE | IN_MOVED_TO));
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
static void on_watch_lost(void *u, enum watch_loss why)
{
        struct daemon *d = u;
        if (why == WATCH_LOST_OVERFLOW) {
                log_warning("%s: reconciling all sources", watch_loss_text(why));
                if (d->reconcile_soon)
                        sd_event_source_set_enabled(d->reconcile_soon, SD_EVENT_ONESHOT);
                return;
        }
        if (d->watch_degraded)
                return;
        d->watch_degraded = true;
        log_warning("%s: directories without a watch are checked by the periodic reconcile "
                    "(every %llu s)", watch_loss_text(why), (unsigned long long)(d->reconcile_usec / 1000000));
        if (why == WATCH_LOST_NO_WATCHES)
                add_warning(d, "out of inotify watches: some directories are only checked by the "
                               "periodic reconcile (raise fs.inotify.max_user_watches)");
        else
                add_warning(d, "some directories could not be watched: they are only checked by the "
                               "periodic reconcile");
}

static void on_watch_batch(void *u)
{
        struct daemon *d = u;
        if (d->rediscover) {
                d->rediscover = d->roots_dirty = false;
                log_info("a file discovery read changed: discovering again");
                (void)ingest_discover(d->ingest);
                rearm_roots(d);
                (void)ingest_reconcile(d->ingest);
        } else if (d->roots_dirty) {
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
void pipeline_rescan(void *u)
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

static int on_reload(sd_event_source *s, uint64_t usec, void *u)
{
        struct daemon *d = u;
        (void)s;
        (void)usec;
        log_info("reloading: re-running discovery and reconciling");
        if (d->prices && prices_reload(d->prices) > 0)
                (void)prices_reprice(d->prices, d->ledger, NULL);
        pipeline_rescan(d);
        (void)budget_reload(d->budget);
        team_reload(d->team);
        sd_event_now(d->event, CLOCK_MONOTONIC, &d->last_reload_usec);
        sd_notify(0, "READY=1");
        return 0;
}

/* A reload runs from the loop, at most once per RELOAD_GAP_USEC: SIGHUPs
 * that come while one is waiting join it, so a storm of them costs one
 * reload a second and answers are served in between. */
static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *u)
{
        struct daemon *d = u;
        uint64_t now, at;
        int enabled = SD_EVENT_OFF, r;
        (void)s;
        (void)si;
        if (d->reload_timer && sd_event_source_get_enabled(d->reload_timer, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return 0; /* one is coming: it reads everything anew */
        sd_notify(0, "RELOADING=1");
        sd_event_now(d->event, CLOCK_MONOTONIC, &now);
        at = d->last_reload_usec && d->last_reload_usec + RELOAD_GAP_USEC > now
                     ? d->last_reload_usec + RELOAD_GAP_USEC
                     : now;
        if (!d->reload_timer) {
                r = sd_event_add_time(d->event, &d->reload_timer, CLOCK_MONOTONIC, at, 1000, on_reload, d);
                if (r < 0) {
                        log_errno(LOG_WARNING, r, "cannot schedule the reload; reloading now");
                        return on_reload(NULL, now, d);
                }
        } else {
                sd_event_source_set_time(d->reload_timer, at);
        }
        sd_event_source_set_enabled(d->reload_timer, SD_EVENT_ONESHOT);
        return 0;
}


struct ingest_hooks pipeline_ingest_hooks(struct daemon *d)
{
        return (struct ingest_hooks){ .on_dir = watch_dir_hook, .on_rows = on_rows, .u = d };
}

struct watch_callbacks pipeline_watch_callbacks(struct daemon *d)
{
        return (struct watch_callbacks){
                .on_event = on_watch_event, .on_lost = on_watch_lost,
                .on_batch_done = on_watch_batch, .u = d,
        };
}

int pipeline_add_sources(struct daemon *d)
{
        int r;

        sd_event_add_signal(d->event, NULL, SIGTERM, on_term, d);
        sd_event_add_signal(d->event, NULL, SIGINT, on_term, d);
        sd_event_add_signal(d->event, NULL, SIGHUP, on_hup, d);
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
        r = sd_event_add_defer(d->event, &d->reconcile_soon, on_reconcile_soon, d);
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot add the reconcile source");
        sd_event_source_set_enabled(d->reconcile_soon, SD_EVENT_OFF);
        return 0;
}

int pipeline_start(struct daemon *d)
{
        int r;

        rearm_roots(d);
        r = ingest_reconcile(d->ingest);
        if (r < 0)
                return log_errno(LOG_ERR, r, "initial scan failed");
        schedule_drain(d);
        sd_notify(0, "READY=1");
        notify_progress(d, true);
        return 0;
}

void pipeline_remove_sources(struct daemon *d)
{
        if (!d->event)
                return;
        d->drain = sd_event_source_disable_unref(d->drain);
        d->reconcile_timer = sd_event_source_disable_unref(d->reconcile_timer);
        d->sync_timer = sd_event_source_disable_unref(d->sync_timer);
        d->retry_timer = sd_event_source_disable_unref(d->retry_timer);
        d->reconcile_soon = sd_event_source_disable_unref(d->reconcile_soon);
        d->reload_timer = sd_event_source_disable_unref(d->reload_timer);
}
