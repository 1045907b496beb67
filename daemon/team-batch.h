/* One batch of the team push, read from the ledger's outbox: the COPY text
 * for the staging tables (rows, tool calls), each key once (the ledger's
 * current row is what goes; a second entry for it adds nothing, except a
 * reprice, which then starts the next batch), and the number of the last
 * entry it covers. */
#pragma once

#include <stdint.h>

#include "ledger.h"
#include "team-copy.h"

#define TEAM_BATCH_ITEMS 5000       /* entries per batch ... */
#define TEAM_BATCH_BYTES (4u << 20) /* ... or this much COPY text */

struct team_batch {
        struct team_buf rows, calls;
        uint64_t n_rows, n_calls;
        uint64_t last; /* 0: the outbox was empty */
        struct batch_keys *keys;
};

/* Reads the next batch from the oldest entry; -ENOMEM, ledger errors. */
int team_batch_read(struct team_batch *b, struct ledger *l);
void team_batch_free(struct team_batch *b);
