/* After a bulk ingest, the ledger's page cache is dropped once so that the
 * live commits that follow write into small folios (common/ledger/ledger.c,
 * ledger_drop_cache, says why that matters). */
#pragma once

#include "daemon.h"

/* Notes how big the ledger is as the daemon opens it. */
void cache_shed_note_start(struct daemon *d);
/* After the initial scan or --once: when the ledger grew by at least
 * CACHE_SHED_MIN_BYTES (4 MB) since the start, drops its page cache (logged). */
void cache_shed_after_bulk(struct daemon *d, const char *what);
