/* The row half of the ledger: commit (insert-if-absent or monotone upsert,
 * with calls; the sums follow in ledger/sums.c) and reading rows back. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"
#include "row-bounds.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- commit -------------------------------------------------------------- */

/* The incoming row's calls that its stored row lacks, under the row's id,
 * each call key once. A new row (grow_into NULL): its calls at their own
 * indexes, appended. A merge: those whose call key is not there yet,
 * numbered after the stored row's calls and counted into grow_into->n_calls. */
static int put_calls(struct ledger *l, MDB_txn *txn, uint64_t id, const struct usage_row *in,
                     struct usage_row *grow_into, size_t *added)
{
        const struct usage_row *m = grow_into ? grow_into : in;
        bool grow = grow_into != NULL;
        uint32_t n = in->n_calls < ROW_CALLS_MAX ? in->n_calls : ROW_CALLS_MAX;
        uint32_t have = m->n_calls, next = 0;
        struct row_key stored[ROW_CALLS_MAX];
        size_t n_stored = 0;
        int r;

        if (grow && n && (r = store_calls_of(l, txn, id, stored, ROW_CALLS_MAX, &n_stored, &next)) < 0)
                return r;
        if (have < next)
                have = next; /* never an index taken already */
        for (uint32_t i = 0; i < n; i++) {
                const struct tool_call *c = &in->calls[i];
                uint8_t vb[64 + ROW_TOOL_MAX + CALL_NAME_MAX];
                struct activity_entry e = {.usage_key = m->key, .time_ms = m->time_ms,
                                           .index = grow ? have : i};
                struct row_key ck;
                size_t len;
                bool known = false;

                row_call_key(&m->key, i, c->id, &ck);
                for (size_t j = 0; j < n_stored && !known; j++)
                        known = memcmp(stored[j].b, ck.b, ROW_KEY_SIZE) == 0;
                if (known)
                        continue;
                memcpy(e.tool, m->tool, sizeof(e.tool));
                memcpy(e.name, c->name, sizeof(e.name));
                r = ledger_activity_encode(&e, vb, sizeof(vb), &len);
                if (r < 0)
                        return r;
                r = store_call_put(l, txn, id, e.index, &ck, vb, len, !grow);
                if (r < 0)
                        return r;
                if (r == 1)
                        continue; /* the place is taken (cannot be: indexes are unique) */
                if ((r = ledger_outbox_note_call(l, txn, id, e.index)) < 0) /* team outbox */
                        return r;
                stored[n_stored++] = ck; /* a second call of the same id in this row is one */
                (*added)++;
                have++;
        }
        if (grow)
                grow_into->n_calls = MAX(have, in->n_calls);
        return 0;
}

static void fill_empty(char *dst, const char *src, size_t cap)
{
        if (!dst[0] && src[0])
                memcpy(dst, src, cap);
}

/* The monotone merge of an incoming row into the stored one (calls apart). */
static void merge_row(struct usage_row *m, const struct usage_row *in)
{
        if (in->flags & ROW_F_TOKENS_KNOWN) {
                m->input = MAX(m->input, in->input);
                m->output = MAX(m->output, in->output);
                m->cache_read = MAX(m->cache_read, in->cache_read);
                m->cache_write = MAX(m->cache_write, in->cache_write);
                m->cache_write_1h = MAX(m->cache_write_1h, in->cache_write_1h);
                m->reasoning = MAX(m->reasoning, in->reasoning);
                m->total = MAX(m->total, in->total);
                m->flags |= ROW_F_TOKENS_KNOWN;
        }
        if (in->cost_source != COST_NONE &&
            (m->cost_source == COST_NONE || in->cost_nano > m->cost_nano)) {
                m->cost_nano = in->cost_nano;
                m->cost_source = in->cost_source;
                memcpy(m->price_source, in->price_source, sizeof(m->price_source));
        }
        /* the earliest time; a real time beats a fallback one */
        bool m_approx = m->flags & ROW_F_TIME_APPROX, in_approx = in->flags & ROW_F_TIME_APPROX;
        if ((m_approx && !in_approx) || (m_approx == in_approx && in->time_ms < m->time_ms)) {
                m->time_ms = in->time_ms;
                m->flags = (m->flags & ~ROW_F_TIME_APPROX) | (in->flags & ROW_F_TIME_APPROX);
        }
        /* the main-chain session beats a sidechain copy of the same call */
        if ((m->flags & ROW_F_SIDECHAIN) && !(in->flags & ROW_F_SIDECHAIN) && in->session[0]) {
                memcpy(m->session, in->session, sizeof(m->session));
                m->flags &= ~ROW_F_SIDECHAIN;
        }
        fill_empty(m->session, in->session, sizeof(m->session));
        fill_empty(m->project, in->project, sizeof(m->project));
        fill_empty(m->provider, in->provider, sizeof(m->provider));
        fill_empty(m->model, in->model, sizeof(m->model));
        fill_empty(m->model_alias, in->model_alias, sizeof(m->model_alias));
        fill_empty(m->tier, in->tier, sizeof(m->tier));
}

