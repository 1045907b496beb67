/* Unit tests for the client's rendering: number formats, table alignment,
 * the dash for unknown tokens, cost marks, CSV quoting, status and sources
 * output, and the environment-mismatch warning, from hand-built JSON. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "render/render.h"
#include "render/status.h"
#include "table.h"
#include "tap.h"
#include "testutil.h"

static struct json_object *parse(const char *s)
{
        struct json_object *o = json_tokener_parse(s);
        if (!o) {
                printf("# bad test JSON: %s\n", s);
                exit(99);
        }
        return o;
}

/* Renders into a malloc'd string. */
static char *report(const char *json, enum render_format fmt, int *ret_r)
{
        struct json_object *o = parse(json);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        *ret_r = render_report(f, o, fmt, false);
        fclose(f);
        json_object_put(o);
        return buf;
}

/* The line of text that contains needle (copied), or "". */
static const char *line_with(const char *text, const char *needle)
{
        static char line[1024];
        const char *p = strstr(text, needle), *b, *e;

        line[0] = 0;
        if (!p)
                return line;
        for (b = p; b > text && b[-1] != '\n'; b--)
                ;
        e = strchr(p, '\n');
        snprintf(line, sizeof(line), "%.*s", (int)(e ? e - b : (long)strlen(b)), b);
        return line;
}

static void test_fmt(void)
{
        char b[FMT_MAX];

        is_str(fmt_u64(0, b), "0", "fmt_u64 0");
        is_str(fmt_u64(999, b), "999", "fmt_u64 999");
        is_str(fmt_u64(1000, b), "1,000", "fmt_u64 1000");
        is_str(fmt_u64(1234567, b), "1,234,567", "fmt_u64 thousands");
        is_str(fmt_u64(18446744073709551615ull, b), "18,446,744,073,709,551,615", "fmt_u64 max");
        is_str(fmt_i64(-1234, b), "-1,234", "fmt_i64 negative");
        is_str(fmt_usd(1.234567, b), "$1.234567", "fmt_usd six decimals");
        is_str(fmt_usd(1234.5, b), "$1,234.500000", "fmt_usd thousands");
        is_str(fmt_usd(0.0000004, b), "$0.000000", "fmt_usd rounds to micro-USD");
        is_str(fmt_usd(-0.5, b), "-$0.500000", "fmt_usd negative");
        is_str(fmt_bytes(512, b), "512 B", "fmt_bytes bytes");
        is_str(fmt_bytes(1536, b), "1.5 KiB", "fmt_bytes KiB");
        is_str(fmt_bytes(5u << 20, b), "5.0 MiB", "fmt_bytes MiB");
        is_str(fmt_duration(45, b), "45s", "fmt_duration s");
        is_str(fmt_duration(3 * 3600 + 120, b), "3h 02m", "fmt_duration h");
        is_str(fmt_duration(2 * 86400 + 4 * 3600, b), "2d 04h", "fmt_duration d");
        is_int(table_width("\u2014"), 1, "the dash is one column wide");
        is_int(table_width("abc"), 3, "ascii width");
        is_int(table_width("\xe6\x97\xa5\xe6\x9c\xac"), 4, "CJK counts two columns each");
}

static void test_cost_marks(void)
{
        static const struct {
                const char *json, *want, *name;
        } cases[] = {
                { "{\"cost_usd\":1.5,\"cost_source\":\"vendor-reported\",\"unpriced_events\":0}",
                  "$1.500000", "vendor-reported: no mark" },
                { "{\"cost_usd\":1.5,\"cost_source\":\"computed\"}", "~$1.500000",
                  "computed: ~ prefix" },
                { "{\"cost_usd\":1.5,\"cost_source\":\"mixed\"}", "~$1.500000", "mixed: ~ prefix" },
                { "{\"cost_usd\":2,\"cost_source\":\"vendor-reported\",\"unpriced_events\":3}",
                  "$2.000000*", "some unpriced: * suffix" },
                { "{\"cost_usd\":2,\"cost_source\":\"computed\",\"unpriced_events\":1}",
                  "~$2.000000*", "computed and partly unpriced" },
                { "{\"cost_usd\":null,\"cost_source\":null,\"unpriced_events\":4}", FMT_DASH,
                  "null cost: dash" },
                { "{}", FMT_DASH, "missing cost: dash" },
                { "{\"cost_usd\":0,\"cost_source\":\"vendor-reported\"}", "$0.000000",
                  "zero is shown as zero, not as unknown" },
        };
        char b[FMT_MAX];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct json_object *o = parse(cases[i].json);
                is_str(fmt_cost(o, "cost_usd", b), cases[i].want, cases[i].name);
                json_object_put(o);
        }
}

