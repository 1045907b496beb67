/* Crush's crush.db: a root session's cost exactly as Crush accumulated it,
 * and each overwrite of a session's last-call tokens that a read sees as
 * one call (crush/crush.h). */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "binio.h"
#include "crush/crush.h"
#include "running-totals.h"
#include "timefmt.h"

#define RECHECK_MS 30000
#define RING_MAX   8

struct cr_state {
        bool valid, done, seeded;
        uint64_t fp;
        int64_t at_ms;
        int64_t wm; /* the largest updated_at read, as Crush wrote it */
        uint64_t calls, leftovers, leftover_tokens, roots, cost_nano;
        uint64_t refused; /* rows refused (a count or cost not a number in range), each once */
        uint8_t nring; /* the last calls' keys (first 4 bytes): a row read again */
        uint32_t ring[RING_MAX]; /* within the margin is no new call */
};

/* parse_state.priv: u8 CR_PRIV_FORMAT | u8 flags | u64 fp | var at_ms |
 * var wm | var calls | var leftovers | var leftover_tokens | var roots |
 * var cost_nano | var refused | u8 nring | nring x u32. Format 1 (read
 * only): the same without refused. */
#define CR_PRIV_FORMAT 2
#define F_DONE   0x01u
#define F_SEEDED 0x02u

static struct cr_state state_get(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct cr_state s = { 0 };
        uint8_t format, flags;

        if (ps->priv_len == 0 || ((format = br_u8(&r)) != 1 && format != CR_PRIV_FORMAT))
                return (struct cr_state){ 0 };
        flags = br_u8(&r);
        s.fp = br_u64(&r);
        s.at_ms = (int64_t)br_var(&r);
        s.wm = (int64_t)br_var(&r);
        s.calls = br_var(&r);
        s.leftovers = br_var(&r);
        s.leftover_tokens = br_var(&r);
        s.roots = br_var(&r);
        s.cost_nano = br_var(&r);
        if (format >= 2)
                s.refused = br_var(&r);
        s.nring = br_u8(&r);
        if (s.nring > RING_MAX)
                return (struct cr_state){ 0 };
        for (int i = 0; i < s.nring; i++)
                s.ring[i] = br_u32(&r);
        if (r.bad || r.pos != r.len)
                return (struct cr_state){ 0 };
        s.done = flags & F_DONE;
        s.seeded = flags & F_SEEDED;
        s.valid = true;
        return s;
}

static void state_put(struct parse_state *ps, const struct cr_state *s)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

        bw_u8(&w, CR_PRIV_FORMAT);
        bw_u8(&w, (uint8_t)((s->done ? F_DONE : 0) | (s->seeded ? F_SEEDED : 0)));
        bw_u64(&w, s->fp);
        bw_var(&w, (uint64_t)s->at_ms);
        bw_var(&w, (uint64_t)s->wm);
        bw_var(&w, s->calls);
        bw_var(&w, s->leftovers);
        bw_var(&w, s->leftover_tokens);
        bw_var(&w, s->roots);
        bw_var(&w, s->cost_nano);
        bw_var(&w, s->refused);
        bw_u8(&w, s->nring);
        for (int i = 0; i < s->nring; i++)
                bw_u32(&w, s->ring[i]);
        ps->priv_len = w.overflow ? 0 : (uint32_t)w.len;
}

int crush_figures(const struct parse_state *ps, struct crush_figures *ret)
{
        struct cr_state s = state_get(ps);

        if (!s.valid)
                return -EINVAL;
        *ret = (struct crush_figures){ .calls = s.calls, .leftovers = s.leftovers,
                                       .leftover_tokens = s.leftover_tokens, .roots = s.roots,
                                       .cost_nano = s.cost_nano, .refused = s.refused };
        return 0;
}

static bool has_column(sqlite3 *db, const char *table, const char *col, int *ret_rc)
{
        char q[128];
        sqlite3_stmt *st = NULL;
        bool found = false;
        int rc;

        snprintf(q, sizeof(q), "PRAGMA table_info(%s)", table);
        rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
        if (rc == SQLITE_OK)
                while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                        const unsigned char *n = sqlite3_column_text(st, 1);
                        if (n && strcmp((const char *)n, col) == 0)
                                found = true;
                }
        sqlite3_finalize(st);
        *ret_rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        return found;
}

