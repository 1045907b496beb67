/* Unit tests of the Hermes Agent adapter: discovery and classification,
 * the three schema shapes of fixtures/hermes (columns missing by version),
 * compression children counted, the model from session_model_usage and
 * 'null', a row updated in place three times (three exact deltas), the
 * same step read twice (one key), a reset, more changed sessions than the
 * state holds, a corrupt table beside a good one, a locked database (an
 * error, no wait), and the public store in ../shared/samples (skipped when
 * absent). */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "hermes/hermes.h"
#include "running-totals.h"
#include "adapters/mem-state.h"
#include "registry.h"
#include "binio.h"
#include "row.h"
#include "timefmt.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_hermes;
static const struct adapter *A = &adapter_hermes;
static char fx[PATH_MAX], tmp[PATH_MAX];

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %.200s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

static sqlite3 *db_build(const char *path, const char *fixture, bool keep)
{
        char p[PATH_MAX];
        sqlite3 *db;
        char *text;

        unlink(path);
        xsnprintf(p, sizeof(p), "%s-wal", path);
        unlink(p);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sqlite3_busy_timeout(db, 5000);
        if (fixture) {
                xsnprintf(p, sizeof(p), "%s/%s", fx, fixture);
                if (!(text = slurp(p, NULL)))
                        exit(99);
                sql(db, text);
                free(text);
        }
        if (keep)
                return db;
        sqlite3_close(db);
        return NULL;
}

struct src {
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm, malformed;
        struct mem_state mem; /* the source state the daemon keeps in the ledger */
};

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

/* One call as the daemon makes it (the state through its encoding). */
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

static const struct usage_row *find(const struct row_batch *b, const char *session)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->rows[i].session, session) == 0)
                        return &b->rows[i];
        return NULL;
}

struct sums {
        uint64_t input, output, cache_read, cache_write, reasoning;
        int64_t cost;
};
static struct sums sum(const struct row_batch *b)
{
        struct sums s = { 0 };
        for (size_t i = 0; i < b->n; i++) {
                s.input += b->rows[i].input;
                s.output += b->rows[i].output;
                s.cache_read += b->rows[i].cache_read;
                s.cache_write += b->rows[i].cache_write;
                s.reasoning += b->rows[i].reasoning;
                if (b->rows[i].cost_source != COST_NONE)
                        s.cost += b->rows[i].cost_nano;
        }
        return s;
}

/* ---- discovery ---------------------------------------------------------------------- */

static void test_discovery(void)
{
        struct fenv f = { 0 };
        struct root_list l = { 0 };
        struct discover_env env;

        fenv_set(&f, "HOME", "/home/u");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover");
        ok(l.n == 1 && strcmp(l.v[0].path, "/home/u/.hermes") == 0 && l.v[0].reason == ROOT_DEFAULT,
           "default root ~/.hermes");
        root_list_free(&l);
        fenv_set(&f, "HERMES_HOME", "/srv/hermes");
        env = fenv_env(&f);
        A->discover(&env, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/srv/hermes") == 0 && l.v[0].reason == ROOT_ENV &&
                   strcmp(l.v[0].env_var, "HERMES_HOME") == 0,
           "HERMES_HOME moves it");
        root_list_free(&l);
        ok(registry_env_known("HERMES_HOME"), "HERMES_HOME is a declared variable");

        is_int(A->classify("state.db", "state.db", 1, false), CLASS_TABLE, "state.db: a table source");
        is_int(A->classify("profiles", "profiles", 1, true), CLASS_DESCEND, "profiles/: descend");
        is_int(A->classify("profiles/dev", "dev", 2, true), CLASS_DESCEND, "profiles/<name>/: descend");
        is_int(A->classify("profiles/dev/state.db", "state.db", 3, false), CLASS_TABLE, "a profile's state.db");
        is_int(A->classify("state.db-wal", "state.db-wal", 1, false), CLASS_IGNORE, "the -wal is no source");
        is_int(A->classify("sessions", "sessions", 1, true), CLASS_IGNORE, "sessions/ transcripts: ignored");
        is_int(A->classify("logs/state.db", "state.db", 2, false), CLASS_IGNORE, "a state.db elsewhere: ignored");
        char src[PATH_MAX];
        is_int(A->source_of("/h/.hermes/state.db-wal", true, src, sizeof(src)), SOURCE_OTHER, "a -wal write ...");
        is_str(src, "/h/.hermes/state.db", "... is a change of its database");
        is_int(A->source_of("/h/.hermes/state.db-shm", true, src, sizeof(src)), SOURCE_NONE, "-shm: nobody's change");
}

/* ---- schema 20 ---------------------------------------------------------------------- */

