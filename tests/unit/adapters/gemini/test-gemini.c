/* Unit tests of the Gemini CLI adapter: discovery ($GEMINI_CLI_HOME) and
 * classification, every fixture case (fixtures/gemini/expected.json), the
 * rules of the JSONL lines (the same id twice, $set, the state restored at
 * every line), the 0.33 document (a rewrite reads only what is new, every
 * torn prefix is incomplete and leaves no rows and no state, an edited
 * earlier message is read again, member order), and the realgen 0.61.0
 * corpus against its truth, call by call. */
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "gemini/msg.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_gemini;
static const struct adapter *A = &adapter_gemini;

/* ---- helpers ------------------------------------------------------------------- */

/* A parse state through its checkpoint encoding, as the daemon keeps it. */
static void roundtrip(struct parse_state *ps)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        struct parse_state back;

        if (parse_state_encode(ps, enc, sizeof(enc), &len) != 0 || parse_state_decode(enc, len, &back) != 0)
                exit(99);
        *ps = back;
}

/* A document as the daemon reads it: one version, a fresh state. */
static int ingest_doc(struct totals *t, const char *path, struct row_batch *keep)
{
        struct source_ctx ctx = { .adapter = A, .path = path, .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        size_t len, known = 0;
        char *data = slurp(path, &len);
        int r;

        if (!data)
                return -errno;
        t->files++;
        r = A->parse_document(&ctx, &ps, data, len, &known, &b);
        if (r == PARSE_NOT_SOURCE)
                t->not_source++;
        if (r == PARSE_MALFORMED || r == PARSE_INCOMPLETE)
                t->malformed++;
        add_rows(t, &b);
        for (size_t i = 0; keep && i < b.n; i++) {
                struct usage_row *row;
                if (row_batch_push(keep, &row) < 0)
                        exit(99);
                *row = b.rows[i];
        }
        row_batch_free(&b);
        free(data);
        return r < 0 ? r : 0;
}

/* The lines of a file as the tail reads them (an unterminated last line
 * only when it is complete JSON), counting malformed lines and a first line
 * that says it is no source; every row kept. */
static void ingest_lines(struct totals *t, const char *path, struct row_batch *keep)
{
        struct source_ctx ctx = { .adapter = A, .path = path, .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        size_t len, pos = 0, n;
        const char *line, *s;
        char *data = slurp(path, &len);
        bool nl;

        if (!data)
                exit(99);
        t->files++;
        while (next_line(data, len, &pos, &line, &n, &nl)) {
                int r;
                n = lines_trim(line, n, &s);
                if (n == 0 || (!nl && !lines_is_complete_json(s, n)))
                        continue;
                r = A->parse_line(&ctx, &ps, s, n, keep);
                t->malformed += r == PARSE_MALFORMED;
                if (r == PARSE_NOT_SOURCE) {
                        t->not_source++;
                        break;
                }
        }
        free(data);
}

/* Sums of rows as the ledger keeps upserted rows: one per key, each field
 * its largest value, the tool calls of the row that names the most. */
static void upsert_totals(const struct row_batch *b, struct totals *t)
{
        for (size_t i = 0; i < b->n; i++) {
                const struct usage_row *r = &b->rows[i];
                bool first = true;
                for (size_t j = 0; j < i && first; j++)
                        first = memcmp(&b->rows[j].key, &r->key, sizeof(r->key)) != 0;
                if (!first)
                        continue;
                uint64_t in = 0, out = 0, cr = 0, cw = 0, re = 0, tot = 0, calls = 0;
                for (size_t j = i; j < b->n; j++) {
                        const struct usage_row *x = &b->rows[j];
                        if (memcmp(&x->key, &r->key, sizeof(r->key)) != 0)
                                continue;
#define MAXF(v, f) v = v > x->f ? v : x->f
                        MAXF(in, input);
                        MAXF(out, output);
                        MAXF(cr, cache_read);
                        MAXF(cw, cache_write);
                        MAXF(re, reasoning);
                        MAXF(tot, total);
                        MAXF(calls, n_calls);
#undef MAXF
                }
                t->rows++;
                t->input += in;
                t->output += out;
                t->cache_read += cr;
                t->cache_write += cw;
                t->reasoning += re;
                t->total += tot;
                t->calls += calls;
        }
}

static bool is_doc(const char *path)
{
        size_t n = strlen(path);
        return n > 5 && strcmp(path + n - 5, ".json") == 0;
}

/* The lines of a file, every row kept in b. */
static void lines_into(const char *path, struct row_batch *b, bool restart_every_line)
{
        struct source_ctx ctx = { .adapter = A, .path = path, .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        size_t len, pos = 0, n;
        const char *line;
        char *data = slurp(path, &len);
        bool nl;

        if (!data)
                exit(99);
        while (next_line(data, len, &pos, &line, &n, &nl)) {
                if (A->parse_line(&ctx, &ps, line, n, b) == PARSE_NOT_SOURCE)
                        break;
                if (restart_every_line)
                        roundtrip(&ps);
        }
        free(data);
}

static const struct usage_row *find_key(const struct row_batch *b, const struct row_key *k, size_t from)
{
        for (size_t i = from; i < b->n; i++)
                if (memcmp(&b->rows[i].key, k, sizeof(*k)) == 0)
                        return &b->rows[i];
        return NULL;
}

static void key_of_id(const char *id, struct row_key *ret)
{
        struct keyhash h;
        if (keyhash_begin(&h, GEMINI_KEY_MSG) < 0)
                exit(99);
        keyhash_str(&h, id);
        keyhash_end(&h, ret);
}

/* ---- discovery and classification ------------------------------------------- */

static void test_discovery(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], p[PATH_MAX];
        struct root_list l = { 0 };
        struct fenv f = { 0 };
        struct discover_env env;
        const struct root *r;

        pj(home, tmp, "home");
        mkdir_p(home);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: default");
        r = find_root(&l, pj(p, home, ".gemini/tmp"));
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 3, "~/.gemini/tmp listed before it exists, 3 levels");
        is_int(l.n, 1, "one root");
        root_list_free(&l);

        /* GEMINI_CLI_HOME replaces the home .gemini goes into */
        fenv_set(&f, "GEMINI_CLI_HOME", "~/alt");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: GEMINI_CLI_HOME");
        r = find_root(&l, pj(p, home, "alt/.gemini/tmp"));
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "GEMINI_CLI_HOME") == 0,
           "GEMINI_CLI_HOME/.gemini/tmp (~ expanded)");
        ok(!find_root(&l, pj(p, home, ".gemini/tmp")), "the default is not listed while it does not exist");
        root_list_free(&l);
        mkdir_p(pj(p, home, ".gemini"));
        is_int(A->discover(&env, &l), 0, "discover: GEMINI_CLI_HOME with an old ~/.gemini");
        ok(find_root(&l, pj(p, home, ".gemini/tmp")) && l.n == 2, "an existing default stays listed beside it");
        for (size_t i = 0; i < f.n_asked; i++)
                ok(registry_env_known(f.asked[i]), "asked only for registered %s", f.asked[i]);
        root_list_free(&l);
}

