/* Pi adapter: discovery under every variable combination, classification,
 * each parsing rule of formats.md, dedup keys, and the fixture totals in
 * fixtures/pi/expected.json (fixtures from $AM_SRCDIR, default "."). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "ledger/ledger.h"
#include "lines.h"
#include "pi/record.h"
#include "registry.h"
#include "row.h"
#include "tap.h"
#include "testutil.h"
#include "timefmt.h"

static const struct pi_flavor FL_PI = { .tool = "pi" };
static const struct pi_flavor FL_OC = { .tool = "openclaw", .skip_synthetic_openclaw = true,
                                        .model_snapshot = true };

static int discover(struct fenv *f, struct root_list *out)
{
        struct discover_env env = fenv_env(f);
        memset(out, 0, sizeof(*out));
        return adapter_pi.discover(&env, out);
}

static void test_discovery(void)
{
        struct root_list l;
        struct fenv f;
        char agent[PATH_MAX], settings[PATH_MAX + 32], want[PATH_MAX + 64];
        const char *tmp = tap_tmpdir();

        /* HOME only: the default */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        is_int(discover(&f, &l), 0, "discover: HOME only");
        is_int(l.n, 1, "one root");
        is_str(l.v[0].path, "/home/u/.pi/agent/sessions", "default root");
        is_int(l.v[0].reason, ROOT_DEFAULT, "reason default");
        is_str(root_reason_name(l.v[0].reason), "default", "reason name");
        is_int(l.v[0].max_depth, 1, "max_depth 1");
        ok(l.v[0].adapter == &adapter_pi, "root adapter is pi");
        is_str(l.v[0].env_var, "", "no env var");
        root_list_free(&l);

        /* PI_AGENT_DIR is not pi's: ignored, and not even readable */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_AGENT_DIR", "/elsewhere");
        struct discover_env env = { fenv_get, &f };
        setenv("PI_AGENT_DIR", "/elsewhere", 1);
        ok(discover_env_get(&registry_process_env, "PI_AGENT_DIR") == NULL,
           "the process environment refuses PI_AGENT_DIR (declared by no adapter)");
        unsetenv("PI_AGENT_DIR");
        discover(&f, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/home/u/.pi/agent/sessions") == 0,
           "PI_AGENT_DIR ignored");
        root_list_free(&l);

        /* PI_CODING_AGENT_DIR moves the agent dir */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", "/x/agent/");
        discover(&f, &l);
        is_int(l.n, 1, "agent dir env: one root");
        is_str(l.v[0].path, "/x/agent/sessions", "agent dir env root");
        is_int(l.v[0].reason, ROOT_ENV, "reason env");
        is_str(l.v[0].env_var, "PI_CODING_AGENT_DIR", "env var recorded");
        root_list_free(&l);

        /* ~ expansion */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", "~/pi-agent");
        discover(&f, &l);
        is_str(l.n ? l.v[0].path : "", "/home/u/pi-agent/sessions", "~ expanded in PI_CODING_AGENT_DIR");
        root_list_free(&l);

        /* empty = unset */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", "");
        fenv_set(&f, "PI_CODING_AGENT_SESSION_DIR", "");
        discover(&f, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/home/u/.pi/agent/sessions") == 0 &&
           l.v[0].reason == ROOT_DEFAULT, "empty variables count as unset");
        root_list_free(&l);

        /* PI_CODING_AGENT_SESSION_DIR: flat root, plus the default */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_SESSION_DIR", "~/flat/");
        discover(&f, &l);
        is_int(l.n, 2, "session dir env: two roots");
        is_str(l.v[0].path, "/home/u/flat", "session dir root (~ expanded, slash dropped)");
        is_int(l.v[0].reason, ROOT_ENV, "session dir reason env");
        is_str(l.v[0].env_var, "PI_CODING_AGENT_SESSION_DIR", "session dir env var");
        is_int(l.v[0].max_depth, 1, "session dir max_depth 1");
        is_str(l.n > 1 ? l.v[1].path : "", "/home/u/.pi/agent/sessions", "default still listed");
        is_int(l.n > 1 ? l.v[1].reason : -1, ROOT_DEFAULT, "default reason");
        root_list_free(&l);

        /* both variables */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", "/a");
        fenv_set(&f, "PI_CODING_AGENT_SESSION_DIR", "/s");
        discover(&f, &l);
        ok(l.n == 2 && strcmp(l.v[0].path, "/s") == 0 && strcmp(l.v[1].path, "/a/sessions") == 0 &&
           l.v[1].reason == ROOT_ENV, "both variables: session dir and moved agent dir");
        root_list_free(&l);

        /* settings.json sessionDir (reason config, detail = settings path) */
        snprintf(agent, sizeof(agent), "%s/agent", tmp);
        mkdir(agent, 0700);
        snprintf(settings, sizeof(settings), "%s/settings.json", agent);
        write_file(settings, "{\"theme\":\"dark\",\"sessionDir\":\"~/pi-sessions\"}\n");
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", agent);
        discover(&f, &l);
        is_int(l.n, 2, "settings sessionDir: two roots");
        is_str(l.v[0].path, "/home/u/pi-sessions", "sessionDir root, ~ expanded");
        is_int(l.v[0].reason, ROOT_CONFIG, "sessionDir reason config");
        is_str(l.v[0].detail, settings, "detail = settings path");
        snprintf(want, sizeof(want), "%s/sessions", agent);
        is_str(l.n > 1 ? l.v[1].path : "", want, "agent sessions still listed");
        root_list_free(&l);

        /* relative sessionDir: relative to the agent dir */
        write_file(settings, "{\"sessionDir\":\"mine/\"}");
        discover(&f, &l);
        snprintf(want, sizeof(want), "%s/mine", agent);
        is_str(l.n ? l.v[0].path : "", want, "relative sessionDir resolved against agent dir");
        root_list_free(&l);

        /* the env variable wins over settings (pi's precedence) */
        fenv_set(&f, "PI_CODING_AGENT_SESSION_DIR", "/s");
        discover(&f, &l);
        ok(l.n == 2 && strcmp(l.v[0].path, "/s") == 0 && l.v[1].reason == ROOT_ENV,
           "PI_CODING_AGENT_SESSION_DIR wins over sessionDir");
        root_list_free(&l);

        /* sessionDir naming the default: listed once */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "PI_CODING_AGENT_DIR", agent);
        snprintf(want, sizeof(want), "{\"sessionDir\":\"%s/sessions\"}", agent);
        write_file(settings, want);
        discover(&f, &l);
        is_int(l.n, 1, "sessionDir = default: one root");
        root_list_free(&l);

        /* broken settings: ignored */
        write_file(settings, "{\"sessionDir\": ");
        discover(&f, &l);
        ok(l.n == 1 && l.v[0].reason == ROOT_ENV, "malformed settings.json ignored");
        root_list_free(&l);
        write_file(settings, "{\"sessionDir\": 42}");
        discover(&f, &l);
        is_int(l.n, 1, "non-string sessionDir ignored");
        root_list_free(&l);
        unlink(settings);
        rmdir(agent);
        rmdir(tmp);

        /* nothing to go on */
        f = (struct fenv){ 0 };
        is_int(discover(&f, &l), 0, "no HOME: not an error");
        is_int(l.n, 0, "no HOME: no roots");
        root_list_free(&l);
        f = (struct fenv){ 0 };
        fenv_set(&f, "PI_CODING_AGENT_SESSION_DIR", "/only");
        discover(&f, &l);
        ok(l.n == 1 && strcmp(l.v[0].path, "/only") == 0, "no HOME: env root still listed");
        root_list_free(&l);

        /* the registry runs it */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        env = (struct discover_env){ fenv_get, &f };
        memset(&l, 0, sizeof(l));
        is_int(registry_discover(&env, &l), 0, "registry_discover");
        bool found = false;
        for (size_t i = 0; i < l.n; i++)
                if (l.v[i].adapter == &adapter_pi &&
                    strcmp(l.v[i].path, "/home/u/.pi/agent/sessions") == 0)
                        found = true;
        ok(found, "registry_discover lists pi's root");
        root_list_free(&l);
}

