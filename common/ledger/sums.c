/* The derived half of the ledger: rollups and session sums, moved by each
 * committed row, read back, and rebuilt from the rows on demand. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"

#define ROLLUP_KEY_MAX (8 + ROW_TOOL_MAX + ROW_PROVIDER_MAX + ROW_MODEL_MAX)
#define SESSION_KEY_MAX (ROW_TOOL_MAX + ROW_SESSION_MAX)
#define SUMS_FIELDS 11
/* First byte of rollup and session values. 1: the sums end with
 * computed_events; 2: cache_write_1h follows it; 3: every number a varint
 * and a session's strings with varint lengths (ledger schema 4). All
 * decode; a value is written again as 3 when its sums move. */
#define SUMS_VERSION_MIN 1
#define SUMS_VERSION 3

/* Sums saturate and then stay saturated (a sum of rows within row-bounds.h
 * needs millions of maximal rows to get there): adding never wraps a total
 * to a small or negative number, and taking a row out of a saturated sum
 * leaves it saturated rather than pretending to know it. */
static uint64_t sat_u(uint64_t a, uint64_t b, int sign)
{
        if (a == UINT64_MAX)
                return a;
        if (sign > 0)
                return b > UINT64_MAX - a ? UINT64_MAX : a + b;
        return b > a ? 0 : a - b;
}

static int64_t sat_i(int64_t a, int64_t b, int sign)
{
        int64_t out;

        if (a == INT64_MAX || a == INT64_MIN)
                return a;
        if (!(sign > 0 ? __builtin_add_overflow(a, b, &out) : __builtin_sub_overflow(a, b, &out)))
                return out;
        return (sign > 0) == (b > 0) ? INT64_MAX : INT64_MIN;
}

void usage_sums_add_row(struct usage_sums *s, const struct usage_row *r, int sign)
{
        if (sign == 0)
                return;
        s->events = sat_u(s->events, 1, sign);
        if (r->flags & ROW_F_TOKENS_KNOWN) {
                s->input = sat_u(s->input, r->input, sign);
                s->output = sat_u(s->output, r->output, sign);
                s->cache_read = sat_u(s->cache_read, r->cache_read, sign);
                s->cache_write = sat_u(s->cache_write, r->cache_write, sign);
                s->cache_write_1h = sat_u(s->cache_write_1h, r->cache_write_1h, sign);
                s->reasoning = sat_u(s->reasoning, r->reasoning, sign);
                s->total = sat_u(s->total, r->total, sign);
                s->token_events = sat_u(s->token_events, 1, sign);
        }
        if (r->cost_source != COST_NONE) {
                s->cost_nano = sat_i(s->cost_nano, r->cost_nano, sign);
                s->priced_events = sat_u(s->priced_events, 1, sign);
                if (r->cost_source == COST_COMPUTED)
                        s->computed_events = sat_u(s->computed_events, 1, sign);
        }
        s->calls = sat_u(s->calls, r->n_calls, sign);
}

void usage_sums_add(struct usage_sums *dst, const struct usage_sums *src)
{
        dst->input = sat_u(dst->input, src->input, 1);
        dst->output = sat_u(dst->output, src->output, 1);
        dst->cache_read = sat_u(dst->cache_read, src->cache_read, 1);
        dst->cache_write = sat_u(dst->cache_write, src->cache_write, 1);
        dst->cache_write_1h = sat_u(dst->cache_write_1h, src->cache_write_1h, 1);
        dst->reasoning = sat_u(dst->reasoning, src->reasoning, 1);
        dst->total = sat_u(dst->total, src->total, 1);
        dst->cost_nano = sat_i(dst->cost_nano, src->cost_nano, 1);
        dst->events = sat_u(dst->events, src->events, 1);
        dst->priced_events = sat_u(dst->priced_events, src->priced_events, 1);
        dst->token_events = sat_u(dst->token_events, src->token_events, 1);
        dst->calls = sat_u(dst->calls, src->calls, 1);
        dst->computed_events = sat_u(dst->computed_events, src->computed_events, 1);
}

/* ---- encodings ----------------------------------------------------------- */