#define SUMS_A                                                                                     \
        "\"input_tokens\":1234567,\"output_tokens\":89,\"cache_read_tokens\":0,"                  \
        "\"cache_write_tokens\":5,\"reasoning_tokens\":0,\"total_tokens\":1234661,"               \
        "\"cost_usd\":1.234567,\"cost_source\":\"vendor-reported\",\"unpriced_events\":0,"       \
        "\"events\":12,\"tool_calls\":3"
#define SUMS_NULL                                                                                  \
        "\"input_tokens\":null,\"output_tokens\":null,\"cache_read_tokens\":null,"                \
        "\"cache_write_tokens\":null,\"reasoning_tokens\":null,\"total_tokens\":null,"            \
        "\"cost_usd\":null,\"cost_source\":null,\"unpriced_events\":7,\"events\":7,"             \
        "\"tool_calls\":9"
#define SUMS_TOT                                                                                   \
        "\"input_tokens\":1234567,\"output_tokens\":89,\"cache_read_tokens\":0,"                  \
        "\"cache_write_tokens\":5,\"reasoning_tokens\":0,\"total_tokens\":1234661,"               \
        "\"cost_usd\":1.234567,\"cost_source\":\"vendor-reported\",\"unpriced_events\":7,"       \
        "\"events\":19,\"tool_calls\":12"

static const char daily[] =
        "{\"report\":\"daily\",\"tz\":\"UTC\",\"since\":\"2026-11-01\",\"until\":null,"
        "\"harness\":[\"pi\",\"picoclaw\"],\"rows\":["
        "{\"key\":\"2026-11-29\"," SUMS_A "},"
        "{\"key\":\"2026-11-30\"," SUMS_NULL "}],"
        "\"totals\":{" SUMS_TOT "}}";

static void test_table(void)
{
        int r;
        char *out = report(daily, RENDER_TABLE, &r);
        size_t w = 0, lines = 0;
        bool aligned = true;

        is_int(r, 0, "daily table renders");
        ok(strstr(out, "daily report, 2026-11-01 .. now, time zone UTC, harness pi,picoclaw\n") == out,
           "caption names kind, range, zone and harness filter");
        /* Every line of the table (between caption and legend) is equally wide:
         * the last column (cost) is right-aligned. */
        for (char *p = strchr(out, '\n') + 1; *p && strncmp(p, "cost:", 5) != 0;) {
                char *e = strchr(p, '\n'), save = *e;
                *e = 0;
                if (lines++ == 0)
                        w = table_width(p);
                else if (table_width(p) != w)
                        aligned = false;
                *e = save;
                p = e + 1;
        }
        ok(aligned && lines == 6, "header, rule, 2 rows, rule, TOTAL all %zu columns wide (%zu lines)", w,
           lines);
        const char *l = line_with(out, "2026-11-29");
        ok(strstr(l, "1,234,567") && strstr(l, "1,234,661") && strstr(l, "$1.234567"),
           "row: thousands separators and cost");
        l = line_with(out, "2026-11-30");
        ok(strstr(l, FMT_DASH) && !strstr(l, " 0 ") && strstr(l, "  7  "),
           "row with unknown tokens shows dashes, events still counted");
        ok(!strstr(out, "reasoning"), "no reasoning column when no row has reasoning tokens");
        l = line_with(out, "TOTAL");
        ok(l[0] == 'T' && strstr(l, "$1.234567*"), "TOTAL line marks partly unpriced cost");
        ok(strstr(out, "\ncost: $ as reported") != NULL, "legend line under the table");
        ok(strstr(out, "~ computed") && strstr(out, "* some events unpriced"),
           "legend explains ~ and *");
        free(out);

        out = report("{\"report\":\"model\",\"rows\":[{\"key\":\"a/m\",\"harness\":\"pi\","
                     "\"reasoning_tokens\":42,\"cost_usd\":0.5,\"cost_source\":\"computed\"}],"
                     "\"totals\":{\"reasoning_tokens\":42}}",
                     RENDER_TABLE, &r);
        ok(r == 0 && strstr(out, "reasoning") && strstr(out, "harness") &&
                   strstr(line_with(out, "a/m"), "~$0.500000"),
           "model report: harness column, reasoning column when used, ~ for computed");
        free(out);

        out = report("{\"report\":\"daily\",\"rows\":[],\"totals\":{}}", RENDER_TABLE, &r);
        ok(r == 0 && strstr(out, "no usage recorded"), "empty report says so");
        free(out);

        out = report("{\"report\":\"daily\"}", RENDER_TABLE, &r);
        is_int(r, -22, "an object without rows is refused (-EINVAL)");
        free(out);
}