static void test_classify(void)
{
        ok(adapter_pi.classify("", "", 0, true) == CLASS_DESCEND, "root itself: descend");
        ok(adapter_pi.classify("--home-u-p--", "--home-u-p--", 1, true) == CLASS_DESCEND,
           "cwd dir: descend");
        ok(adapter_pi.classify("subagent-artifacts", "subagent-artifacts", 1, true) == CLASS_IGNORE,
           "subagent-artifacts at depth 1: ignore");
        ok(adapter_pi.classify("--p--/subagent-artifacts", "subagent-artifacts", 2, true) ==
                   CLASS_IGNORE, "dirs at depth 2: ignore");
        ok(adapter_pi.classify("a.jsonl", "a.jsonl", 1, false) == CLASS_LINES, "flat file: lines");
        ok(adapter_pi.classify("--p--/2026_x.jsonl", "2026_x.jsonl", 2, false) == CLASS_LINES,
           "file in cwd dir: lines");
        ok(adapter_pi.classify("--p--/s/x.jsonl", "x.jsonl", 3, false) == CLASS_IGNORE,
           "depth 3: ignore");
        ok(adapter_pi.classify("--p--/x.json", "x.json", 2, false) == CLASS_IGNORE, ".json: ignore");
        ok(adapter_pi.classify("--p--/x.jsonl.lock", "x.jsonl.lock", 2, false) == CLASS_IGNORE,
           ".jsonl.lock: ignore");
        ok(adapter_pi.classify("--p--/notes.txt", "notes.txt", 2, false) == CLASS_IGNORE,
           "other files: ignore");
        ok(adapter_pi.classify(".jsonl", ".jsonl", 1, false) == CLASS_IGNORE, "bare .jsonl: ignore");
}

static void test_adapter_struct(void)
{
        is_str(adapter_pi.id, "pi", "id");
        is_str(adapter_pi.display_name, "Pi", "display name");
        is_str(cap_tokens_name(adapter_pi.caps.tokens), "exact", "tokens exact");
        is_str(cap_cost_name(adapter_pi.caps.cost), "vendor-reported", "cost vendor-reported");
        is_str(cap_activity_name(adapter_pi.caps.activity), "exact", "activity exact");
        is_str(cap_reasoning_name(adapter_pi.caps.reasoning), "subset-of-output", "reasoning subset");
        ok(adapter_pi.env && adapter_pi.env[0] && adapter_pi.env[1] && !adapter_pi.env[2] &&
           strcmp(adapter_pi.env[0], "PI_CODING_AGENT_DIR") == 0 &&
           strcmp(adapter_pi.env[1], "PI_CODING_AGENT_SESSION_DIR") == 0,
           "env = PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR");
        ok(adapter_pi.parse_line && adapter_pi.classify && adapter_pi.discover &&
           !adapter_pi.collect_rows, "pi is a line adapter");
        ok(registry_find("pi") == &adapter_pi, "registry_find(pi)");
        ok(registry_find("nope") == NULL, "registry_find(unknown)");
        ok(!registry_env_known("PI_AGENT_DIR"), "PI_AGENT_DIR not in the registry");
}

/* ---- parsing helpers ---------------------------------------------------------- */

#define HDR3 "{\"type\":\"session\",\"version\":3,\"id\":\"s-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w/p\"}"

static int feed(const struct pi_flavor *fl, struct parse_state *ps, struct row_batch *b,
                const char *line)
{
        struct source_ctx ctx = { .adapter = &adapter_pi, .path = "/x/f.jsonl", .source_hash = 77 };
        return pi_parse_line(fl, &ctx, ps, line, strlen(line), b);
}

/* An assistant line with the given pieces. */
static char *asst(const char *prov, const char *model, long long ts, const char *rid,
                  const char *usage, const char *content)
{
        static char buf[8192];
        snprintf(buf, sizeof(buf),
                 "{\"type\":\"message\",\"id\":\"e1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:05.000Z\","
                 "\"message\":{\"role\":\"assistant\",\"content\":%s,\"provider\":\"%s\",\"model\":\"%s\","
                 "\"usage\":%s,\"stopReason\":\"stop\",\"timestamp\":%lld%s%s%s}}",
                 content ? content : "[]", prov, model, usage, ts, rid ? ",\"responseId\":\"" : "",
                 rid ? rid : "", rid ? "\"" : "");
        return buf;
}

#define U1 "{\"input\":10,\"output\":20,\"cacheRead\":30,\"cacheWrite\":40,\"totalTokens\":100,\"reasoning\":5,\"cost\":{\"total\":0.0123456}}"

