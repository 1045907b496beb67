/* Goose (Block): sessions/sessions.db under $GOOSE_PATH_ROOT/data, else
 * $XDG_DATA_HOME/goose, else ~/.local/share/goose. `sessions` keeps
 * accumulated_input_tokens/accumulated_output_tokens, running sums per
 * session (input includes cache read and write: Goose keeps the cache split
 * of the last call only); each read turns what grew into one row per
 * session (running-totals.h). Sub-agents are sessions of their own
 * (session_type 'sub_agent'): side-chain rows. Written from Goose's public
 * schema; no store with tokens was captured (adapter.unverified). */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "adapt-util.h"
#include "adapter.h"
#include "running-totals.h"
#include "ledger/ledger.h"
#include "timefmt.h"

extern const struct adapter adapter_goose; /* defined at the end of this file */

#define GOOSE_KEY_STEP "goose-step-v1" /* (session id, totals before, totals after, reset) */

static int goose_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *root = discover_env_get(env, "GOOSE_PATH_ROOT");
        const char *xdg = discover_env_get(env, "XDG_DATA_HOME");
        char base[PATH_MAX], path[PATH_MAX];
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (root && adapt_resolve_path(root, home, home, base, sizeof(base)) == 0) {
                if (snprintf(path, sizeof(path), "%s/data/sessions", base) >= (int)sizeof(path))
                        return 0;
                r = adapt_add_root(out, &adapter_goose, path, "sessions", ROOT_ENV, "GOOSE_PATH_ROOT", NULL, 1);
                return r < 0 ? r : 0;
        }
        if (xdg && xdg[0] == '/') {
                if (snprintf(path, sizeof(path), "%s/goose/sessions", xdg) >= (int)sizeof(path))
                        return 0;
                r = adapt_add_root(out, &adapter_goose, path, "sessions", ROOT_ENV, "XDG_DATA_HOME", NULL, 1);
                return r < 0 ? r : 0;
        }
        if (!home || snprintf(path, sizeof(path), "%s/.local/share/goose/sessions", home) >= (int)sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_goose, path, "sessions", ROOT_DEFAULT, NULL, NULL, 1);
        return r < 0 ? r : 0;
}

/* sessions.db; never its sidecars, backups or the legacy .jsonl sessions */
static enum classify_result goose_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return CLASS_IGNORE;
        return depth == 1 && strcmp(name, "sessions.db") == 0 ? CLASS_TABLE : CLASS_IGNORE;
}

