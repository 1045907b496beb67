/* One batch of the team push, read from the ledger's outbox: the COPY text
 * for the staging tables (rows, tool calls), each key once (the ledger's
 * current row is what goes; a second entry for it adds nothing, except a
 * reprice, which then starts the next batch), and the number of the last
 * entry it covers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "team-ledger/copy.h"

#define TEAM_BATCH_ITEMS 5000       /* entries per batch ... */
#define TEAM_BATCH_BYTES (4u << 20) /* ... or this much COPY text */

#define TEAM_BATCH_SLICE 1000      /* entries read per loop turn (~2.5 ms) */

struct team_batch {
        struct team_buf rows, calls;
        uint64_t n_rows, n_calls;
        uint64_t start;  /* it begins after this entry (0: the oldest) */
        uint64_t last;   /* the last entry it covers; start: none yet */
        bool complete;   /* full, or the outbox had no more */
        unsigned slice;  /* read transactions so far */
        struct batch_keys *keys;
};

/* An empty batch, to be read from the entry after `after` (0: the
 * oldest). -ENOMEM. */
int team_batch_begin(struct team_batch *b, uint64_t after);
/* Complete and covering no entry: the outbox had nothing after start. */
static inline bool team_batch_empty(const struct team_batch *b)
{
        return b->complete && b->last == b->start;
}
/* Reads up to `max` more entries in one read txn (a key met in an earlier
 * slice ends the batch: its row may have changed in between). Sets
 * complete when the batch is full or the outbox ran out. */
int team_batch_more(struct team_batch *b, struct ledger *l, size_t max);
/* begin, then more until complete (tests, tools). */
int team_batch_read(struct team_batch *b, struct ledger *l);
void team_batch_free(struct team_batch *b);