static void test_tool(void)
{
        int r;
        char *out = report("{\"report\":\"tool\",\"rows\":["
                           "{\"key\":\"bash\",\"harness\":\"pi\",\"tool\":\"bash\",\"calls\":1200,"
                           "\"cost_share_usd\":0.25},"
                           "{\"key\":\"exec\",\"harness\":\"picoclaw\",\"tool\":\"exec\",\"calls\":3,"
                           "\"cost_share_usd\":null}],"
                           "\"totals\":{\"calls\":1203,\"cost_share_usd\":0.25}}",
                           RENDER_TABLE, &r);

        is_int(r, 0, "tool report renders");
        ok(strstr(line_with(out, "harness"), "tool") && strstr(line_with(out, "harness"), "calls") &&
                   strstr(line_with(out, "harness"), "cost share"),
           "tool columns: harness, tool, calls, cost share");
        ok(strstr(line_with(out, "bash"), "1,200") && strstr(line_with(out, "bash"), "$0.250000"),
           "tool row: calls and share");
        ok(strstr(line_with(out, "exec"), FMT_DASH) != NULL, "harness without cost: dash");
        ok(strstr(line_with(out, "TOTAL"), "1,203") != NULL, "tool TOTAL line");
        free(out);

        out = report("{\"report\":\"tool\",\"rows\":[{\"harness\":\"pi\",\"tool\":\"a,b\","
                     "\"calls\":2,\"cost_share_usd\":0.1}],\"totals\":{}}",
                     RENDER_CSV, &r);
        ok(r == 0 && strstr(out, "key,harness,tool,calls,cost_share_usd") &&
                   strstr(out, ",pi,\"a,b\",2,0.100000,"),
           "tool CSV quotes a tool name with a comma");
        free(out);
}

static void test_csv(void)
{
        int r;
        char *out = report("{\"report\":\"session\",\"rows\":[{\"key\":\"s1\",\"harness\":\"pi\","
                           "\"project\":\"/home/u/my \\\"big\\\", proj\\nx\",\"model\":\"m\","
                           "\"input_tokens\":5,\"total_tokens\":null,\"cost_usd\":0.000001,"
                           "\"events\":1}],\"totals\":{\"events\":1}}",
                           RENDER_CSV, &r);

        is_int(r, 0, "session CSV renders");
        ok(strncmp(out, "session,harness,project,provider,model,first,last,events,input_tokens,", 70) ==
                   0,
           "CSV header names the fields");
        ok(strstr(out, "\"/home/u/my \"\"big\"\", proj\\x0ax\"") != NULL,
           "RFC 4180: quotes doubled, field with a comma quoted, the newline escaped (\\x0a)");
        ok(strstr(out, ",1,5,,,,,,0.000001,") != NULL, "null/missing values are empty fields");
        ok(strstr(out, "\r\nTOTAL,,,,,,,1,") != NULL, "TOTAL row with empty key fields");
        ok(out[strlen(out) - 1] == '\n' && out[strlen(out) - 2] == '\r', "CRLF line ends");
        free(out);

        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        render_csv_field(f, "plain");
        fputc('|', f);
        render_csv_field(f, " lead");
        fputc('|', f);
        render_csv_field(f, "a\"b");
        fputc('|', f);
        render_csv_field(f, NULL);
        fclose(f);
        is_str(buf, "plain|\" lead\"|\"a\"\"b\"|", "csv field quoting rules");
        free(buf);
}

