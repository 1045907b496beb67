/* Unit tests of the Goose adapter (written from its schema, unverified):
 * discovery, the fixture store (accumulated sums, a sub-agent's session as
 * a side chain, the model from model_config_json, a session without
 * usage), a session updated three times (three exact deltas), a reset, and
 * a schema-5 store without the model columns. */
#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "adapters/mem-state.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_goose;
static const struct adapter *A = &adapter_goose;
static char fx[PATH_MAX], tmp[PATH_MAX];

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %.200s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

struct src {
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm, malformed;
        struct mem_state mem; /* the source state the daemon keeps in the ledger */
};

static int collect(struct src *s, struct row_batch *b)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        int r;

        age_db(s->path);
        s->mem.iface.u = &s->mem; /* a copied src keeps its own */
        s->ctx.state = &s->mem.iface;
        r = A->collect_rows(&s->ctx, &s->ps, &s->wm, 512, b, &s->malformed);
        if (parse_state_encode(&s->ps, enc, sizeof(enc), &len) != 0 || parse_state_decode(enc, len, &s->ps) != 0)
                exit(99);
        return r;
}

static void src_init(struct src *s, const char *path)
{
        mem_state_free(&s->mem); /* a src used again (zeroed when declared) */
        memset(s, 0, sizeof(*s));
        mem_state_init(&s->mem);
        xsnprintf(s->path, sizeof(s->path), "%s", path);
        s->ctx.adapter = A;
        s->ctx.path = s->path;
        s->ctx.source_hash = hash64(s->path, strlen(s->path));
}

static const struct usage_row *find(const struct row_batch *b, const char *session)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->rows[i].session, session) == 0)
                        return &b->rows[i];
        return NULL;
}