enum { C_ID, C_PARENT, C_PROMPT, C_COMPLETION, C_COST, C_UPDATED, C_CREATED, C_NCOLS };
static const char *const cols[C_NCOLS] = { "id",   "parent_session_id", "prompt_tokens", "completion_tokens",
                                           "cost", "updated_at",        "created_at" };

struct store_pass {
        const struct source_ctx *ctx;
        struct adapt_db conn;
        sqlite3 *db;
        sqlite3_stmt *q_sessions, *q_model, *q_roots;
        int64_t now_ms;
};

static void store_pass_close(struct store_pass *rd)
{
        sqlite3_finalize(rd->q_sessions);
        sqlite3_finalize(rd->q_model);
        sqlite3_finalize(rd->q_roots);
        rd->q_sessions = rd->q_model = rd->q_roots = NULL;
        adapt_db_close(&rd->conn);
        rd->db = NULL;
}

/* 0; 1 when there is no sessions table yet; negative errno. */
static int store_pass_open(struct store_pass *rd)
{
        char q[768];
        size_t len = 0;
        bool provider;
        int r, rc;

        if ((r = adapt_db_open(rd->ctx->path, &rd->conn)) < 0)
                return r;
        rd->db = rd->conn.db;
        if (!has_column(rd->db, "sessions", "id", &rc)) {
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(rd->db, rc);
                return adapt_db_empty(&rd->conn) ? 1 : -EPROTO;
        }
        len += (size_t)snprintf(q + len, sizeof(q) - len, "SELECT ");
        for (int i = 0; i < C_NCOLS; i++) {
                bool have = has_column(rd->db, "sessions", cols[i], &rc);
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(rd->db, rc);
                if (!have && (i == C_PROMPT || i == C_COMPLETION || i == C_COST))
                        return -EPROTO; /* not Crush's sessions */
                len += (size_t)snprintf(q + len, sizeof(q) - len, "%s%s", i ? ", " : "", have ? cols[i] : "NULL");
        }
        snprintf(q + len, sizeof(q) - len, " FROM sessions WHERE ?1 = 0 OR updated_at >= ?1 ORDER BY updated_at");
        if ((rc = sqlite3_prepare_v2(rd->db, q, -1, &rd->q_sessions, NULL)) != SQLITE_OK)
                return adapt_sql_errno(rd->db, rc);
        rc = sqlite3_prepare_v2(rd->db,
                                "SELECT COUNT(*), TOTAL(CASE WHEN typeof(cost) IN ('integer', 'real') AND "
                                "cost >= 0 AND cost <= 1e9 THEN cost END) FROM sessions "
                                "WHERE parent_session_id IS NULL OR parent_session_id = ''",
                                -1, &rd->q_roots, NULL);
        if (rc != SQLITE_OK)
                return adapt_sql_errno(rd->db, rc);
        /* the model: optional (a broken messages table costs the names only) */
        provider = has_column(rd->db, "messages", "provider", &rc);
        if (sqlite3_prepare_v2(rd->db,
                               provider ? "SELECT model, provider FROM messages WHERE session_id = ?1 AND "
                                          "role = 'assistant' ORDER BY created_at DESC LIMIT 1"
                                        : "SELECT model, NULL FROM messages WHERE session_id = ?1 AND "
                                          "role = 'assistant' ORDER BY created_at DESC LIMIT 1",
                               -1, &rd->q_model, NULL) != SQLITE_OK)
                rd->q_model = NULL;
        return 0;
}

static void col_text(sqlite3_stmt *st, int col, char *dst, size_t cap)
{
        const unsigned char *t = sqlite3_column_text(st, col);
        size_t n = t ? (size_t)sqlite3_column_bytes(st, col) : 0;

        if (!t || n == 0 || (n == 4 && memcmp(t, "null", 4) == 0)) {
                dst[0] = 0;
                return;
        }
        row_set_str(dst, cap, (const char *)t, n);
}

static void session_model(struct store_pass *rd, const char *session, struct usage_row *row)
{
        if (!rd->q_model)
                return;
        sqlite3_reset(rd->q_model);
        sqlite3_bind_text(rd->q_model, 1, session, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(rd->q_model) == SQLITE_ROW) {
                col_text(rd->q_model, 0, row->model, sizeof(row->model));
                col_text(rd->q_model, 1, row->provider, sizeof(row->provider));
        }
        sqlite3_reset(rd->q_model);
}