static void test_schema20(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s = { 0 };
        const struct usage_row *r;
        struct sums t;

        xsnprintf(path, sizeof(path), "%s/state.db", tmp);
        db_build(path, "hermes/schema-20.sql", false);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "schema 20: read");
        is_int(b.n, 4, "one row per session, the compression child too");
        t = sum(&b);
        is_int(t.input, 1480, "input: every row summed (root and child)");
        is_int(t.output, 314, "output (reasoning inside)");
        is_int(t.cache_read, 12000, "cache read");
        is_int(t.cache_write, 300, "cache write");
        is_int(t.reasoning, 54, "reasoning");
        r = find(&b, "s-null");
        ok(r && strcmp(r->model, "qwen/qwen3-coder") == 0 && strcmp(r->provider, "openrouter") == 0,
           "model 'null' in sessions: session_model_usage names it");
        ok(r && r->cost_source == COST_NONE, "an estimate of 0 is no cost (the price table prices it)");
        r = find(&b, "s-child");
        ok(r && strcmp(r->model, "claude-sonnet-4-5") == 0 && strcmp(r->project, "/home/u/proj") == 0,
           "no usage row: sessions.model; cwd is the project");
        r = find(&b, "s-root");
        ok(r && r->cost_source == COST_VENDOR && r->cost_nano == 45100000, "Hermes's estimate as written");
        ok(r && r->time_ms == 1767225900250LL && !(r->flags & ROW_F_TIME_APPROX),
           "first scan: dated by the session's own last time");
        ok(r && r->kind == ROW_KIND_SNAPSHOT_STEP && strcmp(r->tool, "hermes") == 0, "a snapshot step of hermes");
        r = find(&b, "s-actual");
        ok(r && r->cost_source == COST_VENDOR && r->cost_nano == 2500000, "the provider's actual cost beats the estimate");
        row_batch_clear(&b);
        is_int(collect(&s, &b), COLLECT_DONE, "read again");
        is_int(b.n, 0, "nothing changed: nothing new");

        /* three updates in place, each read: three exact deltas */
        sqlite3 *w;
        struct parse_state before = { 0 };
        struct mem_state mem_before = { 0 };
        struct row_key k[3];
        if (sqlite3_open(path, &w) != SQLITE_OK)
                exit(99);
        for (int i = 0; i < 3; i++) {
                int64_t t0 = timefmt_now_ms();
                if (i == 1) {
                        before = s.ps;
                        mem_before = mem_state_copy(&s.mem);
                }
                sql(w, "UPDATE sessions SET input_tokens = input_tokens + 11, output_tokens = output_tokens + 7, "
                       "cache_read_tokens = cache_read_tokens + 1000, reasoning_tokens = reasoning_tokens + 2, "
                       "api_call_count = api_call_count + 1, estimated_cost_usd = estimated_cost_usd + 0.001 "
                       "WHERE id = 's-child'");
                row_batch_clear(&b);
                collect(&s, &b);
                is_int(b.n, 1, "an update in place: one row");
                ok(b.n == 1 && b.rows[0].input == 11 && b.rows[0].output == 7 && b.rows[0].cache_read == 1000 &&
                           b.rows[0].reasoning == 2 && b.rows[0].cost_nano == 1000000 &&
                           strcmp(b.rows[0].session, "s-child") == 0,
                   "... holding exactly the growth (update %d)", i + 1);
                ok(b.n == 1 && b.rows[0].time_ms >= t0, "... dated when seen");
                if (b.n == 1)
                        k[i] = b.rows[0].key;
        }
        ok(memcmp(&k[0], &k[1], sizeof(k[0])) && memcmp(&k[1], &k[2], sizeof(k[0])), "three steps, three keys");
        struct hermes_figures f;
        is_int(hermes_figures(&s.ps, &f), 0, "figures");
        is_int(f.steps, 7, "steps: 4 first sights and 3 growths");
        is_int(f.calls, 10, "calls: 7 at first sight, 3 since");
        /* the second step read again from the state before it (a crash before
         * its commit): the same key */
        {
                struct src s2 = s;
                s2.ps = before;
                s2.mem = mem_before; /* the state the ledger held then */
                s2.ctx.path = s2.path;
                sql(w, "UPDATE sessions SET input_tokens = input_tokens - 11, output_tokens = output_tokens - 7, "
                       "cache_read_tokens = cache_read_tokens - 1000, reasoning_tokens = reasoning_tokens - 2, "
                       "api_call_count = api_call_count - 1, estimated_cost_usd = estimated_cost_usd - 0.001 "
                       "WHERE id = 's-child'");
                row_batch_clear(&b);
                collect(&s2, &b);
                ok(b.n == 1 && memcmp(&b.rows[0].key, &k[1], sizeof(k[1])) == 0,
                   "the same step read twice: the same key");
                mem_state_free(&s2.mem);
        }
        /* a reset: the counters start again, counted whole, never negative */
        sql(w, "UPDATE sessions SET input_tokens = 5, output_tokens = 1, cache_read_tokens = 0, reasoning_tokens = 0, "
               "api_call_count = 1, estimated_cost_usd = 0 WHERE id = 's-child'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 5 && b.rows[0].output == 1 && b.rows[0].cache_read == 0,
           "a decrease is a reset: the new totals count whole");
        hermes_figures(&s.ps, &f);
        is_int(f.resets, 1, "one reset");
        /* a new session while running: counted whole, dated now */
        sql(w, "INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens) "
               "VALUES ('s-new', 'cli', 'gpt-5', 1900000000.0, 40, 4)");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 40 && strcmp(b.rows[0].session, "s-new") == 0, "a new session: whole");
        sqlite3_close(w);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- older schemas, not ours, empty -------------------------------------------------- */

