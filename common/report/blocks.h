/* 5-hour usage blocks, as subscription plans count them: per harness, a
 * block starts at the first call after the previous block ended and lasts
 * five hours; the block still open at "now" is the active one. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "report/build.h"

#define REPORT_BLOCK_MS (5 * 3600 * 1000LL)

/* The rule itself: a call at t_ms opens a new block unless a block that
 * began at start_ms is still open (have: there is such a block). */
static inline bool report_block_opens(bool have, int64_t start_ms, int64_t t_ms)
{
        return !have || t_ms >= start_ms + REPORT_BLOCK_MS;
}

/* Reads every usage row in the range and appends one entry per block to
 * res (key = start as RFC 3339 UTC, harness, first_ms = start, last_ms =
 * the last call in it, sums). -ENOMEM, ledger errors. */
int report_blocks_collect(struct ledger *l, const struct report_query *q,
                          const struct report_range *rg, struct report_result *res);
/* report_build for REPORT_BLOCKS: the range, the blocks, the totals. */
int report_blocks_build(struct ledger *l, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error);
/* The same from any source (its rows with exact times; with q->by, one
 * sequence of blocks per harness and machine or user). */
int report_blocks_build_from(const struct report_source *src, const struct report_query *q,
                             struct report_result *ret_result, const char **ret_error);

/* The latest block of harness `tool` from the rollups of the day before
 * now_ms (quick, for the status line: a block's start is the start of its
 * first 15-minute bucket, so it can be up to 15 minutes early). 0 and the
 * block, or -ENOENT when there is none in that day. */
int report_block_recent(struct ledger *l, const char *tool, int64_t now_ms,
                        struct report_entry *ret_entry);

/* The active block's figures at now_ms (false when the block has ended). */
struct block_live {
        int64_t elapsed_ms, remaining_ms;
        int64_t burn_nano_per_hour;   /* cost so far per hour elapsed */
        uint64_t tokens_per_hour;
        int64_t projected_nano;       /* cost so far + burn x remaining */
};
bool report_block_live(const struct report_entry *e, int64_t now_ms, struct block_live *ret);
