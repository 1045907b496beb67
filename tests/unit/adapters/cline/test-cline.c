/* The Cline CLI adapter: discovery by Cline's own precedence, which files
 * are documents, the session documents of fixtures/cline (expected.json,
 * counted by hand), the rules of a row (uncached input, reasoning inside
 * output, Cline's cost or none, the model and project), the content key
 * (a fork's copies merge, two calls never do), a document caught torn at
 * every byte, the resume point a rewrite keeps although its header
 * changed, and through tail_source with a real ledger: a session rewritten
 * in place (one more message: one row added, nothing re-emitted), torn and
 * finished, with the manifest's totals and a database beside it. Then the
 * realgen corpus Cline 3.0.65 wrote itself ($AM_SAMPLES; skipped when
 * absent): the figures. */
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cline/cline.h"
#include "ledger/ledger.h"
#include "row-bounds.h"
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

static const struct adapter *A = &adapter_cline;

/* ---- discovery ------------------------------------------------------------------- */

static void discover_is(const char *const *kv, const char *want, uint8_t reason, const char *var,
                        const char *name)
{
        struct discover_env env = { kv_get, (void *)kv };
        struct root_list l = { 0 };
        char nm[200];

        is_int(A->discover(&env, &l), 0, name);
        if (!want) {
                snprintf(nm, sizeof(nm), "  %s: no root", name);
                is_int((int)l.n, 0, nm);
                root_list_free(&l);
                return;
        }
        /* the sessions root first; the extension core's tasks roots
         * (test-vscode-tasks) after it */
        size_t sessions = 0;
        for (size_t i = 0; i < l.n; i++)
                sessions += strcmp(l.v[i].label, "sessions") == 0;
        snprintf(nm, sizeof(nm), "  %s: one sessions root", name);
        is_int((int)sessions, 1, nm);
        snprintf(nm, sizeof(nm), "  %s: %s", name, want);
        is_str(l.n ? l.v[0].path : "", want, nm);
        snprintf(nm, sizeof(nm), "  %s: reason", name);
        is_int(l.n ? l.v[0].reason : 99, reason, nm);
        snprintf(nm, sizeof(nm), "  %s: variable", name);
        is_str(l.n ? l.v[0].env_var : "", var ? var : "", nm);
        root_list_free(&l);
}

static void test_discover(void)
{
        discover_is((const char *[]){ "HOME", "/home/u", NULL }, "/home/u/.cline/data/sessions", ROOT_DEFAULT,
                    NULL, "default: ~/.cline/data/sessions");
        discover_is((const char *[]){ "HOME", "/home/u", "CLINE_DIR", "/opt/cl", NULL }, "/opt/cl/data/sessions",
                    ROOT_ENV, "CLINE_DIR", "CLINE_DIR moves the home");
        discover_is((const char *[]){ "HOME", "/home/u", "CLINE_DIR", "/opt/cl", "CLINE_DATA_DIR", "/srv/d", NULL },
                    "/srv/d/sessions", ROOT_ENV, "CLINE_DATA_DIR", "CLINE_DATA_DIR wins over CLINE_DIR");
        discover_is((const char *[]){ "HOME", "/home/u", "CLINE_DATA_DIR", "/srv/d", "CLINE_SESSION_DATA_DIR",
                                      "/srv/s", NULL },
                    "/srv/s", ROOT_ENV, "CLINE_SESSION_DATA_DIR", "CLINE_SESSION_DATA_DIR names the sessions");
        discover_is((const char *[]){ "HOME", "/home/u", "CLINE_DATA_DIR", "  d2 \t", NULL },
                    "/home/u/d2/sessions", ROOT_ENV, "CLINE_DATA_DIR", "blanks trimmed, relative against HOME");
        discover_is((const char *[]){ "HOME", "/home/u", "CLINE_DATA_DIR", "   ", NULL },
                    "/home/u/.cline/data/sessions", ROOT_DEFAULT, NULL, "a blank value is unset (as Cline takes it)");
        discover_is((const char *[]){ NULL }, NULL, 0, NULL, "no HOME, nothing set: nothing to watch");
        discover_is((const char *[]){ "HOME", "/", NULL }, "/.cline/data/sessions", ROOT_DEFAULT, NULL,
                    "HOME=/");
}