static void test_header(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        is_int(feed(&FL_PI, &ps, &b, "   "), PARSE_OK, "blank line before header: ok");
        ok(!(ps.flags & PS_HEADER_SEEN), "blank line is not the header");
        is_int(feed(&FL_PI, &ps, &b, HDR3), PARSE_OK, "v3 header");
        ok(ps.flags & PS_HEADER_SEEN, "header seen");
        is_str(ps.session, "s-1", "session = header id");
        is_str(ps.project, "/w/p", "project = cwd");
        is_int(ps.version, 3, "version 3");

        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b,
                    "{\"type\":\"session\",\"id\":\"v1id\",\"timestamp\":\"2025-11-20T23:33:50.805Z\",\"cwd\":\"/u\","
                    "\"provider\":\"anthropic\",\"modelId\":\"claude-sonnet-4-5\",\"thinkingLevel\":\"off\"}"),
               PARSE_OK, "v1 header");
        is_int(ps.version, 1, "no version = v1");
        is_str(ps.provider, "anthropic", "v1 header provider carried");
        is_str(ps.model, "claude-sonnet-4-5", "v1 header modelId carried");
        int64_t ms;
        timefmt_parse_rfc3339("2025-11-20T23:33:50.805Z", 24, &ms);
        is_int(ps.last_time_ms, ms, "header time");
        /* a compaction right after: carried model from the v1 header */
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"compaction\",\"summary\":\"s\",\"usage\":{\"input\":1,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0}}");
        is_int(b.n, 1, "compaction without timestamp: a row");
        is_str(b.n ? b.rows[0].model : "", "claude-sonnet-4-5", "compaction model from v1 header");
        ok(b.n && (b.rows[0].flags & ROW_F_TIME_APPROX), "time from the last entry: approx");
        is_int(b.n ? b.rows[0].time_ms : 0, ms, "fallback time = last entry time");
        row_batch_clear(&b);

        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"user\",\"sessionId\":\"x\"}"), PARSE_NOT_SOURCE,
               "first line not a header: not a source");
        ok(ps.flags & PS_NOT_SOURCE, "PS_NOT_SOURCE set");
        is_int(feed(&FL_PI, &ps, &b, asst("a", "m", 1, NULL, U1, NULL)), PARSE_NOT_SOURCE,
               "later lines: not a source");
        is_int(b.n, 0, "nothing read from a non-source");

        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"session\",\"version\":3}"), PARSE_NOT_SOURCE,
               "header without id: not a source");
        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"session\",\"id\":42}"), PARSE_NOT_SOURCE,
               "header with numeric id: not a source");
        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b, "hello world"), PARSE_NOT_SOURCE, "garbage first line");
        ps = (struct parse_state){ 0 };
        is_int(feed(&FL_PI, &ps, &b, "[1,2]"), PARSE_NOT_SOURCE, "array first line");
        row_batch_free(&b);
}

static void test_assistant(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        struct usage_row *r;

        feed(&FL_PI, &ps, &b, HDR3);
        is_int(feed(&FL_PI, &ps, &b,
                    asst("openai", "gpt-5.1", 1767225605123LL, "resp_9", U1,
                         "[{\"type\":\"text\",\"text\":\"x\"},{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"read\",\"arguments\":{}},"
                         "{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"search\",\"namespace\":\"github\",\"arguments\":{}}]")),
               PARSE_OK, "assistant line");
        is_int(b.n, 1, "one row");
        r = &b.rows[0];
        is_int(r->kind, ROW_KIND_MESSAGE, "kind message");
        is_str(r->tool, "pi", "tool pi");
        is_str(r->session, "s-1", "session from header");
        is_str(r->project, "/w/p", "project from header cwd");
        is_str(r->provider, "openai", "provider");
        is_str(r->model, "gpt-5.1", "model");
        is_int(r->time_ms, 1767225605123LL, "time = message.timestamp");
        ok(!(r->flags & ROW_F_TIME_APPROX), "exact time");
        ok(r->flags & ROW_F_TOKENS_KNOWN, "tokens known");
        is_int(r->input, 10, "input");
        is_int(r->output, 20, "output");
        is_int(r->cache_read, 30, "cacheRead");
        is_int(r->cache_write, 40, "cacheWrite");
        is_int(r->total, 100, "total = totalTokens");
        is_int(r->reasoning, 5, "reasoning (subset, not added)");
        is_int(r->cost_source, COST_VENDOR, "vendor cost");
        is_int(r->cost_nano, 12345600, "cost kept in nano-USD");
        is_int(r->source_hash, 77, "source hash from ctx");
        is_int(r->n_calls, 2, "two tool calls");
        is_str(r->calls[0].name, "read", "call name");
        is_str(r->calls[0].id, "c1", "call id");
        is_str(r->calls[1].name, "github/search", "namespaced call name");
        is_str(ps.provider, "openai", "assistant updates carried provider");
        is_str(ps.model, "gpt-5.1", "assistant updates carried model");
        row_batch_clear(&b);

        /* no totalTokens: computed; reasoningTokens (OpenClaw's name) */
        feed(&FL_PI, &ps, &b,
             asst("a", "m", 2, NULL,
                  "{\"input\":1,\"output\":2,\"cacheRead\":3,\"cacheWrite\":4,\"reasoningTokens\":2,\"cost\":{\"total\":0}}",
                  NULL));
        is_int(b.n, 1, "row without totalTokens");
        is_int(b.n ? b.rows[0].total : 0, 10, "total computed");
        is_int(b.n ? b.rows[0].reasoning : 0, 2, "reasoningTokens");
        is_int(b.n ? b.rows[0].cost_source : 9, COST_NONE, "cost.total 0: unpriced");
        is_int(b.n ? b.rows[0].cost_nano : 9, 0, "unpriced cost 0");
        row_batch_clear(&b);
        feed(&FL_PI, &ps, &b, asst("a", "m", 3, NULL, "{\"input\":1,\"output\":2}", NULL));
        is_int(b.n ? b.rows[0].cost_source : 9, COST_NONE, "no cost object: unpriced");
        row_batch_clear(&b);

        /* all-zero usage: skipped, but the model still becomes current */
        is_int(feed(&FL_PI, &ps, &b,
                    asst("google", "gemini", 4, NULL,
                         "{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{\"total\":0}}",
                         NULL)),
               PARSE_OK, "zero-usage line ok");
        is_int(b.n, 0, "zero usage: no row");
        is_str(ps.model, "gemini", "zero-usage assistant still sets the model");

        /* no message.timestamp: entry ISO */
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"message\",\"timestamp\":\"2026-01-01T00:00:07.250Z\",\"message\":{\"role\":\"assistant\","
             "\"content\":[],\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":5,\"output\":5}}}");
        int64_t iso;
        timefmt_parse_rfc3339("2026-01-01T00:00:07.250Z", 24, &iso);
        is_int(b.n ? b.rows[0].time_ms : 0, iso, "time from entry ISO when message has none");
        row_batch_clear(&b);

        /* more tool calls than ROW_CALLS_MAX: capped */
        {
                static char content[ROW_CALLS_MAX * 80 + 200], line[sizeof(content) + 1024];
                size_t n = 0;
                n += (size_t)snprintf(content + n, sizeof(content) - n, "[");
                for (int i = 0; i < ROW_CALLS_MAX + 6; i++)
                        n += (size_t)snprintf(content + n, sizeof(content) - n,
                                              "%s{\"type\":\"toolCall\",\"id\":\"t%d\",\"name\":\"bash\",\"arguments\":{}}",
                                              i ? "," : "", i);
                snprintf(content + n, sizeof(content) - n, "]");
                snprintf(line, sizeof(line), "%s", asst("a", "m", 5, NULL, U1, content));
                feed(&FL_PI, &ps, &b, line);
                is_int(b.n ? b.rows[0].n_calls : 0, ROW_CALLS_MAX, "n_calls capped at ROW_CALLS_MAX");
                row_batch_clear(&b);
        }

        /* deep nesting in tool arguments does not lose the row */
        {
                char deep[4096], line[8192];
                size_t n = 0;
                n += (size_t)snprintf(deep + n, sizeof(deep) - n, "[{\"type\":\"toolCall\",\"id\":\"d\",\"name\":\"x\",\"arguments\":");
                for (int i = 0; i < 100; i++)
                        deep[n++] = '[';
                for (int i = 0; i < 100; i++)
                        deep[n++] = ']';
                snprintf(deep + n, sizeof(deep) - n, "}]");
                snprintf(line, sizeof(line), "%s", asst("a", "m", 6, NULL, U1, deep));
                is_int(feed(&FL_PI, &ps, &b, line), PARSE_OK, "nesting depth 100 parses");
                is_int(b.n, 1, "deeply nested line still gives its row");
                row_batch_clear(&b);
        }
        row_batch_free(&b);
}