static bool has_column(sqlite3 *db, const char *col, int *ret_rc)
{
        sqlite3_stmt *st = NULL;
        bool found = false;
        int rc = sqlite3_prepare_v2(db, "PRAGMA table_info(sessions)", -1, &st, NULL);

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

enum { C_ID, C_CREATED, C_UPDATED, C_DIR, C_TYPE, C_IN, C_OUT, C_PROVIDER, C_MODEL, C_NCOLS };

/* The SELECT this schema allows: times as unix seconds (Goose writes
 * 'YYYY-MM-DD HH:MM:SS' UTC), the model from model_config_json where the
 * schema has it. -EPROTO without the accumulated sums. */
static int build_query(sqlite3 *db, char *q, size_t cap)
{
        static const char *const want[] = { "id", "created_at", "updated_at", "working_dir", "session_type",
                                            "accumulated_input_tokens", "accumulated_output_tokens",
                                            "provider_name", "model_config_json" };
        bool have[C_NCOLS];
        int rc, n;

        for (int i = 0; i < C_NCOLS; i++) {
                have[i] = has_column(db, want[i], &rc);
                if (rc != SQLITE_OK)
                        return adapt_sql_errno(db, rc);
        }
        if (!have[C_ID] || !have[C_IN] || !have[C_OUT])
                return -EPROTO;
        n = snprintf(q, cap,
                     "SELECT id, %s, %s, %s, %s, accumulated_input_tokens, accumulated_output_tokens, %s, %s "
                     "FROM sessions ORDER BY 3",
                     have[C_CREATED] ? "CAST(strftime('%s', created_at) AS INTEGER)" : "NULL",
                     have[C_UPDATED] ? "CAST(strftime('%s', updated_at) AS INTEGER)" : "NULL",
                     have[C_DIR] ? "working_dir" : "NULL", have[C_TYPE] ? "session_type" : "NULL",
                     have[C_PROVIDER] ? "provider_name" : "NULL",
                     have[C_MODEL] ? "CASE WHEN json_valid(model_config_json) THEN "
                                     "json_extract(model_config_json, '$.model_name') END"
                                   : "NULL");
        return n < 0 || (size_t)n >= cap ? -ENOBUFS : 0;
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

static int64_t secs_ms(sqlite3_stmt *st, int col)
{
        int64_t v = sqlite3_column_int64(st, col);
        return v > 0 && v < 100000000000LL ? v * 1000 : 0;
}

static int read_sessions(const struct source_ctx *ctx, sqlite3_stmt *q, struct tot_state *st, int64_t now,
                         struct row_batch *out, uint64_t *io_malformed)
{
        int64_t seen = st->seen_ms, max_started = st->seen_ms;
        int rc, r;

        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
                uint64_t cur[TOT_N] = { 0 }, d[TOT_N], prev[TOT_N];
                enum adapt_sql_num in, o;
                uint32_t unreported;
                bool before;
                int64_t started = secs_ms(q, C_CREATED), updated = secs_ms(q, C_UPDATED);
                char session[ROW_SESSION_MAX], type[32];
                struct usage_row *row;
                int c;

                if (!adapt_sql_key(q, C_ID, session, sizeof(session))) {
                        (*io_malformed)++;
                        continue;
                }
                if (started > max_started)
                        max_started = started;
                before = st->seeded && started <= seen;
                in = adapt_sql_count(q, C_IN, &cur[TOT_INPUT]);
                o = adapt_sql_count(q, C_OUT, &cur[TOT_OUTPUT]);
                /* text, negative, past the bound: refused, its last snapshot
                 * stands, counted malformed once */
                static const int sums[] = { C_IN, C_OUT };
                bool refused = in == ADAPT_NUM_BAD || o == ADAPT_NUM_BAD;
                /* NULL: nothing reported yet (a session before its first
                 * call), or kept as it was */
                unreported = (in == ADAPT_NUM_NULL ? 1u << TOT_INPUT : 0) | (o == ADAPT_NUM_NULL ? 1u << TOT_OUTPUT : 0);
                c = tot_measure(st, 's', session, before, refused, refused ? adapt_sql_digest(q, sums, 2) : 0, cur,
                                unreported, d, prev, io_malformed);
                if (c < 0)
                        return c;
                if (c == TOT_SAME || c == TOT_UNHELD)
                        continue;
                if (d[TOT_INPUT] + d[TOT_OUTPUT] == 0)
                        continue;
                if ((r = tot_push_step(out, GOOSE_KEY_STEP, session, prev, cur, c == TOT_RESET, &row)) < 0)
                        return r;
                col_text(q, C_TYPE, type, sizeof(type));
                if (strcmp(type, "sub_agent") == 0)
                        row->flags |= ROW_F_SIDECHAIN;
                ROW_SET(row->tool, "goose");
                row_set_str(row->session, sizeof(row->session), session, strlen(session));
                col_text(q, C_DIR, row->project, sizeof(row->project));
                col_text(q, C_PROVIDER, row->provider, sizeof(row->provider));
                col_text(q, C_MODEL, row->model, sizeof(row->model));
                /* the cache split is the last call's only: all of it is input */
                row->input = d[TOT_INPUT];
                row->output = d[TOT_OUTPUT];
                row->total = row->input + row->output;
                if (st->seeded) {
                        row->time_ms = now;
                } else {
                        row->time_ms = updated > started ? updated : started;
                        if (!row->time_ms) {
                                row->time_ms = now;
                                row->flags |= ROW_F_TIME_APPROX;
                        }
                }
                row->source_hash = ctx->source_hash;
                st->steps++;
        }
        if (rc != SQLITE_DONE)
                return -EIO;
        tot_finish(st);
        st->seen_ms = max_started;
        st->seeded = true;
        return 0;
}

static int read_db(const struct source_ctx *ctx, struct tot_state *st, int64_t now, struct row_batch *out,
                   uint64_t *io_malformed, bool *ret_immutable)
{
        struct adapt_db conn;
        sqlite3_stmt *q = NULL;
        char sql[1024];
        int r, rc;

        if ((r = adapt_db_open(ctx->path, &conn)) < 0)
                return r;
        *ret_immutable = conn.immutable;
        if (!has_column(conn.db, "id", &rc)) {
                r = rc != SQLITE_OK ? adapt_sql_errno(conn.db, rc) : adapt_db_empty(&conn) ? 0 : -EPROTO;
                adapt_db_close(&conn);
                return r;
        }
        r = build_query(conn.db, sql, sizeof(sql));
        if (r == 0 && (rc = sqlite3_prepare_v2(conn.db, sql, -1, &q, NULL)) != SQLITE_OK)
                r = adapt_sql_errno(conn.db, rc);
        if (r == 0) {
                r = read_sessions(ctx, q, st, now, out, io_malformed);
                if (r == -EIO)
                        r = adapt_sql_errno(conn.db, sqlite3_errcode(conn.db));
        }
        sqlite3_finalize(q);
        adapt_db_close(&conn);
        return r;
}

static int goose_collect_rows(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                              size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        (void)max_rows; /* one row per changed session: a pass is one call */
        return tot_collect_db(ctx, ps, io_watermark, out, io_malformed, read_db);
}

/* {"stores": [{path, steps, resets, unmetered_changes, sessions_tracked,
 * sessions_beyond, sessions_refused}],
 * "notes": the same as text}, from the checkpoints alone. */
static struct json_object *goose_status(const struct adapter_status_ctx *ctx)
{
        json_object *arr = json_object_new_array(), *res = json_object_new_object();
        json_object *notes = json_object_new_array();
        struct adapter_source_view v;
        char line[PATH_MAX + 512];

        json_object_array_add(notes, json_object_new_string("an event is the growth of one session's accumulated "
                                                            "tokens between two reads (input includes cache)"));
        while (arr && res && ctx->next(ctx->it, &v)) {
                struct parse_state ps;
                struct tot_state st;
                char path[PATH_MAX];
                json_object *d;

                if (v.kind != CLASS_TABLE || !v.cp || !v.cp->state_len ||
                    parse_state_decode(v.cp->state, v.cp->state_len, &ps) < 0 || !(st = tot_state_get(&ps)).valid)
                        continue;
                snprintf(path, sizeof(path), "%s", v.path);
                for (char *c = path; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
                d = json_object_new_object();
                json_object_object_add(d, "path", json_object_new_string(path));
                json_object_object_add(d, "steps", json_object_new_int64((int64_t)st.steps));
                json_object_object_add(d, "resets", json_object_new_int64((int64_t)st.resets));
                json_object_object_add(d, "unmetered_changes", json_object_new_int64((int64_t)st.unmetered));
                json_object_object_add(d, "sessions_tracked", json_object_new_int64((int64_t)st.stored));
                json_object_object_add(d, "sessions_beyond", json_object_new_int64((int64_t)st.beyond));
                json_object_object_add(d, "sessions_refused", json_object_new_int64((int64_t)st.refused));
                json_object_array_add(arr, d);
                snprintf(line, sizeof(line),
                         "%s: %llu steps, %llu resets, %llu changes not metered, %llu sessions refused "
                         "(a token sum that is text, negative or past 10^15: their last good totals stand)",
                         path, (unsigned long long)st.steps, (unsigned long long)st.resets,
                         (unsigned long long)st.unmetered, (unsigned long long)st.refused);
                json_object_array_add(notes, json_object_new_string(line));
        }
        json_object_object_add(res, "stores", arr);
        json_object_object_add(res, "notes", notes);
        return res;
}

static const char *const goose_env[] = {
        "GOOSE_PATH_ROOT",
        "XDG_DATA_HOME",
        NULL,
};

const struct adapter adapter_goose = {
        .id = "goose",
        .display_name = "Goose",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_NONE,
                .events = CAP_EVENTS_SNAPSHOT_STEPS,
        },
        .env = goose_env,
        .unverified = "written from Goose's public schema (sessions.db, schema 5+); no store with tokens "
                      "captured yet",
        .discover = goose_discover,
        .classify = goose_classify,
        .source_of = tot_sqlite_source_of,
        .collect_rows = goose_collect_rows,
        .status_extra = goose_status,
};