static void test_older(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s = { 0 };
        const struct usage_row *r;

        xsnprintf(path, sizeof(path), "%s/s12.db", tmp);
        db_build(path, "hermes/schema-12.sql", false);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "schema 12: read");
        is_int(b.n, 2, "two sessions");
        r = find(&b, "o-1");
        ok(r && r->input == 2000 && r->output == 100 && r->cost_nano == 37500000 &&
                   strcmp(r->model, "anthropic/claude-opus-4") == 0,
           "no api_call_count, no session_model_usage: read");
        r = find(&b, "o-2");
        ok(r && r->model[0] == 0 && r->cost_source == COST_NONE && r->input == 30, "no model, no cost: none");
        row_batch_clear(&b);

        xsnprintf(path, sizeof(path), "%s/s6.db", tmp);
        db_build(path, "hermes/schema-6.sql", false);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "schema 6: read");
        ok(b.n == 1 && b.rows[0].input == 1234 && b.rows[0].output == 56 && b.rows[0].cache_read == 0,
           "input and output only: read, the rest 0");
        row_batch_clear(&b);

        sqlite3 *db;
        xsnprintf(path, sizeof(path), "%s/other.db", tmp);
        db = db_build(path, NULL, true);
        sql(db, "CREATE TABLE sessions (id TEXT, token TEXT)");
        sqlite3_close(db);
        src_init(&s, path);
        is_int(collect(&s, &b), -EPROTO, "a sessions table without token counts: -EPROTO");
        xsnprintf(path, sizeof(path), "%s/empty.db", tmp);
        db = db_build(path, NULL, true);
        sqlite3_close(db);
        write_file(path, "");
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "an empty file: nothing yet");
        is_int(b.n, 0, "... no rows");
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- many sessions: every one keeps its own snapshot -------------------------------- */

static void test_many(void)
{
        char path[PATH_MAX], q[512];
        struct row_batch b = { 0 };
        struct hermes_figures f;
        struct src s = { 0 };
        sqlite3 *db;

        xsnprintf(path, sizeof(path), "%s/many.db", tmp);
        db = db_build(path, "hermes/schema-20.sql", true);
        for (int i = 0; i < 300; i++) {
                xsnprintf(q, sizeof(q),
                          "INSERT INTO sessions (id, source, started_at, input_tokens, output_tokens, "
                          "cache_read_tokens) VALUES ('m-%03d', 'cli', %d.0, %d, 999, 123456789)",
                          i, 1000000 + i, 1000000 + i);
                sql(db, q);
        }
        src_init(&s, path);
        collect(&s, &b);
        is_int(b.n, 304, "304 sessions: 304 rows");
        hermes_figures(&s.ps, &f);
        is_int(f.tracked, 304, "every session's snapshot is kept (the source state, not priv)");
        is_int(s.mem.n, 304, "... 304 entries in the source state");
        ok(s.ps.priv_len < 80, "... and priv holds only the header (%u bytes)", s.ps.priv_len);
        /* each session grows once, in turn, oldest first: every change exact */
        int exact = 0;
        for (int i = 0; i < 300; i += 37) {
                xsnprintf(q, sizeof(q), "UPDATE sessions SET input_tokens = input_tokens + %d WHERE id = 'm-%03d'",
                          i + 3, i);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                if (b.n == 1 && b.rows[0].input == (uint64_t)i + 3 && b.rows[0].output == 0)
                        exact++;
        }
        is_int(exact, 9, "the oldest sessions' changes, after 300 newer ones: exact, one row each");
        /* all of them at once */
        sql(db, "UPDATE sessions SET output_tokens = output_tokens + 2 WHERE id LIKE 'm-%'");
        row_batch_clear(&b);
        collect(&s, &b);
        is_int(b.n, 300, "300 sessions changed in one read: 300 rows");
        is_int(sum(&b).output, 600, "... each its own growth");
        hermes_figures(&s.ps, &f);
        is_int(f.unmetered, 0, "nothing unmetered");
        is_int(f.beyond, 0, "no session past the bound");
        size_t puts = s.mem.puts;
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 0 && s.mem.puts == puts, "a read with nothing changed writes no state");
        sqlite3_close(db);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- the bound, and a state of format 1 (snapshots held in priv) --------------------- */

