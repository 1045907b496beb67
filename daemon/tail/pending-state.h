/* The source states (adapter.h struct source_state) a table read records:
 * kept in memory until the read's commit writes them with its rows and
 * checkpoint (commit_batch.states), read back by the adapter before the
 * ledger's committed ones. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "ledger/ledger.h"

struct pending_state_item {
        size_t off, key_len, value_len; /* in bytes: key, then value */
};

struct pending_states {
        struct ledger *ledger;
        const char *path;
        struct pending_state_item *items;
        size_t n, cap;
        uint8_t *bytes;
        size_t used, bytes_cap;
        struct source_state_entry *view; /* pending_states_view */
        size_t view_cap;
        struct source_state iface; /* what the adapter gets (source_ctx.state) */
};

void pending_states_init(struct pending_states *p, struct ledger *l, const char *path);
/* The entries to commit, in the order recorded: 0 and the array; -ENOMEM. */
int pending_states_view(struct pending_states *p, const struct source_state_entry **ret_entries);
void pending_states_clear(struct pending_states *p); /* after a commit, or a failed read */
void pending_states_free(struct pending_states *p);
