/* Unit tests of the Codex adapter: discovery and classification, each
 * token_count rule and the token_usage_record path on the fixtures, a
 * checkpoint after every line (a crash between a record and its
 * token_count), rate limits, and the real rollouts in ../shared/samples. */
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
#include "codex/record.h"
#include "lines.h"
#include "ratelimits.h"
#include "registry.h"
#include "row.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static const struct adapter *A = &adapter_codex;

/* ---- discovery and classification ------------------------------------------- */

static void test_discovery(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], p[PATH_MAX], state[PATH_MAX];
        struct root_list l = { 0 };
        struct fenv f = { 0 };
        struct discover_env env;
        const struct root *r;

        pj(home, tmp, "home");
        mkdir_p(home);
        fenv_set(&f, "HOME", home);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: default");
        r = find_root(&l, pj(p, home, ".codex"));
        ok(r && r->reason == ROOT_DEFAULT && r->max_depth == 4, "~/.codex listed even before it exists");
        is_int(l.n, 1, "nothing else without OpenClaw");
        root_list_free(&l);

        /* CODEX_HOME moves it; the default stays listed when it exists */
        mkdir_p(pj(p, home, ".codex"));
        fenv_set(&f, "CODEX_HOME", "~/alt-codex");
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: CODEX_HOME");
        r = find_root(&l, pj(p, home, "alt-codex"));
        ok(r && r->reason == ROOT_ENV && strcmp(r->env_var, "CODEX_HOME") == 0, "CODEX_HOME (~ expanded)");
        ok(find_root(&l, pj(p, home, ".codex")) != NULL, "existing default kept beside it");
        root_list_free(&l);

        /* OpenClaw agents' embedded homes, default state dir and OPENCLAW_STATE_DIR */
        mkdir_p(pj(p, home, ".openclaw/agents/main/agent/codex-home"));
        mkdir_p(pj(p, home, ".openclaw/agents/ops/agent"));
        pj(state, tmp, "ocstate");
        mkdir_p(pj(p, state, "agents/dev/agent/codex-home"));
        fenv_set(&f, "OPENCLAW_STATE_DIR", state);
        env = fenv_env(&f);
        is_int(A->discover(&env, &l), 0, "discover: openclaw homes");
        r = find_root(&l, pj(p, home, ".openclaw/agents/main/agent/codex-home"));
        ok(r && strcmp(r->label, "openclaw agent main") == 0 && r->reason == ROOT_PROFILE,
           "an OpenClaw agent's codex-home is its own labelled root");
        r = find_root(&l, pj(p, state, "agents/dev/agent/codex-home"));
        ok(r && strcmp(r->label, "openclaw agent dev") == 0, "... also under OPENCLAW_STATE_DIR");
        ok(!find_root(&l, pj(p, home, ".openclaw/agents/ops/agent/codex-home")),
           "an agent without a codex-home adds none");
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
                { "sessions", true, CLASS_DESCEND },
                { "archived_sessions", true, CLASS_DESCEND },
                { "sessions/2026", true, CLASS_DESCEND },
                { "sessions/2026/11/30", true, CLASS_DESCEND },
                { "log", true, CLASS_IGNORE },
                { "skills", true, CLASS_IGNORE },
                { "sessions/.tmp", true, CLASS_IGNORE },
                { "sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl", false, CLASS_LINES },
                { "sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl.zst", false, CLASS_LINES },
                { "sessions/2026/11/30/rollout-compress-1234.tmp", false, CLASS_IGNORE },
                { "sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl.zst.tmp", false, CLASS_IGNORE },
                { "archived_sessions/rollout-2026-11-30T10-00-00-abc.jsonl", false, CLASS_LINES },
                { "archived_sessions/rollout-2026-11-30T10-00-00-abc.jsonl.zst", false, CLASS_LINES },
                { "history.jsonl", false, CLASS_IGNORE },
                { "session_index.jsonl", false, CLASS_IGNORE },
                { "state_5.sqlite", false, CLASS_IGNORE },
                { "sessions/2026/11/30/notes.jsonl", false, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *name = strrchr(c[i].rel, '/');
                int depth = 1;
                for (const char *q = c[i].rel; *q; q++)
                        depth += *q == '/';
                is_int(A->classify(c[i].rel, name ? name + 1 : c[i].rel, depth, c[i].dir), c[i].want,
                       c[i].rel);
        }
}

/* ---- fixtures ------------------------------------------------------------------ */

