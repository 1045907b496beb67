/* OpenCode and Kilo adapters: discovery and classification; the database
 * era over databases built here from fixtures/opencode/schema.sql and the
 * fixture rows (db.sql, both.sql, fixtures/kilo/kilo.sql), read through
 * collect_rows at any split; rows inserted with zero tokens and updated in
 * place while a writer holds its connection (WAL); updates found through
 * the event log; rows deleted at the top and rowids reused; databases not
 * ours; the JSON-file era through parse_document (output with reasoning
 * included, a torn file, a rewrite); one key for a call in both eras; and
 * the real realgen/opencode-1.18.33 database against the server's truth. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "opencode/opencode.h"
#include "registry.h"
#include "row.h"
#include "tap.h"
#include "testutil.h"

extern const struct adapter adapter_opencode;
extern const struct adapter adapter_kilo;

static const struct adapter *OC = &adapter_opencode, *KL = &adapter_kilo;
static char fx[PATH_MAX], tmp[PATH_MAX];

/* ---- databases ------------------------------------------------------------------- */

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
        xsnprintf(p, sizeof(p), "%s/%s", fx, rel);
        char *text = slurp(p, NULL);
        if (!text)
                exit(99);
        sql(db, text);
        free(text);
}

/* The directory a file goes in. */
static void mkparent(const char *path)
{
        char dir[PATH_MAX];
        xsnprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = 0;
        mkdir_p(dir);
}

/* A database made from schema.sql and the given fixture .sql (NULL: empty);
 * returned open (the writer) when keep, else closed. */
static sqlite3 *db_build(const char *path, const char *rows, bool keep)
{
        sqlite3 *db;

        mkparent(path);
        unlink(path);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sqlite3_busy_timeout(db, 5000);
        sql_file(db, "opencode/schema.sql");
        if (rows)
                sql_file(db, rows);
        if (keep)
                return db;
        sqlite3_close(db);
        return NULL;
}

struct src {
        const struct adapter *a;
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm, malformed;
};

static void src_init(struct src *s, const struct adapter *a, const char *path)
{
        memset(s, 0, sizeof(*s));
        s->a = a;
        xsnprintf(s->path, sizeof(s->path), "%s", path);
        s->ctx.adapter = a;
        s->ctx.path = s->path;
        s->ctx.source_hash = hash64(s->path, strlen(s->path));
}

/* One call, as the daemon makes it; the checkpoint's state goes through
 * its encoding each time. The writer's last commit is made to look a
 * minute old, so the read is not "settling". */
static int collect(struct src *s, size_t max_rows, struct row_batch *b)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        int r;

        age_db(s->path);
        r = s->a->collect_rows(&s->ctx, &s->ps, &s->wm, max_rows, b, &s->malformed);
        if (parse_state_encode(&s->ps, enc, sizeof(enc), &len) != 0 || parse_state_decode(enc, len, &s->ps) != 0)
                exit(99);
        return r;
}

static int collect_all(struct src *s, size_t max_rows, struct row_batch *b, int *ret_calls)
{
        int r, calls = 0;
        do {
                r = collect(s, max_rows, b);
                calls++;
        } while (r == COLLECT_MORE && calls < 100000);
        if (ret_calls)
                *ret_calls = calls;
        return r;
}

static struct json_object *expected_case(const char *name)
{
        char p[PATH_MAX];
        struct json_object *root, *cases, *c;

        xsnprintf(p, sizeof(p), "%s/opencode/expected.json", fx);
        root = json_object_from_file(p);
        if (!root || !json_object_object_get_ex(root, "cases", &cases) || !json_object_object_get_ex(cases, name, &c)) {
                printf("# expected.json has no case %s\n", name);
                exit(99);
        }
        json_object_get(c);
        json_object_put(root);
        return c;
}

static void check_case(const char *name, const struct totals *t)
{
        struct json_object *c = expected_case(name);
        totals_check(t, c, name, false);
        json_object_put(c);
}

static const struct usage_row *find_time(const struct row_batch *b, int64_t t, const char *session)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->rows[i].time_ms == t && (!session || strcmp(b->rows[i].session, session) == 0))
                        return &b->rows[i];
        return NULL;
}

#define T0 1796150000000LL

/* ---- discovery and classification -------------------------------------------------- */