static void sums_put(struct bw *w, const struct usage_sums *s)
{
        const uint64_t f[SUMS_FIELDS] = {s->input, s->output, s->cache_read, s->cache_write,
                                         s->reasoning, s->total, (uint64_t)s->cost_nano,
                                         s->events, s->priced_events, s->token_events,
                                         s->calls};
        for (int i = 0; i < SUMS_FIELDS; i++)
                bw_var(w, f[i]);
        bw_var(w, s->computed_events);
        bw_var(w, s->cache_write_1h);
}

/* A fixed-width number in versions 1 and 2, a varint from 3 on. */
static uint64_t sums_num(struct br *r, uint8_t version)
{
        return version >= 3 ? br_var(r) : br_u64(r);
}

/* version: the value's first byte (SUMS_VERSION_MIN..SUMS_VERSION) */
static void sums_get(struct br *r, struct usage_sums *s, uint8_t version)
{
        s->input = sums_num(r, version);
        s->output = sums_num(r, version);
        s->cache_read = sums_num(r, version);
        s->cache_write = sums_num(r, version);
        s->reasoning = sums_num(r, version);
        s->total = sums_num(r, version);
        s->cost_nano = (int64_t)sums_num(r, version);
        s->events = sums_num(r, version);
        s->priced_events = sums_num(r, version);
        s->token_events = sums_num(r, version);
        s->calls = sums_num(r, version);
        s->computed_events = sums_num(r, version);
        s->cache_write_1h = version >= 2 ? sums_num(r, version) : 0;
}

static bool sums_version_ok(uint8_t v)
{
        return v >= SUMS_VERSION_MIN && v <= SUMS_VERSION;
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
        uint8_t version;

        memset(e, 0, sizeof(*e));
        version = br_u8(&r);
        if (k->mv_size < 8 + ROW_TOOL_MAX + 1 || !sums_version_ok(version))
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
        sums_get(&r, &e->sums, version);
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
        uint8_t version = br_u8(&r);
        size_t t;

        memset(e, 0, sizeof(*e));
        if (!nul || !sums_version_ok(version))
                return -EBADMSG;
        t = (size_t)(nul - (const uint8_t *)k->mv_data);
        if (t >= ROW_TOOL_MAX || k->mv_size - t - 1 >= ROW_SESSION_MAX)
                return -EBADMSG;
        memcpy(e->tool, k->mv_data, t);
        memcpy(e->session, nul + 1, k->mv_size - t - 1);
        sums_get(&r, &e->sums, version);
        e->first_ms = (int64_t)sums_num(&r, version);
        e->last_ms = (int64_t)sums_num(&r, version);
        if (version >= 3) {
                br_strv(&r, e->project, sizeof(e->project));
                br_strv(&r, e->model, sizeof(e->model));
        } else {
                br_str(&r, e->project, sizeof(e->project));
                br_str(&r, e->model, sizeof(e->model));
        }
        return r.bad || r.pos != r.len ? -EBADMSG : 0;
}

/* ---- derived sums -------------------------------------------------------- */

static bool sums_zero(const struct usage_sums *s)
{
        static const struct usage_sums zero;
        return memcmp(s, &zero, sizeof(zero)) == 0;
}

/* ---- a write's sums, kept in memory until it ends ------------------------- */

/* A batch's rows mostly share their rollup (15 minutes of one model) and
 * their session. Each value a write touches is read once (its first row),
 * moved in memory by every row, and written once by ledger_sums_flush,
 * instead of a get and a put per row: the same steps in the same order on
 * the same values, so what is stored is what applying the rows one by one
 * would store. */
#define PENDING_MAX 32
#define PENDING_KEY_MAX (SESSION_KEY_MAX > ROLLUP_KEY_MAX ? SESSION_KEY_MAX : ROLLUP_KEY_MAX)

enum { PEND_ROLLUP, PEND_SESSION };

struct sums_pending {
        uint64_t h;
        uint8_t kind;
        bool stored; /* in the DB when first read (the DB is not written before the flush) */
        bool exists; /* in the DB if the rows so far had been applied one by one */
        uint16_t klen;
        uint8_t key[PENDING_KEY_MAX];
        struct session_entry e; /* a rollup uses e.sums only */
};

void ledger_sums_discard(struct ledger *l)
{
        l->n_pending = 0;
}

