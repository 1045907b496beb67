/* Unit tests for reports: zones move rows across midnight, NULL is not 0,
 * filters, ranges, tool cost shares, JSON shape and validation messages. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "report-test.h"
#include "tap.h"
#include "timefmt.h"

static struct ledger *L;

static int64_t at(const char *rfc)
{
        int64_t ms = 0;
        if (timefmt_parse_rfc3339(rfc, strlen(rfc), &ms) < 0)
                abort();
        return ms;
}

static void put(const char *id, const char *tool, const char *session, const char *when,
                bool tokens, uint8_t cost_src, int64_t cost, const char *const *calls)
{
        static struct usage_row r;

        rep_row_start(&r, "report-test", id);
        r.flags = tokens ? ROW_F_TOKENS_KNOWN : 0;
        r.time_ms = at(when);
        if (tokens) {
                r.input = 1000;
                r.output = 200;
                r.cache_read = 50;
                r.total = 1250;
        }
        r.cost_source = cost_src;
        r.cost_nano = cost * 1000; /* cost is given in micro-USD */
        ROW_SET(r.tool, tool);
        ROW_SET(r.session, session);
        ROW_SET(r.project, "/work/p");
        ROW_SET(r.provider, strcmp(tool, "picoclaw") == 0 ? "openrouter" : "anthropic");
        ROW_SET(r.model, "claude-sonnet");
        for (int i = 0; calls && calls[i]; i++) {
                ROW_SET(r.calls[i].id, calls[i]);
                snprintf(r.calls[i].id, sizeof(r.calls[i].id), "%s-%s-%d", id, calls[i], i);
                ROW_SET(r.calls[i].name, calls[i]);
                r.n_calls++;
        }
        struct commit_batch b = {.rows = &r, .n_rows = 1};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

static json_object *run(enum report_kind kind, const char *tz, const char *since,
                        const char *until, const char *harness)
{
        return rep_run(L, (struct report_query){.kind = kind, .tz = tz, .since = since, .until = until}, harness);
}

static json_object *row_at(json_object *rep, size_t i)
{
        return json_object_array_get_idx(rep_rows(rep), i);
}

static const char *sfield(json_object *o, const char *k)
{
        json_object *v = rep_field(o, k);
        return v ? json_object_get_string(v) : NULL;
}

static long long ifield(json_object *o, const char *k)
{
        return json_object_get_int64(rep_field(o, k));
}

static bool has_null(json_object *o, const char *k)
{
        json_object *v;
        return json_object_object_get_ex(o, k, &v) && v == NULL;
}

static json_object *run_cost(enum report_kind kind, enum report_cost cost)
{
        struct report_query q = {.kind = kind, .tz = "UTC", .cost = cost};
        json_object *o = NULL;
        const char *err = NULL;

        if (report_run(L, &q, &o, &err) < 0) {
                printf("# report failed: %s\n", err ? err : "?");
                return NULL;
        }
        return o;
}

/* --cost vendor: table-priced rows count as unpriced, read from the rows
 * (the rollups do not split the cost); auto and computed keep them. */