static void test_other_usage(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        feed(&FL_PI, &ps, &b, HDR3);
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"model_change\",\"id\":\"m1\",\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"provider\":\"anthropic\",\"modelId\":\"claude-opus-4-5\"}");
        is_str(ps.model, "claude-opus-4-5", "model_change sets the model");
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"compaction\",\"id\":\"c\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"summary\":\"x\","
             "\"usage\":{\"input\":100,\"output\":10,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":110,\"cost\":{\"total\":0.001}}}");
        is_int(b.n, 1, "compaction usage: a row");
        is_int(b.rows[0].kind, ROW_KIND_COMPACTION, "kind compaction");
        is_str(b.rows[0].provider, "anthropic", "compaction provider carried");
        is_str(b.rows[0].model, "claude-opus-4-5", "compaction model carried");
        int64_t t2;
        timefmt_parse_rfc3339("2026-01-01T00:00:02.000Z", 24, &t2);
        is_int(b.rows[0].time_ms, t2, "compaction time = entry ISO");
        row_batch_clear(&b);

        feed(&FL_PI, &ps, &b,
             "{\"type\":\"branch_summary\",\"id\":\"bs\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"fromId\":\"root\",\"summary\":\"x\","
             "\"usage\":{\"input\":7,\"output\":3,\"cacheRead\":0,\"cacheWrite\":0,\"cost\":{\"total\":0.0001}}}");
        ok(b.n == 1 && b.rows[0].kind == ROW_KIND_BRANCH_SUMMARY && b.rows[0].total == 10,
           "branch_summary usage: a row");
        row_batch_clear(&b);

        feed(&FL_PI, &ps, &b,
             "{\"type\":\"message\",\"id\":\"tr\",\"timestamp\":\"2026-01-01T00:00:04.000Z\",\"message\":{\"role\":\"toolResult\","
             "\"toolCallId\":\"c\",\"toolName\":\"subagent\",\"content\":[],\"isError\":false,\"timestamp\":1767225604500,"
             "\"usage\":{\"input\":50,\"output\":5,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":55,\"cost\":{\"total\":0.0005}}}}");
        ok(b.n == 1 && b.rows[0].kind == ROW_KIND_TOOL_RESULT, "toolResult.usage: a row");
        is_str(b.n ? b.rows[0].model : "", "claude-opus-4-5", "toolResult row: carried model");
        is_int(b.n ? b.rows[0].time_ms : 0, 1767225604500LL, "toolResult time = message.timestamp");
        row_batch_clear(&b);
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"message\",\"id\":\"tr2\",\"timestamp\":\"2026-01-01T00:00:04.000Z\",\"message\":{\"role\":\"toolResult\","
             "\"toolCallId\":\"c\",\"toolName\":\"read\",\"content\":[{\"type\":\"text\",\"text\":\"usage\"}],\"isError\":false}}");
        is_int(b.n, 0, "toolResult without usage: nothing");

        feed(&FL_PI, &ps, &b,
             "{\"type\":\"usage\",\"id\":\"u\",\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"kind\":\"cache_warm\","
             "\"provider\":\"openai\",\"model\":\"gpt-5.1\",\"usage\":{\"input\":0,\"output\":1,\"cacheRead\":0,\"cacheWrite\":900}}");
        ok(b.n == 1 && b.rows[0].kind == ROW_KIND_USAGE_ENTRY, "usage entry: a row");
        is_str(b.n ? b.rows[0].model : "", "gpt-5.1", "usage entry: its own model");
        is_str(ps.model, "claude-opus-4-5", "usage entry does not change the carried model");
        row_batch_clear(&b);

        /* unknown types and roles with usage: ignored */
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"telemetry\",\"usage\":{\"input\":5,\"output\":5}}");
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"message\",\"message\":{\"role\":\"wizard\",\"usage\":{\"input\":5,\"output\":5}}}");
        feed(&FL_PI, &ps, &b, "{\"type\":\"message\",\"message\":\"not an object\",\"usage\":1}");
        is_int(b.n, 0, "unknown types/roles and odd shapes: no rows");
        is_int(feed(&FL_PI, &ps, &b, "{\"no_type\":true,\"usage\":{}}"), PARSE_OK, "entry without type: ok");

        /* pi flavor ignores model-snapshot */
        feed(&FL_PI, &ps, &b,
             "{\"type\":\"custom\",\"customType\":\"model-snapshot\",\"data\":{\"provider\":\"zz\",\"modelId\":\"snap\"}}");
        is_str(ps.model, "claude-opus-4-5", "pi flavor: model-snapshot ignored");
        row_batch_free(&b);
}