static int grown[64]; /* what each session grew by so far (totals only grow) */

static void snap_of(int i, int grow, uint64_t cur[TOT_N])
{
        for (int k = 0; k < TOT_N; k++)
                cur[k] = (uint64_t)(1000 * i + k + 1);
        cur[TOT_INPUT] += (uint64_t)grow;
}

static int pass(struct tot_state *st, struct source_ctx *ctx, int n, int grow_i, int grow, uint64_t *ret_in)
{
        uint64_t cur[TOT_N], d[TOT_N], prev[TOT_N];
        char id[32];
        int rows = 0;

        tot_begin(st, ctx, 1767225600000LL);
        *ret_in = 0;
        if (grow_i >= 0)
                grown[grow_i] += grow;
        for (int i = 0; i < n; i++) {
                snap_of(i, grown[i], cur);
                xsnprintf(id, sizeof(id), "sess-%d", i);
                int c = tot_update(st, 's', id, st->seeded, cur, d, prev);
                if (c == TOT_FIRST || c == TOT_STEP || c == TOT_RESET) {
                        rows++;
                        *ret_in += d[TOT_INPUT];
                }
        }
        tot_finish(st);
        st->seeded = st->valid = true;
        return rows;
}

static void test_bound(void)
{
        struct source_ctx ctx = { .adapter = A, .path = "/x/state.db", .source_hash = 7 };
        struct tot_state st = { 0 };
        struct mem_state mem;
        uint64_t in;

        mem_state_init(&mem);
        ctx.state = &mem.iface;
        st.max_stored = 10;
        is_int(pass(&st, &ctx, 40, -1, 0, &in), 40, "40 sessions, a bound of 10: each metered once whole");
        ok(st.stored == 10 && st.beyond == 30 && mem.n == 10, "10 stored, 30 past the bound (status counts them)");
        is_int(pass(&st, &ctx, 40, -1, 0, &in), 0, "read again unchanged: nothing");
        is_int(st.unmetered, 0, "... nothing unmetered");
        is_int(pass(&st, &ctx, 40, 3, 5, &in), 1, "a stored session grows: one row");
        is_int(in, 5, "... exact");
        is_int(pass(&st, &ctx, 40, 33, 5, &in), 0, "a session past the bound grows: no row, nothing guessed");
        is_int(st.unmetered, 1, "... one unmetered change");
        is_int(pass(&st, &ctx, 40, -1, 0, &in), 0, "unchanged since: nothing");
        is_int(st.unmetered, 1, "... no second unmetered change");
        /* another database under the same name: a new generation, so the
         * stored snapshots of the old one are not taken for its own */
        struct tot_state fresh = { 0 };
        fresh.max_stored = 10;
        memset(grown, 0, sizeof(grown));
        is_int(pass(&fresh, &ctx, 5, -1, 0, &in), 5, "a new database's first read: every session whole");
        ok(fresh.gen != st.gen, "... under a generation of its own");
        mem_state_free(&mem);

        /* a state of format 1: its snapshots (held in priv) are measured
         * against once and stored; the sessions it did not hold stay unheld */
        struct parse_state ps = { 0 };
        struct bw w = { ps.priv, 0, sizeof(ps.priv), false };
        uint64_t cur[TOT_N];
        bw_u8(&w, 1);
        bw_u8(&w, 0x02); /* seeded */
        bw_u64(&w, 42);
        bw_var(&w, 1767225600000ULL);
        bw_var(&w, 1767225600000ULL);
        for (int k = 0; k < 4; k++)
                bw_var(&w, 0);
        uint32_t rest = 0;
        for (int i = 2; i < 6; i++) {
                char id[32];
                snap_of(i, 0, cur);
                xsnprintf(id, sizeof(id), "sess-%d", i);
                rest += tot_snap_digest(id, cur);
        }
        bw_u32(&w, rest);
        bw_u8(&w, 2);
        for (int i = 0; i < 2; i++) {
                char id[32];
                xsnprintf(id, sizeof(id), "sess-%d", i);
                snap_of(i, 0, cur);
                bw_u32(&w, tot_session_id(id));
                for (int k = 0; k < TOT_N; k++)
                        bw_var(&w, cur[k]);
        }
        ps.priv_len = (uint32_t)w.len;
        st = tot_state_get(&ps);
        ok(st.valid && st.n_legacy == 2 && !st.done, "a format-1 state reads, to be read once more");
        mem_state_init(&mem);
        ctx.state = &mem.iface;
        memset(grown, 0, sizeof(grown));
        is_int(pass(&st, &ctx, 6, 1, 9, &in), 1, "upgrade: a session it held grows: one row");
        is_int(in, 9, "... exact");
        ok(st.stored == 2 && mem.n == 2 && st.unmetered == 0, "... both held snapshots stored, nothing unmetered");
        is_int(pass(&st, &ctx, 6, 0, 4, &in), 1, "the other held session grows later: exact from the store");
        is_int(in, 4, "... by 4");
        tot_state_put(&ps, &st);
        struct tot_state back = tot_state_get(&ps);
        ok(back.valid && back.gen == st.gen && back.stored == 2 && back.n_legacy == 0, "format 2 round trip");
        mem_state_free(&mem);
}