static int pending_write(struct ledger *l, MDB_txn *txn, const struct sums_pending *p)
{
        uint8_t vb[64 + 10 * (SUMS_FIELDS + 4) + ROW_PROJECT_MAX + ROW_MODEL_MAX];
        MDB_dbi dbi = l->dbi[p->kind == PEND_ROLLUP ? DB_ROLLUP : DB_SESSIONS];
        MDB_val k = {.mv_size = p->klen, .mv_data = (void *)p->key}, v;
        struct bw w = {.p = vb, .cap = sizeof(vb)};

        if (!p->exists)
                return p->stored ? ledger_fail(l, mdb_del(txn, dbi, &k, NULL)) : 0;
        bw_u8(&w, SUMS_VERSION);
        sums_put(&w, &p->e.sums);
        if (p->kind == PEND_SESSION) {
                bw_var(&w, (uint64_t)p->e.first_ms);
                bw_var(&w, (uint64_t)p->e.last_ms);
                bw_strv(&w, p->e.project, sizeof(p->e.project));
                bw_strv(&w, p->e.model, sizeof(p->e.model));
        }
        if (w.overflow)
                return -ENOBUFS;
        v = (MDB_val){.mv_size = w.len, .mv_data = vb};
        return ledger_fail(l, mdb_put(txn, dbi, &k, &v, 0));
}

int ledger_sums_flush(struct ledger *l, MDB_txn *txn)
{
        int r = 0;

        for (size_t i = 0; r == 0 && i < l->n_pending; i++)
                r = pending_write(l, txn, &l->pending[i]);
        l->n_pending = 0;
        return r;
}

/* The in-memory value of key, read from the DB when first met. */
static int pending_get(struct ledger *l, MDB_txn *txn, uint8_t kind, const uint8_t *key, size_t klen,
                       struct sums_pending **ret)
{
        uint64_t h = hash64(key, klen);
        struct sums_pending *p;
        MDB_val k = {.mv_size = klen, .mv_data = (void *)key}, v;
        int rc, r;

        for (size_t i = l->n_pending; i-- > 0;) { /* the latest first: a run of rows shares it */
                p = &l->pending[i];
                if (p->h == h && p->kind == kind && p->klen == klen && memcmp(p->key, key, klen) == 0) {
                        *ret = p;
                        return 0;
                }
        }
        if (!l->pending && !(l->pending = calloc(PENDING_MAX, sizeof(*l->pending))))
                return -ENOMEM;
        if (l->n_pending == PENDING_MAX && (r = ledger_sums_flush(l, txn)) < 0)
                return r;
        p = &l->pending[l->n_pending];
        memset(p, 0, sizeof(*p));
        p->h = h;
        p->kind = kind;
        p->klen = (uint16_t)klen;
        memcpy(p->key, key, klen);
        rc = mdb_get(txn, l->dbi[kind == PEND_ROLLUP ? DB_ROLLUP : DB_SESSIONS], &k, &v);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        p->stored = p->exists = rc == 0;
        if (rc == 0 && kind == PEND_SESSION) {
                if ((r = session_decode(&k, &v, &p->e)) < 0)
                        return r;
        } else if (rc == 0) {
                struct br b = {.p = v.mv_data, .len = v.mv_size};
                uint8_t version = br_u8(&b);
                if (!sums_version_ok(version))
                        return -EBADMSG;
                sums_get(&b, &p->e.sums, version);
                if (b.bad)
                        return -EBADMSG;
        }
        l->n_pending++;
        *ret = p;
        return 0;
}

/* Adds (sign +1) or removes (-1) one row's contribution to its rollup. */
static int rollup_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        uint8_t kb[ROLLUP_KEY_MAX];
        struct sums_pending *p;
        size_t klen = rollup_key(row, kb);
        int64_t bucket = bucket_of(row->time_ms);
        int r;

        if (bucket < l->rollup_lo_ms || bucket >= l->rollup_hi_ms)
                l->rollup_epoch++; /* a cache of the rollups outside the window is stale */
        if ((r = pending_get(l, txn, PEND_ROLLUP, kb, klen, &p)) < 0)
                return r;
        if (!p->exists)
                memset(&p->e.sums, 0, sizeof(p->e.sums));
        usage_sums_add_row(&p->e.sums, row, sign);
        p->exists = !sums_zero(&p->e.sums);
        return 0;
}

/* Session sums. Removing a contribution (an upsert moved it) leaves first/
 * last alone; rebuilding from rows makes them exact again. */
