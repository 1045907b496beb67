/* Reading one source from its stored checkpoint, whatever its kind (lines,
 * document, table: adapter.h), rows and the new checkpoint committed
 * together in bounded batches. Shared by `agentmeterd --once` and the live
 * daemon. Logs nothing: it counts, and says what it saw in tail_outcome. */
#pragma once

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "ingest/commit-unit.h"
#include "ledger/ledger.h"
#include "lines.h"
#include "pricing/pricing.h"

struct tail_limits {
        size_t max_line;        /* longer lines are skipped to their newline */
        uint64_t budget_bytes;  /* per call; TAIL_MORE when used up */
        uint64_t commit_bytes;  /* commit at least every this many bytes */
        size_t commit_rows;     /* ... or rows */
        size_t max_document;    /* a longer document is not read (counted oversized) */
};
#define TAIL_LIMITS_DEFAULT { LINES_MAX_DEFAULT, (64u << 20), (8u << 20), 1024, (64u << 20) }

struct tail_counters {
        uint64_t bytes_read, lines, malformed, oversized;
        uint64_t rows_added, rows_dup, rows_merged, calls_added;
        uint64_t resets, renames, commits;
        uint64_t cold_reads; /* first reads of a file that the page cache did not hold */
};

/* Called after each commit with the rows it held and their outcomes. */
typedef void (*tail_rows_fn)(void *u, const struct usage_row *rows, const uint8_t *outcomes,
                             size_t n);

/* What a source's reads keep between calls besides its checkpoint: a
 * compressed stream's decoder at the decoded position it reached and the
 * bytes of the line it is inside, or the point an over-long line is skipped
 * to, so a read that yields goes on where it stopped. Owned by the caller
 * (one per source, NULL at first), freed with tail_keep_free; a kept state
 * that no longer matches the file is dropped by the next read. */
struct tail_keep;
struct tail_keep *tail_keep_free(struct tail_keep *k); /* NULL-safe, returns NULL */
/* Whether k holds a decoder (costly: the caller bounds how many it keeps). */
bool tail_keep_heavy(const struct tail_keep *k);

/* What one read leaves for the next, so a scan of many files allocates
 * nothing per file: the rows buffer, the read buffer and the block of the
 * consumed-bytes chain (each kept only while small). Owned by the caller,
 * zeroed at first; tail_spare_free. */
struct tail_spare {
        struct row_batch rows;
        char *buf;
        size_t cap;
        uint8_t *part;
};
void tail_spare_free(struct tail_spare *s);

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
        struct tail_spare *spare;       /* optional: buffers kept from one call to
                                         * the next (no allocation per file) */
        struct tail_keep **keep;        /* optional: the source's kept read state */
        /* optional, a read-pool worker's read (read-pool.h): commits are not
         * written but handed to defer as units, in order, and the ledger's
         * one writer commits them. The ledger is then not touched at all:
         * the checkpoint is given_cp (NULL: none yet), renames and siblings
         * are not adopted (the caller saw there was nothing to adopt), rows
         * are not priced, and counters and on_rows are left to whoever
         * commits (counters gets only resets). A negative return from defer
         * ends the read with it. Line sources only, plain ones: anything
         * else is TAIL_SERIAL. */
        int (*defer)(void *u, struct commit_unit *unit);
        void *defer_u;
        const struct checkpoint *given_cp;
};

/* Results (besides negative errno, which means "could not read it now":
 * -ENOENT gone, -EACCES, -EISDIR/-EINVAL not a regular file, -EBADMSG a
 * compressed stream that does not decode (not decoded again until the file
 * changes), -EIO ...). */
enum tail_result {
        TAIL_DONE = 0,       /* read to the end */
        TAIL_MORE = 1,       /* budget used up: call again */
        TAIL_NOT_SOURCE = 2, /* the adapter says this file is not its transcript */
        TAIL_SETTLING = 3,   /* read to the end, but look again shortly: a
                              * database's writer was at work, or a document
                              * was caught half-written */
        TAIL_SERIAL = 4,     /* with defer: nothing done, this source needs the
                              * ledger (compressed, another kind): read it
                              * without defer */
        TAIL_PUBLISHING = 5, /* read to the end, but a database's commit is
                              * written and may not have been visible yet:
                              * look again very soon */
};

/* A source's counters as its checkpoint holds them after the read. */
struct source_counts {
        uint64_t bytes_read, lines, malformed, oversized, rows;
        int64_t last_commit_ms;
};

struct tail_outcome {
        int reset;      /* a line source's identity changed: re-read from 0 */
        int renamed;    /* checkpoint taken over from another path (same inode) */
        char renamed_from[PATH_MAX];
        uint64_t size;  /* file size seen */
        uint64_t offset; /* the position committed (lines: bytes consumed) */
        uint64_t verified; /* consumed bytes read again to check them (they count
                            * against the caller's slice like bytes read) */
        uint64_t decoded;  /* a compressed source: the bytes its decoder produced in
                            * this call (to reach the offset, and the lines read);
                            * they count against the slice like bytes read */
        bool have_counts;  /* counts is the checkpoint as stored (or as found,
                            * when nothing needed writing) */
        struct source_counts counts;
};

/* Reads the source src->path of the given kind (CLASS_LINES, CLASS_DOCUMENT,
 * CLASS_TABLE) from its checkpoint. */
int tail_source(struct tail_ctx *t, const struct source_ctx *src, int kind,
                struct tail_outcome *ret_outcome);