static void test_classify(void)
{
        is_int(A->classify("", "", 0, true), CLASS_DESCEND, "classify: the root");
        is_int(A->classify("1800_abcde", "1800_abcde", 1, true), CLASS_DESCEND, "classify: a session directory");
        is_int(A->classify("1800_abcde/x", "x", 2, true), CLASS_IGNORE, "classify: nothing deeper");
        is_int(A->classify("1800_abcde/1800_abcde.messages.json", "1800_abcde.messages.json", 2, false),
               CLASS_DOCUMENT, "classify: the session document");
        is_int(A->classify("1800_abcde/agent_x.messages.json", "agent_x.messages.json", 2, false),
               CLASS_DOCUMENT, "classify: a sub-agent's document");
        is_int(A->classify("1800_abcde/1800_abcde.json", "1800_abcde.json", 2, false), CLASS_IGNORE,
               "classify: not the manifest (its totals repeat the messages)");
        is_int(A->classify("1800_abcde/1800_abcde.log", "1800_abcde.log", 2, false), CLASS_IGNORE,
               "classify: not the transcript log");
        is_int(A->classify("1800_abcde/.messages.json", ".messages.json", 2, false), CLASS_IGNORE,
               "classify: not a bare suffix");
        is_int(A->classify("x.messages.json", "x.messages.json", 1, false), CLASS_IGNORE,
               "classify: not a document outside a session directory");
}

/* ---- parsing helpers --------------------------------------------------------------- */

struct doc_run {
        struct parse_state ps;
        struct row_batch out;
        size_t known;
        int r;
};

static struct source_ctx ctx_for(const char *root, const char *path)
{
        struct source_ctx c = { .adapter = A, .path = path, .root_path = root };
        stat(path, &c.st);
        c.source_hash = hash64(path, strlen(path));
        return c;
}

/* Parses text as the document at path (under root), rows appended to run->out. */
static int parse_text(struct doc_run *run, const char *root, const char *path, const char *text, size_t len)
{
        struct source_ctx c = ctx_for(root, path);
        char *copy = malloc(len + 1);

        if (!copy)
                exit(99);
        memcpy(copy, text, len);
        copy[len] = 0;
        run->r = A->parse_document(&c, &run->ps, copy, len, &run->known, &run->out);
        free(copy);
        return run->r;
}

static int parse_path(struct doc_run *run, const char *root, const char *path)
{
        size_t len;
        char *text = slurp(path, &len);
        int r;

        if (!text)
                return -errno;
        r = parse_text(run, root, path, text, len);
        free(text);
        return r;
}

static const struct usage_row *find_row(const struct row_batch *b, const char *model, uint64_t input)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->rows[i].model, model) == 0 && b->rows[i].input == input)
                        return &b->rows[i];
        return NULL;
}

/* Every *.messages.json under root/<session>/, each parsed whole from a
 * fresh state, rows into t (dedup by key), the rows also into all. */
static int walk_sessions(const char *root, struct totals *t, struct row_batch *all, int *ret_malformed)
{
        DIR *top = opendir(root);
        struct dirent *e;
        int docs = 0;

        if (!top)
                return -1;
        while ((e = readdir(top))) {
                char dir[PATH_MAX];
                DIR *d;
                struct dirent *f;

                if (e->d_name[0] == '.')
                        continue;
                pj(dir, root, e->d_name);
                if (!(d = opendir(dir)))
                        continue;
                while ((f = readdir(d))) {
                        char path[PATH_MAX];
                        struct doc_run run = { 0 };

                        if (A->classify("", f->d_name, 2, false) != CLASS_DOCUMENT)
                                continue;
                        pj(path, dir, f->d_name);
                        docs++;
                        if (parse_path(&run, root, path) != PARSE_OK) {
                                (*ret_malformed)++;
                        } else {
                                add_rows(t, &run.out);
                                for (size_t i = 0; all && i < run.out.n; i++) {
                                        struct usage_row *r;
                                        if (row_batch_push(all, &r) < 0)
                                                exit(99);
                                        memcpy(r, &run.out.rows[i], sizeof(*r));
                                }
                        }
                        row_batch_free(&run.out);
                }
                closedir(d);
        }
        closedir(top);
        return docs;
}

/* ---- the fixtures -------------------------------------------------------------------- */

