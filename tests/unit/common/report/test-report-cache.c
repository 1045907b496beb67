/* The daemon's report cache against the plain builder on a real LMDB
 * ledger: for every rollup report kind, zones with 30- and 45-minute
 * offsets, ranges, harness filters and breakdowns, the cached answer is
 * the uncached one byte for byte; a second ask is a hit; a row inside the
 * window around now keeps the cache (and is counted), also in a group
 * the cache has not got (its row in order, the totals summed again), a
 * row before or after it, a rebuild or a moved window make it read
 * everything again. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "tap.h"
#include "timefmt.h"

static struct ledger *L;
static int64_t NOW;

static void put(int n, const char *tool, const char *model, int64_t ms)
{
        static struct usage_row r;
        struct keyhash h;
        char id[32];

        memset(&r, 0, sizeof(r));
        snprintf(id, sizeof(id), "%s-%d-%lld", tool, n, (long long)ms);
        keyhash_begin(&h, "cache-test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r.key);
        r.kind = ROW_KIND_MESSAGE;
        r.flags = ROW_F_TOKENS_KNOWN;
        r.time_ms = ms;
        r.input = 100 + (uint64_t)n;
        r.output = 10;
        r.total = r.input + r.output;
        r.cost_source = COST_VENDOR;
        r.cost_nano = 1000000 + n;
        ROW_SET(r.tool, tool);
        row_set_str(r.session, sizeof(r.session), id, strlen(id));
        ROW_SET(r.project, "/p");
        ROW_SET(r.provider, "prov");
        ROW_SET(r.model, model);
        struct commit_batch b = {.rows = &r, .n_rows = 1};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

struct ask {
        enum report_kind kind;
        const char *tz, *since, *until, *harness;
        enum report_breakdown bd;
};

static const struct ask asks[] = {
        { REPORT_DAILY, "UTC", NULL, NULL, NULL, 0 },
        { REPORT_DAILY, "Asia/Kolkata", NULL, NULL, NULL, 0 },
        { REPORT_DAILY, "Asia/Kathmandu", NULL, NULL, "pi", 0 },
        { REPORT_DAILY, "America/New_York", NULL, NULL, NULL, REPORT_BREAKDOWN_MODEL },
        { REPORT_DAILY, "UTC", NULL, NULL, NULL, REPORT_BREAKDOWN_HARNESS },
        { REPORT_WEEKLY, "Europe/Berlin", NULL, NULL, NULL, 0 },
        { REPORT_MONTHLY, "UTC", NULL, NULL, NULL, 0 },
        { REPORT_MODEL, "UTC", NULL, NULL, NULL, 0 },
        { REPORT_MODEL, "UTC", NULL, NULL, "codex", 0 },
};
#define N_ASKS (sizeof(asks) / sizeof(asks[0]))

static char *text(const struct ask *a, struct report_cache *rc, const char *since, const char *until)
{
        struct report_query q = {.kind = a->kind, .tz = a->tz, .since = since, .until = until, .breakdown = a->bd};
        char hb[32], *t = NULL;
        size_t n;
        const char *err;

        if (a->harness) {
                snprintf(hb, sizeof(hb), "%s", a->harness);
                report_parse_harness_list(hb, &q);
        }
        if (report_run_text(L, rc, &q, &t, &n, &err) < 0)
                return NULL;
        return t;
}

static char day_ago[11], days5_ago[11], today[11];

/* Every ask (and each with a range across the floor, one before it and one
 * after it) cached and not: the same text. */
static int compare_all(struct report_cache *rc, const char *when)
{
        const char *ranges[][2] = { { NULL, NULL }, { days5_ago, today }, { days5_ago, day_ago }, { today, NULL } };
        int bad = 0;

        for (size_t i = 0; i < N_ASKS; i++)
                for (size_t k = 0; k < 4; k++) {
                        const char *since = asks[i].since ? asks[i].since : ranges[k][0];
                        const char *until = asks[i].until ? asks[i].until : ranges[k][1];
                        char *a = text(&asks[i], NULL, since, until), *b = text(&asks[i], rc, since, until);
                        if (!a || !b || strcmp(a, b) != 0) {
                                bad++;
                                printf("# %s: ask %zu range %zu differs:\n#  plain  %.300s\n#  cached %.300s\n", when, i,
                                       k, a ? a : "(failed)", b ? b : "(failed)");
                        }
                        free(a);
                        free(b);
                }
        return bad;
}

/* A report's rows in strictly increasing (key, harness) order (with no
 * breakdown: a model report's group is its harness), and its totals the
 * sum of its rows' events and cost (each row rounded to the micro-dollar):
 * 0, or the number of faults. */
