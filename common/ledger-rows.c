/* The row half of the ledger: commit (insert-if-absent or monotone upsert,
 * with calls, rollups, session sums), the read side, and the rebuild. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger-internal.h"

#define ROLLUP_KEY_MAX (8 + ROW_TOOL_MAX + ROW_PROVIDER_MAX + ROW_MODEL_MAX)
#define SESSION_KEY_MAX (ROW_TOOL_MAX + ROW_SESSION_MAX)
#define SUMS_FIELDS 11
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void usage_sums_add_row(struct usage_sums *s, const struct usage_row *r, int sign)
{
        /* unsigned arithmetic: k * x is x or -x modulo 2^64, no UB */
        uint64_t k = sign < 0 ? UINT64_MAX : 1;

        if (sign == 0)
                return;
        s->events += k;
        if (r->flags & ROW_F_TOKENS_KNOWN) {
                s->input += k * r->input;
                s->output += k * r->output;
                s->cache_read += k * r->cache_read;
                s->cache_write += k * r->cache_write;
                s->reasoning += k * r->reasoning;
                s->total += k * r->total;
                s->token_events += k;
        }
        if (r->cost_source != COST_NONE) {
                s->cost_nano = (int64_t)((uint64_t)s->cost_nano + k * (uint64_t)r->cost_nano);
                s->priced_events += k;
                if (r->cost_source == COST_COMPUTED)
                        s->computed_events += k;
        }
        s->calls += k * r->n_calls;
}

void usage_sums_add(struct usage_sums *dst, const struct usage_sums *src)
{
        dst->input += src->input;
        dst->output += src->output;
        dst->cache_read += src->cache_read;
        dst->cache_write += src->cache_write;
        dst->reasoning += src->reasoning;
        dst->total += src->total;
        dst->cost_nano = (int64_t)((uint64_t)dst->cost_nano + (uint64_t)src->cost_nano);
        dst->events += src->events;
        dst->priced_events += src->priced_events;
        dst->token_events += src->token_events;
        dst->calls += src->calls;
        dst->computed_events += src->computed_events;
}

/* ---- encodings ----------------------------------------------------------- */

static void sums_put(struct bw *w, const struct usage_sums *s)
{
        const uint64_t f[SUMS_FIELDS] = {s->input, s->output, s->cache_read, s->cache_write,
                                         s->reasoning, s->total, (uint64_t)s->cost_nano,
                                         s->events, s->priced_events, s->token_events,
                                         s->calls};
        for (int i = 0; i < SUMS_FIELDS; i++)
                bw_u64(w, f[i]);
        bw_u64(w, s->computed_events);
}

static void sums_get(struct br *r, struct usage_sums *s)
{
        s->input = br_u64(r);
        s->output = br_u64(r);
        s->cache_read = br_u64(r);
        s->cache_write = br_u64(r);
        s->reasoning = br_u64(r);
        s->total = br_u64(r);
        s->cost_nano = (int64_t)br_u64(r);
        s->events = br_u64(r);
        s->priced_events = br_u64(r);
        s->token_events = br_u64(r);
        s->calls = br_u64(r);
        s->computed_events = br_u64(r);
}

static int64_t bucket_of(int64_t ms)
{
        int64_t q = ms / ROLLUP_BUCKET_MS;
        if (ms % ROLLUP_BUCKET_MS < 0) /* floor for times before 1970 */
                q--;
        return q * ROLLUP_BUCKET_MS;
}

/* Rollup key: 8-byte big-endian bucket start (sign bit flipped so earlier
 * sorts first, also before 1970) | tool NUL-padded to 16 | provider NUL model. */
static size_t rollup_key(const struct usage_row *r, uint8_t *k)
{
        size_t n = 8 + ROW_TOOL_MAX, p = strnlen(r->provider, ROW_PROVIDER_MAX - 1),
               m = strnlen(r->model, ROW_MODEL_MAX - 1);

        be64_put(k, (uint64_t)bucket_of(r->time_ms) ^ (1ull << 63));
        memset(k + 8, 0, ROW_TOOL_MAX);
        memcpy(k + 8, r->tool, strnlen(r->tool, ROW_TOOL_MAX - 1));
        memcpy(k + n, r->provider, p);
        n += p;
        k[n++] = 0;
        memcpy(k + n, r->model, m);
        return n + m;
}

