/* Claude Code adapter: discovery under CLAUDE_CONFIG_DIR lists and the
 * defaults, which files are transcripts, each parsing rule (keys, forks,
 * sidechains, partial lines, skipped lines, tiers), the upsert through a
 * real ledger, compaction accounting, and fixtures/claude's totals. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "adapter.h"
#include "claude/acct.h"
#include "claude/record.h"
#include "claude-walk.h"
#include "json/jscan.h"
#include "ledger/ledger.h"
#include "registry.h"
#include "row.h"
#include "tap.h"
#include "testutil.h"

/* is_int with a formatted name */
#define is_intf(a, b, ...)                                                                          \
        do {                                                                                        \
                char _nm[160];                                                                      \
                snprintf(_nm, sizeof(_nm), __VA_ARGS__);                                            \
                is_int((a), (b), _nm);                                                              \
        } while (0)

static int discover(struct fenv *f, struct root_list *out)
{
        struct discover_env env = fenv_env(f);
        memset(out, 0, sizeof(*out));
        return adapter_claude.discover(&env, out);
}

static void test_discovery(void)
{
        struct root_list l;
        struct fenv f = { 0 };

        fenv_set(&f, "HOME", "/home/u");
        is_int(discover(&f, &l), 0, "discover: HOME only");
        is_int(l.n, 2, "two default roots");
        ok(find_root(&l, "/home/u/.claude/projects") != NULL, "~/.claude/projects");
        ok(find_root(&l, "/home/u/.config/claude/projects") != NULL, "~/.config/claude/projects");
        is_int(l.v[0].reason, ROOT_DEFAULT, "reason default");
        is_int(l.v[0].max_depth, 5, "deep enough for subagents/workflows/<wf>/");
        ok(l.v[0].adapter == &adapter_claude, "root adapter is claude");
        for (size_t i = 0; i < f.n_asked; i++)
                ok(registry_env_known(f.asked[i]), "asked only for a registered variable (%s)", f.asked[i]);
        root_list_free(&l);

        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "CLAUDE_CONFIG_DIR", "/work/cc/");
        discover(&f, &l);
        is_int(l.n, 1, "CLAUDE_CONFIG_DIR: only that root (Claude Code reads no other)");
        is_str(l.v[0].path, "/work/cc/projects", "its projects/");
        is_int(l.v[0].reason, ROOT_ENV, "reason env");
        is_str(l.v[0].env_var, "CLAUDE_CONFIG_DIR", "variable recorded");
        root_list_free(&l);

        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", "/home/u");
        fenv_set(&f, "CLAUDE_CONFIG_DIR", " /a ,~/b,,rel, /a");
        discover(&f, &l);
        is_int(l.n, 3, "a comma list: each entry once, empty ones skipped");
        ok(find_root(&l, "/a/projects") != NULL, "blanks trimmed");
        ok(find_root(&l, "/home/u/b/projects") != NULL, "~ expanded");
        ok(find_root(&l, "/home/u/rel/projects") != NULL, "relative to HOME");
        root_list_free(&l);

        f = (struct fenv){ 0 };
        is_int(discover(&f, &l), 0, "no HOME, no variable: no error");
        is_int(l.n, 0, "and no root");
        root_list_free(&l);

        ok(registry_find("claude") == &adapter_claude, "registered as claude");
        is_str(registry_env_owner("CLAUDE_CONFIG_DIR"), "claude", "CLAUDE_CONFIG_DIR belongs to claude");
        is_str(adapter_claude.env[0], "CLAUDE_CONFIG_DIR", "and is in the adapter's env list");
        is_str(cap_cost_name(adapter_claude.caps.cost), cap_cost_name(CAP_COST_COMPUTED), "cost computed");
        is_int(adapter_claude.caps.tokens, CAP_TOKENS_EXACT, "tokens exact");
        is_int(adapter_claude.caps.activity, CAP_ACTIVITY_EXACT, "activity exact");
}