static int order_and_totals(const char *t, bool ordered, const char *when)
{
        json_object *o = t ? json_tokener_parse(t) : NULL, *rows, *tot, *v;
        long long ev = 0, tot_ev = -1;
        double cost = 0, tot_cost = -1;
        int bad = 0;

        if (!o || !json_object_object_get_ex(o, "rows", &rows) || !json_object_object_get_ex(o, "totals", &tot)) {
                json_object_put(o);
                return 1;
        }
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *r = json_object_array_get_idx(rows, i), *k, *h;
                if (json_object_object_get_ex(r, "events", &v))
                        ev += json_object_get_int64(v);
                if (json_object_object_get_ex(r, "cost_usd", &v))
                        cost += json_object_get_double(v);
                if (i == 0 || !ordered)
                        continue;
                json_object *p = json_object_array_get_idx(rows, i - 1), *pk, *ph;
                json_object_object_get_ex(r, "key", &k);
                json_object_object_get_ex(p, "key", &pk);
                int c = strcmp(json_object_get_string(pk), json_object_get_string(k));
                if (c == 0 && json_object_object_get_ex(r, "harness", &h) &&
                    json_object_object_get_ex(p, "harness", &ph))
                        c = strcmp(json_object_get_string(ph), json_object_get_string(h));
                if (c >= 0) {
                        printf("# %s: row %zu (%s) not after row %zu (%s)\n", when, i, json_object_get_string(k),
                               i - 1, json_object_get_string(pk));
                        bad++;
                }
        }
        if (json_object_object_get_ex(tot, "events", &v))
                tot_ev = json_object_get_int64(v);
        if (json_object_object_get_ex(tot, "cost_usd", &v))
                tot_cost = json_object_get_double(v);
        double slack = 1e-6 * (double)(json_object_array_length(rows) + 1);
        if (ev != tot_ev || cost - tot_cost > slack || tot_cost - cost > slack) {
                printf("# %s: totals %lld events %.6f USD, rows sum to %lld, %.6f\n", when, tot_ev, tot_cost, ev, cost);
                bad++;
        }
        json_object_put(o);
        return bad;
}

/* report_build_cached's rows (a hit: the cached entries copied, the
 * window's added and merged in) against report_build's: the same rows in
 * the same order with the same sums. */
static int rows_equal(const struct ask *a, struct report_cache *rc)
{
        struct report_query q = {.kind = a->kind, .tz = a->tz, .breakdown = a->bd};
        struct report_result x, y;
        const char *err;
        int bad = 0;

        if (report_build(L, &q, &x, &err) < 0)
                return 1;
        if (report_build_cached(L, rc, &q, &y, &err) < 0) {
                report_result_free(&x);
                return 1;
        }
        if (x.n != y.n || memcmp(&x.totals, &y.totals, sizeof(x.totals)) != 0)
                bad++;
        for (size_t i = 0; !bad && i < x.n; i++)
                if (strcmp(x.rows[i].key, y.rows[i].key) != 0 || strcmp(x.rows[i].group, y.rows[i].group) != 0 ||
                    memcmp(&x.rows[i].sums, &y.rows[i].sums, sizeof(x.rows[i].sums)) != 0)
                        bad++;
        report_result_free(&x);
        report_result_free(&y);
        return bad;
}

static double events(struct report_cache *rc)
{
        char *t = text(&asks[0], rc, NULL, NULL);
        json_object *o = t ? json_tokener_parse(t) : NULL, *tot, *ev;
        double v = o && json_object_object_get_ex(o, "totals", &tot) && json_object_object_get_ex(tot, "events", &ev)
                           ? json_object_get_double(ev)
                           : -1;
        json_object_put(o);
        free(t);
        return v;
}