static void test_discover(void)
{
        struct fenv f = { 0 };
        struct discover_env e = fenv_env(&f);
        struct root_list l = { 0 };
        const struct root *r;

        fenv_set(&f, "HOME", "/home/u");
        is_int(OC->discover(&e, &l), 0, "discover: default");
        r = find_root(&l, "/home/u/.local/share/opencode");
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 3 && l.n == 1, "default: ~/.local/share/opencode");
        root_list_free(&l);

        fenv_set(&f, "XDG_DATA_HOME", "/data/x/");
        fenv_set(&f, "OPENCODE_DB", "/var/db/oc.db");
        is_int(OC->discover(&e, &l), 0, "discover: XDG_DATA_HOME and OPENCODE_DB");
        r = find_root(&l, "/data/x/opencode");
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "XDG_DATA_HOME") == 0, "XDG_DATA_HOME moves the data dir");
        r = find_root(&l, "/var/db");
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "OPENCODE_DB") == 0 && r->max_depth == 0 &&
                   strcmp(r->detail, "/var/db/oc.db") == 0,
           "OPENCODE_DB: its directory, files only");
        root_list_free(&l);

        f.v[1] = "relative/data"; /* XDG: a relative value is not used */
        f.v[2] = "sub/other.db";  /* relative to the data directory, as OpenCode joins it */
        is_int(OC->discover(&e, &l), 0, "discover: relative values");
        ok(find_root(&l, "/home/u/.local/share/opencode") && find_root(&l, "/home/u/.local/share/opencode/sub"),
           "relative XDG_DATA_HOME ignored, relative OPENCODE_DB inside the data dir");
        root_list_free(&l);

        f.v[2] = ":memory:";
        is_int(OC->discover(&e, &l), 0, "discover: :memory:");
        is_int(l.n, 1, ":memory: is no file");
        root_list_free(&l);

        struct fenv k = { 0 };
        struct discover_env ke = fenv_env(&k);
        fenv_set(&k, "HOME", "/home/u");
        fenv_set(&k, "KILO_DB", "kilo-dev.db");
        fenv_set(&k, "OPENCODE_DB", "/elsewhere/x.db");
        is_int(KL->discover(&ke, &l), 0, "kilo: discover");
        size_t cli_roots = 0; /* the rest: the Kilo Code extension's storage (test-vscode-tasks) */
        for (size_t i = 0; i < l.n; i++)
                cli_roots += strstr(l.v[i].path, "/globalStorage/kilocode.kilo-code") == NULL;
        ok(cli_roots == 1 && find_root(&l, "/home/u/.local/share/kilo"), "kilo: ~/.local/share/kilo, KILO_DB inside it; "
                                                                    "OPENCODE_DB is not Kilo's");
        root_list_free(&l);
        f.n = 0;
        is_int(OC->discover(&e, &l), 0, "no HOME: nothing");
        is_int(l.n, 0, "no HOME, no XDG_DATA_HOME: no root");
        root_list_free(&l);
}

static void test_classify(void)
{
        char src[PATH_MAX];

        is_int(OC->classify("opencode.db", "opencode.db", 1, false), CLASS_TABLE, "opencode.db: a table source");
        is_int(OC->classify("opencode-dev.db", "opencode-dev.db", 1, false), CLASS_TABLE, "a channel database");
        is_int(OC->classify("opencode.db-wal", "opencode.db-wal", 1, false), CLASS_IGNORE, "-wal is not a source");
        is_int(OC->classify("storage", "storage", 1, true), CLASS_DESCEND, "storage/");
        is_int(OC->classify("storage/message", "message", 2, true), CLASS_DESCEND, "storage/message/");
        is_int(OC->classify("storage/message/ses_x", "ses_x", 3, true), CLASS_DESCEND, "a session's messages");
        is_int(OC->classify("storage/message/ses_x/msg_1.json", "msg_1.json", 4, false), CLASS_DOCUMENT,
               "a message file: a document");
        is_int(OC->classify("storage/part/msg_1/prt_1.json", "prt_1.json", 4, false), CLASS_IGNORE, "parts ignored");
        is_int(OC->classify("storage/part", "part", 2, true), CLASS_IGNORE, "storage/part/ not walked");
        is_int(OC->classify("storage/session", "session", 2, true), CLASS_IGNORE, "sessions hold no tokens");
        is_int(OC->classify("snapshot", "snapshot", 1, true), CLASS_IGNORE, "snapshot/ (git objects) not walked");
        is_int(OC->classify("log", "log", 1, true), CLASS_IGNORE, "log/ not walked");
        is_int(OC->classify("storage/message/ses_x/.msg.json", ".msg.json", 4, false), CLASS_IGNORE, "hidden");
        is_int(OC->source_of("/d/opencode.db-wal", true, src, sizeof(src)), SOURCE_OTHER, "-wal: its database");
        is_str(src, "/d/opencode.db", "-wal names the database");
        is_int(OC->source_of("/d/opencode.db-journal", true, src, sizeof(src)), SOURCE_OTHER, "-journal too");
        is_int(OC->source_of("/d/opencode.db-shm", true, src, sizeof(src)), SOURCE_NONE,
               "-shm: our own reads touch it");
        is_int(OC->source_of("/d/opencode.db-wal", false, src, sizeof(src)), SOURCE_NONE, "-wal closed: nothing");
        is_int(OC->source_of("/d/storage/message/s/m.json", true, src, sizeof(src)), SOURCE_SELF, "a file itself");
        ok(ocode_db_name_known(&ocode_flavor_opencode, "/x/opencode.db") &&
                   ocode_db_name_known(&ocode_flavor_opencode, "/x/opencode-beta.db") &&
                   !ocode_db_name_known(&ocode_flavor_opencode, "/x/other.db") &&
                   !ocode_db_name_known(&ocode_flavor_opencode, "/x/opencode-.db") &&
                   ocode_db_name_known(&ocode_flavor_kilo, "/x/kilo.db") &&
                   ocode_db_name_known(&ocode_flavor_kilo, "/x/opencode-dev.db") &&
                   !ocode_db_name_known(&ocode_flavor_kilo, "/x/opencode.db"),
           "the database names each harness writes");
}

/* ---- the database era ------------------------------------------------------------------ */