static void test_classify(void)
{
        static const struct {
                const char *rel;
                int depth;
                bool dir;
                int want;
        } v[] = {
                { "-home-u-p", 1, true, CLASS_DESCEND },
                { "-home-u-p/s1.jsonl", 2, false, CLASS_LINES },
                { "-home-u-p/agent-x.jsonl", 2, false, CLASS_LINES },
                { "-home-u-p/s1.json", 2, false, CLASS_IGNORE },
                { "-home-u-p/s1.jsonl.bak", 2, false, CLASS_IGNORE },
                { "x.jsonl", 1, false, CLASS_IGNORE },
                { "-home-u-p/memory", 2, true, CLASS_IGNORE },
                { "-home-u-p/s1", 2, true, CLASS_DESCEND },
                { "-home-u-p/s1/subagents", 3, true, CLASS_DESCEND },
                { "-home-u-p/s1/tool-results", 3, true, CLASS_IGNORE },
                { "-home-u-p/s1/x.jsonl", 3, false, CLASS_IGNORE },
                { "-home-u-p/s1/subagents/agent-a.jsonl", 4, false, CLASS_LINES },
                { "-home-u-p/s1/subagents/agent-acompact-1f.jsonl", 4, false, CLASS_LINES },
                { "-home-u-p/s1/subagents/agent-a.meta.json", 4, false, CLASS_IGNORE },
                { "-home-u-p/s1/subagents/journal.jsonl", 4, false, CLASS_IGNORE },
                { "-home-u-p/s1/subagents/workflows", 4, true, CLASS_DESCEND },
                { "-home-u-p/s1/other/workflows", 4, true, CLASS_IGNORE },
                { "-home-u-p/s1/subagents/workflows/wf", 5, true, CLASS_DESCEND },
                { "-home-u-p/s1/subagents/workflows/wf/agent-w.jsonl", 6, false, CLASS_LINES },
                { "-home-u-p/s1/subagents/workflows/wf/journal.jsonl", 6, false, CLASS_IGNORE },
                { "-home-u-p/s1/subagents/workflows/wf/deeper", 6, true, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                const char *name = strrchr(v[i].rel, '/');
                name = name ? name + 1 : v[i].rel;
                ok((int)adapter_claude.classify(v[i].rel, name, v[i].depth, v[i].dir) == v[i].want,
                   "classify %s%s", v[i].rel, v[i].dir ? "/" : "");
        }
}

/* ---- lines ------------------------------------------------------------------ */

#define SID "aaaa-1"
#define ASST(extra, msg, usage)                                                                     \
        "{\"type\":\"assistant\",\"sessionId\":\"" SID "\",\"cwd\":\"/p\",\"timestamp\":"            \
        "\"2026-11-30T10:00:00.000Z\"" extra ",\"message\":{\"model\":\"claude-sonnet-4-5\"" msg     \
        ",\"usage\":{" usage "},\"content\":[]}}"
#define U(i, o) "\"input_tokens\":" #i ",\"output_tokens\":" #o

static int feed(struct parse_state *ps, const char *line, struct row_batch *b)
{
        return claude_parse_line(NULL, ps, line, strlen(line), b);
}

static void test_lines(void)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        struct usage_row *r;
        struct row_key k1, k2;

        is_int(feed(&ps, ASST("", ",\"id\":\"msg_1\"",
                               U(10, 20) ",\"cache_read_input_tokens\":300,\"cache_creation_input_tokens\":40,"
                               "\"cache_creation\":{\"ephemeral_5m_input_tokens\":10,\"ephemeral_1h_input_tokens\":30},"
                               "\"output_tokens_details\":{\"thinking_tokens\":5},\"service_tier\":\"standard\""),
                    &b),
               PARSE_OK, "an assistant line");
        is_int(b.n, 1, "one row");
        r = &b.rows[0];
        is_str(r->tool, "claude", "tool claude");
        is_str(r->provider, "anthropic", "provider anthropic");
        is_str(r->model, "claude-sonnet-4-5", "model");
        is_str(r->session, SID, "session");
        is_str(r->project, "/p", "project from cwd");
        ok(r->input == 10 && r->output == 20 && r->cache_read == 300 && r->cache_write == 40,
           "tokens: input uncached, cache read and write apart");
        is_int(r->cache_write_1h, 30, "1-hour cache write part");
        is_int(r->reasoning, 5, "thinking tokens as reasoning");
        is_int(r->total, 370, "total is the sum of the four classes");
        is_str(r->tier, "", "standard tier is empty");
        ok(r->flags & ROW_F_UPSERT, "committed as an upsert");
        ok(!(r->flags & ROW_F_SIDECHAIN), "main chain");
        is_int(r->cost_source, COST_NONE, "unpriced: the price engine prices it");
        is_int(r->kind, ROW_KIND_MESSAGE, "kind message");
        k1 = r->key;

        /* the same message.id without requestId, other usage: same key */
        row_batch_clear(&b);
        feed(&ps, ASST(",\"requestId\":\"req_9\"", ",\"id\":\"msg_1\"", U(10, 25)), &b);
        ok(b.n == 1 && memcmp(&b.rows[0].key, &k1, sizeof(k1)) == 0,
           "the key is message.id alone (requestId, usage and time do not change it)");

        /* a fork copy: requestSessionId names the session that made it */
        row_batch_clear(&b);
        feed(&ps, "{\"type\":\"assistant\",\"sessionId\":\"fork-2\",\"requestSessionId\":\"" SID "\","
                  "\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{" U(10, 20) "}}}",
             &b);
        ok(b.n == 1 && strcmp(b.rows[0].session, SID) == 0, "a fork copy is the source session's call");
        ok(memcmp(&b.rows[0].key, &k1, sizeof(k1)) == 0, "and has the same key");

        /* requestId only: keyed by it */
        row_batch_clear(&b);
        feed(&ps, ASST(",\"requestId\":\"req_7\"", "", U(1, 2)), &b);
        feed(&ps, ASST(",\"requestId\":\"req_7\"", "", U(1, 9)), &b);
        ok(b.n == 2 && memcmp(&b.rows[0].key, &b.rows[1].key, sizeof(k1)) == 0,
           "no message.id: lines sharing requestId share the key");
        k2 = b.rows[0].key;
        ok(memcmp(&k1, &k2, sizeof(k1)) != 0, "different from a message.id key");

        /* neither: by content */
        row_batch_clear(&b);
        feed(&ps, ASST("", "", U(1, 1)), &b);
        feed(&ps, ASST("", "", U(1, 1)), &b);
        feed(&ps, ASST("", "", U(1, 2)), &b);
        ok(b.n == 3 && memcmp(&b.rows[0].key, &b.rows[1].key, sizeof(k1)) == 0 &&
                   memcmp(&b.rows[0].key, &b.rows[2].key, sizeof(k1)) != 0,
           "no ids: the same line is one key, other tokens another");

        /* sidechain, compaction sidechain, tiers, tool calls */
        row_batch_clear(&b);
        feed(&ps, ASST(",\"isSidechain\":true,\"agentId\":\"a1\"", ",\"id\":\"m2\"", U(1, 1)), &b);
        feed(&ps, ASST(",\"isSidechain\":true,\"agentId\":\"acompact-e1f845\"", ",\"id\":\"m3\"", U(1, 1)), &b);
        feed(&ps, ASST("", ",\"id\":\"m4\"", U(1, 1) ",\"speed\":\"fast\",\"service_tier\":\"priority\""), &b);
        feed(&ps, ASST("", ",\"id\":\"m5\"", U(1, 1) ",\"service_tier\":\"priority\""), &b);
        feed(&ps, ASST("", ",\"id\":\"m6\"", U(1, 1) ",\"service_tier\":\"weird\""), &b);
        is_int(b.n, 5, "five rows");
        ok(b.rows[0].flags & ROW_F_SIDECHAIN, "isSidechain: ROW_F_SIDECHAIN");
        is_int(b.rows[1].kind, ROW_KIND_COMPACTION, "an acompact- sub-agent's call is a compaction");
        is_str(b.rows[2].tier, "fast", "speed fast wins");
        is_str(b.rows[3].tier, "priority", "service tier priority");
        is_str(b.rows[4].tier, "", "an unknown tier is not passed on");

        row_batch_clear(&b);
        feed(&ps, "{\"type\":\"assistant\",\"message\":{\"id\":\"m7\",\"model\":\"m\",\"usage\":{" U(1, 1) "},"
                  "\"content\":[{\"type\":\"text\",\"text\":\"a \\\"tool_use\\\"\"},"
                  "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{\"type\":\"tool_use\"}},"
                  "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Read\"}]}}",
             &b);
        ok(b.n == 1 && b.rows[0].n_calls == 2, "tool_use blocks are the row's calls");
        ok(b.n == 1 && strcmp(b.rows[0].calls[0].id, "toolu_1") == 0 &&
                   strcmp(b.rows[0].calls[1].name, "Read") == 0,
           "with their ids and names");
        ok(b.n == 1 && (b.rows[0].flags & ROW_F_TIME_APPROX), "no timestamp: time marked approximate");

        /* lines that are not calls */
        row_batch_clear(&b);
        ok(feed(&ps, ASST(",\"isApiErrorMessage\":true", ",\"id\":\"x\"", U(0, 0)), &b) == PARSE_OK && b.n == 0,
           "isApiErrorMessage: no row");
        feed(&ps, "{\"type\":\"assistant\",\"message\":{\"id\":\"y\",\"model\":\"<synthetic>\",\"usage\":{" U(0, 0) "}}}", &b);
        feed(&ps, "{\"type\":\"user\",\"toolUseResult\":{\"agentId\":\"a\",\"usage\":{" U(5, 5) "},\"totalTokens\":10}}", &b);
        feed(&ps, "{\"type\":\"progress\",\"data\":{\"type\":\"agent_progress\",\"message\":{\"type\":\"assistant\","
                  "\"message\":{\"id\":\"z\",\"usage\":{" U(5, 5) "}}}}}", &b);
        feed(&ps, "{\"type\":\"api-request\",\"params\":{\"model\":\"m\"},\"usage\":{" U(5, 5) "}}", &b);
        feed(&ps, "{\"type\":\"cost-state\",\"modelUsage\":{}}", &b);
        feed(&ps, "{\"type\":\"assistant\",\"message\":{\"id\":\"nousage\",\"model\":\"m\"}}", &b);
        feed(&ps, "{\"type\":\"some-future-type\",\"usage\":{" U(5, 5) "}}", &b);
        is_int(b.n, 0, "synthetic, Agent toolUseResult, progress, api-request, cost-state, no usage, "
                       "unknown types: no rows");

        /* bad input */
        is_int(feed(&ps, "{\"type\":\"assistant\",\"message\":{\"usage\":", &b), PARSE_MALFORMED, "a torn line is malformed");
        row_batch_clear(&b);
        is_int(feed(&ps, "{\"type\":\"assistant\",\"message\":{\"id\":\"torn\",\"usage\":{\"inp"
                         ASST("", ",\"id\":\"glued\"", U(2, 3)), &b),
               PARSE_MALFORMED, "a torn object with the next line glued on: malformed");
        ok(b.n == 1 && b.rows[0].output == 3, "but the glued line still counts");
        row_batch_clear(&b);
        is_int(feed(&ps, ASST("", ",\"id\":\"big\"", "\"input_tokens\":1000000000001"), &b), PARSE_MALFORMED,
               "a token count over the bound is malformed");
        is_int(feed(&ps, ASST("", ",\"id\":\"neg\"", "\"input_tokens\":-5,\"output_tokens\":2"), &b), PARSE_OK,
               "a negative count reads as 0");
        ok(b.n == 1 && b.rows[0].input == 0 && b.rows[0].output == 2, "and the rest counts");
        is_int(feed(&ps, "", &b), PARSE_OK, "a blank line is fine");
        row_batch_free(&b);

        struct parse_state p2 = { 0 };
        is_int(feed(&p2, "[1,2,3]", &b), PARSE_NOT_SOURCE, "a first line that is not an object: not a transcript");
        is_int(feed(&p2, ASST("", ",\"id\":\"q\"", U(1, 1)), &b), PARSE_NOT_SOURCE, "and nothing more is read");
        p2 = (struct parse_state){ 0 };
        is_int(feed(&p2, "{\"hello\":\"world\"}", &b), PARSE_NOT_SOURCE, "an object without type: not a transcript");
        p2 = (struct parse_state){ 0 };
        is_int(feed(&p2, "{\"type\":\"summary\",\"summary\":\"x\"}", &b), PARSE_OK, "a summary first line is fine");
        row_batch_free(&b);
}

