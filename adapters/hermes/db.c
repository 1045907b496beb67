/* Hermes Agent's state.db: `sessions` keeps running totals per session,
 * updated in place after every API call; each read turns what grew since
 * the last read into one row per session (running-totals.h). Columns are
 * selected by name (five schema versions occur), the model comes from
 * `session_model_usage` where the schema has it, and a broken table beside
 * `sessions` costs only what it held. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "binio.h"
#include "hermes/hermes.h"
#include "running-totals.h"
#include "timefmt.h"


/* The sessions columns read, NULL where the schema lacks them. */
enum { C_ID, C_STARTED, C_ENDED, C_MODEL, C_PROVIDER, C_CWD, C_IN, C_OUT, C_CR, C_CW, C_REASON, C_CALLS, C_EST,
       C_ACT, C_NCOLS };
static const char *const cols[C_NCOLS] = {
        "id",        "started_at",   "ended_at",          "model",           "billing_provider",
        "cwd",       "input_tokens", "output_tokens",     "cache_read_tokens", "cache_write_tokens",
        "reasoning_tokens", "api_call_count", "estimated_cost_usd", "actual_cost_usd",
};

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

/* SELECT of the columns this schema has: -EPROTO without id and the token
 * counts (not Hermes's sessions). */
static int build_query(sqlite3 *db, char *q, size_t cap)
{
        size_t len = 0;
        int rc;

        len += (size_t)snprintf(q + len, cap - len, "SELECT ");
        for (int i = 0; i < C_NCOLS; i++) {
                bool have = has_column(db, "sessions", cols[i], &rc);
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(db, rc);
                if (!have && (i == C_ID || i == C_IN || i == C_OUT))
                        return -EPROTO;
                len += (size_t)snprintf(q + len, cap - len, "%s%s", i ? ", " : "", have ? cols[i] : "NULL");
                if (len >= cap)
                        return -ENOBUFS;
        }
        /* oldest first: the most recent end up first in the snapshot set */
        len += (size_t)snprintf(q + len, cap - len, " FROM sessions ORDER BY 2");
        return len >= cap ? -ENOBUFS : 0;
}

static int64_t secs_ms(sqlite3_stmt *st, int col)
{
        double v = sqlite3_column_double(st, col);

        if (sqlite3_column_type(st, col) == SQLITE_NULL || !(v > 0) || v > 1e11)
                return 0;
        return (int64_t)(v * 1000.0);
}

/* A row's counters, columns counters[0..TOT_COST_NANO) in TOT_* order, its
 * cost the provider's own (act) when it reports one, else the estimate
 * (est): 0, cur and *ret_unreported (bit k: counter k is NULL, not
 * reported; the cost when neither amount is); -EINVAL when a column holds
 * text, a negative number or one past its bound (adapt_sql_count), and
 * *ret_bad a digest of the values as written. */
static int row_counters(sqlite3_stmt *q, const int counters[TOT_COST_NANO], int act_col, int est_col,
                        uint64_t cur[TOT_N], uint32_t *ret_unreported, uint32_t *ret_bad)
{
        uint32_t unreported = 0;
        bool bad = false;
        double act, est;
        enum adapt_sql_num a, e;

        for (int k = 0; k < TOT_COST_NANO; k++) {
                enum adapt_sql_num n = adapt_sql_count(q, counters[k], &cur[k]);
                if (n == ADAPT_NUM_NULL)
                        unreported |= 1u << k;
                bad |= n == ADAPT_NUM_BAD;
        }
        a = adapt_sql_usd(q, act_col, &act);
        e = adapt_sql_usd(q, est_col, &est);
        bad |= a == ADAPT_NUM_BAD || e == ADAPT_NUM_BAD;
        if (bad) {
                int all[TOT_COST_NANO + 2];
                memcpy(all, counters, sizeof(int) * TOT_COST_NANO);
                all[TOT_COST_NANO] = act_col;
                all[TOT_COST_NANO + 1] = est_col;
                *ret_bad = adapt_sql_digest(q, all, TOT_COST_NANO + 2);
                return -EINVAL;
        }
        /* the provider's own cost when it reports one, else Hermes's estimate */
        cur[TOT_COST_NANO] = tot_usd_nano(act > 0 ? act : est);
        if (act <= 0 && e == ADAPT_NUM_NULL)
                unreported |= 1u << TOT_COST_NANO;
        *ret_unreported = unreported;
        return 0;
}