static int session_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        uint8_t kb[SESSION_KEY_MAX];
        struct sums_pending *p;
        struct session_entry *e;
        size_t klen = session_key(row->tool, row->session, kb);
        bool is_new;
        int r;

        if ((r = pending_get(l, txn, PEND_SESSION, kb, klen, &p)) < 0)
                return r;
        e = &p->e;
        is_new = !p->exists;
        if (is_new)
                memset(e, 0, sizeof(*e));
        usage_sums_add_row(&e->sums, row, sign);
        if (sign > 0) {
                if (is_new || row->time_ms < e->first_ms)
                        e->first_ms = row->time_ms;
                if (is_new || row->time_ms >= e->last_ms) {
                        e->last_ms = row->time_ms;
                        if (row->model[0])
                                memcpy(e->model, row->model, sizeof(e->model));
                        if (row->project[0])
                                memcpy(e->project, row->project, sizeof(e->project));
                }
                if (!e->project[0])
                        memcpy(e->project, row->project, sizeof(e->project));
                if (!e->model[0])
                        memcpy(e->model, row->model, sizeof(e->model));
        }
        p->exists = !sums_zero(&e->sums);
        return 0;
}

int ledger_sums_add(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        int r = rollup_apply(l, txn, row, sign);
        return r < 0 ? r : session_apply(l, txn, row, sign);
}

int ledger_sums_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign)
{
        int r;

        ledger_sums_discard(l); /* nothing of an earlier, failed write */
        r = ledger_sums_add(l, txn, row, sign);
        if (r < 0) {
                ledger_sums_discard(l);
                return r;
        }
        return ledger_sums_flush(l, txn);
}

void ledger_rollup_window(const struct ledger *l, int64_t *ret_lo_ms, int64_t *ret_hi_ms,
                          uint64_t *ret_epoch)
{
        *ret_lo_ms = l->rollup_lo_ms;
        *ret_hi_ms = l->rollup_hi_ms;
        *ret_epoch = l->rollup_epoch;
}

void ledger_rollup_window_set(struct ledger *l, int64_t lo_ms, int64_t hi_ms)
{
        l->rollup_lo_ms = bucket_of(lo_ms);
        l->rollup_hi_ms = bucket_of(hi_ms);
        l->rollup_epoch++;
}

/* ---- reading ------------------------------------------------------------- */
/* Callbacks run inside a read txn, as those in ledger/rows.c. */

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
        r = ledger_scan(l, DB_ROLLUP, from_ms == INT64_MIN ? NULL : &start, rollup_entry_fn, &s);
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
        return ledger_scan(l, DB_SESSIONS, NULL, session_entry_fn, &s);
}

int ledger_get_session(struct ledger *l, const char *tool, const char *session,
                       struct session_entry *ret_entry)
{
        uint8_t kb[SESSION_KEY_MAX];
        MDB_val k = {.mv_data = kb}, v;
        struct session_entry e;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        k.mv_size = session_key(tool, session, kb);
        r = ledger_errno(mdb_get(txn, l->dbi[DB_SESSIONS], &k, &v));
        if (r == 0)
                r = session_decode(&k, &v, &e);
        mdb_txn_abort(txn);
        if (r == 0)
                *ret_entry = e;
        return r;
}

/* ---- rebuild ------------------------------------------------------------- */

static int rebuild_row(const struct stored_row *st, void *u)
{
        struct ledger *l = ((void **)u)[0];
        MDB_txn *txn = ((void **)u)[1];
        int r = row_decode(st->enc.mv_data, st->enc.mv_size, &l->scratch_new);

        return r < 0 ? r : ledger_sums_apply(l, txn, &l->scratch_new, +1);
}

static int rebuild_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        void *ctx[2] = {l, txn};
        int rc;

        (void)u;
        l->rollup_epoch++;
        if ((rc = mdb_drop(txn, l->dbi[DB_ROLLUP], 0)) != 0 ||
            (rc = mdb_drop(txn, l->dbi[DB_SESSIONS], 0)) != 0)
                return ledger_fail(l, rc);
        return store_rows_walk(l, txn, NULL, rebuild_row, ctx);
}

int ledger_rebuild_rollups(struct ledger *l)
{
        return ledger_write(l, rebuild_txn, NULL);
}