/* ---- through the ledger ------------------------------------------------------- */

static void commit_lines(struct ledger *l, const char *const *lines)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };

        for (size_t i = 0; lines[i]; i++) {
                /* one batch per line, as a tail-read that sees them apart */
                struct commit_batch cb;
                row_batch_clear(&b);
                feed(&ps, lines[i], &b);
                cb = (struct commit_batch){ .rows = b.rows, .n_rows = b.n };
                if (b.n && ledger_commit(l, &cb, NULL) < 0)
                        ok(0, "commit");
        }
        row_batch_free(&b);
}

struct one_row {
        struct usage_row r;
        size_t n;
        uint64_t calls;
};

static int one_cb(const struct usage_row *r, void *u)
{
        struct one_row *o = u;
        o->r = *r;
        o->n++;
        return 0;
}

static int act_cb(const struct activity_entry *e, void *u)
{
        (void)e;
        ((struct one_row *)u)->calls++;
        return 0;
}

static void read_one(struct ledger *l, struct one_row *o)
{
        memset(o, 0, sizeof(*o));
        ledger_foreach_row(l, one_cb, o);
        ledger_foreach_activity(l, act_cb, o);
}

#define LINE(sid, extra, out, content)                                                              \
        "{\"type\":\"assistant\",\"sessionId\":\"" sid "\",\"timestamp\":\"2026-11-30T10:00:0" #out   \
        ".000Z\"" extra ",\"message\":{\"id\":\"msg_x\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,"  \
        "\"output_tokens\":" #out "},\"content\":[" content "]}}"

