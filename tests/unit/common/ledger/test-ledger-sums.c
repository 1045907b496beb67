/* A batch's rollups and session sums are kept in memory and written once
 * (ledger_sums_add / ledger_sums_flush): against the same rows committed
 * one per batch (each value read and written per row), on two real LMDB
 * ledgers, every rollup and session must come out identical, with upserts
 * that move a row to another bucket and session, ties in time, empty
 * models and projects, duplicates, and more keys in a batch than the
 * in-memory table holds. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "tap.h"

#define N_ROWS 600

static struct usage_row rows[N_ROWS];

static void make_rows(void)
{
        unsigned seed = 12345;
        const char *models[] = { "m-a", "m-b", "", "m-c" }, *projects[] = { "/p1", "", "/p2" };

        for (int i = 0; i < N_ROWS; i++) {
                struct usage_row *r = &rows[i];
                struct keyhash h;
                int base = i;
                seed = seed * 1103515245u + 12345u;
                memset(r, 0, sizeof(*r));
                /* every 5th row repeats an earlier call (an upsert: larger
                 * counts, sometimes an earlier time), every 11th is a copy */
                if (i > 10 && i % 5 == 0)
                        base = (int)(seed % (unsigned)i);
                keyhash_begin(&h, "sums-test");
                keyhash_u64(&h, (uint64_t)base);
                keyhash_end(&h, &r->key);
                r->kind = ROW_KIND_MESSAGE;
                r->flags = ROW_F_TOKENS_KNOWN | (i % 3 ? ROW_F_UPSERT : 0);
                if (base != i)
                        r->flags |= ROW_F_UPSERT;
                /* times on few values: ties, and buckets shared by runs of rows */
                r->time_ms = 1796000000000LL + (int64_t)((base * 7 + (base != i ? -(int)(seed % 3) : 0)) % 90) * 60000;
                r->input = 100 + (uint64_t)i;
                r->output = 10 + (uint64_t)(seed % 7);
                r->reasoning = (uint64_t)(seed % 5); /* a subset of output */
                r->cache_read = 1000 + (uint64_t)(seed % 997);
                r->cache_write = 50 + (uint64_t)(i % 13);
                r->cache_write_1h = (uint64_t)(i % 3 ? 0 : 20 + i % 7); /* part of cache_write */
                r->total = r->input + r->output + r->cache_read + r->cache_write;
                r->cost_source = i % 4 ? COST_VENDOR : COST_NONE;
                r->cost_nano = 1000 * (int64_t)i;
                r->n_calls = 0;
                ROW_SET(r->tool, i % 7 ? "pi" : "codex");
                char sess[32];
                snprintf(sess, sizeof(sess), "s-%d", (base / 13) % 41); /* 41 sessions: more than the table */
                row_set_str(r->session, sizeof(r->session), sess, strlen(sess));
                ROW_SET(r->project, projects[(base + i) % 3]);
                ROW_SET(r->provider, "prov");
                ROW_SET(r->model, models[(base + i) % 4]);
                if (i % 11 == 0 && i > 0)
                        *r = rows[i - 1]; /* an exact copy: a duplicate */
        }
}

static int commit_in(struct ledger *l, size_t per_batch)
{
        for (size_t i = 0; i < N_ROWS; i += per_batch) {
                struct commit_batch b = {.rows = &rows[i], .n_rows = i + per_batch <= N_ROWS ? per_batch : N_ROWS - i};
                if (ledger_commit(l, &b, NULL) < 0)
                        return -1;
        }
        return 0;
}

struct dump {
        char *buf;
        size_t len, cap;
};

static void add(struct dump *d, const void *p, size_t n)
{
        if (d->len + n > d->cap) {
                d->cap = (d->len + n) * 2;
                d->buf = realloc(d->buf, d->cap);
                if (!d->buf)
                        abort();
        }
        memcpy(d->buf + d->len, p, n);
        d->len += n;
}

static int rollup_fn(const struct rollup_entry *e, void *u)
{
        add(u, e, sizeof(*e));
        return 0;
}

static int session_fn(const struct session_entry *e, void *u)
{
        add(u, e, sizeof(*e));
        return 0;
}

/* Every token field and the cost: of the stored rows (the truth after
 * merges), and of the rollups and sessions built from them. */
struct fields {
        uint64_t input, output, cache_read, cache_write, cache_write_1h, reasoning, total;
        int64_t cost_nano;
};

static int row_fields(const struct usage_row *r, void *u)
{
        struct fields *f = u;
        f->input += r->input;
        f->output += r->output;
        f->cache_read += r->cache_read;
        f->cache_write += r->cache_write;
        f->cache_write_1h += r->cache_write_1h;
        f->reasoning += r->reasoning;
        f->total += r->total;
        if (r->cost_source != COST_NONE)
                f->cost_nano += r->cost_nano;
        return 0;
}

