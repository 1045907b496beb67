/* Unit tests of the GitHub Copilot CLI adapter: discovery and
 * classification, each fixture rule (a sub-agent call, a resumed session
 * with two shutdowns, torn lines, a fork's copy) against expected.json,
 * the content key, a checkpoint after every line, number bounds, the
 * premium-request sum, and the event logs Copilot CLI 1.0.102 wrote itself
 * (../shared/samples/realgen, skipped when absent) against the test
 * server's own log. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "copilot/copilot.h"
#include "copilot/record.h"
#include "lines.h"
#include "registry.h"
#include "row-bounds.h"
#include "row.h"

extern const struct adapter adapter_copilot;
#pragma GCC diagnostic ignored "-Wformat-truncation"

static const struct adapter *A = &adapter_copilot;

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
        r = find_root(&l, pj(p, home, ".copilot"));
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 2, "~/.copilot listed before it exists, depth 2");
        is_int(l.n, 1, "one root");
        root_list_free(&l);

        fenv_set(&f, "COPILOT_HOME", "~/alt-copilot");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: COPILOT_HOME");
        r = find_root(&l, pj(p, home, "alt-copilot"));
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "COPILOT_HOME") == 0, "COPILOT_HOME (~ expanded)");
        is_int(l.n, 1, "the default is not listed while it does not exist");
        root_list_free(&l);

        mkdir_p(pj(p, home, ".copilot"));
        is_int(A->discover(&env, &l), 0, "discover: COPILOT_HOME with an existing default");
        ok(find_root(&l, pj(p, home, ".copilot")) != NULL, "existing default kept beside it");
        for (size_t i = 0; i < f.n_asked; i++)
                ok(registry_env_known(f.asked[i]), "asked only for registered %s", f.asked[i]);
        root_list_free(&l);
}

static void test_classify(void)
{
        static const struct {
                const char *rel;
                int depth;
                bool dir;
                int want;
        } c[] = {
                { "", 0, true, CLASS_DESCEND },
                { "session-state", 1, true, CLASS_DESCEND },
                { "history-session-state", 1, true, CLASS_DESCEND },
                { "logs", 1, true, CLASS_IGNORE },
                { "session-state/aaaa", 2, true, CLASS_DESCEND },
                { "session-state/.session-operation-locks", 2, true, CLASS_IGNORE },
                { "session-state/aaaa/checkpoints", 3, true, CLASS_IGNORE },
                { "session-state/aaaa/events.jsonl", 3, false, CLASS_LINES },
                { "session-state/aaaa/workspace.yaml", 3, false, CLASS_IGNORE },
                { "session-state/events.jsonl", 2, false, CLASS_IGNORE },
                { "session-store.db", 1, false, CLASS_IGNORE },
                { "session-store.db-wal", 1, false, CLASS_IGNORE },
                { "config.json", 1, false, CLASS_IGNORE },
                { "history-session-state/session_1.json", 2, false, CLASS_DOCUMENT },
                { "history-session-state/.tmp.json", 2, false, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *name = strrchr(c[i].rel, '/') ? strrchr(c[i].rel, '/') + 1 : c[i].rel;
                int got = A->classify(c[i].rel, name, c[i].depth, c[i].dir);
                ok(got == c[i].want, "classify %s: %d", *c[i].rel ? c[i].rel : "(root)", got);
        }
        ok(copilot_is_legacy("/h/.copilot/history-session-state/x.json"), "legacy path told apart");
        ok(!copilot_is_legacy("/h/.copilot/session-state/a/events.jsonl"), "an event log is not legacy");
}

/* ---- the fixtures ------------------------------------------------------------------ */

/* Every line of path through parse_line with one state, as the tail does
 * (an unterminated last line only when complete JSON), into b; the state
 * goes through its checkpoint encoding after every line when roundtrip. */