static void test_ledger_rules(void)
{
        struct ledger *l;
        struct one_row o;

        /* partial then final, tool calls on different lines */
        ledger_open(tap_tmpdir(), 0, &l);
        commit_lines(l, (const char *const[]){
                LINE("s", "", 1, "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\"}"),
                LINE("s", "", 5, ""),
                LINE("s", "", 9, "{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Read\"}"),
                LINE("s", "", 9, "{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Read\"}"), NULL });
        read_one(l, &o);
        is_int(o.n, 1, "a response on four lines is one row");
        is_int(o.r.output, 9, "with the final output (not the first, not the sum)");
        is_int(o.r.input, 3, "input counted once");
        is_int(o.calls, 2, "tool calls united across its lines, each once");
        is_int(o.r.n_calls, 2, "row knows both calls");
        ok(o.r.time_ms % 60000 == 1000, "the earliest time");
        ledger_close(l);

        /* a sidechain copy seen first, then the main-chain one */
        ledger_open(tap_tmpdir(), 0, &l);
        commit_lines(l, (const char *const[]){ LINE("side", ",\"isSidechain\":true", 5, ""),
                                               LINE("main", "", 5, ""), NULL });
        read_one(l, &o);
        ok(o.n == 1 && strcmp(o.r.session, "main") == 0, "the main-chain copy's session wins");
        ok(!(o.r.flags & ROW_F_SIDECHAIN), "and the row is no longer a sidechain row");
        ledger_close(l);

        /* the main chain first: a later sidechain copy changes nothing */
        ledger_open(tap_tmpdir(), 0, &l);
        commit_lines(l, (const char *const[]){ LINE("main", "", 5, ""),
                                               LINE("side", ",\"isSidechain\":true", 5, ""), NULL });
        read_one(l, &o);
        ok(o.n == 1 && strcmp(o.r.session, "main") == 0 && !(o.r.flags & ROW_F_SIDECHAIN),
           "a sidechain copy after the main chain changes nothing");
        ledger_close(l);

        /* a fork copy first (file order), then the source */
        ledger_open(tap_tmpdir(), 0, &l);
        commit_lines(l, (const char *const[]){ LINE("fork", ",\"requestSessionId\":\"src\"", 5, ""),
                                               LINE("src", "", 5, ""), NULL });
        read_one(l, &o);
        ok(o.n == 1 && strcmp(o.r.session, "src") == 0, "fork copy read first: still the source's call");
        ledger_close(l);

        /* no requestId at all: message.id dedups */
        ledger_open(tap_tmpdir(), 0, &l);
        commit_lines(l, (const char *const[]){ LINE("s", "", 4, ""), LINE("s", "", 4, ""),
                                               LINE("s", ",\"requestId\":\"r\"", 4, ""), NULL });
        read_one(l, &o);
        ok(o.n == 1 && o.r.output == 4, "without requestId, repeats of message.id count once");
        ledger_close(l);
}

