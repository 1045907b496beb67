/* Validates a ledger's LMDB data file before LMDB maps it: a truncated or
 * overwritten file must be refused with a reason, not crash (SIGBUS) or
 * corrupt the heap inside LMDB. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Marker written next to the ledger once it exists (ledger.c): a state
 * directory holding it but an empty or missing ledger lost its data. */
#define LEDGER_MARKER "ledger.created"

/* Reads the file at path with pread only (never mmap) and checks: a whole
 * number of pages; both meta pages (page number, flags, LMDB magic, data
 * version, page size, map size >= last page, last page inside the file,
 * roots inside the last page); and every page reachable from the newest
 * meta (free list, main DB, each named DB): its own page number, a known
 * type, node offsets and sizes inside the page, overflow runs inside the
 * file, no page reached twice, depth and page counts as the meta says.
 * 0 when valid, -ENOENT when missing, -EBADMSG when invalid, other negative
 * errno when unreadable; on failure `why` (cap bytes) says what is wrong. */
int ledger_check_file(const char *path, char *why, size_t cap);

/* What ledger_open does before LMDB maps path (the ledger file in dir):
 * refuses (-EBADMSG) a file that fails ledger_check_file, and a missing or
 * empty one where the marker says a ledger existed (rebuilding silently
 * would lose the rows of files deleted since); read-only: -ENOENT when
 * missing, and a failed check is retried twice 50 ms apart (a writer may
 * be mid-commit). 0 to go on; on failure err (cap bytes) names the file,
 * what is wrong and what to do. */
int ledger_precheck(const char *dir, const char *path, bool rdonly, char *err, size_t cap);
bool ledger_marker_exists(const char *dir);
/* Writes dir/LEDGER_MARKER once (ledger_sync does, after its first sync). */
void ledger_mark_created(const char *dir);