static int read_file_rows(const char *path, struct row_batch *b, struct parse_state *ps, bool roundtrip,
                          unsigned *ret_malformed)
{
        struct source_ctx ctx = { .adapter = A, .path = path, .source_hash = hash64(path, strlen(path)) };
        size_t len, pos = 0, n;
        const char *line, *s;
        char *data = slurp(path, &len);
        unsigned bad = 0;
        bool nl;
        int r = 0;

        if (!data)
                return -errno;
        while (next_line(data, len, &pos, &line, &n, &nl)) {
                n = lines_trim(line, n, &s);
                if (n == 0 || (!nl && !lines_is_complete_json(s, n)))
                        continue;
                r = A->parse_line(&ctx, ps, s, n, b);
                if (r < 0 || r == PARSE_NOT_SOURCE)
                        break;
                bad += r == PARSE_MALFORMED;
                if (roundtrip) {
                        uint8_t enc[PS_ENCODED_MAX];
                        size_t el;
                        if (parse_state_encode(ps, enc, sizeof(enc), &el) != 0 ||
                            parse_state_decode(enc, el, ps) != 0)
                                return -EBADMSG;
                }
        }
        free(data);
        *ret_malformed = bad;
        return r < 0 ? r : 0;
}

static void test_cases(void)
{
        char path[PATH_MAX], fx[PATH_MAX];
        struct json_object *exp, *cases;

        pj(fx, am_srcdir(), "fixtures/copilot");
        exp = json_object_from_file(pj(path, fx, "expected.json"));
        ok(exp && json_object_object_get_ex(exp, "cases", &cases), "expected.json read");
        if (!exp)
                return;
        json_object_object_foreach(cases, name, c) {
                struct totals t = { 0 }, rt = { 0 };
                struct json_object *files;
                uint64_t premium = 0, billed = 0;
                bool have_premium = json_object_object_get_ex(c, "premium_milli", NULL);
                char pre[64];

                json_object_object_get_ex(c, "files", &files);
                for (size_t i = 0; i < json_object_array_length(files); i++) {
                        struct row_batch b = { 0 }, b2 = { 0 };
                        struct parse_state ps = { 0 }, ps2 = { 0 };
                        unsigned bad = 0, bad2 = 0;
                        struct copilot_premium pm;

                        pj(path, fx, json_object_get_string(json_object_array_get_idx(files, i)));
                        ingest_file(&t, A, path);
                        /* again with a checkpoint after every line: the same rows */
                        read_file_rows(path, &b, &ps, false, &bad);
                        read_file_rows(path, &b2, &ps2, true, &bad2);
                        add_rows(&rt, &b2);
                        if (copilot_premium(&ps, &pm) == 0) {
                                premium += pm.premium_milli;
                                billed += pm.github_billed;
                        }
                        row_batch_free(&b);
                        row_batch_free(&b2);
                }
                snprintf(pre, sizeof(pre), "%s", name);
                totals_check(&t, c, pre, true);
                snprintf(pre, sizeof(pre), "%s, checkpoint after every line", name);
                totals_check(&rt, c, pre, false);
                /* sidechain rows, counted once per key */
                {
                        struct totals sc = { 0 };
                        for (size_t i = 0; i < json_object_array_length(files); i++) {
                                struct row_batch b = { 0 };
                                struct parse_state ps = { 0 };
                                unsigned bad;
                                pj(path, fx, json_object_get_string(json_object_array_get_idx(files, i)));
                                read_file_rows(path, &b, &ps, false, &bad);
                                for (size_t k = 0; k < b.n;) {
                                        if (!(b.rows[k].flags & ROW_F_SIDECHAIN)) {
                                                b.rows[k] = b.rows[--b.n];
                                                continue;
                                        }
                                        k++;
                                }
                                add_rows(&sc, &b);
                                row_batch_free(&b);
                        }
                        ok((int64_t)sc.rows == jint(c, "sidechain", 0), "%s: sub-agent rows %llu", name,
                           (unsigned long long)sc.rows);
                        free(sc.keys);
                }
                if (have_premium)
                        ok((int64_t)billed == jint(c, "github_billed", 0), "%s: records GitHub billed: %llu", name,
                           (unsigned long long)billed);
                if (have_premium)
                        ok((int64_t)premium == jint(c, "premium_milli", 0), "%s: premium requests x 1000: %llu", name,
                           (unsigned long long)premium);
                free(t.keys);
                free(rt.keys);
        }
        json_object_put(exp);
}

/* ---- rows of single lines ------------------------------------------------------------ */