static void test_fixtures(void)
{
        char root[PATH_MAX], p[PATH_MAX];
        struct totals t = { 0 };
        struct row_batch all = { 0 };
        struct json_object *exp, *ea, *sess;
        int malformed = 0, docs;
        uint64_t vendor = 0, none = 0, side = 0, approx = 0, upsert = 0;
        int64_t vendor_nano = 0;

        pj(p, am_srcdir(), "fixtures/cline/expected.json");
        exp = json_object_from_file(p);
        ok(exp != NULL, "fixtures: expected.json");
        json_object_object_get_ex(exp, "all", &ea);
        json_object_object_get_ex(exp, "sessions", &sess);
        pj(root, am_srcdir(), "fixtures/cline/data/sessions");
        docs = walk_sessions(root, &t, &all, &malformed);
        is_int(docs, jint(ea, "documents", -1), "fixtures: every document");
        is_int(malformed, jint(ea, "malformed", -1), "fixtures: the half-written one does not parse");
        is_int(t.rows, jint(ea, "rows", -1), "fixtures: calls");
        is_int(all.n - t.rows, jint(ea, "fork_copies", -1), "fixtures: the fork's copies carry the source's keys");
        is_int(t.input, jint(ea, "input", -1), "fixtures: input (uncached)");
        is_int(t.output, jint(ea, "output", -1), "fixtures: output");
        is_int(t.cache_read, jint(ea, "cache_read", -1), "fixtures: cache read");
        is_int(t.cache_write, jint(ea, "cache_write", -1), "fixtures: cache write");
        is_int(t.total, jint(ea, "total", -1), "fixtures: total");
        is_int(t.reasoning, 0, "fixtures: no reasoning stored apart (Cline writes none)");
        is_int(t.calls, jint(ea, "calls", -1), "fixtures: tool calls");

        /* per row: the first of each key, as the ledger keeps it */
        struct totals seen = { 0 };
        for (size_t i = 0; i < all.n; i++) {
                const struct usage_row *r = &all.rows[i];
                if (totals_has_key(&seen, &r->key))
                        continue;
                struct row_batch one = { .rows = (struct usage_row *)r, .n = 1, .cap = 1 };
                add_rows(&seen, &one);
                if (r->cost_source == COST_VENDOR) {
                        vendor++;
                        vendor_nano += r->cost_nano;
                }
                none += r->cost_source == COST_NONE;
                side += (r->flags & ROW_F_SIDECHAIN) != 0;
                approx += (r->flags & ROW_F_TIME_APPROX) != 0;
                upsert += (r->flags & ROW_F_UPSERT) != 0;
                struct json_object *s;
                char nm[ROW_SESSION_MAX + 64];
                if (json_object_object_get_ex(sess, r->session, &s)) {
                        const char *want = json_object_get_string(json_object_object_get(s, "project"));
                        snprintf(nm, sizeof(nm), "fixtures: %s's row has its manifest's cwd", r->session);
                        is_str(r->project, want ? want : "", nm);
                } else {
                        snprintf(nm, sizeof(nm), "fixtures: row of a known session (%s)", r->session);
                        ok(0, "%s", nm);
                }
                is_str(r->tool, "cline", "fixtures: harness id");
        }
        free(seen.keys);
        is_int(vendor, jint(ea, "vendor_rows", -1), "fixtures: rows with Cline's own cost");
        is_int(vendor_nano, jint(ea, "vendor_cost_nano", -1), "fixtures: Cline's cost, to the nano-dollar");
        is_int(none, jint(ea, "computed_rows", -1) + jint(ea, "unpriced_rows", -1),
               "fixtures: rows without a cost are left to the table");
        is_int(side, jint(ea, "sidechain_rows", -1), "fixtures: the sub-agent's call is a side chain");
        is_int(approx, 0, "fixtures: every call has its own time");
        is_int(upsert, t.rows, "fixtures: every row a monotone upsert");

        const struct usage_row *r = find_row(&all, "claude-haiku-4-5", 1000);
        ok(r && strcmp(r->session, "1800000000000_alpha") == 0,
           "fixtures: the sub-agent's call belongs to the session directory it is in");
        r = find_row(&all, "fake-gpt", 500);
        ok(r && strcmp(r->provider, "openai-compatible") == 0 && r->cost_source == COST_NONE,
           "fixtures: a message without modelInfo takes the manifest's model");
        r = find_row(&all, "fake-gpt", 1976);
        ok(r && r->cache_read == 1024 && r->total == 1976 + 10 + 1024, "fixtures: input 3000 with 1024 cached: 1976 uncached");
        r = find_row(&all, "claude-sonnet-4-5", 4900);
        ok(r && r->n_calls == 1 && strcmp(r->calls[0].id, "toolu_a1") == 0 &&
                   strcmp(r->calls[0].name, "run_commands") == 0 && r->time_ms == 1800000001000LL,
           "fixtures: the tool call and the time of msg_A1aaaaaa");
        row_batch_free(&all);
        free(t.keys);
        json_object_put(exp);
}

/* ---- the rules of one document ------------------------------------------------------- */