static void test_fixtures(void)
{
        char path[PATH_MAX], dir[PATH_MAX];
        json_object *exp, *cases;

        pj(dir, am_srcdir(), "fixtures/codex");
        exp = json_object_from_file(pj(path, dir, "expected.json"));
        ok(exp && json_object_object_get_ex(exp, "cases", &cases), "expected.json read");
        if (!exp)
                return;
        json_object_object_foreach(cases, name, c) {
                struct totals t = { 0 };
                json_object *files;
                json_object_object_get_ex(c, "files", &files);
                for (size_t i = 0; i < json_object_array_length(files); i++) {
                        const char *f = json_object_get_string(json_object_array_get_idx(files, i));
                        char p2[PATH_MAX];
                        xsnprintf(p2, sizeof(p2), "%s/%s", dir, f);
                        ok(ingest_file(&t, A, p2) == 0, "%s: %s read", name, f);
                }
                totals_check(&t, c, name, true);
                free(t.keys);
        }
        json_object_put(exp);
}

/* Every row of a file, one parse state, optionally saved and restored
 * through its checkpoint encoding after every line (as a restart would). */
static int parse_file(const char *path, bool reencode, struct row_batch *b, struct rate_limits *ret_rl)
{
        struct source_ctx ctx = { .adapter = A, .path = path };
        struct parse_state ps = { 0 };
        size_t len = 0, pos = 0, n;
        const char *line, *s;
        char *data = slurp(path, &len);
        bool nl;
        int r = 0;

        if (!data)
                return -errno;
        while (r >= 0 && next_line(data, len, &pos, &line, &n, &nl)) {
                n = lines_trim(line, n, &s);
                if (n)
                        r = A->parse_line(&ctx, &ps, s, n, b);
                if (reencode) {
                        uint8_t buf[PS_ENCODED_MAX];
                        size_t k;
                        struct parse_state back;
                        if (parse_state_encode(&ps, buf, sizeof(buf), &k) < 0 ||
                            parse_state_decode(buf, k, &back) < 0)
                                r = -EBADMSG;
                        ps = back;
                }
        }
        if (ret_rl && b->limits)
                *ret_rl = *b->limits;
        free(data);
        return r < 0 ? r : 0;
}

static void test_rows(void)
{
        char path[PATH_MAX];
        struct row_batch a = { 0 }, b = { 0 };
        struct rate_limits rl = { 0 };

        pj(path, am_srcdir(),
           "fixtures/codex/home/sessions/2026/11/30/rollout-2026-11-30T10-00-00-0000000a-0000-7000-8000-00000000rule.jsonl");
        is_int(parse_file(path, false, &a, &rl), 0, "rules file parsed");
        is_int(a.n, 4, "rules: four rows");
        if (a.n == 4) {
                is_str(a.rows[0].model, "gpt-5.4", "model from turn_context");
                is_str(a.rows[0].tier, "priority", "service_tier kept for pricing");
                is_str(a.rows[3].model, "gpt-5.4-mini", "model change carried");
                is_str(a.rows[3].tier, "", "a turn without a tier is standard");
                is_str(a.rows[0].provider, "openai", "provider openai");
                is_str(a.rows[0].tool, "codex", "tool codex");
                is_str(a.rows[0].session, "s-rules", "session = session_meta id");
                is_str(a.rows[0].project, "/home/u/proj", "project = cwd");
                is_int(a.rows[0].kind, ROW_KIND_RESPONSE, "kind response");
                is_int(a.rows[0].cost_source, COST_NONE, "unpriced until the price engine");
                is_int(a.rows[0].n_calls, 1, "the call before the usage rides on it");
                is_str(a.rows[0].calls[0].name, "shell", "call name");
                is_int(a.rows[2].input, 300, "reset: counted from its last usage");
                ok(a.rows[0].time_ms > 0 && !(a.rows[0].flags & ROW_F_TIME_APPROX), "line time");
        }
        ok(rl.primary.present && rl.primary.used_centi == 1000 && rl.primary.window_minutes == 300 &&
                   rl.primary.resets_at_s == 1800000000 && rl.secondary.used_centi == 500 &&
                   strcmp(rl.plan_type, "plus") == 0 && strcmp(rl.limit_id, "codex") == 0,
           "rate limits: primary and secondary windows, plan");

        /* a checkpoint after every line gives the same rows and keys */
        is_int(parse_file(path, true, &b, NULL), 0, "rules file parsed with a restart per line");
        is_int(b.n, a.n, "same number of rows");
        for (size_t i = 0; i < a.n && i < b.n; i++)
                ok(memcmp(&a.rows[i].key, &b.rows[i].key, sizeof(a.rows[i].key)) == 0 &&
                           a.rows[i].input == b.rows[i].input && strcmp(a.rows[i].model, b.rows[i].model) == 0 &&
                           strcmp(a.rows[i].tier, b.rows[i].tier) == 0 && a.rows[i].n_calls == b.rows[i].n_calls,
                   "row %zu the same after restarts", i);
        row_batch_free(&a);
        row_batch_free(&b);

        /* the record path: restarts between each record and its token_count */
        pj(path, am_srcdir(),
           "fixtures/codex/home/sessions/2026/11/30/rollout-2026-11-30T13-00-00-0000000d-0000-7000-8000-00000000both.jsonl");
        is_int(parse_file(path, true, &a, NULL), 0, "both file parsed with a restart per line");
        is_int(a.n, 4, "both: a token_count after its record never adds a row");
        if (a.n == 4) {
                is_int(a.rows[0].input, 3936, "uncached input = input - cached - cache write");
                is_int(a.rows[0].cache_write, 64, "cache write");
                is_int(a.rows[0].reasoning, 20, "reasoning (part of output)");
                ok(a.rows[3].input == 500 && a.rows[3].output == 20, "a call with only a token_count counts");
        }
        row_batch_free(&a);
}