static void test_classify(void)
{
        static const struct {
                const char *rel;
                bool dir;
                int want;
        } c[] = {
                { "alpha", true, CLASS_DESCEND },
                { "alpha/chats", true, CLASS_DESCEND },
                { "alpha/checkpoints", true, CLASS_IGNORE },
                { "alpha/chats/aaaa0001-1111", true, CLASS_DESCEND },
                { "alpha/chats/aaaa0001-1111/deeper", true, CLASS_IGNORE },
                { "alpha/chats/session-2026-11-30T10-00-aaaa0001.jsonl", false, CLASS_LINES },
                { "alpha/chats/session-2026-10-01T09-00-bbbb0002.json", false, CLASS_DOCUMENT },
                { "alpha/chats/aaaa0001-1111/5b0a0001.jsonl", false, CLASS_LINES },
                { "alpha/chats/aaaa0001-1111/5b0a0001.json", false, CLASS_IGNORE },
                { "alpha/chats/notes.jsonl", false, CLASS_IGNORE },
                { "alpha/chats/session-x.json.tmp", false, CLASS_IGNORE },
                { "alpha/logs.json", false, CLASS_IGNORE },
                { "alpha/checkpoint-tag.json", false, CLASS_IGNORE },
                { "alpha/.project_root", false, CLASS_IGNORE },
                { "alpha/session-2026-11-30T10-00-aaaa0001.jsonl", false, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *name = strrchr(c[i].rel, '/');
                int depth = 1;
                for (const char *q = c[i].rel; *q; q++)
                        depth += *q == '/';
                is_int(A->classify(c[i].rel, name ? name + 1 : c[i].rel, depth, c[i].dir), c[i].want, c[i].rel);
        }
}

/* ---- fixtures ------------------------------------------------------------------ */

static void test_fixtures(void)
{
        char path[PATH_MAX], dir[PATH_MAX];
        json_object *exp, *cases;

        pj(dir, am_srcdir(), "fixtures/gemini");
        exp = json_object_from_file(pj(path, dir, "expected.json"));
        ok(exp && json_object_object_get_ex(exp, "cases", &cases), "expected.json has cases");
        if (!exp)
                return;
        json_object_object_foreach(cases, name, c) {
                struct totals t = { 0 };
                struct row_batch keep = { 0 };
                json_object *files, *v;
                if (!json_object_object_get_ex(c, "files", &files))
                        continue;
                for (size_t i = 0; i < json_object_array_length(files); i++) {
                        pj(path, dir, json_object_get_string(json_object_array_get_idx(files, i)));
                        if (is_doc(path))
                                ingest_doc(&t, path, &keep);
                        else
                                ingest_lines(&t, path, &keep);
                }
                t.rows = 0; /* the sums as upserted: ingest_doc added them insert-if-absent */
                t.input = t.output = t.cache_read = t.cache_write = t.reasoning = t.total = t.calls = 0;
                upsert_totals(&keep, &t);
                totals_check(&t, c, name, true);
                if (json_object_object_get_ex(c, "project", &v)) {
                        bool all = keep.n > 0;
                        for (size_t i = 0; i < keep.n; i++)
                                all &= strcmp(keep.rows[i].project, json_object_get_string(v)) == 0;
                        ok(all, "%s: project %s (projects.json by the folder's sha256)", name,
                           json_object_get_string(v));
                }
                row_batch_free(&keep);
                free(t.keys);
        }
        json_object_put(exp);

        /* the sub-agent: the parent's session, a sidechain call */
        struct row_batch b = { 0 };
        pj(path, dir, "home/tmp/alpha/chats/aaaa0001-1111-4111-8111-000000000001/"
                      "5b0a0001-5555-4555-8555-000000000005.jsonl");
        lines_into(path, &b, false);
        ok(b.n == 1 && strcmp(b.rows[0].session, "aaaa0001-1111-4111-8111-000000000001") == 0 &&
                   (b.rows[0].flags & ROW_F_SIDECHAIN) && strcmp(b.rows[0].project, "/work/alpha") == 0,
           "sub-agent row: the parent session (folder), sidechain, project from .project_root");
        row_batch_free(&b);
}

/* ---- lines --------------------------------------------------------------------- */

static void test_lines(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 }, r = { 0 };
        struct row_key k2;
        const struct usage_row *first, *second;

        pj(path, am_srcdir(), "fixtures/gemini/home/tmp/alpha/chats/session-2026-11-30T10-00-aaaa0001.jsonl");
        lines_into(path, &b, false);
        key_of_id("9f1c0002-0000-4000-8000-000000000002", &k2);
        first = find_key(&b, &k2, 0);
        second = first ? find_key(&b, &k2, (size_t)(first - b.rows) + 1) : NULL;
        ok(first && second, "the same id appended twice: two rows with one key");
        ok(first && second && first->n_calls == 0 && second->n_calls == 1 &&
                   strcmp(second->calls[0].name, "run_shell_command") == 0 && first->input == second->input &&
                   (first->flags & ROW_F_UPSERT) && (second->flags & ROW_F_UPSERT),
           "... upserted: the second adds its tool call, the tokens are the same");
        ok(b.n == 5, "5 rows for 4 calls (the repeated id)");
        ok(b.n > 0 && strcmp(b.rows[0].session, "aaaa0001-1111-4111-8111-000000000001") == 0 &&
                   strcmp(b.rows[0].project, "/work/alpha") == 0 && strcmp(b.rows[0].provider, "google") == 0 &&
                   strcmp(b.rows[0].tool, "gemini") == 0,
           "session from the header, project from .project_root, provider google");
        /* the state through a checkpoint after every line: the same rows */
        lines_into(path, &r, true);
        bool same = r.n == b.n;
        for (size_t i = 0; same && i < b.n; i++)
                same = memcmp(&r.rows[i].key, &b.rows[i].key, sizeof(k2)) == 0 && r.rows[i].input == b.rows[i].input &&
                       strcmp(r.rows[i].session, b.rows[i].session) == 0 &&
                       strcmp(r.rows[i].project, b.rows[i].project) == 0;
        ok(same, "a checkpoint after every line changes nothing");
        row_batch_free(&r);
        row_batch_free(&b);

        /* $set never makes a call, even with tokens in its list */
        struct source_ctx ctx = { .adapter = A, .path = "/x/tmp/p/chats/session-1.jsonl" };
        struct parse_state ps = { 0 };
        static const char hdr[] = "{\"sessionId\":\"s\",\"projectHash\":\"h\",\"startTime\":\"2026-11-30T10:00:00Z\"}";
        static const char set[] = "{\"$set\":{\"messages\":[{\"id\":\"m1\",\"type\":\"gemini\",\"model\":\"gemini-2.5-pro\","
                                  "\"tokens\":{\"input\":100,\"output\":5,\"cached\":0,\"thoughts\":0,\"tool\":0,\"total\":105}}]}}";
        static const char set2[] = " {\"lastUpdated\":\"x\",\"$set\":{\"messages\":[{\"id\":\"m1\",\"type\":\"gemini\","
                                   "\"tokens\":{\"input\":100,\"output\":5}}]}}";
        static const char msg[] = "{\"id\":\"m2\",\"type\":\"gemini\",\"model\":\"gemini-2.5-pro\","
                                  "\"tokens\":{\"input\":100,\"output\":5,\"cached\":40,\"thoughts\":3,\"tool\":2}}";
        is_int(A->parse_line(&ctx, &ps, hdr, strlen(hdr), &b), PARSE_OK, "header");
        is_int(A->parse_line(&ctx, &ps, set, strlen(set), &b), PARSE_OK, "$set with a message list");
        is_int(A->parse_line(&ctx, &ps, set2, strlen(set2), &b), PARSE_OK, "$set not first in its line");
        is_int((int)b.n, 0, "$set: never a call");
        is_int(A->parse_line(&ctx, &ps, msg, strlen(msg), &b), PARSE_OK, "a message");
        ok(b.n == 1 && b.rows[0].input == 62 && b.rows[0].cache_read == 40 && b.rows[0].output == 8 &&
                   b.rows[0].reasoning == 3 && b.rows[0].total == 110 && (b.rows[0].flags & ROW_F_TIME_APPROX),
           "input - cached + tool, output + thoughts, total computed when absent, no time: approximate");
        row_batch_free(&b);

        /* hostile numbers are refused at commit, not wrapped */
        static const char neg[] = "{\"id\":\"m3\",\"type\":\"gemini\",\"tokens\":{\"input\":-5,\"output\":1e30}}";
        A->parse_line(&ctx, &ps, neg, strlen(neg), &b);
        ok(b.n == 1 && b.rows[0].input == UINT64_MAX && b.rows[0].output == UINT64_MAX,
           "negative and huge counts read as out of bounds");
        row_batch_free(&b);
}

