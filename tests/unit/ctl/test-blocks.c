/* Five-hour blocks: where a block starts and ends, chaining after a gap,
 * upserts replacing a call, and the burn rate. */
#include <string.h>

#include "blocks.h"
#include "tap.h"

#define H (3600 * 1000LL)
#define M (60 * 1000LL)

static void put(struct block_set *s, const char *key, int64_t t, int64_t cost, uint64_t tokens)
{
        struct block_call c = { .time_ms = t, .cost_nano = cost, .priced = cost >= 0, .tokens = tokens };
        strcpy(c.key, key);
        ok(block_set_put(s, &c) == 0, "put %s", key);
}

int main(void)
{
        struct block_set s = { 0 };
        struct block_info b;
        int64_t t0 = 1796000000000LL;

        blocks_current(&s, t0, &b);
        ok(!b.active, "no calls: no block");

        put(&s, "a", t0, 1000000000, 100);
        put(&s, "c", t0 + 4 * H, 500000000, 50);
        put(&s, "b", t0 + 1 * H, 250000000, 25); /* out of order */
        ok(s.v[1].time_ms == t0 + H, "kept sorted by time");
        blocks_current(&s, t0 + 4 * H + 30 * M, &b);
        ok(b.active, "inside the first block");
        is_int(b.start_ms, t0, "starts at the first call");
        is_int(b.end_ms, t0 + 5 * H, "five hours long");
        is_int(b.calls, 3, "three calls");
        is_int(b.cost_nano, 1750000000, "their cost");
        is_int(b.tokens, 175, "their tokens");
        ok(b.usd_per_hour > 0.3888 && b.usd_per_hour < 0.3890, "burn $1.75 over 4.5 h: %f", b.usd_per_hour);
        is_int(b.projected_nano, 1750000000 + 1750000000 / 9, "projected to the end at that rate");

        /* a call at 5h10m starts the next block, not at 5h */
        put(&s, "d", t0 + 5 * H + 10 * M, 100, 1);
        blocks_current(&s, t0 + 6 * H, &b);
        is_int(b.start_ms, t0 + 5 * H + 10 * M, "the next block starts at its first call");
        is_int(b.calls, 1, "with only its calls");
        blocks_current(&s, t0 + 5 * H + 5 * M, &b);
        ok(!b.active, "between blocks: none active");

        /* the same key again (an upsert) replaces the figures */
        put(&s, "d", t0 + 5 * H + 10 * M, 300, 3);
        blocks_current(&s, t0 + 6 * H, &b);
        is_int(b.cost_nano, 300, "upsert replaced, not added");
        is_int(s.n, 4, "still four calls");

        /* unpriced calls are counted apart */
        put(&s, "e", t0 + 6 * H, -1, 7);
        blocks_current(&s, t0 + 6 * H + M, &b);
        is_int(b.unpriced, 1, "one unpriced call");
        is_int(b.tokens, 10, "its tokens count");

        /* after a long gap, chaining restarts there */
        put(&s, "f", t0 + 30 * H, 5, 5);
        blocks_current(&s, t0 + 31 * H, &b);
        is_int(b.start_ms, t0 + 30 * H, "a call after a gap starts a block");
        blocks_current(&s, t0 + 36 * H, &b);
        ok(!b.active, "five hours later it has ended");

        block_set_forget_before(&s, t0 + 6 * H);
        is_int(s.n, 2, "forgetting old calls");
        block_set_free(&s);
        return tap_done();
}