static void test_edges(void)
{
        struct source_ctx ctx = { .adapter = A, .path = "/x/sessions/rollout-a.jsonl" };
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        static const char meta[] = "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}";
        static const char big[] =
                "{\"timestamp\":\"2026-11-30T10:00:00Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
                "\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":5000000000000000000,"
                "\"output_tokens\":-5},\"last_token_usage\":{\"input_tokens\":4e18,\"output_tokens\":3}}}}";

        is_int(A->parse_line(&ctx, &ps, "[1,2]", 5, &b), PARSE_NOT_SOURCE, "a non-object first line");
        ps = (struct parse_state){ 0 };
        is_int(A->parse_line(&ctx, &ps, "{\"type\":\"event_msg\",\"payload\":{}}", 33, &b), PARSE_NOT_SOURCE,
               "a first line that is no session_meta");
        is_int(A->parse_line(&ctx, &ps, meta, strlen(meta), &b), PARSE_NOT_SOURCE, "... and stays so");
        ps = (struct parse_state){ 0 };
        is_int(A->parse_line(&ctx, &ps, meta, strlen(meta), &b), PARSE_OK, "session_meta");
        is_int(A->parse_line(&ctx, &ps, big, strlen(big), &b), PARSE_OK, "absurd numbers parse");
        ok(b.n == 1 && b.rows[0].input == (1ull << 50) && b.rows[0].output == 3, "numbers bounded, negatives 0");
        is_int(A->parse_line(&ctx, &ps, "{\"type\":\"token_count\"", 21, &b), PARSE_MALFORMED, "torn line");

        /* a writer that puts the record after its token_count: still one row */
        static const char tc2[] =
                "{\"timestamp\":\"2026-11-30T10:00:01Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
                "\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":10,\"output_tokens\":2},"
                "\"last_token_usage\":{\"input_tokens\":10,\"output_tokens\":2}}}}";
        static const char rec2[] =
                "{\"timestamp\":\"2026-11-30T10:00:02Z\",\"type\":\"token_usage_record\",\"payload\":{"
                "\"response_id\":\"resp_late\",\"usage\":{\"input_tokens\":10,\"output_tokens\":2},"
                "\"thread_token_usage\":{\"input_tokens\":10,\"output_tokens\":2}}}";
        ps = (struct parse_state){ 0 };
        row_batch_clear(&b);
        A->parse_line(&ctx, &ps, meta, strlen(meta), &b);
        A->parse_line(&ctx, &ps, tc2, strlen(tc2), &b);
        A->parse_line(&ctx, &ps, rec2, strlen(rec2), &b);
        is_int(b.n, 1, "a record after its token_count adds no second row");
        is_int(A->parse_line(&ctx, &ps, "{\"type\":\"turn_context\"} {}", 27, &b), PARSE_MALFORMED,
               "two objects on a line");
        row_batch_free(&b);
}

/* ---- the real rollouts in ../shared/samples ------------------------------------- */

struct sum {
        uint64_t input, cached, output, reasoning, n;
};

static void sum_rows(const struct row_batch *b, struct sum *s)
{
        for (size_t i = 0; i < b->n; i++) {
                s->input += b->rows[i].input + b->rows[i].cache_read + b->rows[i].cache_write;
                s->cached += b->rows[i].cache_read;
                s->output += b->rows[i].output;
                s->reasoning += b->rows[i].reasoning;
                s->n++;
        }
}