static int commit_row(struct ledger *l, MDB_txn *txn, const struct usage_row *in,
                      struct commit_result *res)
{
        struct usage_row *old = &l->scratch_old, *m = &l->scratch_new;
        uint8_t a[ROW_ENCODED_MAX], b[ROW_ENCODED_MAX];
        size_t alen, blen;
        uint64_t id;
        int r;

        if (in->flags & ROW_F_UPSERT) {
                struct stored_row st;
                r = store_row_find(l, txn, &in->key, &st);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (r == 0) {
                        if ((r = row_decode(st.enc.mv_data, st.enc.mv_size, old)) < 0)
                                return r;
                        old->key = in->key;
                        /* the fields without calls[] (12 KB of it): merge_row
                         * and the encoding never read a stored row's calls */
                        memcpy(m, old, offsetof(struct usage_row, calls));
                        merge_row(m, in);
                        r = put_calls(l, txn, st.id, in, m, &res->calls_added);
                        if (r == 0)
                                r = row_encode(old, a, sizeof(a), &alen);
                        if (r == 0)
                                r = row_encode(m, b, sizeof(b), &blen);
                        if (r < 0)
                                return r;
                        if (alen == blen && memcmp(a, b, alen) == 0) {
                                res->dup++;
                                return ROW_DUP;
                        }
                        r = store_row_update(l, txn, st.id, &in->key, b, blen);
                        if (r == 0)
                                r = ledger_outbox_note(l, txn, OUTBOX_ROW, &in->key, 0);
                        if (r == 0)
                                r = ledger_sums_add(l, txn, old, -1);
                        if (r == 0)
                                r = ledger_sums_add(l, txn, m, +1);
                        if (r < 0)
                                return r;
                        res->merged++;
                        return ROW_MERGED;
                }
        }
        r = row_encode(in, b, sizeof(b), &blen);
        if (r == 0)
                r = store_row_insert(l, txn, &in->key, b, blen, &id);
        if (r < 0)
                return r;
        if (r == 1) {
                res->dup++;
                return ROW_DUP;
        }
        r = ledger_outbox_note(l, txn, OUTBOX_ROW, &in->key, 0);
        if (r == 0)
                r = put_calls(l, txn, id, in, NULL, &res->calls_added);
        if (r == 0)
                r = ledger_sums_add(l, txn, in, +1);
        if (r < 0)
                return r;
        res->added++;
        return ROW_ADDED;
}

struct commit_ctx {
        const struct commit_batch *b;
        struct commit_result res;
};

/* meta keys of the refusal counters, by enum row_refusal ([0]: the total) */
static const char *const refused_keys[ROW_REFUSAL_KINDS] = {
        "refused_total", "refused_tokens", "refused_cost", "refused_time",
};

static uint64_t meta_u64(struct ledger *l, MDB_txn *txn, const char *name)
{
        MDB_val k = {.mv_size = strlen(name), .mv_data = (void *)name}, v;
        char buf[32];

        if (mdb_get(txn, l->dbi[DB_META], &k, &v) != 0 || v.mv_size == 0 || v.mv_size >= sizeof(buf))
                return 0;
        memcpy(buf, v.mv_data, v.mv_size);
        buf[v.mv_size] = 0;
        return strtoull(buf, NULL, 10);
}

static int meta_add(struct ledger *l, MDB_txn *txn, const char *name, uint64_t delta)
{
        char buf[32];
        uint64_t cur = meta_u64(l, txn, name);
        int n = snprintf(buf, sizeof(buf), "%" PRIu64, cur > UINT64_MAX - delta ? UINT64_MAX : cur + delta);
        MDB_val k = {.mv_size = strlen(name), .mv_data = (void *)name};
        MDB_val v = {.mv_size = (size_t)n, .mv_data = buf};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], &k, &v, 0));
}

int ledger_get_refused(struct ledger *l, struct ledger_refused *ret_refused)
{
        struct ledger_refused out;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        for (int i = 0; i < ROW_REFUSAL_KINDS; i++)
                out.n[i] = meta_u64(l, txn, refused_keys[i]);
        mdb_txn_abort(txn);
        *ret_refused = out;
        return 0;
}