static const char *ROOT = "/h/.cline/data/sessions";
static const char *DOC = "/h/.cline/data/sessions/1800_abcde/1800_abcde.messages.json";

/* A document with messages[] = the given text (already joined). */
static char *doc_of(const char *updated, const char *messages)
{
        char *s;
        if (asprintf(&s,
                     "{\n  \"version\": 1,\n  \"updated_at\": \"%s\",\n  \"agent\": \"lead\",\n"
                     "  \"sessionId\": \"1800_abcde\",\n  \"messages\": [%s\n  ],\n"
                     "  \"system_prompt\": \"p\"\n}\n",
                     updated, messages) < 0)
                exit(99);
        return s;
}

#define MSG(id, ts, metrics)                                                                           \
        "\n    {\"id\": \"" id "\", \"role\": \"assistant\", \"content\": [{\"type\": \"text\", "       \
        "\"text\": \"a ] } \\\" text\"}], \"ts\": " #ts ", \"modelInfo\": {\"id\": \"gpt-4.1\", "     \
        "\"provider\": \"openai-native\"}, \"metrics\": " metrics "}"
#define USER(id, ts)                                                                                   \
        "\n    {\"id\": \"" id "\", \"role\": \"user\", \"content\": \"hi\", \"ts\": " #ts "}"

static void test_rules(void)
{
        struct doc_run run = { 0 };
        char *d;

        d = doc_of("2027-01-01T00:00:00.000Z",
                   USER("u1", 1800000000000) "," MSG("msg_1", 1800000000100,
                                                     "{\"inputTokens\": 100, \"outputTokens\": 7, "
                                                     "\"cacheReadTokens\": 60, \"cacheWriteTokens\": 30, "
                                                     "\"cost\": 0.000123456789}"));
        is_int(parse_text(&run, ROOT, DOC, d, strlen(d)), PARSE_OK, "rules: a document");
        is_int(run.out.n, 1, "  one call");
        if (run.out.n) {
                const struct usage_row *r = &run.out.rows[0];
                is_int(r->input, 10, "  uncached input: 100 - 60 read - 30 written");
                is_int(r->output, 7, "  output as written (reasoning inside)");
                is_int(r->reasoning, 0, "  reasoning not stored apart");
                is_int(r->total, 107, "  total: the prompt and the output");
                is_int(r->cost_source, COST_VENDOR, "  Cline's cost: vendor-reported");
                is_int(r->cost_nano, 123457, "  to the nano-dollar");
                is_str(r->session, "1800_abcde", "  session: its directory");
                is_str(r->model, "gpt-4.1", "  model from modelInfo.id");
                is_str(r->provider, "openai-native", "  provider from modelInfo.provider");
                is_str(r->project, "", "  no manifest: no project");
        }
        is_int(run.known, 0, "  no project yet: no resume point (a rewrite reads all again)");
        free(d);
        row_batch_free(&run.out);

        /* a failed turn, an all-zero one, a user message with metrics, cost 0 */
        memset(&run, 0, sizeof(run));
        d = doc_of("2027-01-01T00:00:00.000Z",
                   "\n    {\"id\": \"error_1a2b\", \"role\": \"assistant\", \"content\": [{\"type\": \"text\", "
                   "\"text\": \"400\"}], \"ts\": 1800000000200}," MSG("msg_z", 1800000000300,
                                                                  "{\"inputTokens\": 0, \"outputTokens\": 0}") ","
                   "\n    {\"id\": \"u2\", \"role\": \"user\", \"metrics\": {\"inputTokens\": 5}}," MSG(
                           "msg_c0", 1800000000400, "{\"inputTokens\": 5, \"outputTokens\": 1, \"cost\": 0}"));
        is_int(parse_text(&run, ROOT, DOC, d, strlen(d)), PARSE_OK, "rules: a failed turn and empty metrics");
        is_int(run.out.n, 1, "  only the call that spent something");
        ok(run.out.n == 1 && run.out.rows[0].cost_source == COST_NONE,
           "  cost 0 is no cost (left to the table), not free");
        free(d);
        row_batch_free(&run.out);

        /* numbers out of bounds: refused by the row bounds, never wrapped */
        memset(&run, 0, sizeof(run));
        d = doc_of("x", MSG("msg_n", 1800000000500, "{\"inputTokens\": -5, \"outputTokens\": 1}") "," MSG(
                                "msg_h", 1800000000600, "{\"inputTokens\": 1e300, \"outputTokens\": 1}") "," MSG(
                                "msg_c", 1800000000700, "{\"inputTokens\": 1, \"cost\": -2}") "," MSG(
                                "msg_t", -1, "{\"inputTokens\": 1}"));
        is_int(parse_text(&run, ROOT, DOC, d, strlen(d)), PARSE_OK, "rules: hostile numbers");
        is_int(run.out.n, 4, "  four rows");
        for (size_t i = 0; i < run.out.n; i++)
                ok(row_check_bounds(&run.out.rows[i]) != ROW_IN_BOUNDS, "  row %zu refused by the bounds", i);
        free(d);
        row_batch_free(&run.out);

        /* shapes */
        static const struct {
                const char *text;
                int want;
                const char *name;
        } shapes[] = {
                { "", PARSE_INCOMPLETE, "empty (truncated, not yet written)" },
                { "  \n", PARSE_INCOMPLETE, "blanks only" },
                { "[1, 2]", PARSE_MALFORMED, "not an object" },
                { "{\"messages\": {}}", PARSE_MALFORMED, "messages not an array" },
                { "{\"messages\": [], \"messages\": []}", PARSE_MALFORMED, "messages twice" },
                { "{\"version\": 1}", PARSE_MALFORMED, "no messages" },
                { "{\"messages\": []} x", PARSE_MALFORMED, "bytes after the object" },
                { "{\"messages\": [1, \"x\", null, []]}", PARSE_OK, "odd elements are not messages" },
                { "{\"messages\": [,]}", PARSE_INCOMPLETE, "a hole: waits, then malformed by the daemon" },
                { "{\"messages\": [{}],}", PARSE_INCOMPLETE, "a trailing comma" },
        };
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                memset(&run, 0, sizeof(run));
                is_int(parse_text(&run, ROOT, DOC, shapes[i].text, strlen(shapes[i].text)), shapes[i].want,
                       shapes[i].name);
                is_int(run.out.n, 0, "  no rows");
                row_batch_free(&run.out);
        }
}