static void test_cost_modes(void)
{
        json_object *v = run_cost(REPORT_DAILY, REPORT_COST_VENDOR);
        json_object *a = run_cost(REPORT_DAILY, REPORT_COST_AUTO);
        json_object *c = run_cost(REPORT_DAILY, REPORT_COST_COMPUTED);
        json_object *t = rep_field(v, "totals");

        is_str(sfield(v, "cost"), "vendor", "report echoes the cost mode");
        is_str(rep_text(t, "cost_usd"), "1.750000", "vendor: only the harness's costs (1.5 + 0.25)");
        is_str(sfield(t, "cost_source"), "vendor-reported", "vendor: cost source vendor-reported");
        is_int(ifield(t, "unpriced_events"), 2, "vendor: the computed row counts as unpriced");
        is_int(ifield(t, "events"), 5, "vendor: every event still counted");
        is_int(ifield(t, "input_tokens"), 4000, "vendor: tokens unchanged");
        is_int(rep_nrows(v), 2, "vendor: same days as auto");
        ok(has_null(row_at(v, 1), "cost_usd"), "vendor: the 12th (computed only) is unpriced");
        is_str(rep_text(rep_field(a, "totals"), "cost_usd"), "3.750000", "auto: vendor + computed");
        is_str(rep_text(rep_field(c, "totals"), "cost_usd"), "3.750000",
               "computed: vendor rows keep their cost (no table price for them in the ledger)");
        json_object_put(v);
        json_object_put(a);
        json_object_put(c);

        v = run_cost(REPORT_SESSION, REPORT_COST_VENDOR);
        a = run_cost(REPORT_SESSION, REPORT_COST_AUTO);
        is_int(rep_nrows(v), rep_nrows(a), "vendor sessions (from rows) = sessions (from session sums)");
        for (size_t i = 0; i < rep_nrows(a) && i < rep_nrows(v); i++) {
                json_object *x = row_at(a, i), *y = row_at(v, i);
                ok(strcmp(sfield(x, "key"), sfield(y, "key")) == 0 &&
                           strcmp(sfield(x, "first"), sfield(y, "first")) == 0 &&
                           strcmp(sfield(x, "last"), sfield(y, "last")) == 0 &&
                           strcmp(sfield(x, "project"), sfield(y, "project")) == 0 &&
                           ifield(x, "events") == ifield(y, "events") &&
                           strcmp(rep_text(x, "input_tokens"), rep_text(y, "input_tokens")) == 0,
                   "session %s: same key, first, last, project, events, tokens", sfield(x, "key"));
                if (strcmp(sfield(x, "harness"), "openclaw") == 0)
                        ok(has_null(y, "cost_usd") && !has_null(x, "cost_usd"),
                           "openclaw session: priced in auto, unpriced in vendor");
        }
        json_object_put(v);
        json_object_put(a);

        v = run_cost(REPORT_TOOL, REPORT_COST_VENDOR);
        for (size_t i = 0; i < rep_nrows(v); i++)
                if (strcmp(sfield(row_at(v, i), "tool"), "web") == 0)
                        ok(has_null(row_at(v, i), "cost_share_usd"),
                           "vendor: the computed row's tool call has no cost share");
        json_object_put(v);

        struct report_query q = {.kind = REPORT_DAILY, .cost = 7};
        json_object *o = NULL;
        const char *err = NULL;
        is_int(report_run(L, &q, &o, &err), -EINVAL, "unknown cost mode: -EINVAL");
        enum report_cost m;
        is_int(report_cost_parse("cheap", &m), -EINVAL, "cost mode names checked");
        ok(report_cost_parse("vendor", &m) == 0 && m == REPORT_COST_VENDOR, "parse vendor");
        json_object *req = json_tokener_parse("{\"report\":\"daily\",\"cost\":\"free\"}");
        struct report_query rq;
        is_int(report_query_from_json(req, &rq, &err), -EINVAL, "json: unknown cost mode");
        ok(err && strstr(err, "free"), "json: the message names it");
        json_object_put(req);
}

/* The builder's rows are the JSON's rows: same count and totals. */
static void test_builder(void)
{
        struct report_query q = {.kind = REPORT_MODEL, .tz = "UTC"};
        struct report_result res;
        const char *err = NULL;
        json_object *o = run_cost(REPORT_MODEL, REPORT_COST_AUTO);

        is_int(report_build(L, &q, &res, &err), 0, "builder: model report");
        is_int(res.n, rep_nrows(o), "builder: one entry per JSON row");
        is_int(res.totals.events, ifield(rep_field(o, "totals"), "events"), "builder: totals events");
        is_int(res.totals.cost_nano, 3750000000LL, "builder: cost in nano-USD");
        for (size_t i = 0; i < res.n; i++)
                ok(strcmp(res.rows[i].key, sfield(row_at(o, i), "key")) == 0, "builder row %zu key", i);
        report_result_free(&res);
        json_object_put(o);
}