static const int session_counters[TOT_COST_NANO] = { C_IN, C_OUT, C_CR, C_CW, C_REASON, C_CALLS };

/* A model name as written: "" for none and for the string 'null'. */
static void col_text(sqlite3_stmt *st, int col, char *dst, size_t cap)
{
        const unsigned char *t = sqlite3_column_text(st, col);
        size_t n = t ? (size_t)sqlite3_column_bytes(st, col) : 0;

        if (!t || n == 0 || (n == 4 && memcmp(t, "null", 4) == 0) || (n == 4 && memcmp(t, "None", 4) == 0)) {
                dst[0] = 0;
                return;
        }
        row_set_str(dst, cap, (const char *)t, n);
}

struct store_pass {
        const struct source_ctx *ctx;
        struct adapt_db conn;
        sqlite3 *db;
        sqlite3_stmt *q_sessions, *q_usage, *q_aux;
        int64_t now_ms;
};

static void store_pass_close(struct store_pass *rd)
{
        sqlite3_finalize(rd->q_sessions);
        sqlite3_finalize(rd->q_usage);
        sqlite3_finalize(rd->q_aux);
        rd->q_sessions = rd->q_usage = rd->q_aux = NULL;
        adapt_db_close(&rd->conn);
        rd->db = NULL;
}

static const char Q_USAGE[] = "SELECT model, billing_provider, last_seen FROM session_model_usage "
                              "WHERE session_id = ?1 ORDER BY COALESCE(last_seen, first_seen, 0) DESC LIMIT 1";
/* from schema 22 on: the main loop's rows only (task ''), not an auxiliary model */
static const char Q_USAGE_MAIN[] = "SELECT model, billing_provider, last_seen FROM session_model_usage "
                                   "WHERE session_id = ?1 AND task = '' "
                                   "ORDER BY COALESCE(last_seen, first_seen, 0) DESC LIMIT 1";

/* The auxiliary calls' columns of session_model_usage (schema 22 on: rows
 * whose task is not ''), NULL where the schema lacks them, and the
 * session's cwd. */
enum { A_SESSION, A_MODEL, A_PROVIDER, A_BASE_URL, A_MODE, A_TASK, A_CALLS, A_IN, A_OUT, A_CR, A_CW, A_REASON,
       A_EST, A_ACT, A_FIRST, A_LAST, A_NCOLS };
static const char *const aux_cols[A_NCOLS] = {
        "session_id",        "model",         "billing_provider",  "billing_base_url",   "billing_mode",
        "task",              "api_call_count", "input_tokens",     "output_tokens",      "cache_read_tokens",
        "cache_write_tokens", "reasoning_tokens", "estimated_cost_usd", "actual_cost_usd", "first_seen",
        "last_seen",
};

static const int aux_counters[TOT_COST_NANO] = { A_IN, A_OUT, A_CR, A_CW, A_REASON, A_CALLS };

/* The auxiliary calls' query: 0 and the statement, 1 when the schema has
 * none (no task column: before schema 22, or no table), negative errno. */