/* Keys: the same message (id, ts) is one row whatever session or file it
 * is read from; anything else is two. */
static void test_keys(void)
{
        static const char *const docs[] = {
                MSG("msg_k1", 1800000000100, "{\"inputTokens\": 10, \"outputTokens\": 1}"),
                MSG("msg_k1", 1800000000100, "{\"inputTokens\": 12, \"outputTokens\": 3}"),
                MSG("msg_k2", 1800000000100, "{\"inputTokens\": 10, \"outputTokens\": 1}"),
                MSG("msg_k1", 1800000000101, "{\"inputTokens\": 10, \"outputTokens\": 1}"),
        };
        static const char *const paths[] = {
                "/r/s1/s1.messages.json",
                "/r/s2/s2.messages.json",
                "/r/s2/agent_a.messages.json",
        };
        struct row_key k[4][3];

        for (size_t i = 0; i < 4; i++)
                for (size_t j = 0; j < 3; j++) {
                        struct doc_run run = { 0 };
                        char *d = doc_of("t", docs[i]);
                        parse_text(&run, "/r", paths[j], d, strlen(d));
                        if (run.out.n != 1)
                                exit(98);
                        k[i][j] = run.out.rows[0].key;
                        row_batch_free(&run.out);
                        free(d);
                }
        ok(!memcmp(&k[0][0], &k[0][1], sizeof(k[0][0])) && !memcmp(&k[0][0], &k[0][2], sizeof(k[0][0])),
           "keys: a message copied into another session (a fork) or file keeps its key");
        ok(!memcmp(&k[0][0], &k[1][0], sizeof(k[0][0])),
           "keys: the same message with grown metrics: the same key (a monotone upsert)");
        ok(memcmp(&k[0][0], &k[2][0], sizeof(k[0][0])) != 0, "keys: another message id: another call");
        ok(memcmp(&k[0][0], &k[3][0], sizeof(k[0][0])) != 0, "keys: the same id at another time: another call");

        /* without an id: the message's content */
        struct doc_run a = { 0 }, b = { 0 };
        char *d1 = doc_of("t1", "\n{\"role\": \"assistant\", \"ts\": 5, \"metrics\": {\"inputTokens\": 9}}");
        char *d2 = doc_of("t2", "\n{\"role\": \"assistant\", \"ts\": 5, \"metrics\": {\"inputTokens\": 8}}");
        parse_text(&a, "/r", paths[0], d1, strlen(d1));
        parse_text(&a, "/r", paths[1], d1, strlen(d1));
        parse_text(&b, "/r", paths[0], d2, strlen(d2));
        ok(a.out.n == 2 && b.out.n == 1 && !memcmp(&a.out.rows[0].key, &a.out.rows[1].key, sizeof(struct row_key)) &&
                   memcmp(&a.out.rows[0].key, &b.out.rows[0].key, sizeof(struct row_key)) != 0,
           "keys: a message without an id: its time, model and figures");
        row_batch_free(&a.out);
        row_batch_free(&b.out);
        free(d1);
        free(d2);
}