static int rollup_decode(const MDB_val *k, const MDB_val *v, struct rollup_entry *e)
{
        const uint8_t *p = k->mv_data, *nul;
        size_t rest;
        struct br r = {.p = v->mv_data, .len = v->mv_size};

        memset(e, 0, sizeof(*e));
        if (k->mv_size < 8 + ROW_TOOL_MAX + 1 || br_u8(&r) != VALUE_VERSION)
                return -EBADMSG;
        e->bucket_ms = (int64_t)(be64_get(p) ^ (1ull << 63));
        memcpy(e->tool, p + 8, ROW_TOOL_MAX - 1);
        p += 8 + ROW_TOOL_MAX;
        rest = k->mv_size - 8 - ROW_TOOL_MAX;
        nul = memchr(p, 0, rest);
        if (!nul || (size_t)(nul - p) >= ROW_PROVIDER_MAX ||
            rest - (size_t)(nul - p) - 1 >= ROW_MODEL_MAX)
                return -EBADMSG;
        memcpy(e->provider, p, (size_t)(nul - p));
        memcpy(e->model, nul + 1, rest - (size_t)(nul - p) - 1);
        sums_get(&r, &e->sums);
        return r.bad || r.pos != r.len ? -EBADMSG : 0;
}

static size_t session_key(const char *tool, const char *session, uint8_t *k)
{
        size_t t = strnlen(tool, ROW_TOOL_MAX - 1), s = strnlen(session, ROW_SESSION_MAX - 1);
        memcpy(k, tool, t);
        k[t] = 0;
        memcpy(k + t + 1, session, s);
        return t + 1 + s;
}

static int session_decode(const MDB_val *k, const MDB_val *v, struct session_entry *e)
{
        const uint8_t *nul = memchr(k->mv_data, 0, k->mv_size);
        struct br r = {.p = v->mv_data, .len = v->mv_size};
        size_t t;

        memset(e, 0, sizeof(*e));
        if (!nul || br_u8(&r) != VALUE_VERSION)
                return -EBADMSG;
        t = (size_t)(nul - (const uint8_t *)k->mv_data);
        if (t >= ROW_TOOL_MAX || k->mv_size - t - 1 >= ROW_SESSION_MAX)
                return -EBADMSG;
        memcpy(e->tool, k->mv_data, t);
        memcpy(e->session, nul + 1, k->mv_size - t - 1);
        sums_get(&r, &e->sums);
        e->first_ms = (int64_t)br_u64(&r);
        e->last_ms = (int64_t)br_u64(&r);
        br_str(&r, e->project, sizeof(e->project));
        br_str(&r, e->model, sizeof(e->model));
        return r.bad || r.pos != r.len ? -EBADMSG : 0;
}

/* ---- derived sums -------------------------------------------------------- */

static bool sums_zero(const struct usage_sums *s)
{
        static const struct usage_sums zero;
        return memcmp(s, &zero, sizeof(zero)) == 0;
}

/* Adds (sign +1) or removes (-1) one row's contribution to its rollup. */
static int rollup_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        uint8_t kb[ROLLUP_KEY_MAX], vb[1 + 8 * (SUMS_FIELDS + 1)];
        MDB_val k = {.mv_data = kb}, v;
        struct usage_sums s = {0};
        struct bw w = {.p = vb, .cap = sizeof(vb)};
        int rc;

        k.mv_size = rollup_key(row, kb);
        rc = mdb_get(txn, l->dbi[DB_ROLLUP], &k, &v);
        if (rc == 0) {
                struct br r = {.p = v.mv_data, .len = v.mv_size};
                if (br_u8(&r) != VALUE_VERSION)
                        return -EBADMSG;
                sums_get(&r, &s);
                if (r.bad)
                        return -EBADMSG;
        } else if (rc != MDB_NOTFOUND) {
                return ledger_fail(l, rc);
        }
        usage_sums_add_row(&s, row, sign);
        if (sums_zero(&s))
                return rc == 0 ? ledger_fail(l, mdb_del(txn, l->dbi[DB_ROLLUP], &k, NULL)) : 0;
        bw_u8(&w, VALUE_VERSION);
        sums_put(&w, &s);
        v = (MDB_val){.mv_size = w.len, .mv_data = vb};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_ROLLUP], &k, &v, 0));
}

/* Session sums. Removing a contribution (an upsert moved it) leaves first/
 * last alone; rebuilding from rows makes them exact again. */