/* ---- compaction accounting ------------------------------------------------------ */

static void test_acct(void)
{
        struct parse_state ps = { 0 };
        struct cl_acct a = { 0 }, b2;
        struct cl_cost_state cs = { .present = true, .n = 1 };
        struct cl_compaction c;
        struct usage_row row = { .input = 10, .output = 1, .cache_read = 100 };
        struct row_key k = { { 1 } };

        ROW_SET(row.model, "m1");
        cl_acct_call(&a, &k, &row, false, false);
        row.output = 4;
        cl_acct_call(&a, &k, &row, false, false); /* the same response, grown */
        cl_acct_store(&ps, &a);
        cl_acct_load(&ps, &b2);
        ok(b2.n == 1 && b2.m[0].d.output == 4 && b2.m[0].d.input == 10, "a response grows, not adds");
        ok(memcmp(&a, &b2, sizeof(a)) == 0, "priv round trip");

        ROW_SET(cs.v[0].model, "m1");
        cs.v[0].t = (struct cl_tok){ 15, 6, 100, 0, 0 };
        ok(!cl_acct_cost_state(&b2, &cs, "m1", &c), "a difference without a boundary: no compaction");
        is_int(b2.unmetered, 1, "counted as unmetered");
        is_int(b2.unmetered_tokens, 7, "with its tokens");

        struct jscan_span uuid = { "b-1", 3 };
        cl_acct_boundary(&b2, &uuid, 1234);
        cs.v[0].t = (struct cl_tok){ 25, 8, 150, 4, 1 };
        ok(cl_acct_cost_state(&b2, &cs, "m1", &c), "boundary + difference: a compaction");
        ok(c.t.input == 10 && c.t.output == 2 && c.t.cache_read == 50 && c.t.cache_write == 4 &&
                   c.t.cache_write_1h == 1,
           "of exactly the difference");
        is_int(c.time_ms, 1234, "at the boundary's time");
        ok(!cl_acct_cost_state(&b2, &cs, "m1", &c), "the same cost-state again: nothing more");

        cl_acct_boundary(&b2, &uuid, 1);
        cs.v[0].t.input = 20;
        ok(!cl_acct_cost_state(&b2, &cs, "m1", &c), "a cost-state below the lines: nothing");
        cl_acct_boundary(&b2, &uuid, 1);
        cs.v[0].t.input = 40;
        ok(!cl_acct_cost_state(&b2, &cs, "other", &c), "a difference in another model than the current one: nothing");

        row.output = 1;
        cl_acct_call(&b2, &k, &row, false, true);
        cl_acct_boundary(&b2, &uuid, 1);
        cs.v[0].t.input = 100;
        uint64_t before = b2.unmetered;
        ok(!cl_acct_cost_state(&b2, &cs, "m1", &c), "a run with a sub-agent and a boundary: not exact, nothing");
        is_int(b2.unmetered, before + 1, "said so");

        /* a fork: the first cost-state starts from the source's numbers */
        struct cl_acct f = { 0 };
        cl_acct_call(&f, &k, &row, true, false);
        cl_acct_boundary(&f, &uuid, 1);
        cs.v[0].t = (struct cl_tok){ 500, 500, 500, 0, 0 };
        ok(!cl_acct_cost_state(&f, &cs, "m1", &c), "a fork's first cost-state meters nothing");
        cl_acct_boundary(&f, &uuid, 1);
        cs.v[0].t.input = 530;
        ok(cl_acct_cost_state(&f, &cs, "m1", &c) && c.t.input == 30, "its later runs do");

        /* too many models for the private area */
        struct cl_acct m = { 0 };
        for (int i = 0; i < CL_ACCT_MODELS + 1; i++) {
                char name[32];
                snprintf(name, sizeof(name), "model-%d", i);
                row_set_str(row.model, sizeof(row.model), name, strlen(name));
                row.input = 1000000000ull + (uint64_t)i;
                cl_acct_call(&m, &k, &row, false, false);
                k.b[0]++;
        }
        ok(m.flags & CL_OVERFLOW, "more models than kept: overflow");
        cl_acct_store(&ps, &m);
        ok(ps.priv_len <= PS_PRIV_MAX, "the state still fits");
        cl_acct_load(&ps, &b2);
        ok((b2.flags & CL_OVERFLOW) && b2.n == 0, "overflow kept, models dropped");
        cl_acct_boundary(&b2, &uuid, 1);
        cs.v[0].t.input = 99999999999ull;
        ok(!cl_acct_cost_state(&b2, &cs, "m1", &c), "after an overflow nothing is metered");

        ps.priv_len = 3;
        ps.priv[0] = 99;
        cl_acct_load(&ps, &b2);
        ok(b2.n == 0 && b2.flags == 0, "an unknown private area is a fresh start");
}