static const char *HDR = "{\"type\":\"session.start\",\"data\":{\"sessionId\":\"s-1\",\"selectedModel\":\"gpt-4.1\","
                         "\"context\":{\"cwd\":\"/w\"}},\"id\":\"e0\",\"timestamp\":\"2026-11-30T10:00:00.000Z\"}";

static int one(const char *line, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = A, .path = "/h/.copilot/session-state/dir-id/events.jsonl" };
        struct parse_state ps = { 0 };
        int r = A->parse_line(&ctx, &ps, HDR, strlen(HDR), b);

        if (r != PARSE_OK)
                return -1000 - r;
        return A->parse_line(&ctx, &ps, line, strlen(line), b);
}

/* A usage record of gpt-4.1 (call_id NULL: without apiCallId). */
static char *rec(char *buf, size_t cap, const char *call_id, long in, long out, long cr, long cw)
{
        char id[128] = "";

        if (call_id)
                snprintf(id, sizeof(id), ",\"apiCallId\":\"%s\"", call_id);
        snprintf(buf, cap,
                 "{\"type\":\"session.usage_record\",\"data\":{\"usage\":{\"model\":\"gpt-4.1\",\"inputTokens\":%ld,"
                 "\"outputTokens\":%ld,\"cacheReadTokens\":%ld,\"cacheWriteTokens\":%ld%s}},\"id\":\"ev-1\","
                 "\"timestamp\":\"2026-11-30T10:00:01.000Z\"}",
                 in, out, cr, cw, id);
        return buf;
}