static int commit_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct commit_ctx *c = u;
        const struct commit_batch *b = c->b;
        uint64_t refused[ROW_REFUSAL_KINDS] = {0};

        memset(&c->res, 0, sizeof(c->res));
        ledger_sums_discard(l); /* a retried write starts afresh */
        for (size_t i = 0; i < b->n_rows; i++) {
                enum row_refusal why = row_check_bounds(&b->rows[i]);
                int r;

                if (why != ROW_IN_BOUNDS) {
                        refused[0]++;
                        refused[why]++;
                        c->res.refused++;
                        r = ROW_REFUSED;
                } else {
                        r = commit_row(l, txn, &b->rows[i], &c->res);
                }
                if (r < 0)
                        return r;
                if (b->ret_outcomes)
                        b->ret_outcomes[i] = (uint8_t)r;
        }
        int fr = ledger_sums_flush(l, txn); /* the batch's rollups and sessions, once each */
        if (fr < 0)
                return fr;
        for (int i = 0; refused[0] && i < ROW_REFUSAL_KINDS; i++) {
                int r = refused[i] ? meta_add(l, txn, refused_keys[i], refused[i]) : 0;
                if (r < 0)
                        return r;
        }
        if (b->limits && b->limits_scope) {
                int r = ledger_limits_put(l, txn, b->limits_scope, b->limits);
                if (r < 0)
                        return r;
        }
        if (b->n_states) {
                int r = srcstate_put_batch(l, txn, b);
                if (r < 0)
                        return r;
        }
        if (b->cp && b->source_path) {
                /* the stored counter includes this batch's new rows */
                struct checkpoint cp = *b->cp;
                cp.rows_added += c->res.added;
                return ledger_put_checkpoint(l, txn, b->source_path, &cp);
        }
        return 0;
}

int ledger_commit(struct ledger *l, const struct commit_batch *batch,
                  struct commit_result *ret_result)
{
        struct commit_ctx c = {.b = batch};
        int r = ledger_write(l, commit_txn, &c);

        if (r < 0)
                snprintf(l->error, sizeof(l->error), "commit of %zu rows failed: %s",
                         batch->n_rows, strerror(-r));
        else if (batch->cp && batch->source_path)
                batch->cp->rows_added += c.res.added; /* as commit_txn stored it */
        if (r >= 0 && ret_result)
                *ret_result = c.res;
        return r < 0 ? r : 0;
}

/* ---- reading ------------------------------------------------------------- */
/* Callbacks run inside a read txn: they may read (the env is MDB_NOTLS, so a
 * nested ledger_get_row works) but must not call the write functions. */

struct activity_scan {
        int (*cb)(const struct activity_entry *e, void *u);
        void *u;
};

static int activity_entry_fn(const struct stored_call *c, void *ctx)
{
        struct activity_scan *s = ctx;
        struct activity_entry e;
        int r = ledger_activity_decode(&c->enc, &e);

        return r < 0 ? r : s->cb(&e, s->u);
}

int ledger_foreach_activity(struct ledger *l,
                            int (*cb)(const struct activity_entry *e, void *u), void *u)
{
        struct activity_scan s = {cb, u};
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = store_calls_walk(l, txn, NULL, activity_entry_fn, &s);
        ledger_read_end(l, txn);
        return r;
}

struct row_scan {
        int (*cb)(const struct usage_row *r, void *u);
        void *u;
        struct usage_row *row;
};

static int row_entry_fn(const struct stored_row *st, void *ctx)
{
        struct row_scan *s = ctx;
        int r = row_decode(st->enc.mv_data, st->enc.mv_size, s->row);

        if (r < 0)
                return r;
        s->row->key = st->key;
        return s->cb(s->row, s->u);
}

int ledger_foreach_row(struct ledger *l, int (*cb)(const struct usage_row *r, void *u),
                       void *u)
{
        struct row_scan s = {cb, u, malloc(sizeof(struct usage_row))};
        MDB_txn *txn;
        int r;

        if (!s.row)
                return -ENOMEM;
        r = ledger_read_begin(l, &txn);
        if (r == 0) {
                r = store_rows_walk(l, txn, NULL, row_entry_fn, &s);
                ledger_read_end(l, txn);
        }
        free(s.row);
        return r;
}

int ledger_get_row(struct ledger *l, const struct row_key *key, struct usage_row *ret_row)
{
        struct stored_row st;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = store_row_find(l, txn, key, &st);
        if (r == 0)
                r = row_decode(st.enc.mv_data, st.enc.mv_size, ret_row);
        if (r == 0)
                ret_row->key = *key;
        ledger_read_end(l, txn);
        return r;
}