/* Every prefix of a real-shaped document is torn: incomplete, no rows,
 * the state untouched. */
static void test_torn(void)
{
        char path[PATH_MAX], root[PATH_MAX];
        size_t len, bad = 0, rowsleft = 0, statechanged = 0;
        char *text;

        pj(root, am_srcdir(), "fixtures/cline/data/sessions");
        pj(path, root, "1800000000000_alpha/1800000000000_alpha.messages.json");
        text = slurp(path, &len);
        ok(text != NULL, "torn: the fixture");
        if (!text)
                return;
        while (len && (text[len - 1] == '\n'))
                len--; /* the object without its newline is whole: the cut points are before its '}' */
        for (size_t cut = 0; cut < len; cut++) {
                struct doc_run run = { 0 };
                struct parse_state before;
                run.ps.priv_len = 3;
                memcpy(run.ps.priv, "abc", 3);
                before = run.ps;
                if (parse_text(&run, root, path, text, cut) != PARSE_INCOMPLETE)
                        bad++;
                rowsleft += run.out.n;
                statechanged += memcmp(&before, &run.ps, sizeof(before)) != 0;
                row_batch_free(&run.out);
        }
        is_int(bad, 0, "torn: every prefix of the document is incomplete");
        is_int(rowsleft, 0, "torn: and leaves no rows");
        is_int(statechanged, 0, "torn: and the state as it was");
        free(text);
}

/* The header changes on every rewrite (updated_at): the resume point is the
 * messages array's prefix, verified by its hash. */
static void test_resume(void)
{
        char *dir = tap_tmpdir(), root[PATH_MAX], sdir[PATH_MAX], path[PATH_MAX], man[PATH_MAX];
        struct doc_run run = { 0 };
        char *d1, *d2, *d3;

        pj(root, dir, "sessions");
        pj(sdir, root, "1800_abcde");
        pj(path, sdir, "1800_abcde.messages.json");
        pj(man, sdir, "1800_abcde.json");
        /* a manifest caught half-written after its cwd: the cwd is enough */
        write_file(man, "{\n  \"version\": 1,\n  \"session_id\": \"1800_abcde\",\n  \"provider\": \"openai-native\",\n"
                        "  \"model\": \"gpt-4.1\",\n  \"cwd\": \"/home/u/p\",\n  \"workspace_root\": \"/home/u/p\",\n"
                        "  \"metadata\": {\"usage\": {\"inputTokens\": 9999");
#define M1 MSG("msg_r1", 1800000000100, "{\"inputTokens\": 100, \"outputTokens\": 1}")
#define M2 MSG("msg_r2", 1800000000200, "{\"inputTokens\": 200, \"outputTokens\": 2}")
#define M3 MSG("msg_r3", 1800000000300, "{\"inputTokens\": 300, \"outputTokens\": 3}")
        d1 = doc_of("2027-01-01T00:00:01.000Z", USER("u1", 1800000000000) "," M1);
        d2 = doc_of("2027-01-01T00:00:02.000Z", USER("u1", 1800000000000) "," M1 "," USER("u2", 1800000000150) "," M2);
        d3 = doc_of("2027-01-01T00:00:03.000Z", USER("u1", 1800000000000) "," MSG("msg_r1", 1800000000100,
                    "{\"inputTokens\": 100, \"outputTokens\": 9}") "," USER("u2", 1800000000150) "," M2 "," M3);
        is_int(parse_text(&run, root, path, d1, strlen(d1)), PARSE_OK, "resume: first version");
        is_int(run.out.n, 1, "  one call");
        is_str(run.out.n ? run.out.rows[0].project : "", "/home/u/p", "  the project from a torn manifest's cwd");
        ok(run.known > 0 && run.known < strlen(d1), "  a known prefix reported, within the document");
        ok(run.ps.priv_len > 0, "  a resume point kept");
        row_batch_clear(&run.out);

        /* through the checkpoint's encoding, as the daemon keeps it */
        uint8_t enc[PS_ENCODED_MAX];
        size_t elen;
        struct parse_state back;
        ok(parse_state_encode(&run.ps, enc, sizeof(enc), &elen) == 0 && parse_state_decode(enc, elen, &back) == 0 &&
                   back.priv_len == run.ps.priv_len && !memcmp(back.priv, run.ps.priv, back.priv_len),
           "  the state survives the checkpoint");
        run.ps = back;
        run.known = 0; /* the header changed: the daemon knows no prefix */
        is_int(parse_text(&run, root, path, d2, strlen(d2)), PARSE_OK, "resume: rewritten with one call more");
        is_int(run.out.n, 1, "  only the new call emitted");
        ok(run.out.n == 1 && run.out.rows[0].input == 200, "  it is msg_r2");
        row_batch_clear(&run.out);

        /* an earlier message changed: its prefix differs, all is read again */
        run.known = 0;
        is_int(parse_text(&run, root, path, d3, strlen(d3)), PARSE_OK, "resume: an earlier message rewritten");
        is_int(run.out.n, 3, "  every call emitted again (the ledger merges the known ones)");
        ok(run.out.n == 3 && run.out.rows[0].output == 9, "  msg_r1 with its new output");
        row_batch_clear(&run.out);

        /* a version with fewer messages (a checkpoint restore): read from the start */
        run.known = 0;
        is_int(parse_text(&run, root, path, d1, strlen(d1)), PARSE_OK, "resume: back to one message");
        is_int(run.out.n, 1, "  read from the start");
        row_batch_clear(&run.out);

        /* the resume point of another document does not apply */
        char *other = doc_of("t", USER("u9", 5) "," MSG("msg_o", 6, "{\"inputTokens\": 1}"));
        run.known = 0;
        is_int(parse_text(&run, root, path, other, strlen(other)), PARSE_OK, "resume: another text");
        ok(run.out.n == 1 && run.out.rows[0].input == 1, "  read as it is");
        row_batch_free(&run.out);
        free(other);
        free(d1);
        free(d2);
        free(d3);
}

