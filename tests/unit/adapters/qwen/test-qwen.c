/* Unit tests of the Qwen Code adapter: discovery ($QWEN_HOME,
 * $QWEN_RUNTIME_DIR, settings.json advanced.runtimeOutputDir) and
 * classification, every fixture case (fixtures/qwen/expected.json), the
 * key rules (an assistant record and its api_response row are one call in
 * either order, a telemetry-only call is one of its own, a fork copy makes
 * the same keys, a checkpoint after every line changes nothing), and the
 * realgen 0.24.4 corpus against its truth, call by call. */
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

extern const struct adapter adapter_qwen;
static const struct adapter *A = &adapter_qwen;

/* ---- helpers ------------------------------------------------------------------- */

static void roundtrip(struct parse_state *ps)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        struct parse_state back;

        if (parse_state_encode(ps, enc, sizeof(enc), &len) != 0 || parse_state_decode(enc, len, &back) != 0)
                exit(99);
        *ps = back;
}

/* The lines of a file as the tail reads them (an unterminated last line
 * only when it is complete JSON), counting malformed lines and a first
 * line that says it is no source; every row kept in b. */
static void ingest_lines(struct totals *t, const char *path, struct row_batch *b, bool restart)
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
                r = A->parse_line(&ctx, &ps, s, n, b);
                t->malformed += r == PARSE_MALFORMED;
                if (r == PARSE_NOT_SOURCE) {
                        t->not_source++;
                        break;
                }
                if (restart)
                        roundtrip(&ps);
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

static size_t distinct_keys(const struct row_batch *b)
{
        struct totals t = { 0 };
        upsert_totals(b, &t);
        return t.rows;
}

/* ---- discovery and classification ------------------------------------------- */

static void test_discovery(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
        struct root_list l = { 0 };
        struct fenv f = { 0 }, g = { 0 };
        struct discover_env env;
        const struct root *r;

        pj(home, tmp, "home");
        mkdir_p(home);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: default");
        r = find_root(&l, pj(p, home, ".qwen/projects"));
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 2 && l.n == 1,
           "~/.qwen/projects listed before it exists, 2 levels, alone");
        root_list_free(&l);

        /* settings.json advanced.runtimeOutputDir moves the chats */
        xsnprintf(q, sizeof(q), "%s/.qwen/settings.json", home);
        write_file(q, "{\"advanced\": {\"runtimeOutputDir\": \"~/qrt\"}, \"model\": {\"name\": \"x\"}}");
        is_int(A->discover(&env, &l), 0, "discover: runtimeOutputDir");
        r = find_root(&l, pj(p, home, "qrt/projects"));
        ok(r && r->reason == ROOT_CONFIG && strcmp(r->detail, q) == 0, "runtimeOutputDir/projects (from settings.json)");
        ok(find_root(&l, pj(p, home, ".qwen/projects")) && l.n == 2, "... and the home's own projects/");
        root_list_free(&l);
        write_file(q, "{\"advanced\": {\"runtimeOutputDir\": \".qwen-rt\"}}");
        A->discover(&env, &l);
        is_int(l.n, 1, "a relative runtimeOutputDir (one per project) names no root");
        root_list_free(&l);
        write_file(q, "{ // comments: not JSON\n}");
        is_int(A->discover(&env, &l), 0, "a settings.json that is not JSON is no error");
        is_int(l.n, 1, "... and moves nothing");
        root_list_free(&l);

        /* QWEN_RUNTIME_DIR wins over the setting; QWEN_HOME moves the home */
        fenv_set(&g, "HOME", home);
        fenv_set(&g, "QWEN_HOME", "~/qh");
        fenv_set(&g, "QWEN_RUNTIME_DIR", "/srv/qwen-rt");
        env = fenv_env(&g);
        is_int(A->discover(&env, &l), 0, "discover: QWEN_HOME and QWEN_RUNTIME_DIR");
        r = find_root(&l, "/srv/qwen-rt/projects");
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "QWEN_RUNTIME_DIR") == 0, "QWEN_RUNTIME_DIR/projects");
        r = find_root(&l, pj(p, home, "qh/projects"));
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "QWEN_HOME") == 0, "QWEN_HOME/projects (~ expanded)");
        is_int(l.n, 2, "two roots");
        for (size_t i = 0; i < g.n_asked; i++)
                ok(registry_env_known(g.asked[i]), "asked only for registered %s", g.asked[i]);
        root_list_free(&l);
}