static int aux_prepare(sqlite3 *db, sqlite3_stmt **ret_stmt)
{
        char q[1024];
        size_t len = 0;
        bool cwd;
        int rc;

        if (!has_column(db, "session_model_usage", "task", &rc))
                return rc == SQLITE_OK ? 1 : adapt_sql_errno(db, rc);
        len += (size_t)snprintf(q + len, sizeof(q) - len, "SELECT ");
        for (int i = 0; i < A_NCOLS; i++) {
                bool have = has_column(db, "session_model_usage", aux_cols[i], &rc);
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(db, rc);
                if (!have && (i == A_SESSION || i == A_MODEL || i == A_IN || i == A_OUT))
                        return 1; /* not a shape we know: nothing read from it */
                len += (size_t)snprintf(q + len, sizeof(q) - len, "%s%s%s", i ? ", " : "", have ? "u." : "",
                                        have ? aux_cols[i] : "NULL");
        }
        cwd = has_column(db, "sessions", "cwd", &rc);
        if (rc != SQLITE_OK)
                return adapt_sql_errno(db, rc);
        len += (size_t)snprintf(q + len, sizeof(q) - len,
                                ", %s FROM session_model_usage u LEFT JOIN sessions s ON s.id = u.session_id "
                                "WHERE u.task IS NOT NULL AND u.task <> '' ORDER BY u.first_seen",
                                cwd ? "s.cwd" : "NULL");
        if (len >= sizeof(q))
                return -ENOBUFS;
        rc = sqlite3_prepare_v2(db, q, -1, ret_stmt, NULL);
        return rc == SQLITE_OK ? 0 : 1; /* a broken table costs only its auxiliary calls */
}

/* 0; 1 when there is no sessions table yet (a new database); negative errno. */
static int store_pass_open(struct store_pass *rd)
{
        char q[1024];
        int r, rc;

        if ((r = adapt_db_open(rd->ctx->path, &rd->conn)) < 0)
                return r;
        rd->db = rd->conn.db;
        if (!has_column(rd->db, "sessions", "id", &rc)) {
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(rd->db, rc);
                return adapt_db_empty(&rd->conn) ? 1 : -EPROTO;
        }
        if ((r = build_query(rd->db, q, sizeof(q))) < 0)
                return r;
        rc = sqlite3_prepare_v2(rd->db, q, -1, &rd->q_sessions, NULL);
        if (rc != SQLITE_OK)
                return adapt_sql_errno(rd->db, rc);
        /* optional: older schemas have no session_model_usage, and a broken
         * one costs only the model names it held */
        bool tasks = has_column(rd->db, "session_model_usage", "task", &rc);
        if (sqlite3_prepare_v2(rd->db, tasks ? Q_USAGE_MAIN : Q_USAGE, -1, &rd->q_usage, NULL) != SQLITE_OK)
                rd->q_usage = NULL;
        if ((r = aux_prepare(rd->db, &rd->q_aux)) < 0)
                return r;
        return 0;
}

/* The model of the session's latest call, from session_model_usage: true
 * and model/provider/last_ms filled; false when there is none. */
static bool usage_model(struct store_pass *rd, const char *session, struct usage_row *row, int64_t *ret_last_ms)
{
        bool found = false;

        if (!rd->q_usage)
                return false;
        sqlite3_reset(rd->q_usage);
        sqlite3_bind_text(rd->q_usage, 1, session, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(rd->q_usage) == SQLITE_ROW) {
                char model[ROW_MODEL_MAX];
                col_text(rd->q_usage, 0, model, sizeof(model));
                if (model[0]) {
                        row_set_str(row->model, sizeof(row->model), model, strlen(model));
                        col_text(rd->q_usage, 1, row->provider, sizeof(row->provider));
                        *ret_last_ms = secs_ms(rd->q_usage, 2);
                        found = true;
                }
        }
        sqlite3_reset(rd->q_usage);
        return found;
}