static void test_daily(void)
{
        json_object *utc = run(REPORT_DAILY, "UTC", NULL, NULL, NULL);
        json_object *ber = run(REPORT_DAILY, "Europe/Berlin", NULL, NULL, NULL);

        is_int(rep_nrows(utc), 2, "UTC: two days");
        is_str(sfield(row_at(utc, 0), "key"), "2026-03-10", "UTC: 23:30Z row on the 10th");
        is_int(ifield(row_at(utc, 0), "events"), 4, "UTC: 10th has 4 events");
        is_int(rep_nrows(ber), 3, "Berlin: three days");
        is_str(sfield(row_at(ber, 1), "key"), "2026-03-11", "Berlin: 23:30Z row is 00:30 on the 11th");
        is_int(ifield(row_at(ber, 1), "events"), 1, "Berlin: 11th has that one event");
        is_int(ifield(row_at(ber, 0), "events"), 3, "Berlin: 10th has 3 events");
        is_str(sfield(ber, "tz"), "Europe/Berlin", "report echoes tz");
        is_str(sfield(ber, "report"), "daily", "report name");
        ok(has_null(ber, "since") && has_null(ber, "until") && has_null(ber, "harness"),
           "no since/until/harness: null");
        json_object *t = rep_field(utc, "totals");
        is_int(ifield(t, "events"), 5, "totals: 5 events");
        is_int(ifield(t, "unpriced_events"), 1, "totals: 1 unpriced (picoclaw)");
        is_str(rep_text(t, "cost_usd"), "3.750000", "totals cost: 1.5+0.25+2.0 exactly, 6 decimals");
        is_str(sfield(t, "cost_source"), "mixed", "vendor + computed: mixed");
        is_int(ifield(t, "input_tokens"), 4000, "token sums ignore the token-less row");
        is_int(ifield(t, "tool_calls"), 6, "tool calls summed (3 + 2 + 1)");
        json_object_put(utc);
        json_object_put(ber);
}

static void test_nulls_and_filter(void)
{
        json_object *pc = run(REPORT_DAILY, "UTC", NULL, NULL, "picoclaw");
        json_object *r0 = row_at(pc, 0);

        is_int(rep_nrows(pc), 1, "harness=picoclaw: one day");
        ok(has_null(r0, "cost_usd"), "unpriced: cost_usd null, not 0");
        ok(has_null(r0, "cost_source"), "unpriced: cost_source null");
        ok(has_null(r0, "input_tokens") && has_null(r0, "output_tokens") &&
           has_null(r0, "total_tokens") && has_null(r0, "reasoning_tokens"),
           "token-less: token fields null, not 0");
        is_int(ifield(r0, "unpriced_events"), 1, "unpriced_events 1");
        is_int(ifield(r0, "tool_calls"), 2, "picoclaw activity still counted");
        json_object *h = rep_field(pc, "harness");
        ok(h && json_object_array_length(h) == 1, "harness echoed as a list");
        json_object_put(pc);

        json_object *pi = run(REPORT_DAILY, "UTC", NULL, NULL, "pi");
        is_int(ifield(rep_field(pi, "totals"), "events"), 3, "harness=pi: 3 events");
        is_str(rep_text(rep_field(pi, "totals"), "cost_usd"), "1.750000", "harness=pi: priced cost");
        is_str(sfield(rep_field(pi, "totals"), "cost_source"), "vendor-reported", "pi: vendor-reported");
        is_int(ifield(row_at(pi, 0), "output_tokens"), 600, "pi tokens are numbers (3 x 200)");
        json_object_put(pi);

        json_object *two = run(REPORT_DAILY, "UTC", NULL, NULL, "pi, openclaw");
        is_int(ifield(rep_field(two, "totals"), "events"), 4, "harness=pi,openclaw: 4 events");
        json_object_put(two);
}