static void test_classify(void)
{
        static const struct {
                const char *rel;
                bool dir;
                int want;
        } c[] = {
                { "-work-alpha", true, CLASS_DESCEND },
                { "-work-alpha/chats", true, CLASS_DESCEND },
                { "-work-alpha/memory", true, CLASS_IGNORE },
                { "-work-alpha/chats/sub", true, CLASS_IGNORE },
                { "-work-alpha/chats/cccc0003-3333-4333-8333-000000000003.jsonl", false, CLASS_LINES },
                { "-work-alpha/chats/x.json", false, CLASS_IGNORE },
                { "-work-alpha/meta.json", false, CLASS_IGNORE },
                { "-work-alpha/extract-cursor.json", false, CLASS_IGNORE },
                { "-work-alpha/x.jsonl", false, CLASS_IGNORE },
                { "usage_record.jsonl", false, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *name = strrchr(c[i].rel, '/');
                int depth = 1;
                for (const char *q = c[i].rel; *q; q++)
                        depth += *q == '/';
                is_int(A->classify(c[i].rel, name ? name + 1 : c[i].rel, depth, c[i].dir), c[i].want, c[i].rel);
        }
}

/* ---- fixtures and key rules ------------------------------------------------------- */

static void test_fixtures(void)
{
        char path[PATH_MAX], dir[PATH_MAX];
        json_object *exp, *cases;

        pj(dir, am_srcdir(), "fixtures/qwen");
        exp = json_object_from_file(pj(path, dir, "expected.json"));
        ok(exp && json_object_object_get_ex(exp, "cases", &cases), "expected.json has cases");
        if (!exp)
                return;
        json_object_object_foreach(cases, name, c) {
                struct totals t = { 0 };
                struct row_batch keep = { 0 };
                json_object *files;
                if (!json_object_object_get_ex(c, "files", &files))
                        continue;
                for (size_t i = 0; i < json_object_array_length(files); i++) {
                        pj(path, dir, json_object_get_string(json_object_array_get_idx(files, i)));
                        ingest_lines(&t, path, &keep, false);
                }
                upsert_totals(&keep, &t);
                totals_check(&t, c, name, true);
                row_batch_free(&keep);
        }
        json_object_put(exp);
}

static void test_keys(void)
{
        char s1[PATH_MAX], fork[PATH_MAX];
        struct totals t = { 0 };
        struct row_batch a = { 0 }, b = { 0 }, r = { 0 };

        pj(s1, am_srcdir(), "fixtures/qwen/home/projects/-work-alpha/chats/cccc0003-3333-4333-8333-000000000003.jsonl");
        pj(fork, am_srcdir(), "fixtures/qwen/home/projects/-work-alpha/chats/dddd0004-4444-4444-8444-000000000004.jsonl");
        ingest_lines(&t, s1, &a, false);
        /* rows in file order: A(tel) A(asst) B(tel) B(asst) M C(asst) C(tel) D M2 */
        ok(a.n == 9, "9 usage records in the session file (%zu)", a.n);
        ok(a.n == 9 && memcmp(&a.rows[0].key, &a.rows[1].key, ROW_KEY_SIZE) == 0 && a.rows[1].n_calls == 1 &&
                   a.rows[0].n_calls == 0,
           "an api_response row and the assistant record after it: one key, the tool call from the assistant");
        ok(a.n == 9 && memcmp(&a.rows[5].key, &a.rows[6].key, ROW_KEY_SIZE) == 0,
           "the other order (assistant first): one key too");
        ok(a.n == 9 && memcmp(&a.rows[4].key, &a.rows[3].key, ROW_KEY_SIZE) != 0 &&
                   memcmp(&a.rows[4].key, &a.rows[5].key, ROW_KEY_SIZE) != 0,
           "the memory-extraction call (telemetry only) is a call of its own");
        ok(a.n == 9 && (a.rows[4].flags & ROW_F_SIDECHAIN) && !(a.rows[0].flags & ROW_F_SIDECHAIN) &&
                   !(a.rows[1].flags & ROW_F_SIDECHAIN),
           "... a side agent's (subagent_name): a sidechain call; the main agent's are not");
        ok(a.n == 9 && (a.rows[0].flags & ROW_F_UPSERT) && (a.rows[1].flags & ROW_F_UPSERT) &&
                   strcmp(a.rows[0].tool, "qwen") == 0 && strcmp(a.rows[0].project, "/work/alpha") == 0 &&
                   strcmp(a.rows[0].session, "cccc0003-3333-4333-8333-000000000003") == 0 &&
                   a.rows[4].input == 11000 - 8256 && a.rows[4].cache_read == 8256,
           "upserted rows with harness, project (cwd) and session; input without the cached tokens");
        is_int(distinct_keys(&a), 6, "6 calls");
        ingest_lines(&t, fork, &b, false);
        bool same = b.n == a.n + 2;
        for (size_t i = 0; same && i < a.n; i++)
                same = memcmp(&a.rows[i].key, &b.rows[i].key, ROW_KEY_SIZE) == 0;
        ok(same, "the fork's copies make the parent's keys, in the same order");
        ok(b.n == a.n + 2 && strcmp(b.rows[0].session, "dddd0004-4444-4444-8444-000000000004") == 0,
           "... (their records name the fork's session)");
        /* a checkpoint after every line */
        ingest_lines(&t, s1, &r, true);
        same = r.n == a.n;
        for (size_t i = 0; same && i < a.n; i++)
                same = memcmp(&a.rows[i].key, &r.rows[i].key, ROW_KEY_SIZE) == 0;
        ok(same, "a checkpoint after every line: the same keys (the unpaired records are in the state)");
        row_batch_free(&a);
        row_batch_free(&b);
        row_batch_free(&r);

        /* two calls with the same counts, one after the other: two rows */
        struct source_ctx ctx = { .adapter = A, .path = "/q/projects/-w/chats/s.jsonl" };
        struct parse_state ps = { 0 };
        static const char *const recs[] = {
                "{\"uuid\":\"u1\",\"sessionId\":\"s\",\"type\":\"user\",\"cwd\":\"/w\"}",
                "{\"uuid\":\"t1\",\"sessionId\":\"s\",\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":"
                "{\"event.name\":\"qwen-code.api_response\",\"model\":\"qwen3-max\",\"input_token_count\":100,"
                "\"output_token_count\":5,\"cached_content_token_count\":0,\"thoughts_token_count\":0,\"total_token_count\":105}}}",
                "{\"uuid\":\"a1\",\"sessionId\":\"s\",\"type\":\"assistant\",\"model\":\"qwen3-max\",\"usageMetadata\":"
                "{\"promptTokenCount\":100,\"candidatesTokenCount\":5,\"totalTokenCount\":105}}",
                "{\"uuid\":\"t2\",\"sessionId\":\"s\",\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":"
                "{\"event.name\":\"qwen-code.api_response\",\"model\":\"qwen3-max\",\"input_token_count\":100,"
                "\"output_token_count\":5,\"cached_content_token_count\":0,\"thoughts_token_count\":0,\"total_token_count\":105}}}",
                "{\"uuid\":\"a2\",\"sessionId\":\"s\",\"type\":\"assistant\",\"model\":\"qwen3-max\",\"usageMetadata\":"
                "{\"promptTokenCount\":100,\"candidatesTokenCount\":5,\"totalTokenCount\":105}}",
                "{\"uuid\":\"t3\",\"sessionId\":\"s\",\"type\":\"system\",\"subtype\":\"ui_telemetry\",\"systemPayload\":{\"uiEvent\":"
                "{\"event.name\":\"qwen-code.api_error\",\"model\":\"qwen3-max\",\"response_id\":\"\"}}}",
        };
        for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
                is_int(A->parse_line(&ctx, &ps, recs[i], strlen(recs[i]), &r), PARSE_OK, recs[i] + 9);
        is_int(distinct_keys(&r), 2, "two identical calls in a row: two calls (each pair once)");
        row_batch_free(&r);
        static const char notours[] = "{\"hello\":1}";
        struct parse_state ps2 = { 0 };
        is_int(A->parse_line(&ctx, &ps2, notours, strlen(notours), &r), PARSE_NOT_SOURCE,
               "a first record without uuid, sessionId and type: not a Qwen chat");
        row_batch_free(&r);
        free(t.keys);
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

struct call_tuple {
        char model[64];
        uint64_t input, output, cache_read, reasoning;
};

static int tuple_cmp(const void *x, const void *y)
{
        const struct call_tuple *a = x, *b = y;
        int c = strcmp(a->model, b->model);
        if (c)
                return c;
#define CMPF(f) if (a->f != b->f) return a->f < b->f ? -1 : 1
        CMPF(input);
        CMPF(output);
        CMPF(cache_read);
        CMPF(reasoning);
#undef CMPF
        return 0;
}

static void test_realgen(void)
{
        char projects[PATH_MAX], truth[PATH_MAX], path[PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 }, sums = { 0 };
        DIR *d;
        struct dirent *e;

        xsnprintf(projects, sizeof(projects), "%s/realgen/qwen-code-0.24.4/qwen-home/projects", samples());
        xsnprintf(truth, sizeof(truth), "%s/realgen/qwen-code-0.24.4/truth-calls.jsonl", samples());
        if (!(d = opendir(projects))) {
                tap_ok(1, "# SKIP %s not present", projects);
                return;
        }
        while ((e = readdir(d))) {
                char chats[PATH_MAX];
                DIR *c;
                struct dirent *f;
                if (e->d_name[0] == '.')
                        continue;
                xsnprintf(chats, sizeof(chats), "%s/%s/chats", projects, e->d_name);
                if (!(c = opendir(chats)))
                        continue;
                while ((f = readdir(c)))
                        if (f->d_name[0] != '.' && A->classify("p/chats/x", f->d_name, 3, false) == CLASS_LINES)
                                ingest_lines(&t, pj(path, chats, f->d_name), &b, false);
                closedir(c);
        }
        closedir(d);
        upsert_totals(&b, &sums);
        is_int(t.files, 5, "realgen: 5 chat files (one a fork)");
        is_int(t.malformed, 0, "realgen: nothing malformed");
        is_int(sums.rows, 20, "realgen: 20 calls (14 with assistant records, 6 in telemetry only)");
        is_int(sums.input, 543007, "realgen: input 543,007");
        is_int(sums.output, 2388, "realgen: output 2,388");
        is_int(sums.reasoning, 44, "realgen: reasoning 44");
        is_int(sums.cache_read, 1397696, "realgen: cache read 1,397,696");
        is_int(sums.total, 1943091, "realgen: total 1,943,091");
        is_int(sums.calls, 4, "realgen: 4 tool calls");

        /* call by call: the multiset of (model, tokens) of the distinct rows
         * is the server's log of the calls on disk */
        struct call_tuple mine[64] = { 0 }, theirs[64] = { 0 };
        size_t nm = 0, nt = 0;
        for (size_t i = 0; i < b.n && nm < 64; i++) {
                bool first = true;
                for (size_t j = 0; j < i && first; j++)
                        first = memcmp(&b.rows[j].key, &b.rows[i].key, ROW_KEY_SIZE) != 0;
                if (!first)
                        continue;
                snprintf(mine[nm].model, sizeof(mine[nm].model), "%s", b.rows[i].model);
                mine[nm].input = b.rows[i].input;
                mine[nm].output = b.rows[i].output;
                mine[nm].cache_read = b.rows[i].cache_read;
                mine[nm].reasoning = b.rows[i].reasoning;
                nm++;
        }
        FILE *f = fopen(truth, "re");
        char *line = NULL;
        size_t cap = 0;
        while (f && getline(&line, &cap, f) > 0 && nt < 64) {
                json_object *o = json_tokener_parse(line), *on, *u, *m;
                if (o && json_object_object_get_ex(o, "on_disk", &on) && json_object_get_boolean(on) &&
                    json_object_object_get_ex(o, "usage", &u) && json_object_object_get_ex(o, "model", &m)) {
                        snprintf(theirs[nt].model, sizeof(theirs[nt].model), "%s", json_object_get_string(m));
                        theirs[nt].input = (uint64_t)jint(u, "input", -1);
                        theirs[nt].output = (uint64_t)jint(u, "output", -1);
                        theirs[nt].cache_read = (uint64_t)jint(u, "cache_read", -1);
                        theirs[nt].reasoning = (uint64_t)jint(u, "reasoning", -1);
                        nt++;
                }
                json_object_put(o);
        }
        free(line);
        if (f)
                fclose(f);
        qsort(mine, nm, sizeof(mine[0]), tuple_cmp);
        qsort(theirs, nt, sizeof(theirs[0]), tuple_cmp);
        ok(nm == nt && nt == 20 && memcmp(mine, theirs, nm * sizeof(mine[0])) == 0,
           "realgen truth: the 20 rows are the server's 20 calls on disk, model and tokens each");
        size_t plus = 0, max = 0;
        for (size_t i = 0; i < nm; i++) {
                plus += strcmp(mine[i].model, "qwen3-coder-plus") == 0;
                max += strcmp(mine[i].model, "qwen3-max") == 0;
        }
        ok(plus == 14 && max == 6, "realgen: qwen3-coder-plus 14, qwen3-max 6");
        row_batch_free(&b);
}

int main(void)
{
        test_discovery();
        test_classify();
        test_fixtures();
        test_keys();
        test_realgen();
        return tap_done();
}