static int emit(struct store_pass *rd, sqlite3_stmt *st, const char *session, enum tot_change c, bool live,
                const uint64_t prev[TOT_N], const uint64_t cur[TOT_N], const uint64_t d[TOT_N], struct row_batch *out)
{
        struct usage_row *row;
        int64_t started = secs_ms(st, C_STARTED), ended = secs_ms(st, C_ENDED), last = 0;
        int r;

        if (d[TOT_INPUT] + d[TOT_OUTPUT] + d[TOT_CACHE_READ] + d[TOT_CACHE_WRITE] == 0 && d[TOT_COST_NANO] == 0)
                return 0; /* only the call count moved (a failed call): nothing billed */
        if ((r = tot_push_step(out, HERMES_KEY_STEP, session, prev, cur, c == TOT_RESET, &row)) < 0)
                return r;
        ROW_SET(row->tool, "hermes");
        ROW_SET(row->session, session);
        col_text(st, C_CWD, row->project, sizeof(row->project));
        if (!usage_model(rd, session, row, &last)) {
                col_text(st, C_MODEL, row->model, sizeof(row->model));
                col_text(st, C_PROVIDER, row->provider, sizeof(row->provider));
        }
        tot_fill_classes(row, d);
        /* seen live: now; read from history: the session's own last time */
        if (live) {
                row->time_ms = rd->now_ms;
        } else {
                int64_t t = last > ended ? last : ended;
                row->time_ms = t > started ? t : started;
                if (!row->time_ms) {
                        row->time_ms = rd->now_ms;
                        row->flags |= ROW_F_TIME_APPROX;
                }
        }
        row->source_hash = rd->ctx->source_hash;
        return 1;
}

/* One auxiliary row's identity, as the source state's and the row key's
 * session part: the hash of its whole key (session, model, provider, base
 * URL, mode, task) and the task, short and bounded. */
static void aux_id(sqlite3_stmt *q, const char *session, const char *task, char *ret, size_t cap)
{
        struct keyhash h;
        struct row_key k;

        keyhash_begin(&h, "hermes-aux-id");
        keyhash_str(&h, session);
        for (int c = A_MODEL; c <= A_TASK; c++) {
                const unsigned char *t = sqlite3_column_text(q, c);
                keyhash_str(&h, t ? (const char *)t : "");
        }
        keyhash_end(&h, &k);
        snprintf(ret, cap, "%016llx%016llx|%.40s", (unsigned long long)be64_get(k.b),
                 (unsigned long long)be64_get(k.b + 8), task);
}

/* The auxiliary calls (schema 22 on): each row of session_model_usage
 * whose task is not '' keeps running totals of one (session, model,
 * provider, task); its growth is one row, keyed apart from the sessions'
 * steps (HERMES_KEY_AUX, state space HERMES_SPACE_AUX). */
static int read_aux(struct store_pass *rd, struct tot_state *st, int64_t seen, int64_t *io_max_started,
                    struct row_batch *out, uint64_t *io_malformed)
{
        sqlite3_stmt *q = rd->q_aux;
        int rc, r;

        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
                uint64_t cur[TOT_N], d[TOT_N], prev[TOT_N];
                int64_t first = secs_ms(q, A_FIRST), last = secs_ms(q, A_LAST);
                char session[ROW_SESSION_MAX], task[48], id[96];
                uint32_t unreported = 0, bad = 0;
                struct usage_row *row;
                bool before;

                if (!adapt_sql_key(q, A_SESSION, session, sizeof(session))) {
                        (*io_malformed)++;
                        continue;
                }
                col_text(q, A_TASK, task, sizeof(task));
                aux_id(q, session, task, id, sizeof(id));
                if (first > *io_max_started)
                        *io_max_started = first;
                before = st->seeded && first > 0 && first <= seen;
                /* refused: its last snapshot stands, counted malformed once */
                bool refused = row_counters(q, aux_counters, A_ACT, A_EST, cur, &unreported, &bad) < 0;
                int c = tot_measure(st, HERMES_SPACE_AUX, id, before, refused, bad, cur, unreported, d, prev,
                                    io_malformed);
                if (c < 0)
                        return c;
                if (c == TOT_SAME || c == TOT_UNHELD)
                        continue;
                if (d[TOT_INPUT] + d[TOT_OUTPUT] + d[TOT_CACHE_READ] + d[TOT_CACHE_WRITE] == 0 && d[TOT_COST_NANO] == 0)
                        continue;
                if ((r = tot_push_step(out, HERMES_KEY_AUX, id, prev, cur, c == TOT_RESET, &row)) < 0)
                        return r;
                ROW_SET(row->tool, "hermes");
                row_set_str(row->session, sizeof(row->session), session, strlen(session));
                col_text(q, A_NCOLS, row->project, sizeof(row->project)); /* the session's cwd */
                col_text(q, A_MODEL, row->model, sizeof(row->model));
                col_text(q, A_PROVIDER, row->provider, sizeof(row->provider));
                tot_fill_classes(row, d);
                if (st->seeded) {
                        row->time_ms = rd->now_ms;
                } else {
                        row->time_ms = last > first ? last : first;
                        if (!row->time_ms) {
                                row->time_ms = rd->now_ms;
                                row->flags |= ROW_F_TIME_APPROX;
                        }
                }
                row->source_hash = rd->ctx->source_hash;
                st->side_steps++;
                st->side_calls += d[TOT_CALLS];
        }
        if (rc != SQLITE_DONE)
                (*io_malformed)++; /* a broken table costs only the auxiliary calls not read */
        return 0;
}