static void test_openclaw_flavor(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        feed(&FL_OC, &ps, &b, HDR3);
        feed(&FL_OC, &ps, &b,
             "{\"type\":\"custom\",\"customType\":\"model-snapshot\",\"timestamp\":\"2026-01-01T00:00:01.000Z\","
             "\"data\":{\"timestamp\":1,\"provider\":\"amazon-bedrock\",\"modelApi\":\"x\",\"modelId\":\"claude-x\"}}");
        is_str(ps.provider, "amazon-bedrock", "model-snapshot provider carried");
        is_str(ps.model, "claude-x", "model-snapshot model carried");
        is_int(feed(&FL_OC, &ps, &b,
                    asst("openclaw", "delivery-mirror", 9, NULL,
                         "{\"input\":3,\"output\":3,\"cacheRead\":0,\"cacheWrite\":0}", NULL)),
               PARSE_OK, "delivery-mirror line ok");
        is_int(b.n, 0, "delivery-mirror: no row");
        is_str(ps.model, "claude-x", "delivery-mirror does not change the model");
        feed(&FL_OC, &ps, &b, asst("openclaw", "gateway-injected", 9, NULL, "{\"input\":1}", NULL));
        is_int(b.n, 0, "gateway-injected: no row");
        feed(&FL_OC, &ps, &b, "{\"type\":\"compaction\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"usage\":{\"input\":4}}");
        ok(b.n == 1 && strcmp(b.rows[0].model, "claude-x") == 0 && strcmp(b.rows[0].tool, "openclaw") == 0,
           "compaction after synthetic rows: snapshot model, tool openclaw");
        row_batch_clear(&b);

        /* the pi flavor counts such rows (they are pi-shaped, nonzero here) */
        ps = (struct parse_state){ 0 };
        feed(&FL_PI, &ps, &b, HDR3);
        feed(&FL_PI, &ps, &b, asst("openclaw", "delivery-mirror", 9, NULL, "{\"input\":3}", NULL));
        is_int(b.n, 1, "pi flavor: no synthetic skipping");
        row_batch_clear(&b);

        row_batch_free(&b);
}

/* ---- lines: prefilter, glued, torn, big ------------------------------------------ */

static void test_lines(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        char line[16384];

        feed(&FL_PI, &ps, &b, HDR3);
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}"),
               PARSE_OK, "user line: ok");
        is_int(feed(&FL_PI, &ps, &b, "not json"), PARSE_MALFORMED, "non-JSON line: malformed");
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"cut"),
               PARSE_MALFORMED, "torn line without usage: malformed");
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"usage\":{\"input\":"),
               PARSE_MALFORMED, "torn line with usage: malformed");
        is_int(feed(&FL_PI, &ps, &b, "{\"type\":\"message\",\"message\":{\"text\":\"say \\\"usage\\\" please\"}}"),
               PARSE_OK, "escaped \"usage\" in text: ok, nothing");
        is_int(b.n, 0, "no rows so far");

        /* two objects glued, with and without a blank between */
        snprintf(line, sizeof(line), "%s", asst("p", "m", 100, "r1", U1, NULL));
        size_t l1 = strlen(line);
        snprintf(line + l1, sizeof(line) - l1, "%s", asst("p", "m", 200, "r2", U1, NULL));
        is_int(feed(&FL_PI, &ps, &b, line), PARSE_OK, "glued objects: ok");
        is_int(b.n, 2, "glued objects: both counted");
        ok(b.n == 2 && memcmp(&b.rows[0].key, &b.rows[1].key, sizeof(struct row_key)) != 0,
           "glued calls are distinct");
        row_batch_clear(&b);
        snprintf(line, sizeof(line), "%s  \t", asst("p", "m", 300, NULL, U1, NULL));
        l1 = strlen(line);
        snprintf(line + l1, sizeof(line) - l1, "%s", "{\"type\":\"model_change\",\"provider\":\"q\",\"modelId\":\"n\"}");
        is_int(feed(&FL_PI, &ps, &b, line), PARSE_OK, "assistant + model_change glued");
        ok(b.n == 1 && strcmp(ps.model, "n") == 0, "both objects of the glued line handled");
        row_batch_clear(&b);

        /* a torn object glued to a whole one: the whole one counts */
        snprintf(line, sizeof(line), "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"cu%s",
                 asst("p", "m", 400, NULL, U1, NULL));
        is_int(feed(&FL_PI, &ps, &b, line), PARSE_MALFORMED, "torn + whole: malformed");
        is_int(b.n, 1, "torn + whole: the whole object counted");
        row_batch_clear(&b);

        /* absurd nesting is refused, not a stack overflow */
        {
                size_t depth = 100000, n = 0;
                char *d = malloc(2 * depth + 256);
                n += (size_t)sprintf(d, "{\"type\":\"message\",\"usage\":");
                memset(d + n, '[', depth);
                n += depth;
                memset(d + n, ']', depth);
                n += depth;
                d[n++] = '}';
                is_int(pi_parse_line(&FL_PI, NULL, &ps, d, n, &b), PARSE_MALFORMED, "nesting 100000: malformed");
                free(d);
        }

        /* 2 MiB lines */
        size_t big = 2u * 1024 * 1024;
        char *p = malloc(big + 4096);
        size_t n = (size_t)sprintf(p, "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"");
        memset(p + n, 'x', big);
        n += big;
        n += (size_t)sprintf(p + n, "\"}}");
        is_int(pi_parse_line(&FL_PI, NULL, &ps, p, n, &b), PARSE_OK, "2 MiB user line: ok");
        is_int(b.n, 0, "2 MiB user line: no rows");
        n = (size_t)sprintf(p, "{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"provider\":\"p\",\"model\":\"m\","
                               "\"timestamp\":500,\"content\":[{\"type\":\"text\",\"text\":\"");
        memset(p + n, 'y', big);
        n += big;
        n += (size_t)sprintf(p + n, "\"}],\"usage\":" U1 "}}");
        is_int(pi_parse_line(&FL_PI, NULL, &ps, p, n, &b), PARSE_OK, "2 MiB assistant line: ok");
        ok(b.n == 1 && b.rows[0].total == 100, "2 MiB assistant line: its row");
        free(p);
        row_batch_free(&b);
}