static void test_rows(void)
{
        struct row_batch b = { 0 };
        struct row_key k1, k2;
        char l[1024];

        is_int(one(rec(l, sizeof(l), "c-1", 1000, 10, 600, 100), &b), PARSE_OK, "a record");
        ok(b.n == 1 && b.rows[0].input == 300 && b.rows[0].cache_read == 600 && b.rows[0].cache_write == 100 &&
                   b.rows[0].output == 10 && b.rows[0].total == 1010,
           "input uncached = 1000 - 600 - 100, total = inputTokens + outputTokens");
        ok(b.n == 1 && strcmp(b.rows[0].tool, "copilot") == 0 && strcmp(b.rows[0].session, "s-1") == 0 &&
                   strcmp(b.rows[0].project, "/w") == 0 && b.rows[0].cost_source == COST_NONE &&
                   b.rows[0].time_ms == 1796032801000LL,
           "tool, session, project, time; no vendor cost");
        k1 = b.rows[0].key;
        row_batch_clear(&b);
        one(rec(l, sizeof(l), "c-1", 1000, 10, 600, 100), &b);
        ok(b.n == 1 && memcmp(&b.rows[0].key, &k1, sizeof(k1)) == 0, "the same record read again: the same key");
        row_batch_clear(&b);
        one(rec(l, sizeof(l), "c-2", 1000, 10, 600, 100), &b);
        k2 = b.rows[0].key;
        ok(memcmp(&k1, &k2, sizeof(k1)) != 0, "another apiCallId with the same numbers: another key");
        row_batch_clear(&b);
        one(rec(l, sizeof(l), "c-1", 1000, 11, 600, 100), &b);
        ok(b.n == 1 && memcmp(&b.rows[0].key, &k1, sizeof(k1)) != 0,
           "the same apiCallId with other numbers (a server that repeats ids): another key");
        row_batch_clear(&b);

        /* without apiCallId: keyed by the event id */
        is_int(one(rec(l, sizeof(l), NULL, 500, 5, 0, 0), &b), PARSE_OK, "a record without apiCallId");
        ok(b.n == 1 && b.rows[0].input == 500, "... still counted (keyed by its event id)");
        row_batch_clear(&b);

        /* bounded: cache read over the input; negative and NaN-like numbers */
        one(rec(l, sizeof(l), "c-3", 100, 5, 500, 0), &b);
        ok(b.n == 1 && b.rows[0].input == 0 && b.rows[0].cache_read == 500, "uncached input bounded at 0");
        row_batch_clear(&b);
        one(rec(l, sizeof(l), "c-4", -100, 5, 0, 0), &b);
        ok(b.n == 1 && row_check_bounds(&b.rows[0]) == ROW_BAD_TOKENS, "negative tokens: the row is refused");
        row_batch_clear(&b);
        one(rec(l, sizeof(l), "c-5", 0, 0, 0, 0), &b);
        is_int(b.n, 0, "an all-zero record: nothing to meter");
        row_batch_clear(&b);

        /* reasoning, provider, tools, sub-agent */
        snprintf(l, sizeof(l),
                 "{\"type\":\"session.usage_record\",\"data\":{\"usage\":{\"model\":\"claude-sonnet-4.5\",\"inputTokens\":"
                 "200,\"outputTokens\":50,\"cacheReadTokens\":0,\"cacheWriteTokens\":0,\"reasoningTokens\":80,\"cost\":"
                 "0.33,\"apiCallId\":\"m-1\",\"providerType\":\"anthropic\",\"toolCounts\":{\"bash\":2,\"view\":1}}},"
                 "\"agentId\":\"sub\",\"id\":\"e\",\"timestamp\":\"2026-11-30T10:00:01Z\"}");
        one(l, &b);
        ok(b.n == 1 && b.rows[0].reasoning == 50, "reasoning is bounded by output");
        ok(b.n == 1 && strcmp(b.rows[0].provider, "anthropic") == 0 && strcmp(b.rows[0].model, "claude-sonnet-4-5") == 0 &&
                   strcmp(b.rows[0].model_alias, "claude-sonnet-4.5") == 0,
           "provider; the model's canonical id, Copilot's name as its alias");
        ok(b.n == 1 && (b.rows[0].flags & ROW_F_SIDECHAIN), "agentId: a sub-agent call");
        ok(b.n == 1 && b.rows[0].n_calls == 3 && strcmp(b.rows[0].calls[0].name, "bash") == 0 &&
                   strcmp(b.rows[0].calls[1].name, "bash") == 0 && strcmp(b.rows[0].calls[2].name, "view") == 0 &&
                   b.rows[0].calls[0].id[0] == 0,
           "toolCounts: bash twice and view, no ids");
        row_batch_clear(&b);

        /* events that count nothing */
        is_int(one("{\"type\":\"session.shutdown\",\"data\":{\"modelMetrics\":{\"gpt-4.1\":{\"usage\":{\"inputTokens\":"
                   "9}}}},\"id\":\"x\"}", &b), PARSE_OK, "a shutdown");
        is_int(one("{\"type\":\"subagent.completed\",\"data\":{\"totalTokens\":999},\"agentId\":\"a\",\"id\":\"x\"}",
                   &b), PARSE_OK, "a subagent.completed");
        is_int(b.n, 0, "... neither makes a row");
        is_int(one("{\"type\":\"session.usage_record\",\"data\":{\"usage\":{\"model\":", &b), PARSE_MALFORMED,
               "a torn record: malformed");
        is_int(b.n, 0, "... and no row");
        row_batch_free(&b);
}

static void test_header(void)
{
        struct source_ctx ctx = { .adapter = A, .path = "/h/.copilot/session-state/the-dir-id/events.jsonl" };
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        char l[1024];

        is_int(A->parse_line(&ctx, &ps, "not json", 8, &b), PARSE_NOT_SOURCE, "a first line that is no event");
        is_int(A->parse_line(&ctx, &ps, rec(l, sizeof(l), "c", 5, 5, 0, 0), strlen(l), &b), PARSE_NOT_SOURCE,
               "... the file stays not ours");
        memset(&ps, 0, sizeof(ps));
        is_int(A->parse_line(&ctx, &ps, rec(l, sizeof(l), "c", 5, 5, 0, 0), strlen(l), &b), PARSE_OK,
               "a file that starts with a record (no session.start)");
        ok(b.n == 1 && strcmp(b.rows[0].session, "the-dir-id") == 0, "... its session is the directory's name");
        row_batch_free(&b);
}

/* ---- realgen: the event logs Copilot CLI 1.0.102 wrote ------------------------------ */

