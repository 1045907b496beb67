/* Unit tests of the Crush adapter: discovery through projects.json (its
 * three places), the first scan of a store (each root's cost exactly, a
 * child's cost not added again, the last calls found marked as leftovers
 * without tokens), a session overwritten three times while watched (three
 * calls, exact), a save that moves no tokens (no call), a store without
 * sessions table columns, and the public store in ../shared/samples
 * ($0.95773 over its 3 root sessions; skipped when absent). */
#include <errno.h>
#include <json-c/json.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "crush/crush.h"
#include "ledger/ledger.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_crush;
static const struct adapter *A = &adapter_crush;
static char fx[PATH_MAX], tmp[PATH_MAX];

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %.200s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

static void sql_file(sqlite3 *db, const char *rel)
{
        char p[PATH_MAX];
        char *text;
        xsnprintf(p, sizeof(p), "%s/%s", fx, rel);
        if (!(text = slurp(p, NULL)))
                exit(99);
        sql(db, text);
        free(text);
}

struct src {
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm, malformed;
};

static void src_init(struct src *s, const char *path)
{
        memset(s, 0, sizeof(*s));
        xsnprintf(s->path, sizeof(s->path), "%s", path);
        s->ctx.adapter = A;
        s->ctx.path = s->path;
        s->ctx.source_hash = hash64(s->path, strlen(s->path));
}

static int collect(struct src *s, struct row_batch *b)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        int r;

        age_db(s->path);
        r = A->collect_rows(&s->ctx, &s->ps, &s->wm, 512, b, &s->malformed);
        if (parse_state_encode(&s->ps, enc, sizeof(enc), &len) != 0 || parse_state_decode(enc, len, &s->ps) != 0)
                exit(99);
        return r;
}

/* The ledger's view of a batch: insert-if-absent, or the monotone upsert. */
struct led {
        struct usage_row v[256];
        size_t n;
};
static void led_add(struct led *l, const struct row_batch *b)
{
        for (size_t i = 0; i < b->n; i++) {
                const struct usage_row *r = &b->rows[i];
                size_t j;
                for (j = 0; j < l->n && memcmp(&l->v[j].key, &r->key, sizeof(r->key)); j++)
                        ;
                if (j == l->n) {
                        if (l->n < 256)
                                l->v[l->n++] = *r;
                } else if (r->flags & ROW_F_UPSERT) {
                        if (r->cost_nano > l->v[j].cost_nano)
                                l->v[j].cost_nano = r->cost_nano;
                }
        }
}
static int64_t led_cost(const struct led *l)
{
        int64_t c = 0;
        for (size_t i = 0; i < l->n; i++)
                c += l->v[i].cost_nano;
        return c;
}
static uint64_t led_tokens(const struct led *l, size_t *ret_calls)
{
        uint64_t t = 0;
        *ret_calls = 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].flags & ROW_F_TOKENS_KNOWN) {
                        t += l->v[i].input + l->v[i].output;
                        (*ret_calls)++;
                }
        return t;
}

static void test_discovery(void)
{
        struct fenv f = { 0 };
        struct root_list l = { 0 };
        struct discover_env env;
        char dir[PATH_MAX], p[PATH_MAX], text[2 * PATH_MAX];

        xsnprintf(dir, sizeof(dir), "%s/global", tmp);
        mkdir_p(dir);
        xsnprintf(p, sizeof(p), "%s/projects.json", dir);
        xsnprintf(text, sizeof(text),
                  "{\"projects\":[{\"path\":\"/src/a\",\"data_dir\":\"/src/a/.crush\",\"last_accessed\":\"x\"},"
                  "{\"path\":\"/src/b\"},{\"path\":\"relative\"},{\"path\":\"/src/c\",\"data_dir\":\"state\"}]}");
        write_file(p, text);
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "CRUSH_GLOBAL_DATA", dir);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover");
        is_int(l.n, 3, "three projects with an absolute path");
        ok(l.n == 3 && strcmp(l.v[0].path, "/src/a/.crush") == 0 && l.v[0].reason == ROOT_CONFIG &&
                   strcmp(l.v[0].detail, p) == 0 && strcmp(l.v[0].label, "project a") == 0,
           "data_dir as listed; projects.json named as the reason");
        ok(l.n == 3 && strcmp(l.v[1].path, "/src/b/.crush") == 0, "no data_dir: <path>/.crush");
        ok(l.n == 3 && strcmp(l.v[2].path, "/src/c/state") == 0, "a relative data_dir: under the project");
        root_list_free(&l);

        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "XDG_DATA_HOME", tmp);
        xsnprintf(dir, sizeof(dir), "%s/crush", tmp);
        mkdir_p(dir);
        xsnprintf(p, sizeof(p), "%s/projects.json", dir);
        write_file(p, "{\"projects\":[{\"path\":\"/x/y\",\"data_dir\":\"/x/y/.crush\"}]}");
        env = fenv_env(&f);
        A->discover(&env, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/x/y/.crush") == 0, "$XDG_DATA_HOME/crush/projects.json");
        root_list_free(&l);
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/nonexistent-home");
        env = fenv_env(&f);
        A->discover(&env, &l);
        is_int(l.n, 0, "no projects.json: no projects known");
        root_list_free(&l);
        ok(registry_env_known("CRUSH_GLOBAL_DATA"), "CRUSH_GLOBAL_DATA is a declared variable");

        is_int(A->classify("crush.db", "crush.db", 1, false), CLASS_TABLE, "crush.db: a table source");
        is_int(A->classify("crush.db-wal", "crush.db-wal", 1, false), CLASS_IGNORE, "its -wal: no source");
        is_int(A->classify("logs", "logs", 1, true), CLASS_IGNORE, "nothing below");
}