static void test_fixture_db(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 }, one = { 0 };
        struct totals t = { 0 };
        struct ocode_db_figures fig;
        const struct usage_row *r;
        struct src s;

        xsnprintf(path, sizeof(path), "%s/db/opencode.db", tmp);
        db_build(path, "opencode/db.sql", false);
        src_init(&s, OC, path);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "db: read to the end in one call");
        is_int(s.malformed, 0, "db: nothing malformed");
        add_rows(&t, &b);
        check_case("db", &t);
        is_int(t.priced, 4, "db: four vendor costs");
        r = find_time(&b, T0 + 5000, "ses_A");
        ok(r && r->output == 37 && r->reasoning == 12 && r->total == 4837,
           "database era: output + reasoning is the call's output");
        ok(r && r->n_calls == 2 && strcmp(r->calls[0].name, "read") == 0 && strcmp(r->calls[1].name, "grep") == 0 &&
                   strcmp(r->calls[0].id, "call_a2_0") == 0,
           "tool parts joined to the step that asked for them");
        ok(r && strcmp(r->project, "/home/u/alpha") == 0 && strcmp(r->tool, "opencode") == 0 &&
                   strcmp(r->provider, "anthropic") == 0 && (r->flags & ROW_F_UPSERT),
           "project, tool, provider; an upsert row");
        r = find_time(&b, T0 + 12000, "ses_A");
        ok(r && r->cost_source == COST_NONE && r->input == 1000, "cost 0 with tokens: left to the price table");
        r = find_time(&b, T0 + 5000, "ses_B");
        ok(r && r->input == 310, "the same start time and model with other tokens: another call");
        /* every copy the fork made has the key of the call it copies */
        size_t copies = 0;
        for (size_t i = 0; i < b.n; i++)
                if (strcmp(b.rows[i].session, "ses_F") == 0 && b.rows[i].time_ms < T0 + 60000) {
                        copies++;
                        const struct usage_row *o = find_time(&b, b.rows[i].time_ms, "ses_A");
                        ok(o && memcmp(&o->key, &b.rows[i].key, sizeof(o->key)) == 0, "fork copy at +%lld: same key",
                           (long long)(b.rows[i].time_ms - T0));
                }
        is_int(copies, 3, "the fork's three copies read");
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.watermark == s.wm && s.wm > 0 && fig.rows_read == 15 &&
                   fig.event_mark > 0,
           "figures: 15 message rows read, the event log read to its end");

        /* nothing changed: no rows, and the state as it was */
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "again: done");
        struct parse_state before = s.ps;
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "a third time: done");
        ok(b.n == 0 && memcmp(&before, &s.ps, sizeof(before)) == 0, "unchanged database: nothing read");

        /* any split gives the same rows */
        src_init(&s, OC, path);
        collect(&s, 4096, &one);
        for (size_t m = 1; m <= 7; m += 2) {
                struct row_batch sb = { 0 };
                struct totals st = { 0 };
                int calls;
                src_init(&s, OC, path);
                is_int(collect_all(&s, m, &sb, &calls), COLLECT_DONE, "split read done");
                add_rows(&st, &sb);
                ok(calls >= 15 / (int)m && st.rows == 5 && st.input == t.input && st.output == t.output &&
                           st.cost_nano == t.cost_nano && st.calls == t.calls,
                   "max_rows %zu: %d calls, the same totals", m, calls);
                row_batch_free(&sb);
                free(st.keys);
        }
        row_batch_free(&one);
        row_batch_free(&b);
        free(t.keys);
}

static void test_kilo(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 };
        struct src s;
        const struct usage_row *r;
        bool costs = true;

        xsnprintf(path, sizeof(path), "%s/kilo/kilo.db", tmp);
        db_build(path, "kilo/kilo.sql", false);
        src_init(&s, KL, path);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "kilo: read");
        add_rows(&t, &b);
        check_case("kilo", &t);
        /* each copy (cost 0) carries the cost of the call it copies, so the
         * call keeps it whichever row the ledger meets first */
        for (size_t i = 0; i < b.n; i++) {
                const struct usage_row *o = find_time(&b, b.rows[i].time_ms, "ses_K");
                if (strcmp(b.rows[i].session, "ses_KF") == 0 && o)
                        costs = costs && b.rows[i].cost_source == COST_VENDOR && b.rows[i].cost_nano == o->cost_nano &&
                                memcmp(&b.rows[i].key, &o->key, sizeof(o->key)) == 0;
        }
        ok(costs && b.n == 5, "kilo: the fork's copies take their call's cost and key");
        r = find_time(&b, T0 + 300000, "ses_K");
        ok(r && r->output == 700 && r->reasoning == 0 && strcmp(r->tool, "kilo") == 0,
           "kilo on the Anthropic wire: thinking inside output, reasoning 0");
        r = find_time(&b, T0 + 401000, "ses_KF");
        ok(r && r->cost_source == COST_NONE, "a free model written with cost 0: left to the table (unpriced)");
        row_batch_free(&b);
        free(t.keys);
}

/* A row inserted with zero tokens and updated in place twice, by a writer
 * that keeps its connection (WAL), read between every step. */
