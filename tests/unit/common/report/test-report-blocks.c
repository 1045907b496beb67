/* 5-hour blocks: a block starts at the first call after the previous one
 * ended, per harness; checked on hand-made gaps and against an independent
 * count over pseudo-random call times; the active block's elapsed time,
 * burn rate and projection; totals equal the daily report's. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "report-test.h"
#include "tap.h"
#include "timefmt.h"

#define H (3600 * 1000LL)
#define T0 1764547200000LL /* 2025-12-01T00:00:00Z */

static struct ledger *L;
static int n_put;

static void put(const char *tool, int64_t t, int64_t cost_nano)
{
        static struct usage_row r;
        struct keyhash h;
        memset(&r, 0, sizeof(r));
        keyhash_begin(&h, "blocks-test");
        keyhash_u64(&h, (uint64_t)n_put++);
        keyhash_end(&h, &r.key);
        r.kind = ROW_KIND_MESSAGE;
        r.flags = ROW_F_TOKENS_KNOWN;
        r.time_ms = t;
        r.input = 1000;
        r.output = 200;
        r.total = 1200;
        r.cost_source = COST_VENDOR;
        r.cost_nano = cost_nano;
        ROW_SET(r.tool, tool);
        ROW_SET(r.session, "s");
        struct commit_batch b = {.rows = &r, .n_rows = 1};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

static json_object *blocks(int64_t now, const char *harness)
{
        return rep_run(L, (struct report_query){.kind = REPORT_BLOCKS, .tz = "UTC", .now_ms = now}, harness);
}

/* The independent count: times sorted ascending, a block per start. */
static size_t naive(const int64_t *t, size_t n, int64_t *starts, int *counts)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (k == 0 || t[i] >= starts[k - 1] + 5 * H) {
                        starts[k] = t[i];
                        counts[k++] = 0;
                }
                counts[k - 1]++;
        }
        return k;
}

static int cmp64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

int main(void)
{
        char dir[300], cmd[400];

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0)
                return 99;
        /* pi: 0, 1h, 4h59m | 5h (exactly at the end: a new block) | gap | 11h, 15h */
        put("pi", T0, 1000000);
        put("pi", T0 + 1 * H, 1000000);
        put("pi", T0 + 5 * H - 60000, 1000000);
        put("pi", T0 + 5 * H, 2000000);
        put("pi", T0 + 11 * H, 3000000);
        put("pi", T0 + 15 * H, 3000000);
        /* openclaw: its own blocks, interleaved in time */
        put("openclaw", T0 + 2 * H, 5000000);
        put("openclaw", T0 + 8 * H, 5000000);

        json_object *o = blocks(T0 + 17 * H, "pi"), *rows = rep_field(o, "rows");
        is_int(json_object_array_length(rows), 3, "pi: three blocks");
        static const char *const want_start[] = {"2025-12-01T00:00:00.000Z", "2025-12-01T05:00:00.000Z",
                                                 "2025-12-01T11:00:00.000Z"};
        static const int want_events[] = {3, 1, 2};
        for (int i = 0; i < 3; i++) {
                json_object *r = json_object_array_get_idx(rows, (size_t)i);
                is_str(json_object_get_string(rep_field(r, "start")), want_start[i], "block start");
                is_int(json_object_get_int64(rep_field(r, "events")), want_events[i], "block events");
        }
        json_object *b0 = json_object_array_get_idx(rows, 0), *b2 = json_object_array_get_idx(rows, 2);
        is_str(json_object_get_string(rep_field(b0, "end")), "2025-12-01T05:00:00.000Z", "block ends 5 h after its start");
        is_str(json_object_get_string(rep_field(b0, "last")), "2025-12-01T04:59:00.000Z", "last call in it");
        ok(!json_object_get_boolean(rep_field(b0, "active")), "an old block is not active");

        /* now = 17h: the 11h block is active, 6 h elapsed? no: 11h + 5h = 16h, ended */
        ok(!json_object_get_boolean(rep_field(b2, "active")), "a block whose five hours are over is not active");
        json_object_put(o);

        /* now = 13h: 2 h into the 11h block, which holds $0.006 (11h and 15h:
         * the ledger's calls, whatever "now" says) */
        o = blocks(T0 + 13 * H, "pi");
        rows = rep_field(o, "rows");
        json_object *act = json_object_array_get_idx(rows, 2);
        ok(json_object_get_boolean(rep_field(act, "active")), "at 13h the 11h block is active");
        is_int(json_object_get_int64(rep_field(act, "elapsed_s")), 2 * 3600, "elapsed 2 h");
        is_int(json_object_get_int64(rep_field(act, "remaining_s")), 3 * 3600, "remaining 3 h");
        is_str(json_object_to_json_string(rep_field(act, "burn_usd_per_hour")), "0.003000", "burn: $0.006 / 2 h");
        is_str(json_object_to_json_string(rep_field(act, "projected_cost_usd")), "0.015000",
               "projection: $0.006 + 3 h x $0.003");
        is_int(json_object_get_int64(rep_field(act, "tokens_per_hour")), 1200, "tokens per hour: 2400 / 2 h");
        is_int(json_object_get_int64(rep_field(act, "events")), 2, "the 11h and 15h calls share the block");
        json_object_put(o);

        /* both harnesses: each has its own windows; totals = daily totals */
        o = blocks(T0 + 30 * H, NULL);
        rows = rep_field(o, "rows");
        is_int(json_object_array_length(rows), 5, "pi's 3 blocks and openclaw's 2 (2h and 8h: 6 h apart)");
        struct report_query dq = {.kind = REPORT_DAILY, .tz = "UTC"};
        json_object *d = NULL;
        report_run(L, &dq, &d, NULL);
        is_str(json_object_to_json_string(rep_field(rep_field(o, "totals"), "cost_usd")),
               json_object_to_json_string(rep_field(rep_field(d, "totals"), "cost_usd")), "blocks total cost = daily");
        is_int(json_object_get_int64(rep_field(rep_field(o, "totals"), "events")),
               json_object_get_int64(rep_field(rep_field(d, "totals"), "events")), "blocks total events = daily");
        json_object_put(d);
        json_object_put(o);

        /* an independent count over pseudo-random gaps */
        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                return 99;
        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0)
                return 99;
        int64_t t[400], starts[400];
        int counts[400];
        uint64_t x = 88172645463325252ULL;
        int64_t now = T0;
        for (int i = 0; i < 400; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                now += (int64_t)(x % (7 * H)) / (1 + (int64_t)(x >> 60)); /* gaps from 0 to 7 h */
                t[i] = now;
                put("pi", now, 1000);
        }
        qsort(t, 400, sizeof(t[0]), cmp64);
        size_t nb = naive(t, 400, starts, counts);
        o = blocks(now + 100 * H, NULL);
        rows = rep_field(o, "rows");
        bool same = json_object_array_length(rows) == nb;
        for (size_t i = 0; same && i < nb; i++) {
                json_object *r = json_object_array_get_idx(rows, i);
                char s[32];
                timefmt_format_utc(starts[i], s);
                same = strcmp(json_object_get_string(rep_field(r, "start")), s) == 0 &&
                       json_object_get_int64(rep_field(r, "events")) == counts[i];
        }
        ok(same, "400 calls with random gaps: the same %zu blocks as an independent count", nb);
        ok(nb > 20 && nb < 400, "... a fair number of blocks (%zu)", nb);
        json_object_put(o);

        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
        return tap_done();
}