static int read_sessions(struct store_pass *rd, struct tot_state *st, struct row_batch *out, uint64_t *io_malformed)
{
        int64_t seen = st->seen_ms, max_started = st->seen_ms;
        int rc, r;

        while ((rc = sqlite3_step(rd->q_sessions)) == SQLITE_ROW) {
                sqlite3_stmt *q = rd->q_sessions;
                uint64_t cur[TOT_N], d[TOT_N], prev[TOT_N];
                int64_t started = secs_ms(q, C_STARTED);
                char session[ROW_SESSION_MAX];
                uint32_t unreported = 0, bad = 0;
                bool before;

                if (!adapt_sql_key(q, C_ID, session, sizeof(session))) {
                        (*io_malformed)++;
                        continue;
                }
                if (started > max_started)
                        max_started = started;
                before = st->seeded && started <= seen;
                /* refused: its last snapshot stands, counted malformed once */
                bool refused = row_counters(q, session_counters, C_ACT, C_EST, cur, &unreported, &bad) < 0;
                int c = tot_measure(st, HERMES_SPACE_SESSION, session, before, refused, bad, cur, unreported, d,
                                    prev, io_malformed);
                if (c < 0)
                        return c;
                if (c == TOT_SAME || c == TOT_UNHELD)
                        continue;
                r = emit(rd, q, session, c, st->seeded, prev, cur, d, out);
                if (r < 0)
                        return r;
                if (r > 0) {
                        st->steps++;
                        st->calls += d[TOT_CALLS];
                }
        }
        if (rc != SQLITE_DONE)
                return adapt_sql_errno(rd->db, rc);
        if (rd->q_aux && (r = read_aux(rd, st, seen, &max_started, out, io_malformed)) < 0)
                return r;
        tot_finish(st);
        st->seen_ms = max_started;
        st->seeded = true;
        return 0;
}

/* One read of the database (tot_collect_db). */
static int read_db(const struct source_ctx *ctx, struct tot_state *st, int64_t now_ms, struct row_batch *out,
                   uint64_t *io_malformed, bool *ret_immutable)
{
        struct store_pass rd = { .ctx = ctx, .now_ms = now_ms };
        int r = store_pass_open(&rd);

        *ret_immutable = rd.conn.immutable;
        if (r == 0)
                r = read_sessions(&rd, st, out, io_malformed);
        else if (r == 1)
                r = 0;
        store_pass_close(&rd);
        return r;
}

int hermes_collect_rows(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                        size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        (void)max_rows; /* one row per changed session: a pass is one call */
        return tot_collect_db(ctx, ps, io_watermark, out, io_malformed, read_db);
}

int hermes_figures(const struct parse_state *ps, struct hermes_figures *ret)
{
        struct tot_state st = tot_state_get(ps);

        if (!st.valid)
                return -EINVAL;
        *ret = (struct hermes_figures){ .steps = st.steps, .calls = st.calls, .resets = st.resets,
                                        .unmetered = st.unmetered, .tracked = st.stored,
                                        .beyond = st.beyond, .aux_steps = st.side_steps,
                                        .aux_calls = st.side_calls, .refused = st.refused };
        return 0;
}