/* ---- the document ------------------------------------------------------------- */

/* A 0.33-shape document with n messages (user and gemini in turn), as the
 * CLI writes it: JSON.stringify(conversation, null, 2). out_tweak != 0:
 * message 3's output is that instead. */
static char *doc_build(int n, int updated, uint64_t out_tweak, bool session_last)
{
        size_t cap = 4096 + (size_t)n * 1024, len = 0;
        char *d = malloc(cap);
#define P(...) len += (size_t)snprintf(d + len, cap - len, __VA_ARGS__)
        P("{\n");
        if (!session_last)
                P("  \"sessionId\": \"bbbb0002-2222-4222-8222-000000000002\",\n");
        P("  \"projectHash\": \"7542a27b500a3fbe093358d093a035e71a027fbcede398ac18d18a8174935c2b\",\n");
        P("  \"startTime\": \"2026-10-01T09:00:00.000Z\",\n");
        P("  \"lastUpdated\": \"2026-10-01T%02d:%02d:%02d.000Z\",\n", 9 + updated / 3600, updated / 60 % 60,
          updated % 60);
        P("  \"messages\": [");
        for (int i = 0; i < n; i++) {
                P("%s\n    {\n", i ? "," : "");
                if (i % 2 == 0) {
                        P("      \"id\": \"u-%04d\",\n      \"timestamp\": \"2026-10-01T09:00:00.000Z\",\n", i);
                        P("      \"type\": \"user\",\n      \"content\": [\n        {\n          \"text\": "
                          "\"question %d with \\\"tokens\\\": {}\"\n        }\n      ]\n    }", i);
                } else {
                        uint64_t out = i == 3 && out_tweak ? out_tweak : (uint64_t)(10 + i % 7);
                        P("      \"id\": \"g-%04d\",\n      \"timestamp\": \"2026-10-01T09:00:01.000Z\",\n", i);
                        P("      \"type\": \"gemini\",\n      \"content\": \"answer %d\",\n      \"thoughts\": [],\n", i);
                        P("      \"tokens\": {\n        \"input\": %d,\n        \"output\": %llu,\n        \"cached\": %d,\n"
                          "        \"thoughts\": %d,\n        \"tool\": 0,\n        \"total\": %llu\n      },\n",
                          1000 + i, (unsigned long long)out, 500, i % 3,
                          (unsigned long long)(1000 + i + out + (uint64_t)(i % 3)));
                        P("      \"model\": \"gemini-2.5-pro\"\n    }");
                }
        }
        P("%s],\n", n ? "\n  " : "");
        if (session_last)
                P("  \"kind\": \"main\",\n  \"sessionId\": \"bbbb0002-2222-4222-8222-000000000002\"\n}");
        else
                P("  \"kind\": \"main\"\n}");
#undef P
        return d;
}

