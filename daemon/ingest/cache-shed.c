/* The page cache of a ledger a bulk ingest wrote, dropped once after it
 * (cache-shed.h). A small growth leaves the cache alone: its folios are
 * small, and dropping would only make the next answers read the disk.
 * And the private memory a bulk ingest leaves: LMDB's pool of dirty pages
 * (ledger_release_memory) and the heap's free pages (malloc_trim). */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "ingest/cache-shed.h"
#include "ledger/ledger.h"
#include "log.h"
#include "testhook.h"

#define CACHE_SHED_MIN_BYTES (4ull << 20)

/* Test hook: AGENTMETER_TEST_SHED_BYTES=<bytes> lowers the threshold. */
static uint64_t min_bytes(void)
{
        return test_hook_number("AGENTMETER_TEST_SHED_BYTES", 0, UINT64_MAX, CACHE_SHED_MIN_BYTES);
}

void cache_shed_note_start(struct daemon *d)
{
        uint64_t bytes;
        if (ledger_used_bytes(d->ledger, &bytes) >= 0)
                d->ledger_bytes_at_start = bytes;
}

void cache_shed_after_bulk(struct daemon *d, const char *what)
{
        uint64_t bytes;
        int r;

        if (ledger_used_bytes(d->ledger, &bytes) < 0 || bytes < d->ledger_bytes_at_start ||
            bytes - d->ledger_bytes_at_start < min_bytes())
                return;
        r = ledger_drop_cache(d->ledger);
        if (r < 0) {
                log_errno(LOG_WARNING, r, "cannot drop the ledger's page cache after the %s "
                          "(live commits cost more until the kernel evicts it)", what);
                return;
        }
        log_info("ledger: %llu KB written by the %s; its page cache dropped, so that live "
                 "commits write into small folios",
                 (unsigned long long)((bytes - d->ledger_bytes_at_start) >> 10), what);
        d->ledger_bytes_at_start = bytes;
}

void cache_shed_memory(struct daemon *d, bool force)
{
        int r = ledger_release_memory(d->ledger, force);
        if (r < 0) {
                /* every commit is in the file already; the handle is unusable
                 * (any read or write of it would fail or crash): stop now,
                 * with this said, and let the service manager start us again */
                log_errno(LOG_ERR, r, "the ledger could not be opened again after freeing "
                          "its page pool: %s; stopping", ledger_error(d->ledger));
                _exit(EXIT_FAILURE);
        }
        if (r > 0)
                (void)malloc_trim(0); /* the pages freed, and the scan's, back to the system */
}
