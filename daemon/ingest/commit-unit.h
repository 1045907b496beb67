/* A commit made ahead of the ledger: what one reader_commit would write
 * (the rows, the rate-limit snapshot and the new checkpoint of one source),
 * taken by a read-pool worker and written later, in order, by the ledger's
 * one writer. Rows are kept compact (a row's unused tool-call slots, most
 * of its 12 KB, are not copied), so units in flight cost little memory. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "row.h"

struct commit_unit {
        struct checkpoint cp;         /* as the reader would store it; its rows_added
                                       * leaves out this job's earlier units */
        uint8_t *rows;                /* n_rows compact rows */
        size_t rows_len, n_rows;
        struct rate_limits *limits;   /* owned; NULL: none */
        uint64_t bytes, lines, malformed, oversized; /* read since the last unit */
        struct commit_unit *next;
};

/* A unit with b's rows (copied compactly) and limits (moved out of b), and
 * a copy of cp: 0, or -ENOMEM (b is unchanged then). */
int commit_unit_new(const struct checkpoint *cp, struct row_batch *b, struct commit_unit **ret);
/* The unit's rows into b (cleared first; b grows as needed), limits moved
 * into b: 0, -ENOMEM, or -EBADMSG for a damaged unit (a bug). */
int commit_unit_rows(struct commit_unit *u, struct row_batch *b);
struct commit_unit *commit_unit_free(struct commit_unit *u); /* NULL-safe; returns NULL */