/* Crush writes unix seconds (its schema comments say milliseconds): both read. */
static int64_t when_ms(int64_t v)
{
        if (v <= 0)
                return 0;
        return v < 100000000000LL ? v * 1000 : v;
}

/* A row of the session: a root's cost (a snapshot of its running total) or
 * one call (the response whose tokens Crush wrote). */
static int push(struct store_pass *rd, const char *session, uint8_t kind, struct row_batch *out,
                struct usage_row **ret)
{
        struct usage_row *row;
        int r = row_batch_push(out, &row);

        if (r < 0)
                return r;
        row->kind = kind;
        ROW_SET(row->tool, "crush");
        ROW_SET(row->session, session);
        row->source_hash = rd->ctx->source_hash;
        session_model(rd, session, row);
        *ret = row;
        return 0;
}

static uint32_t key32(const struct row_key *k)
{
        return (uint32_t)k->b[0] | (uint32_t)k->b[1] << 8 | (uint32_t)k->b[2] << 16 | (uint32_t)k->b[3] << 24;
}

/* Whether a call's key was among the last ones read; else it joins them. */
static bool ring_seen(struct cr_state *st, uint32_t k)
{
        for (int i = 0; i < st->nring; i++)
                if (st->ring[i] == k)
                        return true;
        if (st->nring < RING_MAX)
                st->nring++;
        memmove(&st->ring[1], &st->ring[0], sizeof(st->ring[0]) * (size_t)(st->nring - 1));
        st->ring[0] = k;
        return false;
}

static int read_sessions(struct store_pass *rd, struct cr_state *st, struct row_batch *out, uint64_t *io_malformed)
{
        int64_t margin = st->wm >= 100000000000LL ? 2000 : 2, from = st->seeded && st->wm > margin ? st->wm - margin : 0;
        int64_t wm = st->wm;
        int rc, r;

        sqlite3_bind_int64(rd->q_sessions, 1, from);
        while ((rc = sqlite3_step(rd->q_sessions)) == SQLITE_ROW) {
                sqlite3_stmt *q = rd->q_sessions;
                /* judged before any other read of them converts them */
                uint64_t prompt, completion, cost;
                double usd;
                bool bad = (adapt_sql_count(q, C_PROMPT, &prompt) == ADAPT_NUM_BAD) |
                           (adapt_sql_count(q, C_COMPLETION, &completion) == ADAPT_NUM_BAD) |
                           (adapt_sql_usd(q, C_COST, &usd) == ADAPT_NUM_BAD);
                const unsigned char *parent = sqlite3_column_text(q, C_PARENT);
                int64_t updated = sqlite3_column_int64(q, C_UPDATED), created = sqlite3_column_int64(q, C_CREATED);
                char session[ROW_SESSION_MAX];
                struct usage_row *row;
                struct keyhash h;
                struct row_key refused;

                if (!adapt_sql_key(q, C_ID, session, sizeof(session))) {
                        (*io_malformed)++;
                        continue;
                }
                if (updated > wm)
                        wm = updated;
                if (bad) {
                        /* a count or a cost that is text, negative or past
                         * its bound: neither a call nor a cost is taken from
                         * the row; malformed and refused once (a row read
                         * again within the margin is among the last keys) */
                        static const int vals[] = { C_PROMPT, C_COMPLETION, C_COST };
                        if ((r = keyhash_begin(&h, CRUSH_KEY_REFUSED)) < 0)
                                return r;
                        keyhash_str(&h, session);
                        keyhash_u64(&h, adapt_sql_digest(q, vals, 3));
                        keyhash_end(&h, &refused);
                        if (!ring_seen(st, key32(&refused))) {
                                (*io_malformed)++;
                                st->refused++;
                        }
                        continue;
                }
                cost = tot_usd_nano(usd);
                /* a root's cost, as Crush wrote it: the ledger keeps the largest */
                if ((!parent || !parent[0]) && cost > 0) {
                        if ((r = push(rd, session, ROW_KIND_SNAPSHOT_STEP, out, &row)) < 0)
                                return r;
                        if ((r = keyhash_begin(&h, CRUSH_KEY_COST)) < 0) {
                                out->n--;
                                return r;
                        }
                        keyhash_str(&h, session);
                        keyhash_end(&h, &row->key);
                        row->flags = ROW_F_UPSERT;
                        row->cost_source = COST_VENDOR;
                        row->cost_nano = (int64_t)cost;
                        row->time_ms = when_ms(created) ? when_ms(created) : rd->now_ms;
                }
                if (prompt + completion == 0)
                        continue; /* no call yet (or v0.71+ kept the last non-zero one) */
                /* the last call's tokens: a live call, or what a first scan finds left */
                if ((r = push(rd, session, ROW_KIND_RESPONSE, out, &row)) < 0)
                        return r;
                if ((r = keyhash_begin(&h, CRUSH_KEY_CALL)) < 0) {
                        out->n--;
                        return r;
                }
                keyhash_str(&h, session);
                keyhash_u64(&h, prompt);
                keyhash_u64(&h, completion);
                keyhash_u64(&h, cost);
                keyhash_end(&h, &row->key);
                if (ring_seen(st, key32(&row->key))) {
                        out->n--; /* read again within the margin: committed already */
                        continue;
                }
                row->cost_source = COST_VENDOR; /* 0: the cost is in its root's row */
                if (st->seeded) {
                        st->calls++;
                        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_COST_ELSEWHERE;
                        row->input = prompt;
                        row->output = completion;
                        row->total = prompt + completion;
                        row->time_ms = rd->now_ms;
                } else {
                        /* history: the last call only, not the session's total */
                        row->time_ms = when_ms(updated) ? when_ms(updated) : rd->now_ms;
                        st->leftovers++;
                        st->leftover_tokens += prompt + completion;
                }
        }
        if (rc != SQLITE_DONE)
                return adapt_sql_errno(rd->db, rc);
        if ((rc = sqlite3_step(rd->q_roots)) != SQLITE_ROW)
                return adapt_sql_errno(rd->db, rc);
        st->roots = (uint64_t)sqlite3_column_int64(rd->q_roots, 0);
        st->cost_nano = tot_usd_nano(sqlite3_column_double(rd->q_roots, 1));
        st->wm = wm;
        return 0;
}