static int parse_doc(struct parse_state *ps, const char *doc, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = A, .path = "/h/.gemini/tmp/x/chats/session-2026-10-01T09-00-bbbb0002.json" };
        size_t known = 0;
        int r = A->parse_document(&ctx, ps, doc, strlen(doc), &known, b);
        if (r == PARSE_OK && known > strlen(doc))
                return -1;
        return r;
}

static void test_document(void)
{
        struct parse_state ps = { 0 }, before;
        struct row_batch b = { 0 };
        struct totals t = { 0 };
        size_t max_rows = 0, emitted = 0;
        bool all_ok = true;
        const int N = 60;

        /* the CLI rewrites the document after every message */
        for (int n = 1; n <= N; n++) {
                char *d = doc_build(n, n, 0, false);
                size_t n0 = b.n;
                all_ok &= parse_doc(&ps, d, &b) == PARSE_OK;
                roundtrip(&ps);
                if (n > 2 && b.n - n0 > max_rows)
                        max_rows = b.n - n0;
                free(d);
        }
        emitted = b.n;
        add_rows(&t, &b);
        ok(all_ok, "%d versions, each a new lastUpdated and one more message: all read", N);
        is_int(t.rows, N / 2, "every call once (30 distinct keys)");
        is_int(max_rows, 1, "a rewrite emits only the message before the new one (the last is read again)");
        ok(emitted <= (size_t)N, "%zu rows emitted over %d versions: no version read through all messages", emitted, N);
        uint64_t want_in = 0, want_out = 0;
        for (int i = 1; i < N; i += 2) {
                want_in += 500 + (uint64_t)i;
                want_out += (uint64_t)(10 + i % 7 + i % 3);
        }
        ok(t.input == want_in && t.output == want_out && t.cache_read == 500ull * (N / 2),
           "the sums: input %llu, output %llu", (unsigned long long)t.input, (unsigned long long)t.output);
        row_batch_free(&b);
        free(t.keys);

        /* the same bytes again: only the last message read */
        char *d = doc_build(N, N, 0, false);
        is_int(parse_doc(&ps, d, &b), PARSE_OK, "an unchanged version");
        is_int((int)b.n, 1, "... emits only its last message, read again");
        row_batch_clear(&b);
        free(d);

        /* every torn prefix of the next version: incomplete, no rows, state kept */
        d = doc_build(N + 1, N + 1, 0, false);
        size_t len = strlen(d), bad = 0;
        for (size_t cut = 0; cut < len; cut++) {
                struct source_ctx ctx = { .adapter = A, .path = "/h/.gemini/tmp/x/chats/session-1.json" };
                struct parse_state copy = ps;
                size_t known = 0;
                char saved = d[cut];
                d[cut] = 0;
                int r = A->parse_document(&ctx, &copy, d, cut, &known, &b);
                d[cut] = saved;
                if (r != PARSE_INCOMPLETE || b.n != 0 || memcmp(&copy, &ps, sizeof(ps)) != 0)
                        bad++;
                row_batch_clear(&b);
        }
        ok(bad == 0, "all %zu torn prefixes of a version: incomplete, no row, the state untouched (%zu not)", len, bad);
        before = ps;
        is_int(parse_doc(&ps, d, &b), PARSE_OK, "the finished write");
        ok(b.n == 1 && strcmp(b.rows[0].session, "bbbb0002-2222-4222-8222-000000000002") == 0 &&
                   strcmp(b.rows[0].model, "gemini-2.5-pro") == 0,
           "... its one new call, with the session and model");
        row_batch_clear(&b);
        free(d);

        /* an earlier message edited: the bytes differ, all of it is read again */
        ps = before;
        d = doc_build(N + 1, N + 2, 777, false);
        is_int(parse_doc(&ps, d, &b), PARSE_OK, "message 3 edited");
        struct row_key k3;
        key_of_id("g-0003", &k3);
        const struct usage_row *r3 = find_key(&b, &k3, 0);
        ok(b.n == (size_t)(N + 1) / 2 && r3 && r3->output == 777 + 0, "read again whole: %zu rows, the edit seen", b.n);
        row_batch_clear(&b);
        free(d);

        /* a fresh state (a new checkpoint): everything */
        struct parse_state fresh = { 0 };
        d = doc_build(N, N, 0, false);
        parse_doc(&fresh, d, &b);
        is_int((int)b.n, N / 2, "a fresh state reads all of it");
        row_batch_clear(&b);
        free(d);

        /* member order: sessionId after the messages */
        struct parse_state other = { 0 };
        d = doc_build(6, 1, 0, true);
        is_int(parse_doc(&other, d, &b), PARSE_OK, "sessionId written last");
        ok(b.n == 3 && strcmp(b.rows[2].session, "bbbb0002-2222-4222-8222-000000000002") == 0,
           "... the rows still get it");
        row_batch_clear(&b);
        free(d);

        static const struct { const char *doc; int want; const char *what; } shapes[] = {
                { "", PARSE_INCOMPLETE, "empty (truncated for the next write)" },
                { "  \n", PARSE_INCOMPLETE, "blank" },
                { "[1, 2]", PARSE_NOT_SOURCE, "an array" },
                { "{\"hello\": \"world\"}", PARSE_NOT_SOURCE, "an object that is no session" },
                { "{\"sessionId\": \"s\", \"messages\": []}", PARSE_OK, "a session without messages" },
                { "{\"messages\": [{\"id\": \"g\", \"type\": \"gemini\", \"tokens\": {\"input\": 5}}]}", PARSE_MALFORMED,
                  "messages without a session id" },
                { "{\"sessionId\": \"s\", \"messages\": [1, \"x\", null, {}]}", PARSE_OK, "odd elements" },
                { "{\"sessionId\": \"s\"} trailing", PARSE_INCOMPLETE, "bytes after the object" },
        };
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                struct parse_state s0 = { 0 };
                is_int(parse_doc(&s0, shapes[i].doc, &b), shapes[i].want, shapes[i].what);
                ok(b.n == 0, "%s: no row", shapes[i].what);
                row_batch_clear(&b);
        }
        row_batch_free(&b);
}