/* ---- dedup keys ------------------------------------------------------------------ */

static bool key_of(const struct pi_flavor *fl, const char *header, const char *pre, const char *line,
                   const char *path, struct row_key *ret)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        struct source_ctx ctx = { .adapter = &adapter_pi, .path = path, .source_hash = hash64(path, strlen(path)) };
        bool got;

        pi_parse_line(fl, &ctx, &ps, header, strlen(header), &b);
        if (pre)
                pi_parse_line(fl, &ctx, &ps, pre, strlen(pre), &b);
        row_batch_clear(&b);
        pi_parse_line(fl, &ctx, &ps, line, strlen(line), &b);
        got = b.n == 1;
        if (got)
                *ret = b.rows[0].key;
        row_batch_free(&b);
        return got;
}

static bool same(const struct row_key *a, const struct row_key *b)
{
        return memcmp(a, b, sizeof(*a)) == 0;
}

static void test_keys(void)
{
        static const char *H1 = HDR3;
        static const char *H2 = "{\"type\":\"session\",\"version\":3,\"id\":\"fork-2\",\"timestamp\":\"2026-02-01T00:00:00.000Z\","
                                "\"cwd\":\"/other\",\"parentSession\":\"/x/f.jsonl\"}";
        static const char *HV1 = "{\"type\":\"session\",\"id\":\"s-1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w/p\"}";
        char a[8192], b2[8192];
        struct row_key k1, k2;

        snprintf(a, sizeof(a), "%s", asst("anthropic", "claude", 1000, "msg_1", U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, a, "/s/a.jsonl", &k1), "key: original");
        ok(key_of(&FL_PI, H2, NULL, a, "/s/b.jsonl", &k2), "key: fork copy");
        ok(same(&k1, &k2), "fork copy (other file, session, cwd) has the same key");

        /* migration: new entry id, parentId, v1 header */
        snprintf(b2, sizeof(b2), "%s", a);
        char *id = strstr(b2, "\"id\":\"e1\"");
        memcpy(id, "\"id\":\"z9\"", 9);
        ok(key_of(&FL_PI, HV1, NULL, b2, "/s/a.jsonl", &k2) && same(&k1, &k2),
           "migrated copy (new entry id) has the same key");

        /* different calls never merge */
        snprintf(b2, sizeof(b2), "%s", asst("anthropic", "claude", 1001, "msg_1", U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "other timestamp: other key");
        snprintf(b2, sizeof(b2), "%s", asst("anthropic", "claude", 1000, "msg_2", U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "other responseId: other key");
        snprintf(b2, sizeof(b2), "%s", asst("anthropic", "claude", 1000, NULL, U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "no responseId: other key");
        snprintf(b2, sizeof(b2), "%s",
                 asst("anthropic", "claude", 1000, "msg_1",
                      "{\"input\":10,\"output\":21,\"cacheRead\":30,\"cacheWrite\":40,\"totalTokens\":101,\"reasoning\":5,\"cost\":{\"total\":0.0123456}}",
                      NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "other output: other key");
        snprintf(b2, sizeof(b2), "%s", asst("anthropic", "claude-2", 1000, "msg_1", U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "other model: other key");
        snprintf(b2, sizeof(b2), "%s",
                 asst("anthropic", "claude", 1000, "msg_1",
                      "{\"input\":10,\"output\":20,\"cacheRead\":30,\"cacheWrite\":40,\"totalTokens\":100,\"reasoning\":5,\"cost\":{\"total\":0.02}}",
                      NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k2) && !same(&k1, &k2), "other cost: other key");

        /* a compaction with the same numbers as a message is another event */
        const char *mc = "{\"type\":\"model_change\",\"provider\":\"anthropic\",\"modelId\":\"claude\"}";
        const char *cp = "{\"type\":\"compaction\",\"timestamp\":\"1970-01-01T00:00:01.000Z\",\"usage\":"
                         "{\"input\":10,\"output\":20,\"cacheRead\":30,\"cacheWrite\":40,\"totalTokens\":100,\"cost\":{\"total\":0.0123456}}}";
        snprintf(b2, sizeof(b2), "%s", asst("anthropic", "claude", 1000, NULL, U1, NULL));
        ok(key_of(&FL_PI, H1, NULL, b2, "/s/a.jsonl", &k1) && key_of(&FL_PI, H1, mc, cp, "/s/a.jsonl", &k2) &&
           !same(&k1, &k2), "compaction vs message with equal numbers: other key");
        ok(key_of(&FL_PI, H2, mc, cp, "/s/b.jsonl", &k1) && same(&k1, &k2), "forked compaction: same key");
        /* the tool id is not part of the key: pi and openclaw agree */
        ok(key_of(&FL_OC, H2, mc, cp, "/s/c.jsonl", &k1) && same(&k1, &k2), "flavor tool not in the key");
}

/* ---- parse state across a restart -------------------------------------------------- */

static void test_state_roundtrip(void)
{
        struct parse_state ps = { 0 }, back;
        uint8_t buf[CHECKPOINT_STATE_MAX];
        size_t len = 0;

        ps.flags = PS_HEADER_SEEN;
        ps.version = 3;
        ps.fallback_time_ms = -5;
        ps.last_time_ms = 1767225605123LL;
        memset(ps.session, 's', sizeof(ps.session) - 1);
        memset(ps.project, 'p', sizeof(ps.project) - 1);
        memset(ps.provider, 'v', sizeof(ps.provider) - 1);
        memset(ps.model, 'm', sizeof(ps.model) - 1);
        for (size_t i = 0; i < PS_PRIV_MAX; i++)
                ps.priv[i] = (uint8_t)(i * 37 + 1);
        ps.priv_len = PS_PRIV_MAX;
        is_int(parse_state_encode(&ps, buf, sizeof(buf), &len), 0, "encode full-size state");
        ok(len <= CHECKPOINT_STATE_MAX, "fits CHECKPOINT_STATE_MAX (%zu bytes)", len);
        is_int(len, PS_ENCODED_MAX, "the full-size state is the PS_ENCODED_MAX worst case");
        memset(&back, 0x5a, sizeof(back));
        is_int(parse_state_decode(buf, len, &back), 0, "decode");
        ok(memcmp(&ps, &back, sizeof(ps)) == 0, "round trip exact (with a full private area)");
        is_int(parse_state_encode(&ps, buf, 10, &len), -ENOBUFS, "small buffer: -ENOBUFS");
        is_int(parse_state_encode(&ps, buf, PS_ENCODED_MAX - 1, &len), -ENOBUFS, "one byte short: -ENOBUFS");
        ps.priv_len = PS_PRIV_MAX + 1;
        is_int(parse_state_encode(&ps, buf, sizeof(buf), &len), -EINVAL, "priv_len over PS_PRIV_MAX: -EINVAL");
        ps.priv_len = PS_PRIV_MAX;
        parse_state_encode(&ps, buf, sizeof(buf), &len);
        for (size_t cut = 0; cut < len; cut += 37)
                if (parse_state_decode(buf, cut, &back) != -EBADMSG) {
                        ok(0, "truncated state at %zu rejected", cut);
                        break;
                }
        is_int(parse_state_decode(buf, len - 1, &back), -EBADMSG, "truncated: -EBADMSG");
        buf[len] = 0;
        is_int(parse_state_decode(buf, len + 1, &back), -EBADMSG, "trailing byte: -EBADMSG");
        buf[0] = 9;
        is_int(parse_state_decode(buf, len, &back), -EBADMSG, "unknown version: -EBADMSG");
        is_int(parse_state_decode(NULL, 0, &back), -EBADMSG, "empty: -EBADMSG");
        /* a string length over its field */
        ps = (struct parse_state){ 0 };
        parse_state_encode(&ps, buf, sizeof(buf), &len);
        buf[25] = 0xff;
        buf[26] = 0x01; /* session length 511 > 127 */
        is_int(parse_state_decode(buf, len, &back), -EBADMSG, "oversized string: -EBADMSG");

        /* the private area: its length is checked; encoding 1 (before it
         * existed) still decodes, with nothing private */
        ps = (struct parse_state){ 0 };
        ps.priv_len = 3;
        memcpy(ps.priv, "abc", 3);
        parse_state_encode(&ps, buf, sizeof(buf), &len);
        ok(len >= 5 && buf[len - 5] == 3 && buf[len - 4] == 0 && memcmp(buf + len - 3, "abc", 3) == 0,
           "priv last: u16 length, bytes");
        buf[len - 5] = PS_PRIV_MAX + 1;
        is_int(parse_state_decode(buf, len, &back), -EBADMSG, "priv length over PS_PRIV_MAX: -EBADMSG");
        buf[len - 5] = 4;
        is_int(parse_state_decode(buf, len, &back), -EBADMSG, "priv length past the end: -EBADMSG");
        memset(&ps, 0, sizeof(ps)); /* padding too: compared with memcmp below */
        ps.flags = PS_HEADER_SEEN;
        ps.version = 2;
        ps.last_time_ms = 77;
        snprintf(ps.session, sizeof(ps.session), "sess");
        snprintf(ps.model, sizeof(ps.model), "mod");
        parse_state_encode(&ps, buf, sizeof(buf), &len);
        buf[0] = 1; /* encoding 1: the same without the trailing u16 priv_len */
        memset(&back, 0x5a, sizeof(back));
        is_int(parse_state_decode(buf, len - 2, &back), 0, "encoding 1 decodes");
        ok(memcmp(&ps, &back, sizeof(ps)) == 0 && back.priv_len == 0, "... to the same state, nothing private");
        is_int(parse_state_decode(buf, len, &back), -EBADMSG, "encoding 1 with a priv part: -EBADMSG");

        /* resuming mid-file from the encoded state gives the same rows */
        const char *lines[] = {
                "{\"type\":\"session\",\"id\":\"v1\",\"timestamp\":\"2025-11-20T23:33:50.805Z\",\"cwd\":\"/u\",\"provider\":\"a\",\"modelId\":\"b\"}",
                "{\"type\":\"message\",\"timestamp\":\"2025-11-20T23:34:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}",
                "{\"type\":\"model_change\",\"timestamp\":\"2025-11-20T23:35:00.000Z\",\"provider\":\"c\",\"modelId\":\"d\"}",
                "{\"type\":\"compaction\",\"usage\":{\"input\":3,\"output\":4}}",
        };
        struct parse_state whole = { 0 }, part = { 0 };
        struct row_batch b1 = { 0 }, b2 = { 0 };
        for (int i = 0; i < 4; i++)
                pi_parse_line(&FL_PI, NULL, &whole, lines[i], strlen(lines[i]), &b1);
        for (int i = 0; i < 3; i++)
                pi_parse_line(&FL_PI, NULL, &part, lines[i], strlen(lines[i]), &b2);
        parse_state_encode(&part, buf, sizeof(buf), &len);
        struct parse_state resumed;
        parse_state_decode(buf, len, &resumed);
        pi_parse_line(&FL_PI, NULL, &resumed, lines[3], strlen(lines[3]), &b2);
        ok(b1.n == 1 && b2.n == 1 && same(&b1.rows[0].key, &b2.rows[0].key) &&
           strcmp(b2.rows[0].model, "d") == 0 && strcmp(b2.rows[0].session, "v1") == 0,
           "resume from encoded state: same row");
        row_batch_free(&b1);
        row_batch_free(&b2);
}

static void test_misc_api(void)
{
        struct root_list l = { 0 };
        struct root *r;

        for (int i = 0; i < 20; i++) {
                if (root_list_push(&l, &r) < 0)
                        break;
                snprintf(r->path, sizeof(r->path), "/r%d", i);
        }
        ok(l.n == 20 && strcmp(l.v[19].path, "/r19") == 0 && l.v[19].reason == 0, "root_list_push grows");
        root_list_free(&l);
        ok(l.v == NULL && l.n == 0, "root_list_free resets");
        root_list_free(NULL);

        is_str(cap_tokens_name(CAP_TOKENS_NONE), "none", "tokens none");
        is_str(cap_cost_name(CAP_COST_COMPUTED), "computed", "cost computed");
        is_str(cap_cost_name(CAP_COST_NONE), "none", "cost none");
        is_str(cap_activity_name(CAP_ACTIVITY_UNATTRIBUTED), "unattributed", "activity unattributed");
        is_str(cap_activity_name(CAP_ACTIVITY_RECORDED), "recorded", "activity recorded");
        is_str(cap_activity_name(CAP_ACTIVITY_NONE), "none", "activity none");
        is_str(cap_reasoning_name(CAP_REASONING_NONE), "none", "reasoning none");
        is_str(root_reason_name(ROOT_ENV), "env", "reason env");
        is_str(root_reason_name(ROOT_CONFIG), "config", "reason config");
        is_str(root_reason_name(ROOT_PROFILE), "profile", "reason profile");

        /* registry table: HOME plus every adapter's own list, each name once */
        size_t nv = 0;
        for (; registry_env_vars()[nv]; nv++)
                ;
        is_str(registry_env_vars()[0], "HOME", "HOME comes first");
        bool sync = true;
        size_t declared = 1;
        for (size_t a = 0; registry_adapters[a]; a++)
                for (size_t k = 0; registry_adapters[a]->env && registry_adapters[a]->env[k]; k++) {
                        const char *v = registry_adapters[a]->env[k];
                        size_t hits = 0;
                        for (size_t i = 0; i < nv; i++)
                                hits += strcmp(registry_env_vars()[i], v) == 0;
                        sync = sync && hits == 1 && registry_env_owner(v) != NULL;
                        declared++;
                }
        ok(sync, "every adapter's variable is in the table exactly once, with an owner");
        ok(nv <= declared && nv >= 11, "the table holds only declared variables (%zu)", nv);
        ok(registry_env_owner("HOME") == NULL, "HOME belongs to every adapter");
        is_str(registry_env_owner("PI_CODING_AGENT_SESSION_DIR"), "pi", "owner pi");
        is_str(registry_env_owner("OPENCLAW_PROFILE"), "openclaw", "owner openclaw");
        is_str(registry_env_owner("PICOCLAW_AGENTS_DEFAULTS_WORKSPACE"), "picoclaw", "owner picoclaw");
        static const char *want[] = { "HOME", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR",
                                      "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "OPENCLAW_PROFILE",
                                      "OPENCLAW_CONFIG_PATH", "OPENCLAW_AGENT_DIR", "PICOCLAW_HOME",
                                      "PICOCLAW_CONFIG", "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE",
                                      "CLAUDE_CONFIG_DIR" };
        bool all = true;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                all = all && registry_env_known(want[i]);
        ok(all, "every documented variable is known");

        /* the process env: known names only, empty = unset */
        setenv("PI_AGENT_DIR", "/nope", 1);
        setenv("PI_CODING_AGENT_SESSION_DIR", "", 1);
        setenv("PI_CODING_AGENT_DIR", "/yes", 1);
        ok(discover_env_get(&registry_process_env, "PI_AGENT_DIR") == NULL, "process env: unknown name refused");
        ok(registry_process_env.get(NULL, "PI_AGENT_DIR") == NULL, "process env get: unknown name refused");
        ok(discover_env_get(&registry_process_env, "PI_CODING_AGENT_SESSION_DIR") == NULL, "process env: empty = unset");
        is_str(discover_env_get(&registry_process_env, "PI_CODING_AGENT_DIR"), "/yes", "process env: known name");
        unsetenv("PI_AGENT_DIR");
        unsetenv("PI_CODING_AGENT_SESSION_DIR");
        unsetenv("PI_CODING_AGENT_DIR");
        ok(discover_env_get(NULL, "HOME") == NULL, "NULL env: NULL");
}

/* ---- fixtures ------------------------------------------------------------------------ */

/* A sessions root walked the way the scanner does, with pi's classify. */
static int ingest_tree(struct totals *t, const char *root, const char *rel, int depth)
{
        char path[PATH_MAX];
        struct dirent **names;
        int n;

        snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
        n = scandir(path, &names, NULL, alphasort);
        if (n < 0)
                return -errno;
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                char crel[PATH_MAX], full[PATH_MAX * 2];
                struct stat st;
                if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
                        goto next;
                snprintf(crel, sizeof(crel), "%s%s%s", rel, *rel ? "/" : "", name);
                snprintf(full, sizeof(full), "%s/%s", root, crel);
                if (stat(full, &st) < 0)
                        goto next;
                enum classify_result c = adapter_pi.classify(crel, name, depth + 1, S_ISDIR(st.st_mode));
                if (S_ISDIR(st.st_mode) && c == CLASS_DESCEND && depth + 1 <= 1)
                        ingest_tree(t, root, crel, depth + 1);
                else if (!S_ISDIR(st.st_mode) && c == CLASS_LINES)
                        ingest_file(t, &adapter_pi, full);
        next:
                free(names[i]);
        }
        free(names);
        return 0;
}

static void check_case(const char *name, struct json_object *c, const char *base)
{
        struct totals t = { 0 };
        struct json_object *files;
        char path[PATH_MAX * 2];
        struct stat st;

        json_object_object_get_ex(c, "files", &files);
        for (size_t i = 0; i < json_object_array_length(files); i++) {
                snprintf(path, sizeof(path), "%s/%s", base,
                         json_object_get_string(json_object_array_get_idx(files, i)));
                if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
                        ingest_tree(&t, path, "", 0);
                else
                        ok(ingest_file(&t, &adapter_pi, path) == 0, "%s: read %s", name, path);
        }
        totals_check(&t, c, name, true);
        free(t.keys);
}

static void test_fixtures(void)
{
        char dir[PATH_MAX], exp[PATH_MAX + 32];
        struct json_object *root, *cases;

        snprintf(dir, sizeof(dir), "%s/fixtures/pi", am_srcdir());
        snprintf(exp, sizeof(exp), "%s/expected.json", dir);
        root = json_object_from_file(exp);
        ok(root != NULL, "fixtures/pi/expected.json loads");
        if (!root)
                return;
        json_object_object_get_ex(root, "cases", &cases);
        json_object_object_foreach(cases, name, c) {
                struct json_object *gen;
                if (json_object_object_get_ex(c, "generator", &gen)) {
                        char cmd[PATH_MAX * 3];
                        char *tmp = tap_tmpdir();
                        snprintf(cmd, sizeof(cmd), "python3 '%s/%s' '%s' >/dev/null", dir,
                                 json_object_get_string(gen), tmp);
                        if (system(cmd) != 0) {
                                printf("# skipping %s: python3 %s failed\n", name, json_object_get_string(gen));
                                continue;
                        }
                        check_case(name, c, tmp);
                        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
                        (void)!system(cmd);
                        continue;
                }
                check_case(name, c, dir);
        }
        json_object_put(root);
}

int main(void)
{
        test_adapter_struct();
        test_misc_api();
        test_discovery();
        test_classify();
        test_header();
        test_assistant();
        test_other_usage();
        test_openclaw_flavor();
        test_lines();
        test_keys();
        test_state_roundtrip();
        test_fixtures();
        return tap_done();
}