static void test_range(void)
{
        json_object *u = run(REPORT_DAILY, "UTC", "2026-03-11", "2026-03-11", NULL);
        json_object *b = run(REPORT_DAILY, "Europe/Berlin", "2026-03-11", "2026-03-11", NULL);
        json_object *s = run(REPORT_DAILY, "UTC", "2026-03-11", NULL, NULL);
        json_object *e = run(REPORT_DAILY, "UTC", NULL, "2026-03-10", NULL);

        is_int(rep_nrows(u), 0, "UTC 11th..11th: nothing");
        is_int(rep_nrows(b), 1, "Berlin 11th..11th: the near-midnight row");
        is_str(sfield(b, "since"), "2026-03-11", "since echoed");
        is_int(rep_nrows(s), 1, "since 11th (UTC): only the 12th");
        is_int(rep_nrows(e), 1, "until 10th is inclusive: the 10th");
        is_int(ifield(row_at(e, 0), "events"), 4, "until 10th: all of the 10th");
        json_object_put(u);
        json_object_put(b);
        json_object_put(s);
        json_object_put(e);
}

static void test_monthly_model_session(void)
{
        json_object *m = run(REPORT_MONTHLY, "UTC", NULL, NULL, NULL);
        is_int(rep_nrows(m), 1, "monthly: one month");
        is_str(sfield(row_at(m, 0), "key"), "2026-03", "monthly key YYYY-MM");
        json_object_put(m);

        json_object *md = run(REPORT_MODEL, "UTC", NULL, NULL, NULL);
        is_int(rep_nrows(md), 3, "model: one row per (harness, provider, model)");
        json_object *r0 = row_at(md, 0);
        is_str(sfield(r0, "key"), "anthropic/claude-sonnet", "model key provider/model");
        ok(sfield(r0, "harness") && sfield(r0, "provider") && sfield(r0, "model"),
           "model rows carry harness, provider, model");
        is_str(sfield(row_at(md, 2), "key"), "openrouter/claude-sonnet", "sorted by key");
        json_object_put(md);

        json_object *ss = run(REPORT_SESSION, "UTC", NULL, NULL, NULL);
        is_int(rep_nrows(ss), 3, "session: three sessions");
        is_str(sfield(row_at(ss, 2), "session"), "oc-1", "sorted by last time: oc-1 last");
        is_str(sfield(row_at(ss, 0), "first"), "2026-03-10T13:00:00.000Z", "pc-1 first, as RFC 3339");
        is_str(sfield(row_at(ss, 1), "session"), "pi-1", "pi-1 ends at 23:30 on the 10th");
        is_int(ifield(row_at(ss, 1), "events"), 3, "pi-1: its 3 events");
        is_str(sfield(row_at(ss, 1), "project"), "/work/p", "session project");
        json_object_put(ss);

        json_object *s2 = run(REPORT_SESSION, "UTC", "2026-03-12", NULL, NULL);
        is_int(rep_nrows(s2), 1, "session since the 12th: only oc-1");
        json_object_put(s2);
}

static void test_tool(void)
{
        json_object *t = run(REPORT_TOOL, "UTC", NULL, NULL, NULL);
        json_object *bash = NULL, *pcr = NULL;

        for (size_t i = 0; i < rep_nrows(t); i++) {
                json_object *r = row_at(t, i);
                if (!strcmp(sfield(r, "tool"), "bash") && !strcmp(sfield(r, "harness"), "pi"))
                        bash = r;
                if (!strcmp(sfield(r, "harness"), "picoclaw"))
                        pcr = r;
        }
        is_int(rep_nrows(t), 4, "tool rows: pi bash, pi read, picoclaw exec, openclaw web");
        is_str(sfield(row_at(t, 0), "tool"), "bash", "most calls first");
        ok(bash && ifield(bash, "calls") == 2, "pi bash: 2 calls");
        is_str(bash ? rep_text(bash, "cost_share_usd") : "", "1.000000",
               "bash share: 2 x (1.5 USD / 3 calls)");
        ok(pcr && has_null(pcr, "cost_share_usd"), "unpriced harness: cost_share_usd null");
        is_int(ifield(rep_field(t, "totals"), "calls"), 6, "tool totals: 6 calls");
        json_object_put(t);
}