static void sums_fields(const struct usage_sums *s, struct fields *f)
{
        f->input += s->input;
        f->output += s->output;
        f->cache_read += s->cache_read;
        f->cache_write += s->cache_write;
        f->cache_write_1h += s->cache_write_1h;
        f->reasoning += s->reasoning;
        f->total += s->total;
        f->cost_nano += s->cost_nano;
}

/* through usage_sums_add, as every report entry sums its rollups */
static int rollup_fields(const struct rollup_entry *e, void *u)
{
        usage_sums_add(u, &e->sums);
        return 0;
}

static int session_fields(const struct session_entry *e, void *u)
{
        usage_sums_add(u, &e->sums);
        return 0;
}

static bool fields_eq(const struct fields *a, const struct fields *b, const char *what)
{
        bool eq = memcmp(a, b, sizeof(*a)) == 0;
        if (!eq)
                printf("# %s: input %llu/%llu output %llu/%llu cache_read %llu/%llu cache_write %llu/%llu "
                       "1h %llu/%llu reasoning %llu/%llu total %llu/%llu cost %lld/%lld\n", what,
                       (unsigned long long)a->input, (unsigned long long)b->input, (unsigned long long)a->output,
                       (unsigned long long)b->output, (unsigned long long)a->cache_read,
                       (unsigned long long)b->cache_read, (unsigned long long)a->cache_write,
                       (unsigned long long)b->cache_write, (unsigned long long)a->cache_write_1h,
                       (unsigned long long)b->cache_write_1h, (unsigned long long)a->reasoning,
                       (unsigned long long)b->reasoning, (unsigned long long)a->total,
                       (unsigned long long)b->total, (long long)a->cost_nano, (long long)b->cost_nano);
        return eq;
}

int main(void)
{
        char da[300], db[300], cmd[700];
        struct ledger *a, *b;
        struct dump ra = {0}, rb = {0}, sa = {0}, sb = {0};
        struct ledger_stats st;

        make_rows();
        snprintf(da, sizeof(da), "%s/a", tap_tmpdir());
        snprintf(db, sizeof(db), "%s/b", tap_tmpdir());
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s'", da, db);
        if (system(cmd) != 0 || ledger_open(da, 0, &a) < 0 || ledger_open(db, 0, &b) < 0)
                return 99;
        ok(commit_in(a, 200) == 0, "600 rows in batches of 200 (a batch's sums in memory)");
        ok(commit_in(b, 1) == 0, "the same rows one per batch (each value read and written per row)");
        ok(ledger_foreach_rollup(a, INT64_MIN, INT64_MAX, rollup_fn, &ra) == 0 &&
                   ledger_foreach_rollup(b, INT64_MIN, INT64_MAX, rollup_fn, &rb) == 0,
           "rollups read back");
        ok(ra.len > 0 && ra.len == rb.len && memcmp(ra.buf, rb.buf, ra.len) == 0,
           "every rollup identical (%zu of them)", ra.len / sizeof(struct rollup_entry));
        ok(ledger_foreach_session(a, session_fn, &sa) == 0 && ledger_foreach_session(b, session_fn, &sb) == 0,
           "sessions read back");
        ok(sa.len / sizeof(struct session_entry) > 32, "more sessions (%zu) than the in-memory table holds",
           sa.len / sizeof(struct session_entry));
        ok(sa.len == sb.len && memcmp(sa.buf, sb.buf, sa.len) == 0,
           "every session identical: sums, first, last, model, project");
        {
                struct fields fr = { 0 }, fro = { 0 }, fs = { 0 };
                struct usage_sums sro = { 0 }, ss = { 0 };
                ledger_foreach_row(a, row_fields, &fr);
                ledger_foreach_rollup(a, INT64_MIN, INT64_MAX, rollup_fields, &sro);
                ledger_foreach_session(a, session_fields, &ss);
                sums_fields(&sro, &fro);
                sums_fields(&ss, &fs);
                ok(fr.cache_read && fr.cache_write_1h && fr.reasoning, "rows carry every token field");
                ok(fields_eq(&fr, &fro, "rollups"), "the rollups sum every field of the rows (cache, 1h, reasoning)");
                ok(fields_eq(&fr, &fs, "sessions"), "the sessions sum every field of the rows");
        }
        int sr = ledger_get_stats(a, &st);
        ok(sr == 0 && st.rows > 0 && st.rows < N_ROWS, "upserts and copies merged (%llu rows)",
           sr == 0 ? (unsigned long long)st.rows : 0ULL);

        /* the same rows again: every one a duplicate or a no-op merge */
        free(ra.buf);
        ra = (struct dump){0};
        ok(commit_in(a, 200) == 0, "the rows once more");
        ok(ledger_foreach_rollup(a, INT64_MIN, INT64_MAX, rollup_fn, &ra) == 0 && ra.len == rb.len &&
                   memcmp(ra.buf, rb.buf, ra.len) == 0,
           "... nothing counted twice");
        free(ra.buf);
        free(rb.buf);
        free(sa.buf);
        free(sb.buf);
        ledger_close(a);
        ledger_close(b);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tap_tmpdir());
        if (system(cmd) != 0)
                printf("# could not clean up\n");
        return tap_done();
}
