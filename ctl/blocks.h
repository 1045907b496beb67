/* Five-hour usage blocks (the window some subscriptions meter by): a block
 * starts at the first call at or after the previous block's end and lasts
 * five hours. A set of calls keyed by row key (an upsert replaces its
 * figures) and the active block with its burn rate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/blocks.h" /* the five-hour rule and the live figures */

struct block_call {
        char key[33];       /* row key hex; "" = unkeyed */
        int64_t time_ms;
        int64_t cost_nano;  /* valid when priced */
        bool priced;
        uint64_t tokens;
};

struct block_set {
        struct block_call *v; /* sorted by time */
        size_t n, cap;
};

struct block_info {
        bool active;          /* now is inside a block */
        int64_t start_ms, end_ms;
        int64_t cost_nano;    /* of priced calls */
        uint64_t tokens, calls, unpriced;
        double usd_per_hour, tokens_per_min; /* over the elapsed part */
        int64_t projected_nano; /* cost at the block's end at this rate */
};

/* Adds or (same non-empty key) replaces a call. -ENOMEM. */
int block_set_put(struct block_set *s, const struct block_call *c);
void block_set_free(struct block_set *s);
/* Drops calls before ms (keeps the set small; the caller keeps a margin). */
void block_set_forget_before(struct block_set *s, int64_t ms);

/* The block containing now. Chains from the last gap of at least five hours
 * in the set (a call after such a gap always starts a block), else from the
 * oldest call. */
void blocks_current(const struct block_set *s, int64_t now_ms, struct block_info *ret);