/* ---- auxiliary calls (schema 22: session_model_usage by task) ------------------------ */

static void test_aux(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct hermes_figures f;
        const struct usage_row *r;
        struct src s = { 0 };
        sqlite3 *w;

        xsnprintf(path, sizeof(path), "%s/aux.db", tmp);
        w = db_build(path, "hermes/schema-22.sql", true);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "schema 22: read");
        is_int(b.n, 5, "two sessions and three auxiliary rows: five rows");
        is_int(sum(&b).input, 2000 + 600 + 8000 + 150 + 1300, "input: the sessions' and the auxiliary calls'");
        is_int(sum(&b).output, 300 + 40 + 700 + 12 + 90, "output too");
        int aux = 0, haiku = 0, mini = 0;
        for (size_t i = 0; i < b.n; i++) {
                if (strcmp(b.rows[i].model, "claude-haiku-4-5") == 0 && strcmp(b.rows[i].session, "a-main") == 0)
                        haiku++;
                if (strcmp(b.rows[i].model, "gpt-5-mini") == 0 && b.rows[i].input == 1300 &&
                    b.rows[i].cost_nano == 1000000 && strcmp(b.rows[i].project, "/home/u/app") == 0)
                        mini++;
                if (b.rows[i].input == 8000 || b.rows[i].input == 150 || b.rows[i].input == 1300)
                        aux++;
        }
        is_int(haiku, 2, "compression and title: the auxiliary model, under the session's id");
        is_int(mini, 1, "vision: its model, the provider's actual cost, the session's cwd");
        is_int(aux, 3, "three auxiliary rows");
        r = find(&b, "a-vision");
        ok(r && r->input == 600 && strcmp(r->model, "gpt-5") == 0,
           "the session's own row: the main loop's model, not the later auxiliary one");
        bool apart = true;
        for (size_t i = 0; i < b.n; i++)
                for (size_t j = i + 1; j < b.n; j++)
                        if (memcmp(&b.rows[i].key, &b.rows[j].key, sizeof(b.rows[i].key)) == 0)
                                apart = false;
        ok(apart, "five keys: an auxiliary row never shares a key with a session step");
        hermes_figures(&s.ps, &f);
        ok(f.steps == 2 && f.aux_steps == 3 && f.aux_calls == 4, "figures: 2 session steps, 3 auxiliary (4 calls)");
        row_batch_clear(&b);
        collect(&s, &b);
        is_int(b.n, 0, "read again: nothing");

        /* a second compression: only session_model_usage moves */
        sql(w, "UPDATE session_model_usage SET input_tokens = input_tokens + 500, output_tokens = output_tokens + 40, "
               "api_call_count = api_call_count + 1, estimated_cost_usd = estimated_cost_usd + 0.0007 "
               "WHERE session_id = 'a-main' AND task = 'compression'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 500 && b.rows[0].output == 40 && b.rows[0].cost_nano == 700000 &&
                   strcmp(b.rows[0].model, "claude-haiku-4-5") == 0,
           "an auxiliary call live: one row, exactly its growth, its model");
        /* the main loop and an auxiliary call together: one row each */
        sql(w, "UPDATE sessions SET input_tokens = input_tokens + 30, api_call_count = api_call_count + 1 "
               "WHERE id = 'a-main'");
        sql(w, "UPDATE session_model_usage SET input_tokens = input_tokens + 30, api_call_count = api_call_count + 1 "
               "WHERE session_id = 'a-main' AND task = ''");
        sql(w, "UPDATE session_model_usage SET input_tokens = input_tokens + 7 WHERE session_id = 'a-main' AND "
               "task = 'title'");
        row_batch_clear(&b);
        collect(&s, &b);
        is_int(b.n, 2, "a main-loop call and a title: two rows (the main loop's usage row is not counted again)");
        is_int(sum(&b).input, 37, "... 30 and 7");
        hermes_figures(&s.ps, &f);
        ok(f.aux_steps == 5 && f.unmetered == 0, "figures: 5 auxiliary steps, nothing unmetered");
        sqlite3_close(w);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* A store made from fixture name in the test's folder (its path in path,
 * PATH_MAX bytes), read once as the daemon would (into b, s its source),
 * kept open for writes: the start of the wrong-type tests. */