static void test_updates_in_place(void)
{
        char path[PATH_MAX], q[2048];
        struct row_batch b = { 0 };
        struct ocode_db_figures fig;
        struct row_key k1;
        struct src s;
        int64_t now = (int64_t)time(NULL) * 1000;
        sqlite3 *w;

        xsnprintf(path, sizeof(path), "%s/live/opencode.db", tmp);
        w = db_build(path, NULL, true);
        sql(w, "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
               "VALUES ('ses_L', 'p', 's', '/w', 't', '1.18.33', 1, 1)");
        /* 300 older rows the reads must not cost */
        sql(w, "BEGIN");
        for (int i = 0; i < 300; i++) {
                xsnprintf(q, sizeof(q),
                          "INSERT INTO message VALUES ('msg_old%03d', 'ses_L', %lld, %lld, '{\"role\":\"user\","
                          "\"time\":{\"created\":%lld}}')",
                          i, (long long)(now - 100000 + i), (long long)(now - 100000 + i), (long long)(now - 100000 + i));
                sql(w, q);
        }
        sql(w, "COMMIT");
        src_init(&s, OC, path);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "live: the old rows read");
        is_int(b.n, 0, "user messages: no rows");

#define STEP(tokens, extra)                                                                                          \
        "{\"parentID\":\"msg_old299\",\"role\":\"assistant\",\"mode\":\"build\",\"agent\":\"build\","               \
        "\"path\":{\"cwd\":\"/w\",\"root\":\"/w\"},\"cost\":%s,\"tokens\":" tokens ",\"modelID\":\"claude-sonnet-4-5\"," \
        "\"providerID\":\"anthropic\",\"time\":{\"created\":%lld" extra "}}"
        xsnprintf(q, sizeof(q),
                  "INSERT INTO message VALUES ('msg_live', 'ses_L', %lld, %lld, '" STEP(
                          "{\"input\":0,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}", "") "')",
                  (long long)now, (long long)now, "0", (long long)now);
        sql(w, q);
        row_batch_clear(&b);
        uint64_t read0 = 0;
        ocode_db_figures(&s.ps, s.wm, &fig);
        read0 = fig.rows_read;
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "inserted with zero tokens: read");
        is_int(b.n, 0, "zero tokens: nothing counted yet");
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 1, "one row waiting for final tokens");
        ok(fig.rows_read - read0 == 1, "one row read, not the table (%llu)", (unsigned long long)(fig.rows_read - read0));

        xsnprintf(q, sizeof(q), "UPDATE message SET time_updated = %lld, data = '" STEP(
                          "{\"total\":5937,\"input\":100,\"output\":25,\"reasoning\":12,\"cache\":{\"read\":5000,\"write\":800}}",
                          "") "' WHERE id = 'msg_live'",
                  (long long)now + 600, "0.005", (long long)now);
        sql(w, q);
        row_batch_clear(&b);
        read0 = fig.rows_read;
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "first update: read");
        ok(b.n == 1 && b.rows[0].input == 100 && b.rows[0].output == 37 && b.rows[0].cache_write == 800 &&
                   b.rows[0].cost_source == COST_VENDOR && b.rows[0].cost_nano == 5000000,
           "the final tokens and cost");
        if (b.n)
                k1 = b.rows[0].key;
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 1 && fig.rows_read - read0 == 1,
           "still waiting for time.completed; one row read");

        xsnprintf(q, sizeof(q), "UPDATE message SET time_updated = %lld, data = '" STEP(
                          "{\"total\":5937,\"input\":100,\"output\":25,\"reasoning\":12,\"cache\":{\"read\":5000,\"write\":800}}",
                          ",\"completed\":%lld") "' WHERE id = 'msg_live'",
                  (long long)now + 700, "0.005", (long long)now, (long long)now + 700);
        sql(w, q);
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "second update: read");
        ok(b.n == 1 && memcmp(&b.rows[0].key, &k1, sizeof(k1)) == 0 && b.rows[0].output == 37,
           "time.completed: the same row again (same key, same values)");
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 0, "nothing waiting any more");
        row_batch_clear(&b);
        read0 = fig.rows_read;
        sql(w, "UPDATE message SET time_updated = time_updated + 1 WHERE id = 'msg_old100'");
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "a completed old row touched: read");
        ocode_db_figures(&s.ps, s.wm, &fig);
        ok(b.n == 0 && fig.rows_read == read0, "no event, nothing waiting: the table is not read again");

        /* an update anywhere that the event log names is found */
        xsnprintf(q, sizeof(q), "UPDATE message SET data = '" STEP(
                          "{\"input\":7,\"output\":3,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                          ",\"completed\":%lld") "' WHERE id = 'msg_old050'",
                  "0.001", (long long)now - 5000, (long long)now - 4000);
        sql(w, q);
        sql(w, "INSERT INTO event VALUES ('evt_1', 'ses_L', 0, 'message.updated.1', "
               "'{\"sessionID\":\"ses_L\",\"info\":{\"id\":\"msg_old050\"}}')");
        row_batch_clear(&b);
        read0 = fig.rows_read;
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "an event: read");
        ocode_db_figures(&s.ps, s.wm, &fig);
        ok(b.n == 1 && b.rows[0].input == 7 && fig.rows_read - read0 == 1, "the row it names fetched by its id");
        sql(w, "INSERT INTO event VALUES ('evt_2', 'ses_L', 1, 'session.updated.1', '{\"sessionID\":\"ses_L\"}')");
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "another event kind: read");
        is_int(b.n, 0, "other events: nothing");

        /* three updates named by events, read one row per call */
        for (int i = 0; i < 3; i++) {
                xsnprintf(q, sizeof(q), "UPDATE message SET data = '" STEP(
                                  "{\"input\":%d,\"output\":1,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                                  ",\"completed\":1") "' WHERE id = 'msg_old%03d'",
                          "0.001", 1000 + i, (long long)now - 3000 + i, 10 + i);
                sql(w, q);
                xsnprintf(q, sizeof(q), "INSERT INTO event VALUES ('evt_u%d', 'ses_L', %d, 'message.updated.1', "
                                        "'{\"info\":{\"id\":\"msg_old%03d\"}}')", i, 10 + i, 10 + i);
                sql(w, q);
        }
        row_batch_clear(&b);
        int calls;
        is_int(collect_all(&s, 1, &b, &calls), COLLECT_DONE, "events read one per call");
        ok(b.n == 3 && calls >= 3 && find_time(&b, now - 3000, "ses_L") && find_time(&b, now - 2998, "ses_L"),
           "every update the events name, across %d calls", calls);

        /* more rows waiting than the reader keeps one by one */
        sql(w, "BEGIN");
        for (int i = 0; i < 9; i++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_p%d', 'ses_L', %lld, %lld, '" STEP(
                                  "{\"input\":0,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}", "") "')",
                          i, (long long)now + 10 + i, (long long)now + 10 + i, "0", (long long)now + 10 + i);
                sql(w, q);
        }
        sql(w, "COMMIT");
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "nine steps started: read");
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 9 && !fig.waiting_more,
           "all nine kept by rowid, none in the overflow");
        sql(w, "BEGIN");
        for (int i = 0; i < 9; i++) {
                xsnprintf(q, sizeof(q), "UPDATE message SET data = '" STEP(
                                  "{\"input\":%d,\"output\":1,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                                  ",\"completed\":1") "' WHERE id = 'msg_p%d'",
                          "0.001", 2000 + i, (long long)now + 10 + i, i);
                sql(w, q);
        }
        sql(w, "COMMIT");
        row_batch_clear(&b);
        is_int(collect_all(&s, 4096, &b, NULL), COLLECT_DONE, "the nine finished: read");
        size_t found = 0;
        for (int i = 0; i < 9; i++)
                found += find_time(&b, now + 10 + i, "ses_L") != NULL;
        ok(found == 9 && ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 0 && !fig.waiting_more,
           "all nine counted (%zu), none waiting", found);

        /* the top rows deleted and their rowids reused by new rows */
        sql(w, "DELETE FROM message WHERE id IN ('msg_live', 'msg_old299')");
        xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_new', 'ses_L', %lld, %lld, '" STEP(
                          "{\"input\":11,\"output\":2,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                          ",\"completed\":%lld") "')",
                  (long long)now + 1000, (long long)now + 1000, "0.002", (long long)now + 1000, (long long)now + 1001);
        sql(w, q);
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "rowids reused: read");
        ok(find_time(&b, now + 1000, "ses_L") != NULL, "the new row at a reused rowid found");
        sqlite3_close(w);
        row_batch_free(&b);
}