static void test_row_json(void)
{
        struct usage_row r = {0};
        json_object *o;

        r.time_ms = at("2026-05-25T10:11:39.37008+02:00");
        r.kind = ROW_KIND_TURN;
        ROW_SET(r.tool, "picoclaw");
        ROW_SET(r.model, "m");
        r.n_calls = 2;
        ROW_SET(r.calls[0].name, "exec");
        ROW_SET(r.calls[1].name, "web/fetch");
        o = report_row_json(&r);
        is_str(sfield(o, "time"), "2026-05-25T08:11:39.370Z", "row time in UTC RFC 3339");
        is_str(sfield(o, "kind"), "turn", "row kind");
        is_str(sfield(o, "harness"), "picoclaw", "row harness");
        ok(has_null(o, "input_tokens") && has_null(o, "cost_usd"), "row: unknown is null");
        is_str(rep_text(o, "tool_calls"), "[\"exec\",\"web/fetch\"]", "row tool_calls names");
        json_object_put(o);
        r.flags = ROW_F_TOKENS_KNOWN;
        r.cost_source = COST_COMPUTED;
        r.cost_nano = 12000;
        o = report_row_json(&r);
        is_str(rep_text(o, "cost_usd"), "0.000012", "row cost in USD, 6 decimals");
        is_str(sfield(o, "cost_source"), "computed", "row cost source");
        is_int(ifield(o, "input_tokens"), 0, "known zero tokens are 0");
        json_object_put(o);
}

static void test_errors(void)
{
        struct report_query q = {.kind = REPORT_DAILY};
        json_object *o = NULL;
        const char *err = NULL;
        enum report_kind k;

        q.since = "2026-13-01";
        is_int(report_run(L, &q, &o, &err), -EINVAL, "bad since: -EINVAL");
        is_str(err, "bad --since date '2026-13-01': expected YYYY-MM-DD", "bad since message");
        q.since = NULL;
        q.until = "2026-02-30";
        report_run(L, &q, &o, &err);
        is_str(err, "bad --until date '2026-02-30': expected YYYY-MM-DD", "Feb 30 rejected");
        q.until = NULL;
        q.tz = "Mars/Base";
        is_int(report_run(L, &q, &o, &err), -EINVAL, "bad zone: -EINVAL");
        is_str(err, "unknown time zone 'Mars/Base'", "bad zone message");
        q.tz = "UTC";
        q.since = "2026-03-12";
        q.until = "2026-03-10";
        is_int(report_run(L, &q, &o, &err), -EINVAL, "since after until: -EINVAL");
        ok(o == NULL, "no report on failure");

        is_int(report_kind_parse("x", &k), -EINVAL, "unknown kind");
        ok(report_kind_parse("monthly", &k) == 0 && k == REPORT_MONTHLY, "parse monthly");
        is_str(report_kind_name(REPORT_TOOL), "tool", "kind name");

        char buf[] = "a,b,c,d,e,f,g,h";
        struct report_query q2 = {0};
        is_int(report_parse_harness_list(buf, &q2), -EINVAL, "8 harnesses: too many");

        json_object *req = json_tokener_parse("{\"report\":\"x\"}");
        struct report_query rq;
        is_int(report_query_from_json(req, &rq, &err), -EINVAL, "json: unknown report");
        is_str(err, "unknown report 'x'", "json: unknown report message");
        json_object_put(req);
        req = json_tokener_parse("{\"report\":\"session\",\"tz\":\"UTC\",\"since\":null,"
                                 "\"until\":\"2026-03-10\",\"harness\":\" pi , openclaw\"}");
        int r = report_query_from_json(req, &rq, &err);
        ok(r == 0 && rq.kind == REPORT_SESSION && !strcmp(rq.tz, "UTC") && !rq.since &&
           !strcmp(rq.until, "2026-03-10"), "json: query fields");
        ok(rq.harness[0] && !strcmp(rq.harness[0], "pi") && rq.harness[1] &&
           !strcmp(rq.harness[1], "openclaw") && !rq.harness[2], "json: \"a,b\" harness list");
        json_object_put(req);
        req = json_tokener_parse("{\"report\":\"daily\",\"harness\":[\"picoclaw\"]}");
        r = report_query_from_json(req, &rq, &err);
        ok(r == 0 && !strcmp(rq.harness[0], "picoclaw") && !rq.harness[1], "json: harness array");
        json_object_put(req);
        req = json_tokener_parse("{\"report\":\"daily\",\"since\":5}");
        is_int(report_query_from_json(req, &rq, &err), -EINVAL, "json: non-string since");
        json_object_put(req);
}