static sqlite3 *watched_store(const char *name, const char *fixture, char *path, struct src *s,
                              struct row_batch *b)
{
        sqlite3 *db;

        xsnprintf(path, PATH_MAX, "%s/%s", tmp, name);
        db = db_build(path, fixture, true);
        src_init(s, path);
        collect(s, b);
        return db;
}

/* An auxiliary row (the compression call: input 8000, output 700, one
 * call, $0.0115) with a counter or cost of the wrong type is refused as a
 * session's row is: no row, malformed once however often it is read,
 * sessions_refused 1, no auxiliary step; its last good snapshot stands, so
 * the next good row counts only what it grew by, never the 8000 again. */
static void test_aux_types(void)
{
        static const struct {
                const char *column, *value, *what;
        } cases[] = {
                { "input_tokens", "'lots'", "aux input as text" },
                { "output_tokens", "-5", "aux output negative" },
                { "api_call_count", "'three'", "aux calls as text" },
                { "estimated_cost_usd", "-1", "aux cost negative" },
        };
        char path[PATH_MAX], q[320];
        struct row_batch b = { 0 };
        struct hermes_figures f;
        struct src s = { 0 };
        uint64_t in = 8000;
        sqlite3 *w;

        w = watched_store("aux-types.db", "hermes/schema-22.sql", path, &s, &b);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t m0 = s.malformed, steps0;
                int r;

                hermes_figures(&s.ps, &f);
                steps0 = f.aux_steps;
                xsnprintf(q, sizeof(q),
                          "UPDATE session_model_usage SET input_tokens = %llu, output_tokens = 700, "
                          "api_call_count = 1, estimated_cost_usd = 0.0115, %s = %s "
                          "WHERE session_id = 'a-main' AND task = 'compression'",
                          (unsigned long long)in, cases[i].column, cases[i].value);
                sql(w, q);
                row_batch_clear(&b);
                r = collect(&s, &b);
                ok(r == COLLECT_DONE && b.n == 0, "%s: read, no row (%d, %zu rows)", cases[i].what, r, b.n);
                ok(s.malformed - m0 == 1, "%s: malformed once", cases[i].what);
                ok(hermes_figures(&s.ps, &f) == 0 && f.refused == 1 && f.aux_steps == steps0,
                   "%s: sessions_refused 1, no auxiliary step (%llu, %llu)", cases[i].what,
                   (unsigned long long)f.refused, (unsigned long long)(f.aux_steps - steps0));
                sql(w, "UPDATE sessions SET title = 'again' || random() WHERE id = 'a-main'");
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 0 && s.malformed - m0 == 1, "%s: read again: nothing more", cases[i].what);
                in += 100;
                xsnprintf(q, sizeof(q),
                          "UPDATE session_model_usage SET input_tokens = %llu, output_tokens = 700, "
                          "api_call_count = 1, estimated_cost_usd = 0.0115 "
                          "WHERE session_id = 'a-main' AND task = 'compression'",
                          (unsigned long long)in);
                sql(w, q);
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 1 && b.rows[0].input == 100 && b.rows[0].output == 0 &&
                           strcmp(b.rows[0].model, "claude-haiku-4-5") == 0,
                   "%s, then good again: one row, only the 100 it grew by (%zu rows, input %llu)", cases[i].what,
                   b.n, b.n ? (unsigned long long)b.rows[0].input : 0ULL);
                ok(hermes_figures(&s.ps, &f) == 0 && f.refused == 0, "%s: sessions_refused 0 again",
                   cases[i].what);
        }
        sqlite3_close(w);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- a corrupt table beside a good one; a locked database --------------------------- */