static int session_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        uint8_t kb[SESSION_KEY_MAX], vb[64 + 8 * SUMS_FIELDS + ROW_PROJECT_MAX + ROW_MODEL_MAX];
        MDB_val k = {.mv_data = kb}, v;
        struct session_entry e;
        struct bw w = {.p = vb, .cap = sizeof(vb)};
        bool is_new;
        int rc, r;

        k.mv_size = session_key(row->tool, row->session, kb);
        rc = mdb_get(txn, l->dbi[DB_SESSIONS], &k, &v);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        is_new = rc == MDB_NOTFOUND;
        if (is_new)
                memset(&e, 0, sizeof(e));
        else if ((r = session_decode(&k, &v, &e)) < 0)
                return r;
        usage_sums_add_row(&e.sums, row, sign);
        if (sign > 0) {
                if (is_new || row->time_ms < e.first_ms)
                        e.first_ms = row->time_ms;
                if (is_new || row->time_ms >= e.last_ms) {
                        e.last_ms = row->time_ms;
                        if (row->model[0])
                                memcpy(e.model, row->model, sizeof(e.model));
                        if (row->project[0])
                                memcpy(e.project, row->project, sizeof(e.project));
                }
                if (!e.project[0])
                        memcpy(e.project, row->project, sizeof(e.project));
                if (!e.model[0])
                        memcpy(e.model, row->model, sizeof(e.model));
        }
        if (sums_zero(&e.sums))
                return is_new ? 0 : ledger_fail(l, mdb_del(txn, l->dbi[DB_SESSIONS], &k, NULL));
        bw_u8(&w, VALUE_VERSION);
        sums_put(&w, &e.sums);
        bw_u64(&w, (uint64_t)e.first_ms);
        bw_u64(&w, (uint64_t)e.last_ms);
        bw_str(&w, e.project, sizeof(e.project));
        bw_str(&w, e.model, sizeof(e.model));
        if (w.overflow)
                return -ENOBUFS;
        v = (MDB_val){.mv_size = w.len, .mv_data = vb};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_SESSIONS], &k, &v, 0));
}

static int derived_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        int r = rollup_apply(l, txn, row, sign);
        return r < 0 ? r : session_apply(l, txn, row, sign);
}

/* ---- commit -------------------------------------------------------------- */

/* Inserts the incoming row's calls that the activity db lacks, keyed under
 * the stored row m. Insert: index i, n_calls as given. Merge (grow): new
 * calls are numbered after m's existing ones and counted into m->n_calls. */
static int put_calls(struct ledger *l, MDB_txn *txn, const struct usage_row *in,
                     struct usage_row *m, bool grow, size_t *added)
{
        uint32_t n = in->n_calls < ROW_CALLS_MAX ? in->n_calls : ROW_CALLS_MAX;
        uint32_t have = m->n_calls;

        for (uint32_t i = 0; i < n; i++) {
                const struct tool_call *c = &in->calls[i];
                uint8_t vb[64 + ROW_TOOL_MAX + CALL_NAME_MAX];
                struct bw w = {.p = vb, .cap = sizeof(vb)};
                struct row_key ck;
                MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = ck.b}, v;
                int rc;

                row_call_key(&m->key, i, c->id, &ck);
                bw_u8(&w, VALUE_VERSION);
                bw_bytes(&w, m->key.b, ROW_KEY_SIZE);
                bw_u64(&w, (uint64_t)m->time_ms);
                bw_u32(&w, grow ? have : i);
                bw_str(&w, m->tool, sizeof(m->tool));
                bw_str(&w, c->name, sizeof(c->name));
                v = (MDB_val){.mv_size = w.len, .mv_data = vb};
                rc = mdb_put(txn, l->dbi[DB_ACTIVITY], &k, &v, MDB_NOOVERWRITE);
                if (rc == MDB_KEYEXIST)
                        continue;
                if (rc)
                        return ledger_fail(l, rc);
                (*added)++;
                have++;
        }
        if (grow)
                m->n_calls = MAX(have, in->n_calls);
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
                m->reasoning = MAX(m->reasoning, in->reasoning);
                m->total = MAX(m->total, in->total);
                m->flags |= ROW_F_TOKENS_KNOWN;
        }
        if (in->cost_source != COST_NONE &&
            (m->cost_source == COST_NONE || in->cost_nano > m->cost_nano)) {
                m->cost_nano = in->cost_nano;
                m->cost_source = in->cost_source;
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
}

static int put_row(struct ledger *l, MDB_txn *txn, const struct usage_row *r, unsigned flags)
{
        uint8_t buf[ROW_ENCODED_MAX];
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)r->key.b}, v = {.mv_data = buf};
        int ret = row_encode(r, buf, sizeof(buf), &v.mv_size);

        if (ret < 0)
                return ret;
        ret = mdb_put(txn, l->dbi[DB_USAGE], &k, &v, flags);
        return ret == MDB_KEYEXIST ? 1 : ledger_fail(l, ret);
}