static void test_realgen(const char *samples)
{
        char root[PATH_MAX], path[PATH_MAX];
        struct totals t = { 0 };
        struct row_batch all = { 0 };
        struct dirent *de;
        DIR *d;
        size_t n_gpt41 = 0, n_claude = 0, n_mini = 0, n_side = 0, agree = 0, truth_n = 0;
        FILE *f;

        snprintf(root, sizeof(root), "%s/realgen/copilot-cli-1.0.102/copilot-home/session-state", samples);
        d = opendir(root);
        if (!d) {
                ok(1, "# SKIP no realgen copilot samples");
                return;
        }
        while ((de = readdir(d))) {
                struct parse_state ps = { 0 };
                unsigned bad = 0;
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s/events.jsonl", root, de->d_name);
                if (access(path, R_OK) != 0)
                        continue;
                ingest_file(&t, A, path);
                read_file_rows(path, &all, &ps, true, &bad);
        }
        closedir(d);
        /* FACTS.md and the issue: 14 calls, input 96,833 (uncached), output
         * 557 (55 reasoning), cache read 72,896, cache write 320 */
        is_int(t.rows, 14, "realgen: 14 calls");
        is_int(t.input, 96833, "realgen: input 96,833 uncached");
        is_int(t.output, 557, "realgen: output 557");
        is_int(t.reasoning, 55, "realgen: reasoning 55");
        is_int(t.cache_read, 72896, "realgen: cache read 72,896");
        is_int(t.cache_write, 320, "realgen: cache write 320");
        is_int(t.malformed + t.not_source, 0, "realgen: nothing malformed, every file a source");
        for (size_t i = 0; i < all.n; i++) {
                n_gpt41 += strcmp(all.rows[i].model, "gpt-4.1") == 0;
                n_claude += strcmp(all.rows[i].model, "claude-sonnet-4-5") == 0;
                n_mini += strcmp(all.rows[i].model, "gpt-5-mini") == 0;
                n_side += (all.rows[i].flags & ROW_F_SIDECHAIN) != 0;
        }
        ok(n_gpt41 == 9 && n_claude == 3 && n_mini == 2, "realgen: gpt-4.1 9, claude-sonnet-4-5 3, gpt-5-mini 2");
        is_int(n_side, 2, "realgen: the two sub-agent calls are flagged");

        /* every answered call of the server's log, call by call */
        snprintf(path, sizeof(path), "%s/realgen/copilot-cli-1.0.102/truth-calls.jsonl", samples);
        f = fopen(path, "re");
        if (f) {
                char *line = NULL;
                size_t cap = 0;
                while (getline(&line, &cap, f) > 0) {
                        struct json_object *o = json_tokener_parse(line), *u, *v;
                        const char *rid;
                        if (!o || jint(o, "status", 0) != 200 || !json_object_object_get_ex(o, "usage", &u) ||
                            !json_object_object_get_ex(o, "response_id", &v)) {
                                json_object_put(o);
                                continue;
                        }
                        rid = json_object_get_string(v);
                        truth_n++;
                        for (size_t i = 0; i < all.n; i++) {
                                const struct usage_row *r = &all.rows[i];
                                if ((uint64_t)jint(u, "uncached", -1) == r->input &&
                                    (uint64_t)jint(u, "cached", -1) == r->cache_read &&
                                    (uint64_t)jint(u, "cache_write", -1) == r->cache_write &&
                                    (uint64_t)jint(u, "output", -1) == r->output &&
                                    (uint64_t)jint(u, "reasoning", -1) == r->reasoning && rid) {
                                        agree++;
                                        break;
                                }
                        }
                        json_object_put(o);
                }
                free(line);
                fclose(f);
                is_int(truth_n, 14, "realgen: the server answered 14 calls");
                is_int(agree, truth_n, "realgen: each answered call has a row with its exact numbers");
        }
        row_batch_free(&all);
        free(t.keys);
}

int main(void)
{
        const char *samples = getenv("AM_SAMPLES");
        char def[PATH_MAX];

        if (!samples || !*samples) {
                snprintf(def, sizeof(def), "%s/../shared/samples", am_srcdir());
                samples = def;
        }
        test_discovery();
        test_classify();
        test_cases();
        test_rows();
        test_header();
        test_realgen(samples);
        return tap_done();
}