/* ---- realgen ------------------------------------------------------------------- */

static const char *samples(void)
{
        const char *s = getenv("AM_SAMPLES");
        static char buf[PATH_MAX];
        if (s && *s)
                return s;
        xsnprintf(buf, sizeof(buf), "%s/../shared/samples", am_srcdir());
        return buf;
}

/* Every source under dir (a ~/.gemini/tmp), rows into b. */
static void walk(const char *root, const char *rel, int depth, struct row_batch *b, struct totals *t)
{
        char path[PATH_MAX], sub[PATH_MAX];
        DIR *d;
        struct dirent *e;

        xsnprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
        if (!(d = opendir(path)))
                return;
        while ((e = readdir(d))) {
                struct stat st;
                if (e->d_name[0] == '.')
                        continue;
                xsnprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
                pj(path, root, sub);
                if (stat(path, &st) < 0)
                        continue;
                int cls = A->classify(sub, e->d_name, depth + 1, S_ISDIR(st.st_mode));
                if (cls == CLASS_DESCEND)
                        walk(root, sub, depth + 1, b, t);
                else if (cls == CLASS_LINES) {
                        size_t n0 = b->n;
                        lines_into(path, b, false);
                        struct row_batch part = { .rows = b->rows + n0, .n = b->n - n0 };
                        add_rows(t, &part);
                        t->files++;
                } else if (cls == CLASS_DOCUMENT) {
                        ingest_doc(t, path, b);
                }
        }
        closedir(d);
}