static int commit_row(struct ledger *l, MDB_txn *txn, const struct usage_row *in,
                      struct commit_result *res)
{
        struct usage_row *old = &l->scratch_old, *m = &l->scratch_new;
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)in->key.b}, v;
        uint8_t a[ROW_ENCODED_MAX], b[ROW_ENCODED_MAX];
        size_t alen, blen;
        int r, rc;

        if (in->flags & ROW_F_UPSERT) {
                rc = mdb_get(txn, l->dbi[DB_USAGE], &k, &v);
                if (rc && rc != MDB_NOTFOUND)
                        return ledger_fail(l, rc);
                if (rc == 0) {
                        if ((r = row_decode(v.mv_data, v.mv_size, old)) < 0)
                                return r;
                        old->key = in->key;
                        *m = *old;
                        merge_row(m, in);
                        r = put_calls(l, txn, in, m, true, &res->calls_added);
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
                        r = put_row(l, txn, m, 0);
                        if (r == 0)
                                r = derived_apply(l, txn, old, -1);
                        if (r == 0)
                                r = derived_apply(l, txn, m, +1);
                        if (r < 0)
                                return r;
                        res->merged++;
                        return ROW_MERGED;
                }
        }
        r = put_row(l, txn, in, MDB_NOOVERWRITE);
        if (r < 0)
                return r;
        if (r == 1) {
                res->dup++;
                return ROW_DUP;
        }
        *m = *in;
        r = put_calls(l, txn, in, m, false, &res->calls_added);
        if (r == 0)
                r = derived_apply(l, txn, in, +1);
        if (r < 0)
                return r;
        res->added++;
        return ROW_ADDED;
}

struct commit_ctx {
        const struct commit_batch *b;
        struct commit_result res;
};

static int commit_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct commit_ctx *c = u;
        const struct commit_batch *b = c->b;

        memset(&c->res, 0, sizeof(c->res));
        for (size_t i = 0; i < b->n_rows; i++) {
                int r = commit_row(l, txn, &b->rows[i], &c->res);
                if (r < 0)
                        return r;
                if (b->ret_outcomes)
                        b->ret_outcomes[i] = (uint8_t)r;
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
        else if (ret_result)
                *ret_result = c.res;
        return r < 0 ? r : 0;
}

/* ---- reading ------------------------------------------------------------- */
/* Callbacks run inside a read txn: they may read (the env is MDB_NOTLS, so a
 * nested ledger_get_row works) but must not call the write functions. */

typedef int (*entry_fn)(const MDB_val *k, const MDB_val *v, void *ctx);

static int scan(struct ledger *l, int db, const MDB_val *start, entry_fn fn, void *ctx)
{
        MDB_cursor *c = NULL;
        MDB_txn *txn;
        MDB_val k, v;
        int r = ledger_read_begin(l, &txn), rc;

        if (r < 0)
                return r;
        r = ledger_errno(mdb_cursor_open(txn, l->dbi[db], &c));
        if (r == 0) {
                if (start)
                        k = *start;
                rc = mdb_cursor_get(c, &k, &v, start ? MDB_SET_RANGE : MDB_FIRST);
                for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
                        if ((r = fn(&k, &v, ctx)) != 0)
                                break;
                if (r == 0 && rc != MDB_NOTFOUND)
                        r = ledger_errno(rc);
                mdb_cursor_close(c);
        }
        mdb_txn_abort(txn);
        return r;
}

struct rollup_scan {
        int64_t until;
        bool ended; /* stopped at the end of the range, not by cb */
        int (*cb)(const struct rollup_entry *e, void *u);
        void *u;
};

static int rollup_entry_fn(const MDB_val *k, const MDB_val *v, void *ctx)
{
        struct rollup_scan *s = ctx;
        struct rollup_entry e;
        int r = rollup_decode(k, v, &e);
        if (r < 0)
                return r;
        if (e.bucket_ms >= s->until) {
                s->ended = true;
                return 1;
        }
        return s->cb(&e, s->u);
}

int ledger_foreach_rollup(struct ledger *l, int64_t from_ms, int64_t until_ms,
                          int (*cb)(const struct rollup_entry *e, void *u), void *u)
{
        struct rollup_scan s = {.until = until_ms, .cb = cb, .u = u};
        uint8_t kb[8];
        MDB_val start = {.mv_size = 8, .mv_data = kb};
        int r;

        be64_put(kb, (uint64_t)from_ms ^ (1ull << 63));
        r = scan(l, DB_ROLLUP, from_ms == INT64_MIN ? NULL : &start, rollup_entry_fn, &s);
        return s.ended ? 0 : r;
}

