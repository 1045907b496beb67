/* Reading one source from its stored checkpoint: identity checks (dev+ino,
 * head fingerprint, marker before the offset), complete lines only, rows and
 * the new checkpoint committed together in bounded batches. Shared by
 * `agentmeterd --once` and the live daemon. Logs nothing: it counts. */
#pragma once

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "ledger.h"
#include "pricing.h"

struct tail_limits {
        size_t max_line;        /* longer lines are skipped to their newline */
        uint64_t budget_bytes;  /* per call; TAIL_MORE when used up */
        uint64_t commit_bytes;  /* commit at least every this many bytes */
        size_t commit_rows;     /* ... or rows */
};
#define TAIL_LIMITS_DEFAULT { (16u << 20), (64u << 20), (8u << 20), 1024 } /* rows: 12 MB */

struct tail_counters {
        uint64_t bytes_read, lines, malformed, oversized;
        uint64_t rows_added, rows_dup, rows_merged, calls_added;
        uint64_t resets, renames, commits;
};

/* Called after each commit with the rows it held and their outcomes. */
typedef void (*tail_rows_fn)(void *u, const struct usage_row *rows, const uint8_t *outcomes,
                             size_t n);

struct tail_ctx {
        struct ledger *ledger;
        struct tail_limits limits;
        struct tail_counters *counters; /* optional */
        tail_rows_fn on_rows;           /* optional */
        void *u;
        bool verify_all;                /* check every consumed byte, not only the
                                         * cheap signs (an explicit rescan) */
        int ledger_error;               /* set: the ledger refused a commit (full disk,
                                         * map), the source itself is fine */
        const struct price_table *prices; /* optional: prices rows before each commit */
        struct row_batch *spare;        /* optional: a rows buffer kept from one
                                         * call to the next (no regrowth per file) */
};

/* Results (besides negative errno, which means "could not read it now":
 * -ENOENT gone, -EACCES, -EISDIR/-EINVAL not a regular file, -EIO ...). */
enum tail_result {
        TAIL_DONE = 0,       /* read to the end */
        TAIL_MORE = 1,       /* budget used up: call again */
        TAIL_NOT_SOURCE = 2, /* the adapter says this file is not its transcript */
        TAIL_SETTLING = 3,   /* read to the end, but look again shortly: a
                              * database's writer was at work (COLLECT_SETTLING) */
};

struct tail_outcome {
        int reset;      /* identity changed: re-read from 0 */
        int renamed;    /* checkpoint taken over from another path (same inode) */
        char renamed_from[PATH_MAX];
        uint64_t size;  /* file size seen */
        uint64_t offset;
        uint64_t verified; /* consumed bytes read again to check them (they count
                            * against the caller's slice like bytes read) */
};

int tail_file(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
/* A zstd-compressed line source (CLASS_ZSTD_LINES), read like tail_file in
 * its decoded bytes: offsets, head and marker are of the decoded stream.
 * Not read while its plain sibling (the name without .zst) exists; either
 * one without a checkpoint takes the other's when its content begins with
 * what that one consumed, so compressing and resuming read nothing twice.
 * A corrupt stream: -EBADMSG (retried when the file changes). */
int tail_zstd_file(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
int tail_db(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