static void test_realgen(void)
{
        char tmpdir[PATH_MAX], truth[PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 };

        xsnprintf(tmpdir, sizeof(tmpdir), "%s/realgen/gemini-cli-0.61.0/gemini-home/tmp", samples());
        xsnprintf(truth, sizeof(truth), "%s/realgen/gemini-cli-0.61.0/truth-calls.jsonl", samples());
        if (access(tmpdir, R_OK) != 0) {
                tap_ok(1, "# SKIP %s not present", tmpdir);
                return;
        }
        walk(tmpdir, "", 0, &b, &t);
        is_int(t.files, 5, "realgen: 5 session files");
        is_int(t.rows, 15, "realgen: 15 calls");
        is_int(t.input, 489871, "realgen: input 489,871");
        is_int(t.output, 2195, "realgen: output 2,195");
        is_int(t.reasoning, 33, "realgen: of it thoughts 33");
        is_int(t.cache_read, 1290752, "realgen: cache read 1,290,752");
        is_int(t.cache_write, 0, "realgen: no cache write");
        is_int(t.total, 1782818, "realgen: total 1,782,818");

        /* call by call against the server's log: each on-disk call's message
         * id is one row with the server's usage */
        FILE *f = fopen(truth, "re");
        char *line = NULL;
        size_t cap = 0, calls = 0, good = 0;
        while (f && getline(&line, &cap, f) > 0) {
                json_object *o = json_tokener_parse(line), *ids, *u;
                if (o && json_object_object_get_ex(o, "disk_ids", &ids) && json_object_array_length(ids) == 1 &&
                    json_object_object_get_ex(o, "usage", &u)) {
                        struct row_key k;
                        key_of_id(json_object_get_string(json_object_array_get_idx(ids, 0)), &k);
                        const struct usage_row *r = find_key(&b, &k, 0);
                        calls++;
                        json_object *m;
                        json_object_object_get_ex(o, "model", &m);
                        good += r && r->input == (uint64_t)jint(u, "input", -1) &&
                                r->output == (uint64_t)jint(u, "output", -1) &&
                                r->cache_read == (uint64_t)jint(u, "cache_read", -1) &&
                                r->reasoning == (uint64_t)jint(u, "reasoning", -1) &&
                                strcmp(r->model, json_object_get_string(m)) == 0;
                }
                json_object_put(o);
        }
        free(line);
        if (f)
                fclose(f);
        is_int(calls, 15, "realgen truth: 15 calls on disk");
        is_int(good, 15, "realgen truth: each one's id is a row with the server's usage and model");
        size_t pro = 0, flash = 0, preview = 0;
        struct totals seen = { 0 };
        for (size_t i = 0; i < b.n; i++) {
                if (totals_has_key(&seen, &b.rows[i].key))
                        continue;
                struct row_batch one = { .rows = &b.rows[i], .n = 1 };
                add_rows(&seen, &one);
                pro += strcmp(b.rows[i].model, "gemini-2.5-pro") == 0;
                flash += strcmp(b.rows[i].model, "gemini-2.5-flash") == 0;
                preview += strcmp(b.rows[i].model, "gemini-3.1-pro-preview") == 0;
        }
        ok(pro == 12 && flash == 2 && preview == 1, "realgen: gemini-2.5-pro 12, gemini-2.5-flash 2, "
                                                      "gemini-3.1-pro-preview 1 (%zu/%zu/%zu)", pro, flash, preview);
        free(seen.keys);
        free(t.keys);
        row_batch_free(&b);
}

int main(void)
{
        test_discovery();
        test_classify();
        test_fixtures();
        test_lines();
        test_document();
        test_realgen();
        return tap_done();
}