/* A database without the event log (an older release), which gains it in
 * a migration while it is being read. */
static void test_event_table_later(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *w;

        xsnprintf(path, sizeof(path), "%s/noevents/opencode.db", tmp);
        w = db_build(path, NULL, true);
        sql(w, "DROP TABLE event");
        sql(w, "INSERT INTO message VALUES ('m1', 's', 1, 1, '{\"role\":\"assistant\",\"providerID\":\"p\","
               "\"modelID\":\"m\",\"tokens\":{\"input\":1,\"output\":1},\"time\":{\"created\":1,\"completed\":2}}'), "
               "('m2', 's', 3, 3, '{\"role\":\"user\",\"time\":{\"created\":3}}')");
        src_init(&s, OC, path);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "no event table: read");
        is_int(b.n, 1, "no event table: its row");
        sql(w, "CREATE TABLE event (id text PRIMARY KEY, aggregate_id text NOT NULL, seq integer NOT NULL, "
               "type text NOT NULL, data text NOT NULL)");
        sql(w, "UPDATE message SET data = '{\"role\":\"assistant\",\"providerID\":\"p\",\"modelID\":\"m\","
               "\"tokens\":{\"input\":5,\"output\":1},\"time\":{\"created\":1,\"completed\":2}}' WHERE id = 'm1'");
        sql(w, "INSERT INTO event VALUES ('e1', 's', 0, 'message.updated.1', '{\"info\":{\"id\":\"m1\"}}')");
        row_batch_clear(&b);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "the event table created: read");
        ok(b.n == 1 && b.rows[0].input == 5, "its first event is followed");
        sql(w, "DROP TABLE event");
        row_batch_clear(&b);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "the event table gone again: no error");
        sqlite3_close(w);
        row_batch_free(&b);
}

/* A database caught mid-write is settling; one that is not ours is quiet;
 * one of ours in a shape we do not know is an error. */
