/* Unit tests for the per-row bounds (common/row-bounds.c), the saturating
 * sums (ledger/sums.c) and the state-directory lock (daemon/statelock.c). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ledger/ledger.h"
#include "row-bounds.h"
#include "statelock.h"
#include "tap.h"

static struct usage_row good(void)
{
        struct usage_row r;
        memset(&r, 0, sizeof(r));
        r.flags = ROW_F_TOKENS_KNOWN;
        r.time_ms = 1767225600000LL;
        r.input = 100;
        r.output = 10;
        r.total = 110;
        r.cost_nano = 5000;
        r.cost_source = COST_VENDOR;
        return r;
}

int main(void)
{
        struct usage_row r = good();
        is_int(row_check_bounds(&r), ROW_IN_BOUNDS, "an ordinary row is in bounds");

        /* tokens: each class, the 1-hour part, the total */
        static const size_t offs[] = {
                offsetof(struct usage_row, input), offsetof(struct usage_row, output),
                offsetof(struct usage_row, cache_read), offsetof(struct usage_row, cache_write),
                offsetof(struct usage_row, reasoning), offsetof(struct usage_row, cache_write_1h),
        };
        for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
                r = good();
                uint64_t *f = (uint64_t *)((char *)&r + offs[i]);
                *f = ROW_TOKENS_MAX;
                ok(row_check_bounds(&r) == ROW_IN_BOUNDS, "token field %zu at 2^40: in bounds", i);
                *f = ROW_TOKENS_MAX + 1;
                ok(row_check_bounds(&r) == ROW_BAD_TOKENS, "token field %zu at 2^40+1: refused", i);
                *f = UINT64_MAX;
                ok(row_check_bounds(&r) == ROW_BAD_TOKENS, "token field %zu at 2^64-1: refused", i);
        }
        r = good();
        r.total = ROW_TOTAL_MAX + 1;
        is_int(row_check_bounds(&r), ROW_BAD_TOKENS, "a total above 2^42 is refused");

        /* cost: only for priced rows */
        r = good();
        r.cost_nano = -1;
        is_int(row_check_bounds(&r), ROW_BAD_COST, "a negative cost is refused");
        r.cost_nano = ROW_COST_NANO_MAX;
        is_int(row_check_bounds(&r), ROW_IN_BOUNDS, "$1,000,000 exactly is in bounds");
        r.cost_nano = ROW_COST_NANO_MAX + 1;
        is_int(row_check_bounds(&r), ROW_BAD_COST, "above $1,000,000 is refused");
        r.cost_nano = INT64_MAX;
        is_int(row_check_bounds(&r), ROW_BAD_COST, "INT64_MAX (what an adapter gives for 1e10) is refused");
        r.cost_source = COST_NONE;
        is_int(row_check_bounds(&r), ROW_IN_BOUNDS, "an unpriced row's cost field is not looked at");

        /* time */
        r = good();
        r.time_ms = 0;
        is_int(row_check_bounds(&r), ROW_IN_BOUNDS, "the epoch is in bounds");
        r.time_ms = -1;
        is_int(row_check_bounds(&r), ROW_BAD_TIME, "before 1970 is refused");
        r.time_ms = ROW_TIME_MS_MAX + 1;
        is_int(row_check_bounds(&r), ROW_BAD_TIME, "after 9999 is refused");
        is_str(row_refusal_name(ROW_BAD_COST), "cost", "reason names");
        ok(row_refusal_name(ROW_IN_BOUNDS) == NULL, "no name for in bounds");

        /* sums saturate, and stay saturated when a row is taken out */
        struct usage_sums s = {0};
        r = good();
        r.cost_nano = ROW_COST_NANO_MAX;
        r.input = ROW_TOKENS_MAX;
        for (int i = 0; i < 10000; i++)
                usage_sums_add_row(&s, &r, +1);
        ok(s.cost_nano == INT64_MAX, "10,000 x $1M: cost saturates at INT64_MAX, not negative");
        is_int(s.input, 10000 * ROW_TOKENS_MAX, "tokens below 2^64 are exact");
        usage_sums_add_row(&s, &r, -1);
        ok(s.cost_nano == INT64_MAX, "taking a row out of a saturated cost leaves it saturated");
        is_int(s.input, 9999 * ROW_TOKENS_MAX, "... while an exact sum goes down exactly");
        struct usage_sums big = {.input = UINT64_MAX - 5, .cost_nano = INT64_MAX - 5, .events = 1};
        usage_sums_add(&big, &s);
        ok(big.input == UINT64_MAX && big.cost_nano == INT64_MAX, "usage_sums_add saturates");
        struct usage_sums ex = {0};
        r = good();
        usage_sums_add_row(&ex, &r, +1);
        usage_sums_add_row(&ex, &r, +1);
        usage_sums_add_row(&ex, &r, -1);
        ok(ex.input == 100 && ex.cost_nano == 5000 && ex.events == 1, "add, add, remove: exact");

        /* the state lock: a second taker is refused, told the holder's pid */
        char *dir = tap_tmpdir();
        int fd = -1, fd2 = -1;
        pid_t holder = 0;
        is_int(statelock_take(dir, &fd, &holder), 0, "the first take succeeds");
        pid_t child = fork();
        if (child == 0) {
                int f = -1;
                pid_t h = 0;
                int r2 = statelock_take(dir, &f, &h);
                _exit(r2 == -EWOULDBLOCK && h == getppid() ? 0 : 1);
        }
        int st = 0;
        waitpid(child, &st, 0);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another process is refused and told our pid");
        is_int(statelock_take(dir, &fd2, &holder), -EWOULDBLOCK, "a second open in this process too");
        close(fd);
        is_int(statelock_take(dir, &fd2, &holder), 0, "once released it can be taken again");
        close(fd2);
        return tap_done();
}