static void test_json(void)
{
        int r;
        char *out = report(daily, RENDER_JSON, &r);
        struct json_object *a = parse(daily), *b = json_tokener_parse(out);

        ok(r == 0 && b && json_object_equal(a, b), "--json prints the report object unchanged");
        ok(strchr(out, '\n') == out + strlen(out) - 1, "compact JSON is one line");
        json_object_put(a);
        json_object_put(b);
        free(out);
}

static char *capture_status(const char *json)
{
        struct json_object *o = parse(json);
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        render_status(f, o);
        fclose(f);
        json_object_put(o);
        return buf;
}

static const char status_json[] =
        "{\"version\":\"0.1.0\",\"pid\":4242,\"uptime_s\":3725,\"state_dir\":\"/s\",\"socket\":\"/r/c.sock\","
        "\"ledger\":{\"path\":\"/s/ledger.mdb\",\"bytes\":2097152,\"rows\":12345,\"sessions\":4,"
        "\"sources\":2,\"calls\":9},\"ingest\":{\"bytes_done\":450,\"bytes_known\":1000,"
        "\"initial_scan_done\":false,\"files\":3},\"last_commit\":null,"
        "\"install_record\":{\"recorded_at\":\"2026-11-30T10:00:00Z\",\"vars\":{\"PI_CODING_AGENT_DIR\":\"/x\"}},"
        "\"env\":{\"PI_CODING_AGENT_DIR\":\"/x\",\"HOME\":\"/home/u\"},"
        "\"harnesses\":[{\"id\":\"pi\",\"name\":\"Pi\",\"capabilities\":{\"tokens\":\"exact\","
        "\"cost\":\"vendor-reported\",\"activity\":\"exact\",\"reasoning\":\"subset-of-output\"},"
        "\"roots\":[{\"path\":\"/x/sessions\",\"exists\":true,\"reason\":\"env\",\"env_var\":\"PI_CODING_AGENT_DIR\","
        "\"from_install_record\":true,\"label\":\"sessions\",\"detail\":null},"
        "{\"path\":\"/y\",\"exists\":false,\"reason\":\"config\",\"env_var\":null,\"from_install_record\":false,"
        "\"label\":\"sessionDir\",\"detail\":\"/x/settings.json\"}],"
        "\"files\":3,\"bytes_read\":450,\"lines\":20,\"malformed\":1,\"oversized\":2,\"rows\":7,"
        "\"errors\":0,\"last_commit\":null}],\"warnings\":[\"something skipped\"]}";

static int mismatch(const char *const *kv, char **ret_out)
{
        static const char *const vars[] = { "HOME", "PI_CODING_AGENT_DIR", "OPENCLAW_HOME", NULL };
        struct json_object *o = parse(status_json);
        size_t len = 0;
        FILE *f = open_memstream(ret_out, &len);
        int n = render_env_mismatch(f, o, vars, kv_get, (void *)kv);
        fclose(f);
        json_object_put(o);
        return n;
}