static void test_odd_databases(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *db;
        uint64_t wm = 0, mal = 0;

        xsnprintf(path, sizeof(path), "%s/odd/other.db", tmp);
        mkparent(path);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "CREATE TABLE notes (id integer primary key, body text)");
        sqlite3_close(db);
        src_init(&s, OC, path);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "a .db without OpenCode's tables: done, no error");
        struct ocode_db_figures f;
        ok(b.n == 0 && ocode_db_figures(&s.ps, s.wm, &f) == 0 && f.not_ours, "not ours: nothing, and status skips it");
        xsnprintf(path, sizeof(path), "%s/odd/opencode.db", tmp);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "CREATE TABLE messages_v9 (id text)");
        sqlite3_close(db);
        src_init(&s, OC, path);
        is_int(collect(&s, 64, &b), -EPROTO, "opencode.db in an unknown shape: -EPROTO");
        xsnprintf(path, sizeof(path), "%s/odd/empty/opencode.db", tmp);
        mkparent(path);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        sql(db, "PRAGMA user_version = 1");
        sqlite3_close(db);
        src_init(&s, OC, path);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "an empty new database: done");

        /* malformed data is counted and passed over */
        xsnprintf(path, sizeof(path), "%s/odd/bad/opencode.db", tmp);
        db = db_build(path, NULL, true);
        sql(db, "INSERT INTO message VALUES ('m1', 's', 1, 1, '{not json'), ('m2', 's', 2, 2, '[1,2]'), "
                "('m3', 's', 3, 3, '{\"role\":\"assistant\",\"tokens\":{\"input\":-5,\"output\":1e400},"
                "\"time\":{\"created\":3}}')");
        sqlite3_close(db);
        src_init(&s, OC, path);
        is_int(collect(&s, 64, &b), COLLECT_DONE, "bad rows: done");
        ok(s.malformed == 2 && b.n == 1 && b.rows[0].input == UINT64_MAX,
           "two rows not JSON objects counted malformed; out-of-range tokens left for the bounds to refuse");
        /* a fresh write is settling */
        xsnprintf(path, sizeof(path), "%s/odd/fresh/opencode.db", tmp);
        db_build(path, "opencode/db.sql", false);
        row_batch_clear(&b);
        struct parse_state ps = { 0 };
        struct source_ctx ctx = { .adapter = OC, .path = path };
        is_int(OC->collect_rows(&ctx, &ps, &wm, 4096, &b, &mal), COLLECT_SETTLING, "written a moment ago: settling");
        ok(b.n == 8, "settling: what was there is read (%zu rows, copies included)", b.n);
        row_batch_free(&b);
}

/* ---- the JSON-file era --------------------------------------------------------------------- */

static int parse_doc(const struct adapter *a, const char *path, const char *text, size_t len, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = a, .path = path, .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        size_t known = 0;
        char *copy = malloc(len + 1);
        int r;

        memcpy(copy, text, len);
        copy[len] = 0;
        r = a->parse_document(&ctx, &ps, copy, len, &known, b);
        free(copy);
        return r;
}

static int parse_file(const struct adapter *a, const char *path, struct row_batch *b)
{
        size_t len;
        char *text = slurp(path, &len);
        int r;

        if (!text)
                exit(99);
        r = parse_doc(a, path, text, len, b);
        free(text);
        return r;
}

static void test_json_era(void)
{
        static const char *const files[] = { "msg_j0.json", "msg_j1.json", "msg_j2.json", "msg_j4.json" };
        char dir[PATH_MAX], p[PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 };
        const struct usage_row *r;
        int res = 0;

        xsnprintf(dir, sizeof(dir), "%s/opencode/json/storage/message/ses_J", fx);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                res |= parse_file(OC, pj(p, dir, files[i]), &b);
        is_int(res, PARSE_OK, "json era: every whole file parses");
        add_rows(&t, &b);
        check_case("json", &t);
        r = find_time(&b, T0 + 101000, NULL);
        ok(r && r->output == 120 && r->reasoning == 40 && r->total == 1920 && strcmp(r->session, "ses_J") == 0,
           "json era: output already includes reasoning");
        ok(r && strcmp(r->project, "/home/u/gamma") == 0 && (r->flags & ROW_F_UPSERT), "project from path");

        size_t n0 = b.n;
        is_int(parse_file(OC, pj(p, dir, "msg_j3.json"), &b), PARSE_INCOMPLETE, "a torn file: incomplete");
        is_int(b.n, n0, "a torn file leaves no rows");
        xsnprintf(p, sizeof(p), "%s/opencode/json-j3-whole.txt", fx);
        is_int(parse_file(OC, p, &b), PARSE_OK, "the same file once whole");
        ok(b.n == n0 + 1 && b.rows[n0].input == 12, "its call counted");
        struct row_key whole = b.rows[b.n - 1].key;
        /* rewritten again, unchanged numbers: the same key */
        xsnprintf(p, sizeof(p), "%s/opencode/json-j3-whole.txt", fx);
        parse_file(OC, p, &b);
        ok(memcmp(&b.rows[b.n - 1].key, &whole, sizeof(whole)) == 0, "a rewrite keeps its key");
        is_int(parse_doc(OC, "/x/storage/message/s/m.json", "", 0, &b), PARSE_INCOMPLETE,
               "an empty file (just truncated): incomplete");
        is_int(parse_doc(OC, "/x/storage/message/s/m.json", "{\"role\":\"user\"} x", 17, &b), PARSE_INCOMPLETE,
               "trailing bytes: not a whole object");
        n0 = b.n;
        static const char bare[] = "{\"role\":\"assistant\",\"tokens\":{\"input\":5,\"output\":1},\"time\":{}}";
        is_int(parse_doc(OC, "/x/storage/message/ses_Q/m.json", bare, strlen(bare), &b), PARSE_OK,
               "no session id, no time");
        ok(b.n == n0 + 1 && strcmp(b.rows[n0].session, "ses_Q") == 0 && (b.rows[n0].flags & ROW_F_TIME_APPROX),
           "session from the directory, time from the file");
        row_batch_free(&b);
        free(t.keys);
}

