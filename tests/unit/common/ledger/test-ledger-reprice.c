/* Repricing a real LMDB ledger: computed rows take the new table's price in
 * bounded transactions, vendor rows are untouched, rollups and session sums
 * move by the difference (equal to a rebuild from the rows), and the 1-hour
 * cache-write part is summed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/reprice.h"
#include "pricing/pricing.h"
#include "tap.h"
#include "testutil.h"

#define T0 1782900000000LL /* 2026-07-01 */
#define N_ROWS 7

static struct usage_row rows[N_ROWS];

static void mk(struct usage_row *r, int i, const char *model, uint8_t src, int64_t cost)
{
        struct keyhash h;
        char id[32];

        memset(r, 0, sizeof(*r));
        snprintf(id, sizeof(id), "row-%d", i);
        keyhash_begin(&h, "test-reprice");
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = T0 + i * 60000LL * 20; /* across rollup buckets */
        r->input = 1000;
        r->output = 100;
        r->cache_write = 300;
        r->cache_write_1h = 100;
        r->total = 1400;
        r->cost_source = src;
        r->cost_nano = cost;
        ROW_SET(r->tool, "pi");
        ROW_SET(r->session, i < 4 ? "s1" : "s2");
        ROW_SET(r->provider, "anthropic");
        ROW_SET(r->model, model);
}

struct sums_list {
        struct usage_sums s[64];
        int n;
};

static int rollup_cb(const struct rollup_entry *e, void *u)
{
        struct sums_list *l = u;
        if (l->n < 64)
                l->s[l->n++] = e->sums;
        return 0;
}

static int session_cb(const struct session_entry *e, void *u)
{
        return rollup_cb(&(struct rollup_entry){.sums = e->sums}, u);
}

static void snapshot(struct ledger *l, struct sums_list *r, struct sums_list *s)
{
        memset(r, 0, sizeof(*r));
        memset(s, 0, sizeof(*s));
        ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, rollup_cb, r);
        ledger_foreach_session(l, session_cb, s);
}

static int apply(void *u, struct usage_row *row)
{
        return pricing_apply_row(u, row);
}

static int64_t total_cost(const struct sums_list *s)
{
        int64_t c = 0;
        for (int i = 0; i < s->n; i++)
                c += s->s[i].cost_nano;
        return c;
}

int main(void)
{
        char *dir = tap_tmpdir(), ov[PATH_MAX];
        struct price_table *t1, *t2;
        struct ledger *l;
        struct commit_result cr;
        struct reprice_result rr;
        struct sums_list r1, s1, r2, s2;

        is_int(price_table_load(NULL, &t1), 0, "built-in table");
        pj(ov, dir, "override.conf");
        write_file(ov, "price claude-sonnet-4-5 in=4 cw1h=8\n");
        is_int(price_table_load(ov, &t2), 0, "table with an override");
        is_int(ledger_open(dir, 0, &l), 0, "ledger opens");

        for (int i = 0; i < N_ROWS; i++)
                mk(&rows[i], i, "claude-sonnet-4-5", COST_NONE, 0);
        mk(&rows[5], 5, "claude-sonnet-4-5", COST_VENDOR, 123456); /* a vendor figure */
        mk(&rows[6], 6, "mystery", COST_NONE, 0);                   /* unknown model */
        for (int i = 0; i < N_ROWS; i++)
                pricing_apply_row(t1, &rows[i]);
        struct commit_batch b = {.rows = rows, .n_rows = N_ROWS};
        is_int(ledger_commit(l, &b, &cr), 0, "rows committed");
        int64_t per_row = 1000 * 3000LL + 100 * 15000LL + 200 * 3750LL + 100 * 6000LL;
        snapshot(l, &r1, &s1);
        is_int(total_cost(&r1), 5 * per_row + 123456, "rollups: five computed rows and the vendor one");
        uint64_t cw1h = 0;
        for (int i = 0; i < s1.n; i++)
                cw1h += s1.s[i].cache_write_1h;
        is_int((int64_t)cw1h, 100 * N_ROWS, "session sums carry the 1-hour cache-write part");

        is_int(ledger_reprice(l, apply, t2, 2, &rr), 0, "reprice with the override, 2 rows per txn");
        ok(rr.rows_seen == N_ROWS && rr.rows_changed == 5 && rr.txns == 4,
           "seen %llu, changed %llu (the computed ones), %llu transactions",
           (unsigned long long)rr.rows_seen, (unsigned long long)rr.rows_changed,
           (unsigned long long)rr.txns);
        int64_t per_row2 = 1000 * 4000LL + 100 * 15000LL + 200 * 3750LL + 100 * 8000LL;
        is_int(rr.cost_delta_nano, 5 * (per_row2 - per_row), "cost moved by the difference");
        struct usage_row got;
        is_int(ledger_get_row(l, &rows[5].key, &got), 0, "vendor row read back");
        ok(got.cost_nano == 123456 && got.cost_source == COST_VENDOR, "the vendor cost is untouched");
        ledger_get_row(l, &rows[0].key, &got);
        ok(got.cost_nano == per_row2 && got.cost_source == COST_COMPUTED, "a computed row has the new price");
        is_str(got.price_source, "override", "... and says the override priced it");
        ledger_get_row(l, &rows[6].key, &got);
        ok(got.cost_source == COST_NONE, "the unknown model stays unpriced");

        snapshot(l, &r1, &s1);
        is_int(total_cost(&r1), 5 * per_row2 + 123456, "rollups moved in the same transactions");
        is_int(total_cost(&s1), 5 * per_row2 + 123456, "session sums moved too");
        is_int(ledger_rebuild_rollups(l), 0, "rebuild");
        snapshot(l, &r2, &s2);
        ok(r1.n == r2.n && memcmp(r1.s, r2.s, sizeof(r1.s[0]) * (size_t)r1.n) == 0,
           "repriced rollups equal rebuilt ones (%d buckets)", r1.n);
        ok(s1.n == s2.n && memcmp(s1.s, s2.s, sizeof(s1.s[0]) * (size_t)s1.n) == 0,
           "repriced session sums equal rebuilt ones");

        is_int(ledger_reprice(l, apply, t2, 1000, &rr), 0, "reprice again");
        ok(rr.rows_changed == 0 && rr.txns == 1, "nothing left to change, one transaction");
        is_int(ledger_reprice(l, apply, t1, 1, &rr), 0, "back to the built-in table, 1 row per txn");
        snapshot(l, &r1, &s1);
        ok(rr.rows_changed == 5 && total_cost(&r1) == 5 * per_row + 123456, "prices back");

        ledger_close(l);
        is_int(ledger_open(dir, LEDGER_RDONLY, &l), 0, "read-only open");
        is_int(ledger_reprice(l, apply, t1, 10, &rr), -EROFS, "a read-only ledger refuses");
        ledger_close(l);
        price_table_free(t1);
        price_table_free(t2);
        return tap_done();
}