static void test_store(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct crush_figures f;
        struct led *l = calloc(1, sizeof(*l));
        struct src s;
        sqlite3 *db;
        size_t calls;

        xsnprintf(path, sizeof(path), "%s/crush.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql_file(db, "crush/schema.sql");
        sql_file(db, "crush/history.sql");
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "first scan");
        led_add(l, &b);
        is_int(led_cost(l), 980000000, "cost: the roots' exactly (0.48 + 0.5), the child's not again");
        is_int(led_tokens(l, &calls), 0, "no tokens presented from history ...");
        is_int(crush_figures(&s.ps, &f), 0, "figures");
        is_int(f.leftovers, 3, "... the three last calls found are leftovers");
        is_int(f.leftover_tokens, 15140 + 19300 + 820, "... with their tokens apart (status)");
        is_int(f.roots, 3, "3 root sessions");
        is_int(f.cost_nano, 980000000, "their cost");
        const struct usage_row *r1 = NULL, *r2 = NULL;
        for (size_t i = 0; i < b.n; i++) {
                if (strcmp(b.rows[i].session, "r-1") == 0 && (b.rows[i].flags & ROW_F_UPSERT))
                        r1 = &b.rows[i];
                if (strcmp(b.rows[i].session, "r-2") == 0 && (b.rows[i].flags & ROW_F_UPSERT))
                        r2 = &b.rows[i];
        }
        ok(r1 && strcmp(r1->model, "claude-sonnet-4") == 0 && strcmp(r1->provider, "anthropic") == 0,
           "the model: the session's latest assistant message's");
        ok(r1 && r1->time_ms == 1754564779000LL, "a root's cost dated by its creation");
        ok(r1 && r1->kind == ROW_KIND_SNAPSHOT_STEP, "... a snapshot of its running total");
        ok(r2 && r2->model[0] == 0, "model 'null': none");
        for (size_t i = 0; i < b.n; i++)
                ok(!(b.rows[i].flags & ROW_F_TOKENS_KNOWN) && b.rows[i].input == 0,
                   "history row %zu: tokens unknown (—)", i);

        /* three calls, each overwriting r-1's tokens and adding to its cost */
        static const char *const up[3] = {
                "UPDATE sessions SET prompt_tokens = 16000, completion_tokens = 90, cost = cost + 0.05 WHERE id = 'r-1'",
                "UPDATE sessions SET prompt_tokens = 17000, completion_tokens = 10, cost = cost + 0.06 WHERE id = 'r-1'",
                "UPDATE sessions SET prompt_tokens = 17500, completion_tokens = 700, cost = cost + 0.07 WHERE id = 'r-1'",
        };
        static const uint64_t want_in[3] = { 16000, 17000, 17500 }, want_out[3] = { 90, 10, 700 };
        for (int i = 0; i < 3; i++) {
                const struct usage_row *call = NULL;
                size_t n_calls = 0;
                sql(db, up[i]);
                row_batch_clear(&b);
                collect(&s, &b);
                for (size_t j = 0; j < b.n; j++)
                        if (b.rows[j].flags & ROW_F_TOKENS_KNOWN) {
                                call = &b.rows[j];
                                n_calls++;
                        }
                led_add(l, &b);
                ok(n_calls == 1 && call && call->input == want_in[i] && call->output == want_out[i] &&
                           call->cost_source == COST_VENDOR && call->cost_nano == 0 &&
                           (call->flags & ROW_F_COST_ELSEWHERE) && call->kind == ROW_KIND_RESPONSE,
                   "overwrite %d: one call with its tokens, cost in the root's row", i + 1);
        }
        is_int(led_tokens(l, &calls), 16090 + 17010 + 18200, "the ledger: the three calls' tokens");
        is_int(calls, 3, "... three calls");
        is_int(led_cost(l), 1160000000, "the cost grew with them, exactly (upserted)");
        /* a save that moves no tokens (a title): no call */
        sql(db, "UPDATE sessions SET title = 'renamed' WHERE id = 'r-1'");
        row_batch_clear(&b);
        collect(&s, &b);
        led_add(l, &b);
        led_tokens(l, &calls);
        is_int(calls, 3, "a title saved: still three calls");
        crush_figures(&s.ps, &f);
        is_int(f.calls, 3, "status: three calls seen");
        /* a new session after the first scan: its first call is a call */
        sql(db, "INSERT INTO sessions (id, title, prompt_tokens, completion_tokens, cost, updated_at, created_at) "
                "VALUES ('r-4', 't', 500, 5, 0.01, strftime('%s','now'), strftime('%s','now'))");
        row_batch_clear(&b);
        collect(&s, &b);
        led_add(l, &b);
        led_tokens(l, &calls);
        is_int(calls, 4, "a new session's first call: counted");
        sqlite3_close(db);

        /* not Crush's sessions */
        xsnprintf(path, sizeof(path), "%s/other.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "CREATE TABLE sessions (id TEXT, title TEXT)");
        sqlite3_close(db);
        src_init(&s, path);
        row_batch_clear(&b);
        is_int(collect(&s, &b), -EPROTO, "sessions without token columns: -EPROTO");
        row_batch_free(&b);
        free(l);
}

static void test_public(void)
{
        const char *env = getenv("AM_SAMPLES");
        char base[PATH_MAX], dir[PATH_MAX], cmd[PATH_MAX * 2 + 64], path[PATH_MAX];
        struct row_batch b = { 0 };
        struct crush_figures f;
        struct led *l = calloc(1, sizeof(*l));
        struct src s;
        size_t calls;

        if (env && *env)
                xsnprintf(base, sizeof(base), "%s", env);
        else
                xsnprintf(base, sizeof(base), "%s/../shared/samples", am_srcdir());
        xsnprintf(dir, sizeof(dir), "%s/public/crush/gleicon+mcpfier@ff38f5d09f9f/.crush", base);
        xsnprintf(path, sizeof(path), "%s/crush.db", dir);
        if (access(path, R_OK) != 0) {
                ok(1, "# SKIP the public Crush store is absent");
                free(l);
                return;
        }
        xsnprintf(cmd, sizeof(cmd), "mkdir -p '%s/pub' && cp '%s'/crush.db* '%s/pub/' && chmod u+w '%s'/pub/*", tmp,
                  dir, tmp, tmp);
        if (system(cmd) != 0)
                exit(99);
        xsnprintf(path, sizeof(path), "%s/pub/crush.db", tmp);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "the public store (with its -wal): read");
        led_add(l, &b);
        is_int(led_cost(l), 957730000, "$0.95773 over its root sessions");
        crush_figures(&s.ps, &f);
        is_int(f.roots, 3, "3 root sessions");
        is_int(led_tokens(l, &calls), 0, "no tokens presented as the sessions' ...");
        is_int(f.leftover_tokens, 34596 + 442, "... the last calls' kept apart");
        row_batch_free(&b);
        free(l);
}