/* The final total_token_usage of a file, as Codex counts it. */
static void final_total(const char *path, struct sum *s)
{
        size_t len = 0, pos = 0, n;
        const char *line;
        char *data = slurp(path, &len);
        bool nl;

        *s = (struct sum){ 0 };
        while (data && next_line(data, len, &pos, &line, &n, &nl)) {
                char *copy = strndup(line, n);
                json_object *o = json_tokener_parse(copy), *p, *info, *tot;
                if (o && json_object_object_get_ex(o, "payload", &p) &&
                    json_object_object_get_ex(p, "info", &info) && info &&
                    json_object_object_get_ex(info, "total_token_usage", &tot)) {
                        s->input = (uint64_t)jint(tot, "input_tokens", 0);
                        s->cached = (uint64_t)jint(tot, "cached_input_tokens", 0);
                        s->output = (uint64_t)jint(tot, "output_tokens", 0);
                        s->reasoning = (uint64_t)jint(tot, "reasoning_output_tokens", 0);
                }
                json_object_put(o);
                free(copy);
        }
        free(data);
}

static void test_old_samples(void)
{
        char dir[PATH_MAX], path[PATH_MAX];
        const char *samples = getenv("AM_SAMPLES");
        DIR *d;
        struct dirent *de;
        int files = 0;

        if (samples && *samples)
                xsnprintf(dir, sizeof(dir), "%s/codex", samples);
        else
                pj(dir, am_srcdir(), "../shared/samples/codex");
        d = opendir(dir);
        if (!d) {
                tap_ok(1, "# SKIP ../shared/samples/codex not present");
                return;
        }
        while ((de = readdir(d))) {
                struct row_batch b = { 0 };
                struct sum got = { 0 }, want;
                if (!strstr(de->d_name, ".jsonl"))
                        continue;
                pj(path, dir, de->d_name);
                ok(parse_file(path, false, &b, NULL) == 0, "%s parsed", de->d_name);
                sum_rows(&b, &got);
                final_total(path, &want);
                ok(got.input == want.input && got.cached == want.cached && got.output == want.output &&
                           got.reasoning == want.reasoning && want.input > 0,
                   "%s: the rows add up to the final total_token_usage (%llu in, %llu out, %llu rows)",
                   de->d_name, (unsigned long long)got.input, (unsigned long long)got.output,
                   (unsigned long long)got.n);
                row_batch_free(&b);
                files++;
        }
        closedir(d);
        ok(files >= 2, "read %d sample rollouts", files);
}

/* The realgen rollouts: the record path and the token_count path (the same
 * files without their token_usage_record lines) give the same calls. */
static void test_realgen(void)
{
        char dir[PATH_MAX], path[PATH_MAX], tmpf[PATH_MAX];
        const char *samples = getenv("AM_SAMPLES");
        char *tmp = tap_tmpdir();
        struct sum rec = { 0 }, tc = { 0 };
        DIR *d;
        struct dirent *de;

        if (samples && *samples)
                xsnprintf(dir, sizeof(dir), "%s/realgen/codex-0.169.0/codex-home/sessions/2026/12/01", samples);
        else
                pj(dir, am_srcdir(), "../shared/samples/realgen/codex-0.169.0/codex-home/sessions/2026/12/01");
        d = opendir(dir);
        if (!d) {
                tap_ok(1, "# SKIP realgen codex samples not present");
                return;
        }
        while ((de = readdir(d))) {
                struct row_batch a = { 0 }, b = { 0 };
                size_t len = 0, pos = 0, n;
                const char *line;
                bool nl;
                char *data;
                FILE *f;

                if (!strstr(de->d_name, ".jsonl"))
                        continue;
                pj(path, dir, de->d_name);
                ok(parse_file(path, false, &a, NULL) == 0, "%s parsed", de->d_name);
                sum_rows(&a, &rec);
                data = slurp(path, &len);
                pj(tmpf, tmp, de->d_name);
                f = fopen(tmpf, "we");
                while (data && f && next_line(data, len, &pos, &line, &n, &nl))
                        if (!memmem(line, n, "\"type\":\"token_usage_record\"", 27))
                                fprintf(f, "%.*s\n", (int)n, line);
                if (f)
                        fclose(f);
                free(data);
                ok(parse_file(tmpf, false, &b, NULL) == 0, "%s without records parsed", de->d_name);
                sum_rows(&b, &tc);
                row_batch_free(&a);
                row_batch_free(&b);
        }
        closedir(d);
        is_int(rec.n, 14, "realgen: 14 calls from token_usage_record");
        is_int(rec.input, 228455, "realgen: Codex input tokens (cached and cache-write included)");
        is_int(rec.output, 430, "realgen: output");
        is_int(rec.reasoning, 33, "realgen: reasoning");
        ok(tc.n == rec.n && tc.input == rec.input && tc.output == rec.output && tc.cached == rec.cached,
           "the token_count rule alone finds the same calls");
}

int main(void)
{
        test_discovery();
        test_classify();
        test_fixtures();
        test_rows();
        test_edges();
        test_old_samples();
        test_realgen();
        return tap_done();
}