static void test_status(void)
{
        char *out = capture_status(status_json);

        ok(strstr(out, "agentmeterd 0.1.0, pid 4242, up 1h 02m\n") == out, "status: version, pid, uptime");
        ok(strstr(out, "/s/ledger.mdb (2.0 MiB): 12,345 rows") != NULL, "status: ledger path, size, rows");
        ok(strstr(out, "initial scan  45.0% (450 B of 1000 B") != NULL, "status: scan progress percent");
        ok(strstr(out, "root  /x/sessions  exists  moved by PI_CODING_AGENT_DIR (from install record) "
                       "[sessions]") != NULL,
           "status: root moved by a variable from the install record");
        ok(strstr(out, "root  /y  missing  from config /x/settings.json") != NULL,
           "status: missing root named by a config file");
        ok(strstr(out, "lines 20 (malformed 1, oversized 2), rows 7") != NULL, "status: per-harness counters");
        ok(strstr(out, "install record  2026-11-30T10:00:00Z: PI_CODING_AGENT_DIR=/x") != NULL,
           "status: install record");
        ok(strstr(out, "warning: something skipped") != NULL, "status: daemon warnings");
        free(out);

        out = capture_status("{}");
        ok(out && strstr(out, "agentmeterd " FMT_DASH) != NULL, "status: an empty object still renders");
        free(out);

        const char *const same[] = { "PI_CODING_AGENT_DIR", "/x", "HOME", "/elsewhere", NULL };
        const char *const differ[] = { "PI_CODING_AGENT_DIR", "/other", "OPENCLAW_HOME", "/oc", NULL };
        const char *const unset[] = { NULL };
        const char *const empty[] = { "PI_CODING_AGENT_DIR", "/x", "OPENCLAW_HOME", "", NULL };
        is_int(mismatch(same, &out), 0, "env: same values (HOME ignored): no warning");
        free(out);
        is_int(mismatch(empty, &out), 0, "env: an empty variable counts as unset");
        free(out);
        is_int(mismatch(differ, &out), 2, "env: two differences");
        ok(strstr(out, "your shell sets PI_CODING_AGENT_DIR=/other but the daemon sees "
                       "PI_CODING_AGENT_DIR=/x: the daemon reads a different directory. Fix: run "
                       "`agentmeterctl install --force`") != NULL,
           "env: different value explained with the fix");
        ok(strstr(out, "your shell sets OPENCLAW_HOME=/oc but the daemon sees <unset>") != NULL,
           "env: set in shell, unset in daemon");
        free(out);
        is_int(mismatch(unset, &out), 1, "env: unset in the shell, set in the daemon");
        ok(strstr(out, "your shell does not set PI_CODING_AGENT_DIR but the daemon sees "
                       "PI_CODING_AGENT_DIR=/x") != NULL,
           "env: unset-in-shell message");
        free(out);
}

static void test_sources_and_tail(void)
{
        struct json_object *o = parse(
                "{\"sources\":[{\"path\":\"/p/a.jsonl\",\"harness\":\"pi\",\"kind\":\"lines\",\"size\":2048,"
                "\"offset\":2048,\"bytes_read\":2048,\"lines\":10,\"malformed\":0,\"oversized\":0,"
                "\"rows_added\":4,\"resets\":1,\"last_commit\":null,\"error\":null},"
                "{\"path\":\"/p/b.jsonl\",\"harness\":\"pi\",\"kind\":\"lines\",\"size\":0,\"error\":\"EACCES\"}]}");
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r = render_sources(f, o);

        fclose(f);
        ok(r == 0 && strstr(buf, "harness  kind") == buf, "sources: table header");
        ok(strstr(line_with(buf, "/p/a.jsonl"), "2.0 KiB") != NULL, "sources: size column");
        ok(strstr(buf, "error: /p/b.jsonl: EACCES") != NULL, "sources: errors listed under the table");
        json_object_put(o);
        free(buf);

        o = parse("{\"harness\":\"pi\",\"provider\":\"anthropic\",\"model\":\"claude\",\"time\":0,"
                  "\"input_tokens\":1500,\"output_tokens\":20,\"cache_read_tokens\":0,"
                  "\"cache_write_tokens\":0,\"total_tokens\":1520,\"cost_usd\":0.01,"
                  "\"cost_source\":\"computed\",\"tool_calls\":[{\"id\":\"1\",\"name\":\"bash\"},\"read\"]}");
        f = open_memstream(&buf, &len);
        r = render_tail_row(f, o);
        fclose(f);
        ok(r == 0 && strstr(buf, "  pi  anthropic/claude  in 1,500  out 20") &&
                   strstr(buf, "total 1,520  ~$0.010000  tools: bash, read\n"),
           "tail line: harness, model, tokens, marked cost, tool names");
        json_object_put(o);
        free(buf);
}

int main(void)
{
        test_fmt();
        test_cost_marks();
        test_table();
        test_tool();
        test_csv();
        test_json();
        test_status();
        test_sources_and_tail();
        return tap_done();
}
