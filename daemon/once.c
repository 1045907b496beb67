/* `agentmeterd --once` (once.h): the whole queue drained with bigger group
 * commits (no clients to answer), progress on stderr, a summary on stdout.
 * The ledger's pages start for the disk as soon as the queue is drained, so
 * the caller's work in between (the metrics file) overlaps their write and
 * the closing sync waits for less. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "log.h"
#include "once.h"
#include "ingest/progress.h"
#include "registry.h"

int once_run(struct daemon *d, struct timespec *ret_start)
{
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ingest_set_group_rows(d->ingest, 8192); /* no clients to serve: bigger groups (~35 MB) */
        int r = ingest_reconcile(d->ingest);
        if (r < 0)
                return log_errno(LOG_ERR, r, "scan failed");
        struct progress pg;
        progress_start(&pg, STDERR_FILENO);
        while (ingest_run(d->ingest, DAEMON_SLICE_BYTES) > 0)
                progress_update(&pg, d->ingest);
        progress_end(&pg);
        r = ledger_sync_start(d->ledger);
        if (r < 0) /* once_finish's sync does it all, and says if it fails */
                log_errno(LOG_DEBUG, r, "cannot start the ledger's write-back");
        *ret_start = t0;
        return 0;
}

int once_finish(struct daemon *d, const struct timespec *start)
{
        struct timespec t1;
        int r = ledger_sync(d->ledger);
        if (r < 0)
                return log_errno(LOG_ERR, r, "ledger sync failed");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - start->tv_sec) + (double)(t1.tv_nsec - start->tv_nsec) / 1e9;
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