/* A save whose tokens or cost have the wrong type (text, a negative
 * number, past 10^15 tokens: 2^53 + 1, 2^64 written as text, which SQLite
 * keeps as a REAL; a blob): neither a call nor a cost is taken from it,
 * malformed and counted in sessions_refused (status) once however often
 * the row is read again; the next good save is one call, and the cost it carries is upserted whole. A REAL token
 * count is read without its fraction. */
static size_t rows_of(const struct row_batch *b, const char *session)
{
        size_t n = 0;
        for (size_t i = 0; i < b->n; i++)
                n += strcmp(b->rows[i].session, session) == 0;
        return n;
}

static uint64_t refused(const struct src *s)
{
        struct crush_figures f;
        return crush_figures(&s->ps, &f) == 0 ? f.refused : UINT64_MAX;
}

/* status, from the source's checkpoint: sessions_refused among the
 * store's figures and in its line, as Hermes's and Goose's show it. */
struct one_source {
        const char *path;
        const struct checkpoint *cp;
        bool given;
};

static bool next_source(void *it, struct adapter_source_view *ret)
{
        struct one_source *o = it;
        if (o->given)
                return false;
        o->given = true;
        *ret = (struct adapter_source_view){ .path = o->path, .kind = CLASS_TABLE, .cp = o->cp };
        return true;
}

