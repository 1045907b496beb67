/* After a bulk ingest, the ledger's page cache is dropped once so that the
 * live commits that follow write into small folios (common/ledger/ledger.c,
 * ledger_drop_cache, says why that matters). */
#pragma once

#include <stdbool.h>

#include "daemon.h"

/* Notes how big the ledger is as the daemon opens it. */
void cache_shed_note_start(struct daemon *d);
/* After the initial scan or --once: when the ledger grew by at least
 * CACHE_SHED_MIN_BYTES (4 MB) since the start, drops its page cache (logged). */
void cache_shed_after_bulk(struct daemon *d, const char *what);
/* Frees what the ledger's write txns left in private memory (LMDB keeps
 * as many dirty pages as its largest txn made, ledger_release_memory): when
 * force (after the initial scan), or when a commit wrote the index's
 * backlog; then the heap's free pages go back to the system (malloc_trim).
 * When the ledger cannot be opened again (it is then unusable) the daemon
 * says so and exits at once, with every commit in the file. */
void cache_shed_memory(struct daemon *d, bool force);