/* ---- through the daemon's document reader, with a real ledger -------------------------------- */

static struct ledger *L;

static int tail_doc(const char *root, const char *path, struct tail_counters *c)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT, .counters = c };
        struct source_ctx s = ctx_for(root, path);
        struct tail_outcome o;
        memset(c, 0, sizeof(*c));
        return tail_source(&t, &s, CLASS_DOCUMENT, &o);
}

static uint64_t ledger_rows(void)
{
        struct ledger_stats st;
        ledger_get_stats(L, &st);
        return st.rows;
}

static int sum_cb(const struct usage_row *r, void *u)
{
        uint64_t *v = u;
        v[0] += r->input;
        v[1] += r->output;
        return 0;
}

/* In place: truncate, write (the same inode), as Cline's hub does. */
static void rewrite(const char *path, const char *text, size_t n)
{
        FILE *f = fopen(path, "r+e");
        if (!f) {
                write_bytes(path, text, n);
                return;
        }
        if (ftruncate(fileno(f), 0) != 0 || fwrite(text, 1, n, f) != n || fclose(f) != 0)
                exit(99);
}

static void test_tail(void)
{
        char *dir = tap_tmpdir(), root[PATH_MAX], path[PATH_MAX], man[PATH_MAX], db[PATH_MAX], lp[PATH_MAX];
        struct tail_counters c;
        struct stat st0, st1;
        uint64_t sums[2] = { 0 };
        char *d1, *d2, *d3;

        pj(lp, dir, "ledger");
        mkdir_p(lp);
        if (ledger_open(lp, 0, &L) < 0) {
                ok(0, "tail: a ledger");
                return;
        }
        pj(root, dir, "data/sessions");
        pj(path, root, "1800_abcde/1800_abcde.messages.json");
        pj(man, root, "1800_abcde/1800_abcde.json");
        pj(db, dir, "data/db/sessions.db");
        /* the manifest's totals, and a database row repeating them: beside
         * the document, never read for rows */
        write_file(man, "{\"session_id\": \"1800_abcde\", \"cwd\": \"/w\", \"metadata\": {\"usage\": "
                        "{\"inputTokens\": 600, \"outputTokens\": 6}, \"totalCost\": 1.5}}\n");
        write_file(db, "SQLite format 3");
        d1 = doc_of("2027-01-01T00:00:01.000Z", USER("u1", 1800000000000) "," M1);
        d2 = doc_of("2027-01-01T00:00:02.000Z", USER("u1", 1800000000000) "," M1 "," USER("u2", 1800000000150) "," M2);
        d3 = doc_of("2027-01-01T00:00:03.000Z",
                    USER("u1", 1800000000000) "," M1 "," USER("u2", 1800000000150) "," M2 "," M3);
        rewrite(path, d1, strlen(d1));
        age_file(path, time(NULL));
        is_int(tail_doc(root, path, &c), TAIL_DONE, "tail: the first version");
        is_int(c.rows_added, 1, "  one row added");
        stat(path, &st0);

        /* torn: the writer truncated and wrote half of the next version */
        rewrite(path, d2, strlen(d2) / 2);
        is_int(tail_doc(root, path, &c), TAIL_SETTLING, "tail: caught half-written: settling");
        is_int(ledger_rows(), 1, "  nothing counted from it");
        rewrite(path, d2, strlen(d2));
        stat(path, &st1);
        ok(st0.st_ino == st1.st_ino, "  (the same inode: rewritten in place)");
        is_int(tail_doc(root, path, &c), TAIL_DONE, "tail: the rest written");
        is_int(c.rows_added, 1, "  the new call added");
        is_int(c.rows_dup + c.rows_merged, 0, "  the known one not emitted again (resumed past it)");

        rewrite(path, d3, strlen(d3));
        is_int(tail_doc(root, path, &c), TAIL_DONE, "tail: one more step");
        is_int(c.rows_added, 1, "  one row added");
        is_int(c.rows_dup + c.rows_merged, 0, "  nothing re-emitted");
        is_int(ledger_rows(), 3, "tail: three calls, once each");
        ledger_foreach_row(L, sum_cb, sums);
        is_int(sums[0], 600, "  input 100 + 200 + 300 (not the manifest's totals added)");
        is_int(sums[1], 6, "  output 1 + 2 + 3");
        is_int(tail_doc(root, path, &c), TAIL_DONE, "tail: unchanged");
        is_int(c.rows_added + c.rows_dup, 0, "  nothing to do");
        ledger_close(L);
        L = NULL;
        free(d1);
        free(d2);
        free(d3);
}