static void test_defensive(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s = { 0 };
        sqlite3 *db, *w;
        sqlite3_stmt *st;
        int root = 0, page = 0;

        xsnprintf(path, sizeof(path), "%s/corrupt.db", tmp);
        db = db_build(path, "hermes/schema-20.sql", true);
        sql(db, "PRAGMA journal_mode = DELETE");
        if (sqlite3_prepare_v2(db, "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master "
                                   "WHERE name = 'session_model_usage'", -1, &st, NULL) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW)
                exit(99);
        root = sqlite3_column_int(st, 0);
        page = sqlite3_column_int(st, 1);
        sqlite3_finalize(st);
        sqlite3_close(db);
        {
                int fd = open(path, O_WRONLY);
                char junk[65536];
                memset(junk, 0xa5, sizeof(junk));
                if (fd < 0 || root < 2 || page > (int)sizeof(junk) ||
                    pwrite(fd, junk, (size_t)page, (off_t)(root - 1) * page) != page)
                        exit(99);
                close(fd);
        }
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "session_model_usage corrupt, sessions readable: read");
        is_int(sum(&b).input, 1480, "... every session counted");
        const struct usage_row *r = find(&b, "s-null");
        ok(r && r->model[0] == 0, "... the 'null' model stays none (no usage row to name it)");
        row_batch_clear(&b);

        /* a writer holding the database exclusively: an error at once, no rows */
        xsnprintf(path, sizeof(path), "%s/locked.db", tmp);
        db = db_build(path, "hermes/schema-12.sql", true);
        sqlite3_close(db);
        if (sqlite3_open(path, &w) != SQLITE_OK)
                exit(99);
        sql(w, "BEGIN EXCLUSIVE");
        sql(w, "UPDATE sessions SET input_tokens = 1");
        src_init(&s, path);
        is_int(collect(&s, &b), -EBUSY, "locked by its writer: -EBUSY (read again later)");
        is_int(b.n, 0, "... no rows");
        sql(w, "COMMIT");
        sqlite3_close(w);
        is_int(collect(&s, &b), COLLECT_DONE, "the lock gone: read");
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- counters of the wrong type --------------------------------------------------------- */

/* A token counter or a cost of the wrong type in an otherwise good session
 * (s-root: input 1000, estimated cost $0.0451): text, a negative number,
 * past 10^15 (2^53 + 1; 2^64 written as text, which SQLite keeps as a
 * REAL), a blob are refused: no row, the session's last good snapshot
 * stands (the next good row is measured against it, never counted whole
 * again), malformed once however often it is read, sessions_refused in
 * status; NULL reports nothing (the last value stands); a REAL is read
 * without its fraction. */
static void test_types(void)
{
        static const struct {
                const char *column, *value, *what;
                bool refused;
        } cases[] = {
                { "input_tokens", "'lots'", "input as text", true },
                { "input_tokens", "-5", "input negative", true },
                { "cache_read_tokens", "-1", "cache read negative", true },
                { "input_tokens", "NULL", "input NULL", false },
                { "output_tokens", "9007199254740993", "output 2^53 + 1", true },
                { "input_tokens", "'18446744073709551616'", "input 2^64 as text", true },
                { "reasoning_tokens", "X'0102'", "reasoning a blob", true },
                { "api_call_count", "'three'", "calls as text", true },
                { "estimated_cost_usd", "'free'", "cost as text", true },
                { "estimated_cost_usd", "-2.5", "cost negative", true },
                { "estimated_cost_usd", "NULL", "cost NULL", false },
        };
        char path[PATH_MAX], q[256];
        struct row_batch b = { 0 };
        struct hermes_figures f;
        struct src s = { 0 };
        uint64_t in = 1000;
        int cents = 451;
        sqlite3 *db;

        db = watched_store("types.db", "hermes/schema-20.sql", path, &s, &b);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool cost = strstr(cases[i].column, "cost") != NULL;
                uint64_t m0 = s.malformed;
                int r;

                /* the other counters as they were */
                xsnprintf(q, sizeof(q),
                          "UPDATE sessions SET input_tokens = %llu, output_tokens = 200, cache_read_tokens = 5000, "
                          "reasoning_tokens = 50, api_call_count = 3, estimated_cost_usd = %d / 10000.0, "
                          "%s = %s WHERE id = 's-root'",
                          (unsigned long long)in, cents, cases[i].column, cases[i].value);
                sql(db, q);
                row_batch_clear(&b);
                r = collect(&s, &b);
                ok(r == COLLECT_DONE && b.n == 0, "%s: read, no row (%d, %zu rows)", cases[i].what, r, b.n);
                ok(s.malformed - m0 == (cases[i].refused ? 1u : 0u), "%s: %s", cases[i].what,
                   cases[i].refused ? "malformed once" : "not malformed");
                ok(hermes_figures(&s.ps, &f) == 0 && f.refused == (cases[i].refused ? 1u : 0u),
                   "%s: sessions_refused %d", cases[i].what, cases[i].refused ? 1 : 0);
                sql(db, "UPDATE sessions SET title = 'again' || random() WHERE id = 's-root'");
                row_batch_clear(&b);
                collect(&s, &b);
                ok(b.n == 0 && s.malformed - m0 == (cases[i].refused ? 1u : 0u), "%s: read again: nothing more",
                   cases[i].what);
                /* good again, grown by 100 tokens (or one cent) */
                if (cost)
                        cents += 100;
                else
                        in += 100;
                xsnprintf(q, sizeof(q),
                          "UPDATE sessions SET input_tokens = %llu, output_tokens = 200, cache_read_tokens = 5000, "
                          "reasoning_tokens = 50, api_call_count = 3, estimated_cost_usd = %d / 10000.0 "
                          "WHERE id = 's-root'",
                          (unsigned long long)in, cents);
                sql(db, q);
                row_batch_clear(&b);
                collect(&s, &b);
                const struct usage_row *row = find(&b, "s-root");
                if (cost)
                        ok(b.n == 1 && row && row->input == 0 && row->cost_source == COST_VENDOR &&
                                   row->cost_nano == 10000000,
                           "%s, then good again: only the cent it grew by (%lld nano)", cases[i].what,
                           row ? (long long)row->cost_nano : -1LL);
                else
                        ok(b.n == 1 && row && row->input == 100 && row->output == 0 && row->cache_read == 0 &&
                                   row->cost_source == COST_NONE,
                           "%s, then good again: only the 100 it grew by (%llu)", cases[i].what,
                           row ? (unsigned long long)row->input : 0ULL);
                ok(hermes_figures(&s.ps, &f) == 0 && f.refused == 0, "%s: none refused now", cases[i].what);
        }
        sql(db, "UPDATE sessions SET input_tokens = 1900.9 WHERE id = 's-root'");
        row_batch_clear(&b);
        collect(&s, &b);
        ok(b.n == 1 && b.rows[0].input == 100, "a REAL: read without its fraction");
        sqlite3_close(db);
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