/* A machine with both eras: the JSON files and the database the upgrade
 * made from them give the same keys. */
static void test_both_eras(void)
{
        static const char *const files[] = { "msg_m0.json", "msg_m1.json", "msg_m2.json" };
        char dir[PATH_MAX], p[PATH_MAX], path[PATH_MAX];
        struct row_batch bj = { 0 }, bd = { 0 };
        struct totals t = { 0 }, tj = { 0 };
        struct src s;
        bool same = true;

        xsnprintf(dir, sizeof(dir), "%s/opencode/both/storage/message/ses_M", fx);
        for (size_t i = 0; i < 3; i++)
                parse_file(OC, pj(p, dir, files[i]), &bj);
        add_rows(&tj, &bj);
        check_case("both-json", &tj);
        xsnprintf(path, sizeof(path), "%s/both/opencode.db", tmp);
        db_build(path, "opencode/both.sql", false);
        src_init(&s, OC, path);
        is_int(collect(&s, 4096, &bd), COLLECT_DONE, "both: the migrated database read");
        for (size_t i = 0; i < bj.n; i++) {
                const struct usage_row *o = find_time(&bd, bj.rows[i].time_ms, NULL);
                same = same && o && memcmp(&o->key, &bj.rows[i].key, sizeof(o->key)) == 0 &&
                       o->output == bj.rows[i].output && o->reasoning == bj.rows[i].reasoning;
        }
        ok(same && bj.n == 2, "each JSON-era call has the same key and tokens in the database it migrated to");
        add_rows(&t, &bj);
        add_rows(&t, &bd);
        check_case("both", &t);
        row_batch_free(&bj);
        row_batch_free(&bd);
        free(t.keys);
        free(tj.keys);
}

/* ---- the real database --------------------------------------------------------------------------- */

static void test_realgen(void)
{
        const char *samples = getenv("AM_SAMPLES");
        char base[PATH_MAX], p[PATH_MAX], path[PATH_MAX], cmd[3 * PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 };
        struct json_object *truth;
        struct src s;

        if (samples && *samples)
                xsnprintf(base, sizeof(base), "%s/realgen/opencode-1.18.33", samples);
        else
                xsnprintf(base, sizeof(base), "%s/../shared/samples/realgen/opencode-1.18.33", am_srcdir());
        xsnprintf(p, sizeof(p), "%s/data/opencode/opencode.db", base);
        if (access(p, R_OK) != 0) {
                tap_ok(1, "# SKIP no realgen/opencode-1.18.33 sample at %s", base);
                return;
        }
        xsnprintf(path, sizeof(path), "%s/realgen/opencode.db", tmp);
        mkparent(path);
        xsnprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod u+w '%s'", p, path, path);
        if (system(cmd) != 0)
                exit(99);
        src_init(&s, OC, path);
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "realgen: read");
        add_rows(&t, &b);
        xsnprintf(p, sizeof(p), "%s/truth-totals.json", base);
        truth = json_object_from_file(p);
        /* truth-totals.json: the server's log of the calls OpenCode stored */
        is_int(t.rows, jint(truth, "events", -1), "realgen: 11 calls (the forked session's copies once)");
        is_int(t.input, jint(truth, "input_tokens", -1), "realgen: input 32,049");
        is_int(t.output, jint(truth, "output_tokens", -1), "realgen: output 2,001");
        is_int(t.reasoning, jint(truth, "reasoning_tokens", -1), "realgen: reasoning 44");
        is_int(t.cache_read, jint(truth, "cache_read_tokens", -1), "realgen: cache read 54,400");
        is_int(t.cache_write, jint(truth, "cache_write_tokens", -1), "realgen: cache write 2,056");
        is_int(t.total, jint(truth, "total_tokens", -1), "realgen: total");
        is_int(t.cost_nano, jint(truth, "cost_nano", -1), "realgen: cost as OpenCode wrote it");
        is_int(t.priced, 11, "realgen: every call with OpenCode's cost");
        is_int(t.calls, 3, "realgen: three tool calls");
        is_int(b.n, 18, "realgen: 18 rows read (7 of them the fork's copies)");
        json_object_put(truth);
        row_batch_free(&b);
        free(t.keys);
}

/* Waiting rows never rewind the tail (issue 52): rows_read per pass stays
 * what changed, with 7 unfinished steps before 2,000 finished rows (more
 * than the six the reader once kept), and with more waiting rows than the
 * state holds (the overflow, read through SQLite's time_updated filter). */