/* ---- fixtures -------------------------------------------------------------------- */

static void test_fixtures(bool restart)
{
        char projects[PATH_MAX], exp[PATH_MAX];
        struct cw_totals t = { .restart_every_line = restart };
        struct json_object *e, *all;
        struct ledger *l = NULL;
        const char *pfx = restart ? "fixtures (state saved and restored at every line)" : "fixtures";

        xsnprintf(projects, sizeof(projects), "%s/fixtures/claude/config/projects", am_srcdir());
        xsnprintf(exp, sizeof(exp), "%s/fixtures/claude/expected.json", am_srcdir());
        e = json_object_from_file(exp);
        ok(e != NULL, "%s: expected.json", pfx);
        if (!e)
                return;
        json_object_object_get_ex(e, "all", &all);
        is_intf(cw_ingest_projects(projects, &t, &l), 0, "%s: read", pfx);
#define CHK(f) is_intf(t.f, jint(all, #f, -1), "%s: " #f, pfx)
        CHK(rows);
        CHK(message_rows);
        CHK(compaction_rows);
        CHK(input);
        CHK(output);
        CHK(cache_read);
        CHK(cache_write);
        CHK(reasoning);
        CHK(total);
        CHK(malformed);
        CHK(not_source);
        CHK(files);
        CHK(unmetered_runs);
        CHK(unmetered_tokens);
#undef CHK
        is_intf(cw_1h_sum(&t), jint(all, "cache_write_1h", -1), "%s: 1-hour cache writes", pfx);
        if (l) {
                struct ledger_stats st;
                ledger_get_stats(l, &st);
                is_intf(st.calls, jint(all, "calls", -1), "%s: tool calls", pfx);
                ledger_close(l);
        }
        json_object_put(e);
}

int main(void)
{
        test_discovery();
        test_classify();
        test_lines();
        test_ledger_rules();
        test_acct();
        test_fixtures(false);
        test_fixtures(true);
        return tap_done();
}