/* ---- realgen: what Cline 3.0.65 wrote itself -------------------------------------------- */

static const char *samples(void)
{
        const char *s = getenv("AM_SAMPLES");
        static char buf[PATH_MAX];
        if (s && *s)
                return s;
        xsnprintf(buf, sizeof(buf), "%s/../shared/samples", am_srcdir());
        return buf;
}

static void test_realgen(void)
{
        char root[PATH_MAX];
        struct totals t = { 0 };
        struct row_batch all = { 0 };
        struct stat st;
        int malformed = 0, docs;
        uint64_t vendor = 0, unpriced_fake = 0, alpha = 0, beta = 0;
        int64_t vendor_nano = 0;

        xsnprintf(root, sizeof(root), "%s/realgen/cline-3.0.65/cline-home/data/sessions", samples());
        if (stat(root, &st) != 0) {
                tap_ok(1, "# SKIP %s not present", root);
                return;
        }
        docs = walk_sessions(root, &t, &all, &malformed);
        is_int(docs, 6, "realgen: six session documents");
        is_int(malformed, 0, "realgen: all parse");
        is_int(t.rows, 8, "realgen: 8 calls (the failed turn is none)");
        is_int(t.input, 31530, "realgen: input 31,530 (uncached)");
        is_int(t.output, 270, "realgen: output 270 (44 of it reasoning)");
        is_int(t.cache_read, 12800, "realgen: cache read 12,800");
        is_int(t.cache_write, 784, "realgen: cache write 784");
        is_int(t.total, 45384, "realgen: total 45,384");
        is_int(t.calls, 3, "realgen: 3 tool calls");
        for (size_t i = 0; i < all.n; i++) {
                const struct usage_row *r = &all.rows[i];
                if (r->cost_source == COST_VENDOR) {
                        vendor++;
                        vendor_nano += r->cost_nano;
                }
                unpriced_fake += r->cost_source == COST_NONE && strcmp(r->model, "fake-gpt") == 0;
                alpha += strstr(r->project, "/work/alpha") != NULL;
                beta += strstr(r->project, "/work/beta") != NULL;
        }
        is_int(vendor, 5, "realgen: Cline's own cost on 5 calls");
        is_int(vendor_nano, 52436600, "realgen: $0.0524366 of it");
        is_int(unpriced_fake, 3, "realgen: the 3 fake-gpt calls without a cost");
        is_int(alpha, 6, "realgen: 6 calls in work/alpha (the manifests' cwd)");
        is_int(beta, 2, "realgen: 2 in work/beta");
        row_batch_free(&all);
        free(t.keys);
}

int main(void)
{
        test_discover();
        test_classify();
        test_fixtures();
        test_rules();
        test_keys();
        test_torn();
        test_resume();
        test_tail();
        test_realgen();
        return tap_done();
}