static void status_shows_refused(const struct src *s, uint64_t want)
{
        static struct checkpoint cp;
        struct one_source it = { .path = s->path, .cp = &cp };
        struct adapter_status_ctx ctx = { .next = next_source, .it = &it };
        struct json_object *st, *stores, *store, *v, *notes;
        char text[64];
        size_t len;

        memset(&cp, 0, sizeof(cp));
        if (parse_state_encode(&s->ps, cp.state, sizeof(cp.state), &len) != 0)
                exit(99);
        cp.state_len = (uint32_t)len;
        st = A->status_extra(&ctx);
        ok(st && json_object_object_get_ex(st, "stores", &stores) && json_object_array_length(stores) == 1 &&
                   (store = json_object_array_get_idx(stores, 0)) &&
                   json_object_object_get_ex(store, "sessions_refused", &v) &&
                   (uint64_t)json_object_get_int64(v) == want,
           "status --json: sessions_refused %llu", (unsigned long long)want);
        xsnprintf(text, sizeof(text), "; %llu sessions refused", (unsigned long long)want);
        ok(st && json_object_object_get_ex(st, "notes", &notes) && json_object_array_length(notes) >= 2 &&
                   strstr(json_object_get_string(json_object_array_get_idx(notes, 1)), text),
           "status: the store's line says%s", text);
        json_object_put(st);
}

static void test_types(void)
{
        static const struct {
                const char *prompt, *cost, *what;
        } cases[] = {
                { "'lots'", "cost + 0.01", "prompt as text" },
                { "-5", "cost + 0.01", "prompt negative" },
                { "9007199254740993", "cost + 0.01", "prompt 2^53 + 1" },
                { "'18446744073709551616'", "cost + 0.01", "prompt 2^64 as text" },
                { "X'0102'", "cost + 0.01", "prompt a blob" },
                { "100", "'free'", "cost as text" },
                { "100", "-1", "cost negative" },
        };
        char path[PATH_MAX], q[256];
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *db;

        xsnprintf(path, sizeof(path), "%s/types.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql_file(db, "crush/schema.sql");
        sql_file(db, "crush/history.sql");
        src_init(&s, path);
        collect(&s, &b);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t m0 = s.malformed, r0 = refused(&s);
                xsnprintf(q, sizeof(q), "UPDATE sessions SET prompt_tokens = %s, completion_tokens = 10, cost = %s "
                          "WHERE id = 'r-1'", cases[i].prompt, cases[i].cost);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                ok(rows_of(&b, "r-1") == 0 && s.malformed - m0 == 1,
                   "%s: no call, no cost; malformed (%zu rows, %llu)", cases[i].what, rows_of(&b, "r-1"),
                   (unsigned long long)(s.malformed - m0));
                ok(refused(&s) - r0 == 1, "%s: sessions_refused counts it (%llu)", cases[i].what,
                   (unsigned long long)(refused(&s) - r0));
                sql(db, "UPDATE sessions SET title = 'again' WHERE id = 'r-1'");
                row_batch_clear(&b);
                collect(&s, &b);
                ok(rows_of(&b, "r-1") == 0 && s.malformed - m0 == 1 && refused(&s) - r0 == 1,
                   "%s: read again: nothing more (malformed, sessions_refused)", cases[i].what);
                xsnprintf(q, sizeof(q), "UPDATE sessions SET prompt_tokens = %zu, completion_tokens = 10, "
                          "cost = 0.5 + %zu / 100.0 WHERE id = 'r-1'", 16000 + i, i);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                const struct usage_row *call = NULL, *cost = NULL;
                for (size_t j = 0; j < b.n; j++) {
                        if (strcmp(b.rows[j].session, "r-1") == 0 && (b.rows[j].flags & ROW_F_TOKENS_KNOWN))
                                call = &b.rows[j];
                        if (strcmp(b.rows[j].session, "r-1") == 0 && (b.rows[j].flags & ROW_F_UPSERT))
                                cost = &b.rows[j];
                }
                ok(rows_of(&b, "r-1") == 2 && call && call->input == 16000 + i && call->output == 10 && cost &&
                           cost->cost_nano == (int64_t)(500000000 + 10000000 * i),
                   "%s, then a good save: one call, the cost as written", cases[i].what);
        }
        sql(db, "UPDATE sessions SET prompt_tokens = 1.5, completion_tokens = 2 WHERE id = 'r-1'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 2 && b.rows[1].input == 1 && b.rows[1].output == 2, "a REAL: read without its fraction");
        is_int(refused(&s), sizeof(cases) / sizeof(cases[0]), "sessions_refused: each refused save once");
        status_shows_refused(&s, sizeof(cases) / sizeof(cases[0]));
        sqlite3_close(db);
        row_batch_free(&b);
}

int main(void)
{
        xsnprintf(fx, sizeof(fx), "%s/fixtures", am_srcdir());
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        test_discovery();
        test_store();
        test_types();
        test_public();
        return tap_done();
}