/* ---- the public store ------------------------------------------------------------------ */

static void test_public(void)
{
        const char *env = getenv("AM_SAMPLES");
        char base[PATH_MAX], dir[PATH_MAX], cmd[PATH_MAX * 2 + 64], path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s = { 0 };
        struct sums t;

        if (env && *env)
                xsnprintf(base, sizeof(base), "%s", env);
        else
                xsnprintf(base, sizeof(base), "%s/../shared/samples", am_srcdir());
        xsnprintf(dir, sizeof(dir), "%s/public/hermes/Satyabrat99+hermesstore@ff6e6589ab1b/.hermes", base);
        xsnprintf(path, sizeof(path), "%s/state.db", dir);
        if (access(path, R_OK) != 0) {
                ok(1, "# SKIP the public Hermes store is absent");
                return;
        }
        /* a copy with its -wal and -shm: the store's own files are never touched */
        xsnprintf(cmd, sizeof(cmd), "mkdir -p '%s/pub' && cp '%s'/state.db* '%s/pub/' && chmod u+w '%s'/pub/*", tmp,
                  dir, tmp, tmp);
        if (system(cmd) != 0)
                exit(99);
        xsnprintf(path, sizeof(path), "%s/pub/state.db", tmp);
        src_init(&s, path);
        is_int(collect(&s, &b), COLLECT_DONE, "the public store (schema 20, its -wal): read");
        is_int(b.n, 7, "7 sessions");
        t = sum(&b);
        is_int(t.input, 52807, "input 52,807");
        is_int(t.output, 546, "output 546");
        is_int(t.reasoning, 124, "reasoning 124 (inside output)");
        is_int(t.cache_read, 175872, "cache read 175,872");
        is_int(t.cache_write, 0, "cache write 0");
        struct hermes_figures f;
        hermes_figures(&s.ps, &f);
        is_int(f.calls, 14, "14 API calls folded");
        ok(b.n && strcmp(b.rows[0].model, "mimo-v2.5-pro") == 0 && strcmp(b.rows[0].provider, "xiaomi") == 0,
           "model and provider from session_model_usage");
        row_batch_free(&b);
        mem_state_free(&s.mem);
}

int main(void)
{
        xsnprintf(fx, sizeof(fx), "%s/fixtures", am_srcdir());
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        test_discovery();
        test_schema20();
        test_older();
        test_many();
        test_bound();
        test_aux();
        test_aux_types();
        test_defensive();
        test_types();
        test_public();
        return tap_done();
}