/* One read of the database for crush_collect_rows (adapt_db_read_stable):
 * from the state before it, into out after its first n0 rows. */
struct read_attempt {
        const struct source_ctx *ctx;
        int64_t now_ms;
        struct cr_state before, after;
        struct row_batch *out;
        size_t n0;
        uint64_t malformed;
};

static int read_once(void *u, bool *ret_immutable)
{
        struct read_attempt *a = u;
        struct store_pass rd = { .ctx = a->ctx, .now_ms = a->now_ms };
        int r;

        a->after = a->before;
        a->out->n = a->n0;
        a->malformed = 0;
        r = store_pass_open(&rd);
        *ret_immutable = rd.conn.immutable;
        if (r == 0)
                r = read_sessions(&rd, &a->after, a->out, &a->malformed);
        else if (r == 1)
                r = 0;
        store_pass_close(&rd);
        return r;
}

int crush_collect_rows(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                       size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        struct read_attempt a = { .ctx = ctx, .before = state_get(ps), .out = out, .n0 = out->n };
        struct cr_state *st = &a.after;
        bool settling = false;
        uint64_t fp = adapt_db_fingerprint(ctx->path, &settling);
        struct adapt_wal_mark mark;
        int r;

        (void)max_rows; /* the rows changed since the last read: one pass */
        a.now_ms = timefmt_now_ms();
        if (*io_watermark == 0) /* every read leaves it at 1 or more */
                a.before = (struct cr_state){ 0 };
        if (!settling && a.before.valid && a.before.done && a.before.fp == fp && a.now_ms >= a.before.at_ms &&
            a.now_ms - a.before.at_ms < RECHECK_MS)
                return COLLECT_DONE;
        adapt_db_wal_mark(ctx->path, &mark);
        r = adapt_db_read_stable(ctx->path, &fp, &settling, read_once, &a);
        if (r < 0) {
                out->n = a.n0;
                return r;
        }
        st->valid = true;
        st->seeded = true;
        st->done = !settling;
        st->fp = fp;
        st->at_ms = a.now_ms;
        state_put(ps, st);
        *io_watermark = st->wm > 0 ? (uint64_t)st->wm : 1;
        *io_malformed += a.malformed;
        return adapt_db_read_end(ctx->path, settling, &mark);
}