static void test_discovery(void)
{
        struct fenv f = { 0 }, g = { 0 }, h = { 0 };
        struct root_list l = { 0 };
        struct discover_env env;

        fenv_set(&f, "HOME", "/home/u");
        env = fenv_env(&f);
        A->discover(&env, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/home/u/.local/share/goose/sessions") == 0, "default root");
        root_list_free(&l);
        fenv_set(&g, "HOME", "/home/u");
        fenv_set(&g, "GOOSE_PATH_ROOT", "/srv/goose");
        env = fenv_env(&g);
        A->discover(&env, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/srv/goose/data/sessions") == 0 && l.v[0].reason == ROOT_ENV,
           "GOOSE_PATH_ROOT/data");
        root_list_free(&l);
        fenv_set(&h, "HOME", "/home/u");
        fenv_set(&h, "XDG_DATA_HOME", "/x");
        env = fenv_env(&h);
        A->discover(&env, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/x/goose/sessions") == 0, "$XDG_DATA_HOME/goose");
        root_list_free(&l);
        is_int(A->classify("sessions.db", "sessions.db", 1, false), CLASS_TABLE, "sessions.db: a table source");
        is_int(A->classify("20250101_1.jsonl", "20250101_1.jsonl", 1, false), CLASS_IGNORE, "legacy .jsonl: no");
        ok(A->unverified != NULL, "marked unverified (no captured store)");
}

/* A new database name in the test's folder (its path in path, PATH_MAX
 * bytes) holding fixtures/goose/schema.sql: its two sessions with usage
 * and one without. */
static sqlite3 *fixture_db(const char *name, char *path)
{
        char schema[PATH_MAX];
        sqlite3 *db;
        char *text;

        xsnprintf(path, PATH_MAX, "%s/%s", tmp, name);
        xsnprintf(schema, sizeof(schema), "%s/goose/schema.sql", fx);
        if (sqlite3_open(path, &db) != SQLITE_OK || !(text = slurp(schema, NULL)))
                exit(99);
        sql(db, text);
        free(text);
        return db;
}

static void test_store(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        const struct usage_row *r;
        struct src s = { 0 };
        sqlite3 *db = fixture_db("sessions.db", path);

        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "read");
        is_int(b.n, 2, "two sessions with usage (one without none)");
        r = find(&b, "20260105_1");
        ok(r && r->input == 9000 && r->output == 300 && strcmp(r->model, "claude-sonnet-4-5") == 0 &&
                   strcmp(r->provider, "anthropic") == 0 && strcmp(r->project, "/home/u/app") == 0,
           "the accumulated sums, the model from model_config_json, working_dir");
        ok(r && r->time_ms == 1767605400000LL && !(r->flags & ROW_F_SIDECHAIN), "dated by updated_at (UTC)");
        r = find(&b, "20260105_2");
        ok(r && r->input == 2000 && (r->flags & ROW_F_SIDECHAIN), "the sub-agent's session: a side chain");
        for (int i = 1; i <= 3; i++) {
                char q[256];
                xsnprintf(q, sizeof(q),
                          "UPDATE sessions SET input_tokens = %d, accumulated_input_tokens = accumulated_input_tokens + %d, "
                          "accumulated_output_tokens = accumulated_output_tokens + 7, updated_at = datetime('now') "
                          "WHERE id = '20260105_1'", 100 * i, 100 * i);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 1 && b.rows[0].input == (uint64_t)(100 * i) && b.rows[0].output == 7,
                   "update %d: one row, exactly the growth", i);
        }
        sql(db, "UPDATE sessions SET accumulated_input_tokens = 50, accumulated_output_tokens = 5 WHERE id = '20260105_2'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 50 && b.rows[0].output == 5, "a reset: counted whole again");
        sqlite3_close(db);

        xsnprintf(path, sizeof(path), "%s/old.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT NOT NULL, created_at TIMESTAMP, "
                "updated_at TIMESTAMP, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER);"
                "INSERT INTO sessions VALUES ('20250101_1', '/w', '2025-01-01 00:00:00', '2025-01-01 00:01:00', 10, 2)");
        sqlite3_close(db);
        src_init(&s, path);
        row_batch_clear(&b);
        is_int(collect(&s, &b), COLLECT_DONE, "an older schema without model columns: read");
        ok(b.n == 1 && b.rows[0].input == 10 && b.rows[0].model[0] == 0, "... the sums, no model");
        xsnprintf(path, sizeof(path), "%s/other.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "CREATE TABLE sessions (id TEXT, title TEXT)");
        sqlite3_close(db);
        src_init(&s, path);
        is_int(collect(&s, &b), -EPROTO, "sessions without accumulated sums: -EPROTO");
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* Token sums of the wrong type in an otherwise good session: text, a
 * negative number, past 10^15 (2^53 + 1, and 2^64 written as text, which
 * SQLite keeps as a REAL) are refused: no row, the session's last good
 * snapshot stands (the next good sum is measured against it, not counted
 * whole again), malformed once per refused value however often it is read;
 * NULL reports nothing (the last sum stands); a REAL is read without its
 * fraction; a session first seen refused counts whole once it is good. */
static void test_hostile(void)
{
        static const struct {
                const char *value, *what;
                bool refused;
        } cases[] = {
                { "'lots'", "text", true },
                { "-5", "a negative number", true },
                { "NULL", "NULL", false },
                { "9007199254740993", "2^53 + 1", true },
                { "'18446744073709551616'", "2^64 as text", true },
                { "'9000 tokens'", "text beginning with a number", true },
        };
        char path[PATH_MAX], q[256];
        struct row_batch b = { 0 };
        struct src s = { 0 };
        uint64_t base = 9000;
        sqlite3 *db = fixture_db("hostile.db", path);

        src_init(&s, path);
        collect(&s, &b);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                xsnprintf(q, sizeof(q), "UPDATE sessions SET accumulated_input_tokens = %s WHERE id = '20260105_1'",
                          cases[i].value);
                sql(db, q);
                uint64_t m0 = s.malformed;
                row_batch_clear(&b);
                int r = collect(&s, &b);
                ok(r == COLLECT_DONE && b.n == 0, "%s: read, no row (%d, %zu rows)", cases[i].what, r, b.n);
                ok(s.malformed - m0 == (cases[i].refused ? 1u : 0u), "%s: %s", cases[i].what,
                   cases[i].refused ? "malformed once" : "not malformed");
                sql(db, "UPDATE sessions SET name = name || 'x' WHERE id = '20260105_1'");
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 0 && s.malformed - m0 == (cases[i].refused ? 1u : 0u), "%s: read again: nothing more",
                   cases[i].what);
                base += 100;
                xsnprintf(q, sizeof(q), "UPDATE sessions SET accumulated_input_tokens = %llu WHERE id = '20260105_1'",
                          (unsigned long long)base);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 1 && b.rows[0].input == 100 && b.rows[0].output == 0,
                   "%s, then a good sum: only its growth over the last good one (100: %llu)", cases[i].what,
                   b.n ? (unsigned long long)b.rows[0].input : 0ULL);
        }
        sql(db, "UPDATE sessions SET accumulated_input_tokens = 9800.75 WHERE id = '20260105_1'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 200, "a REAL: read without its fraction (9800)");
        sql(db, "INSERT INTO sessions (id, working_dir, accumulated_input_tokens, accumulated_output_tokens) "
                "VALUES ('20260105_9', '/w', X'00ff', 3)");
        uint64_t m0 = s.malformed;
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 0 && s.malformed - m0 == 1, "a new session with a blob for its sum: refused, malformed");
        sql(db, "UPDATE sessions SET accumulated_input_tokens = 40 WHERE id = '20260105_9'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 40 && b.rows[0].output == 3, "good again: counted whole, once");
        sqlite3_close(db);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

int main(void)
{
        xsnprintf(fx, sizeof(fx), "%s/fixtures", am_srcdir());
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        test_discovery();
        test_store();
        test_hostile();
        return tap_done();
}
