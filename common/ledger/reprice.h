/* Changing the cost of stored rows in place (repricing after the price
 * table changed): rows rewritten and their rollups and session sums moved
 * by the difference, in bounded write transactions. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"

/* Called for every stored row; returns 1 when it changed the row (only
 * cost_nano, cost_source and price_source may change), 0 when not. */
typedef int (*ledger_reprice_fn)(void *u, struct usage_row *row);

struct reprice_result {
        uint64_t rows_seen, rows_changed, txns;
        int64_t cost_delta_nano; /* new total cost minus old, over the changed rows */
};

/* Walks every usage row with fn, at most rows_per_txn rows per write
 * transaction (each commits the rows it changed and their sums together,
 * so a crash leaves every row consistent with its sums). Rows added
 * meanwhile by another writer are seen or not, never twice. */
int ledger_reprice(struct ledger *l, ledger_reprice_fn fn, void *u, size_t rows_per_txn,
                   struct reprice_result *ret_result);