struct session_scan {
        int (*cb)(const struct session_entry *e, void *u);
        void *u;
};

static int session_entry_fn(const MDB_val *k, const MDB_val *v, void *ctx)
{
        struct session_scan *s = ctx;
        struct session_entry e;
        int r = session_decode(k, v, &e);
        return r < 0 ? r : s->cb(&e, s->u);
}

int ledger_foreach_session(struct ledger *l,
                           int (*cb)(const struct session_entry *e, void *u), void *u)
{
        struct session_scan s = {cb, u};
        return scan(l, DB_SESSIONS, NULL, session_entry_fn, &s);
}

struct activity_scan {
        int (*cb)(const struct activity_entry *e, void *u);
        void *u;
};

static int activity_entry_fn(const MDB_val *k, const MDB_val *v, void *ctx)
{
        struct activity_scan *s = ctx;
        struct activity_entry e = {0};
        struct br r = {.p = v->mv_data, .len = v->mv_size};
        const uint8_t *key;

        (void)k;
        if (br_u8(&r) != VALUE_VERSION)
                return -EBADMSG;
        key = br_take(&r, ROW_KEY_SIZE);
        if (key)
                memcpy(e.usage_key.b, key, ROW_KEY_SIZE);
        e.time_ms = (int64_t)br_u64(&r);
        e.index = br_u32(&r);
        br_str(&r, e.tool, sizeof(e.tool));
        br_str(&r, e.name, sizeof(e.name));
        if (r.bad || r.pos != r.len)
                return -EBADMSG;
        return s->cb(&e, s->u);
}

int ledger_foreach_activity(struct ledger *l,
                            int (*cb)(const struct activity_entry *e, void *u), void *u)
{
        struct activity_scan s = {cb, u};
        return scan(l, DB_ACTIVITY, NULL, activity_entry_fn, &s);
}

struct row_scan {
        int (*cb)(const struct usage_row *r, void *u);
        void *u;
        struct usage_row *row;
};

static int row_entry_fn(const MDB_val *k, const MDB_val *v, void *ctx)
{
        struct row_scan *s = ctx;
        int r;

        if (k->mv_size != ROW_KEY_SIZE)
                return -EBADMSG;
        r = row_decode(v->mv_data, v->mv_size, s->row);
        if (r < 0)
                return r;
        memcpy(s->row->key.b, k->mv_data, ROW_KEY_SIZE);
        return s->cb(s->row, s->u);
}

int ledger_foreach_row(struct ledger *l, int (*cb)(const struct usage_row *r, void *u),
                       void *u)
{
        struct row_scan s = {cb, u, malloc(sizeof(struct usage_row))};
        int r;

        if (!s.row)
                return -ENOMEM;
        r = scan(l, DB_USAGE, NULL, row_entry_fn, &s);
        free(s.row);
        return r;
}

int ledger_get_row(struct ledger *l, const struct row_key *key, struct usage_row *ret_row)
{
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)key->b}, v;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = ledger_errno(mdb_get(txn, l->dbi[DB_USAGE], &k, &v));
        if (r == 0)
                r = row_decode(v.mv_data, v.mv_size, ret_row);
        if (r == 0)
                ret_row->key = *key;
        mdb_txn_abort(txn);
        return r;
}

/* ---- rebuild ------------------------------------------------------------- */

static int rebuild_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct usage_row *row = &l->scratch_new;
        MDB_cursor *c;
        MDB_val k, v;
        int r, rc;

        (void)u;
        if ((rc = mdb_drop(txn, l->dbi[DB_ROLLUP], 0)) != 0 ||
            (rc = mdb_drop(txn, l->dbi[DB_SESSIONS], 0)) != 0 ||
            (rc = mdb_cursor_open(txn, l->dbi[DB_USAGE], &c)) != 0)
                return ledger_fail(l, rc);
        r = 0;
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                r = row_decode(v.mv_data, v.mv_size, row);
                if (r == 0)
                        r = derived_apply(l, txn, row, +1);
                if (r < 0)
                        break;
        }
        if (r == 0 && rc != MDB_NOTFOUND)
                r = ledger_fail(l, rc);
        mdb_cursor_close(c);
        return r;
}

int ledger_rebuild_rollups(struct ledger *l)
{
        return ledger_write(l, rebuild_txn, NULL);
}