/* Every report's text (what the daemon sends and a client may print as it
 * came) is json-c's own print of its parse, with names from files holding
 * quotes, backslashes, slashes, control bytes and UTF-8. */
static void test_text(void)
{
        static const char hostile[] = "a\"b\\c/d\x01\x1f\x7f caf\xc3\xa9\t\n";
        static const enum report_kind kinds[] = { REPORT_DAILY, REPORT_WEEKLY, REPORT_MONTHLY, REPORT_PROJECT,
                                                  REPORT_SESSION, REPORT_MODEL, REPORT_TOOL, REPORT_BLOCKS };
        static const char *const calls[] = { "bash\"x", NULL };
        int bad = 0;

        put("h1", "pi", hostile, "2026-03-13T10:00:00Z", true, COST_VENDOR, 1000, calls);
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                struct report_query q = {.kind = kinds[i], .tz = "Europe/Berlin", .now_ms = at("2026-03-13T11:00:00Z")};
                char *t = NULL;
                size_t n = 0;
                const char *err = NULL;
                json_object *o = NULL;
                if (report_run_text(L, NULL, &q, &t, &n, &err) < 0 || strlen(t) != n || !(o = json_tokener_parse(t)) ||
                    strcmp(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                           t) != 0) {
                        bad++;
                        printf("#   %s report: %s\n", report_kind_name(kinds[i]), t ? t : err);
                }
                if (kinds[i] == REPORT_SESSION) {
                        bool found = false;
                        for (size_t k = 0; k < rep_nrows(o); k++)
                                found |= sfield(row_at(o, k), "session") && strcmp(sfield(row_at(o, k), "session"), hostile) == 0;
                        ok(found, "session report: the hostile session name parses back byte for byte");
                }
                json_object_put(o);
                free(t);
        }
        is_int(bad, 0, "all eight report kinds: the text is a fixed point of json-c's parse and print");
}

int main(void)
{
        char dir[PATH_MAX];
        static const char *const pi_calls[] = {"bash", "bash", "read", NULL};
        static const char *const pc_calls[] = {"exec", "exec", NULL};
        static const char *const oc_calls[] = {"web", NULL};

        L = rep_ledger_open(dir, sizeof(dir));
        put("p1", "pi", "pi-1", "2026-03-10T12:00:00Z", true, COST_VENDOR, 1500000, pi_calls);
        put("p2", "pi", "pi-1", "2026-03-10T23:30:00Z", true, COST_VENDOR, 250000, NULL);
        put("p3", "pi", "pi-1", "2026-03-10T20:00:00Z", true, COST_NONE + 1, 0, NULL);
        put("c1", "picoclaw", "pc-1", "2026-03-10T13:00:00Z", false, COST_NONE, 0, pc_calls);
        put("o1", "openclaw", "oc-1", "2026-03-12T10:00:00Z", true, COST_COMPUTED, 2000000, oc_calls);

        test_daily();
        test_nulls_and_filter();
        test_range();
        test_monthly_model_session();
        test_tool();
        test_row_json();
        test_errors();
        test_cost_modes();
        test_builder();
        test_text(); /* last: its row changes the totals above */

        rep_ledger_close(L, dir);
        return tap_done();
}