static void test_waiting_cost(void)
{
        char path[PATH_MAX], q[2048];
        struct row_batch b = { 0 };
        struct ocode_db_figures fig;
        struct src s;
        int64_t now = (int64_t)time(NULL) * 1000, old = now - 120000;
        uint64_t before, most = 0;
        sqlite3 *w;

        xsnprintf(path, sizeof(path), "%s/waiting/opencode.db", tmp);
        w = db_build(path, NULL, true);
        sql(w, "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
               "VALUES ('ses_W', 'p', 's', '/w', 't', '1.18.33', 1, 1)");
        sql(w, "BEGIN");
        for (int i = 0; i < 7; i++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_w%d', 'ses_W', %lld, %lld, '" STEP(
                                  "{\"input\":0,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}", "") "')",
                          i, (long long)old + i, (long long)old + i, "0", (long long)old + i);
                sql(w, q);
        }
        for (int i = 0; i < 2000; i++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_f%04d', 'ses_W', %lld, %lld, "
                                        "'{\"role\":\"user\",\"time\":{\"created\":%lld}}')",
                          i, (long long)old + 10 + i, (long long)old + 10 + i, (long long)old + 10 + i);
                sql(w, q);
        }
        sql(w, "COMMIT");
        src_init(&s, OC, path);
        is_int(collect_all(&s, 4096, &b, NULL), COLLECT_DONE, "waiting: the table read");
        ok(ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 7 && !fig.waiting_more, "seven steps wait, kept");
        for (int pass = 0; pass < 5; pass++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_n%d', 'ses_W', %lld, %lld, "
                                        "'{\"role\":\"user\",\"time\":{\"created\":%lld}}')",
                          pass, (long long)now + pass, (long long)now + pass, (long long)now + pass);
                sql(w, q);
                before = fig.rows_read;
                row_batch_clear(&b);
                collect_all(&s, 4096, &b, NULL);
                ocode_db_figures(&s.ps, s.wm, &fig);
                if (fig.rows_read - before > most)
                        most = fig.rows_read - before;
        }
        ok(most <= 8, "a pass reads the seven waiting rows and the new one, not the 2,000 after them (most %llu)",
           (unsigned long long)most);
        sql(w, "BEGIN");
        for (int i = 0; i < 7; i++) {
                xsnprintf(q, sizeof(q), "UPDATE message SET time_updated = %lld, data = '" STEP(
                                  "{\"input\":%d,\"output\":1,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                                  ",\"completed\":1") "' WHERE id = 'msg_w%d'",
                          (long long)now, "0.001", 300 + i, (long long)old + i, i);
                sql(w, q);
        }
        sql(w, "COMMIT");
        row_batch_clear(&b);
        collect_all(&s, 4096, &b, NULL);
        size_t found = 0;
        for (int i = 0; i < 7; i++) {
                const struct usage_row *r = find_time(&b, old + i, "ses_W");
                found += r && r->input == (uint64_t)(300 + i);
        }
        ok(found == 7 && ocode_db_figures(&s.ps, s.wm, &fig) == 0 && fig.waiting == 0,
           "the seven finished: each with its final tokens (%zu), none waiting", found);

        /* more waiting rows than the state holds: the overflow */
        sql(w, "BEGIN");
        for (int i = 0; i < 60; i++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_o%02d', 'ses_W', %lld, %lld, '" STEP(
                                  "{\"input\":0,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}", "") "')",
                          i, (long long)old + 5000 + i, (long long)old + 5000 + i, "0", (long long)old + 5000 + i);
                sql(w, q);
        }
        for (int i = 0; i < 500; i++) {
                xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_g%03d', 'ses_W', %lld, %lld, "
                                        "'{\"role\":\"user\",\"time\":{\"created\":%lld}}')",
                          i, (long long)old + 6000 + i, (long long)old + 6000 + i, (long long)old + 6000 + i);
                sql(w, q);
        }
        sql(w, "COMMIT");
        row_batch_clear(&b);
        collect_all(&s, 4096, &b, NULL);
        is_int(ocode_db_figures(&s.ps, s.wm, &fig), 0, "sixty waiting: figures");
        ok(fig.waiting > 6 && fig.waiting < 60 && fig.waiting_more,
           "sixty waiting: %u kept by rowid, the rest in the overflow", (unsigned)fig.waiting);
        xsnprintf(q, sizeof(q), "INSERT INTO message VALUES ('msg_n9', 'ses_W', %lld, %lld, "
                                "'{\"role\":\"user\",\"time\":{\"created\":%lld}}')",
                  (long long)now + 9, (long long)now + 9, (long long)now + 9);
        sql(w, q);
        /* a waiting row past what the set holds finishes */
        xsnprintf(q, sizeof(q), "UPDATE message SET time_updated = %lld, data = '" STEP(
                          "{\"input\":777,\"output\":1,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}",
                          ",\"completed\":1") "' WHERE id = 'msg_o59'",
                  (long long)now + 10, "0.001", (long long)old + 5059);
        sql(w, q);
        before = fig.rows_read;
        row_batch_clear(&b);
        collect_all(&s, 4096, &b, NULL);
        ocode_db_figures(&s.ps, s.wm, &fig);
        const struct usage_row *r59 = find_time(&b, old + 5059, "ses_W");
        ok(r59 && r59->input == 777, "an overflowed row that finished is read with its final tokens");
        ok(fig.rows_read - before <= (uint64_t)fig.waiting + 2,
           "the overflow costs what changed: %llu rows read, not the 500 after it",
           (unsigned long long)(fig.rows_read - before));
        sqlite3_close(w);
        row_batch_free(&b);
}

int main(void)
{
        char cmd[PATH_MAX + 16];

        xsnprintf(fx, sizeof(fx), "%s/fixtures", am_srcdir());
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        ok(registry_find("opencode") == OC && registry_find("kilo") == KL, "both adapters in the registry");
        test_discover();
        test_classify();
        test_fixture_db();
        test_kilo();
        test_updates_in_place();
        test_event_table_later();
        test_waiting_cost();
        test_odd_databases();
        test_json_era();
        test_both_eras();
        test_realgen();
        xsnprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        (void)!system(cmd);
        return tap_done();
}