int main(void)
{
        char dir[300], cmd[400];
        struct report_cache *rc;
        struct report_cache_stats st0, st;
        int64_t lo, hi;
        uint64_t epoch;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0 || !(rc = report_cache_new()))
                return 99;
        NOW = timefmt_now_ms();
        timefmt_day(NOW - 24 * 3600000LL, "UTC", day_ago);
        timefmt_day(NOW - 5 * 24 * 3600000LL, "UTC", days5_ago);
        timefmt_day(NOW, "UTC", today);
        /* 40 days of history, every 7 hours and a bit, and the last hours */
        for (int i = 0; i < 140; i++)
                put(i, i % 3 ? "pi" : "codex", i % 2 ? "m-a" : "m-b", NOW - 40 * 24 * 3600000LL + i * 25300000LL);
        for (int i = 0; i < 6; i++)
                put(1000 + i, "pi", "m-a", NOW - i * 700000LL);
        put(1100, "pi", "m-x", NOW - 10 * 24 * 3600000LL); /* a model only outside the window */

        ledger_rollup_window(L, &lo, &hi, &epoch);
        ok(lo > hi, "a new ledger handle has no rollup window");
        is_int(compare_all(rc, "first"), 0, "every ask, cached and not: the same text");
        ledger_rollup_window(L, &lo, &hi, &epoch);
        ok(lo < NOW - 23 * 3600000LL && lo > NOW - 25 * 3600000LL && hi > NOW + 23 * 3600000LL &&
                   hi < NOW + 25 * 3600000LL,
           "the cache set the window to a day each side of now");
        report_cache_get_stats(rc, &st0);
        is_int(st0.misses, 4 * N_ASKS, "each of the 36 different asks read the rollups outside once (a miss)");
        is_int(compare_all(rc, "again"), 0, "asked again (more asks than slots: evicted and refilled): the same text");
        report_cache_get_stats(rc, &st0);
        for (int k = 0; k < 3; k++)
                for (size_t i = 0; i < 8; i++) /* as many asks as slots */
                        free(text(&asks[i], rc, NULL, NULL));
        report_cache_get_stats(rc, &st);
        ok(st.misses - st0.misses <= 8 && st.hits - st0.hits >= 16,
           "8 asks three times: the repeats come from the cache (%llu misses, %llu hits)",
           (unsigned long long)(st.misses - st0.misses), (unsigned long long)(st.hits - st0.hits));

        double before = events(rc);
        put(2000, "codex", "m-c", NOW - 60000); /* inside the window: a live row */
        report_cache_get_stats(rc, &st0);
        is_int(events(rc), before + 1, "a row inside the window is counted at once");
        report_cache_get_stats(rc, &st);
        is_int(st.hits - st0.hits, 1, "... with the cache kept");
        is_int(compare_all(rc, "after a new row"), 0, "... and every ask still equals the uncached one");

        /* rows in the window whose groups the cache has not got and that
         * sort first, between and last among the cached ones: each takes
         * its place, and the totals count it once */
        (void)events(rc);
        put(2010, "amp", "a-first", NOW - 120000);
        put(2011, "pi", "m-ab", NOW - 180000);
        put(2012, "zed", "z-last", NOW - 240000);
        report_cache_get_stats(rc, &st0);
        is_int(events(rc), before + 4, "three more rows inside the window are counted at once");
        report_cache_get_stats(rc, &st);
        is_int(st.hits - st0.hits, 1, "... with the cache kept");
        int faults = 0;
        report_cache_get_stats(rc, &st0);
        for (size_t i = 0; i < N_ASKS; i++) {
                free(text(&asks[i], rc, NULL, NULL)); /* cached, if it was not */
                char *t = text(&asks[i], rc, NULL, NULL), *plain = text(&asks[i], NULL, NULL, NULL);
                faults += order_and_totals(t, asks[i].bd == REPORT_BREAKDOWN_NONE, "new groups in the window");
                faults += !t || !plain || strcmp(t, plain) != 0;
                free(t);
                free(plain);
        }
        report_cache_get_stats(rc, &st);
        is_int(faults, 0, "every ask from the cache: rows in order, totals the sum of the rows, as uncached");
        ok(st.hits - st0.hits >= N_ASKS, "... each answered from the cache (%llu hits)",
           (unsigned long long)(st.hits - st0.hits));
        is_int(compare_all(rc, "after new groups"), 0, "every ask and range equals the uncached one");
        faults = 0;
        for (size_t i = 0; i < N_ASKS; i++)
                faults += rows_equal(&asks[i], rc);
        is_int(faults, 0, "the cached builder's rows (entries copied, new ones merged in) equal the plain builder's");
        before += 3;

        const int64_t outside[] = { NOW - 3 * 24 * 3600000LL, NOW + 3 * 24 * 3600000LL };
        for (int k = 0; k < 2; k++) {
                (void)events(rc); /* asks[0] cached */
                put(2001 + k, "pi", "m-a", outside[k]); /* a late file, a clock ahead */
                report_cache_get_stats(rc, &st0);
                is_int(events(rc), before + 2 + k, k ? "a row after the window is counted at once"
                                                     : "a row before the window is counted at once");
                report_cache_get_stats(rc, &st);
                is_int(st.misses - st0.misses, 1, "... by reading the rollups outside again (a miss)");
        }
        is_int(compare_all(rc, "after rows outside"), 0, "... and every ask equals the uncached one");

        (void)events(rc);
        ok(ledger_rebuild_rollups(L) == 0, "rollups rebuilt from the rows");
        report_cache_get_stats(rc, &st0);
        is_int(events(rc), before + 3, "after a rebuild: the same totals");
        report_cache_get_stats(rc, &st);
        is_int(st.misses - st0.misses, 1, "... read again (a rebuild changes the epoch)");

        ledger_rollup_window_set(L, NOW - 36 * 3600000LL, NOW + 36 * 3600000LL);
        report_cache_get_stats(rc, &st0);
        is_int(compare_all(rc, "window moved"), 0, "a window of 36 hours each side: every ask equals the uncached one");
        report_cache_get_stats(rc, &st);
        ok(st.misses > st0.misses, "... after reading again under the new window");
        before = events(rc); /* fills asks[0]'s slot under the new window */
        put(2003, "pi", "m-b", NOW - 30 * 3600000LL); /* inside that window, outside the first */
        report_cache_get_stats(rc, &st0);
        is_int(events(rc), before + 1, "a row 30 hours back, inside the moved window: counted");
        report_cache_get_stats(rc, &st);
        is_int(st.hits - st0.hits, 1, "... from the cache");

        ledger_rollup_window_set(L, NOW - 72 * 3600000LL, NOW - 20 * 3600000LL);
        free(text(&asks[0], rc, NULL, NULL));
        ledger_rollup_window(L, &lo, &hi, &epoch);
        ok(lo > NOW - 25 * 3600000LL && hi > NOW, "a window now has left is moved back around now");

        report_cache_free(rc);
        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
        return tap_done();
}
