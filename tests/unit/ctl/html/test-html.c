/* Unit tests for the HTML report's parts: escaping, the chart numbers
 * (folding, order, top entries), axis figures, the page built from a
 * hand-made report (the table as the terminal's, the marks, ledger text
 * escaped everywhere), and the completion engine's candidates. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "complete/complete.h"
#include "html/report.h"
#include "html/escape.h"
#include "series.h"
#include "html/svg.h"
#include "tap.h"


static void test_escape(void)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        html_escape(f, "<script>alert(\"x\")</script>'&amp;");
        html_escape(f, NULL);
        html_escape_n(f, "a<b", 2);
        fclose(f);
        is_str(buf, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;amp;a&lt;",
               "the five characters become entities, nothing else changes; n bytes only");
        free(buf);
}

static void test_series(void)
{
        struct series *s = NULL;

        is_int(series_new(SERIES_USD, &s), 0, "series_new");
        series_cat(s, "d1");
        series_cat(s, "d2");
        series_add(s, "d1", "small", 1, "$1");
        series_add(s, "d2", "big", 10, "$10");
        series_add(s, "d2", "zero", 0, "$0");
        series_add(s, "d1", "mid", 5, "$5");
        series_add(s, "d1", "mid", 1, "$1");
        ok(s->n_cats == 2 && s->n_series == 4, "two categories, four series");
        ok(s->v[0 * 4 + 2] == 0 && s->v[0 * 4 + 3] == 6, "a cell sums what is added to it");
        ok(s->tips[0 * 4 + 3] == NULL, "a summed cell has no single figure");
        is_str(s->tips[1 * 4 + 1], "$10", "a one-row cell keeps its figure");
        is_int(series_fold(s, 8, "other"), 0, "fold");
        ok(s->n_series == 3, "the series without a value is dropped");
        ok(strcmp(s->names[0], "big") == 0 && strcmp(s->names[1], "mid") == 0 && strcmp(s->names[2], "small") == 0,
           "ordered by their sums, largest first");
        is_int(series_fold(s, 2, "other"), 0, "fold to two");
        ok(s->n_series == 2 && strcmp(s->names[1], "other") == 0 && s->v[0 * 2 + 1] == 7,
           "the rest folded into other (5+1 + 1 on d1)");
        ok(series_max_stack(s) == 10 && !series_empty(s), "the largest stack");
        series_top_cats(s, 1);
        ok(s->n_cats == 1 && strcmp(s->cats[0], "d2") == 0, "top entries: the category with the largest sum");
        series_free(s);

        is_int(series_new(SERIES_TOKENS, &s), 0, "series_new (tokens)");
        s->keep_order = true;
        series_add(s, "c", "input", 1, NULL);
        series_add(s, "c", "output", 9, NULL);
        series_add(s, "c", "cache", 0, NULL);
        series_fold(s, 8, "other");
        ok(s->n_series == 2 && strcmp(s->names[0], "input") == 0, "keep_order: types stay in their order");
        ok(!series_empty(s), "not empty");
        series_free(s);
        is_int(series_new(SERIES_USD, &s), 0, "series_new (empty)");
        series_add(s, "c", "x", 0, NULL);
        ok(series_empty(s), "only zeros: empty (no chart)");
        is_int(series_fold(s, 8, "other"), 0, "folding nothing");
        series_free(s);
}

static void test_axis(void)
{
        char b[64];
        svg_axis_value(SERIES_USD, 2, b, sizeof(b));
        is_str(b, "$2.00", "dollars");
        svg_axis_value(SERIES_USD, 0.05, b, sizeof(b));
        is_str(b, "$0.050", "cents");
        svg_axis_value(SERIES_USD, 0.0025, b, sizeof(b));
        is_str(b, "$0.0025", "a fraction of a cent");
        svg_axis_value(SERIES_TOKENS, 1250000, b, sizeof(b));
        is_str(b, "1.25M", "millions");
        svg_axis_value(SERIES_TOKENS, 40000, b, sizeof(b));
        is_str(b, "40k", "thousands");
        svg_axis_value(SERIES_COUNT, 12, b, sizeof(b));
        is_str(b, "12", "counts");
}

static char *page(const char *json, const char *series_json, int *ret_r)
{
        struct json_object *o = json_tokener_parse(json), *s = series_json ? json_tokener_parse(series_json) : NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        *ret_r = html_report(f, o, s, "2026-12-01 10:00:00");
        fclose(f);
        json_object_put(o);
        json_object_put(s);
        return buf;
}

static void test_page(void)
{
        static const char rep[] =
                "{\"report\":\"daily\",\"tz\":\"UTC\",\"since\":null,\"until\":null,\"harness\":null,"
                "\"rows\":[{\"key\":\"2026-11-30\",\"events\":2,\"input_tokens\":100,\"output_tokens\":10,"
                "\"cache_read_tokens\":0,\"cache_write_tokens\":0,\"reasoning_tokens\":0,\"total_tokens\":110,"
                "\"cost_usd\":1.5,\"cost_source\":\"mixed\",\"unpriced_events\":1},"
                "{\"key\":\"2026-12-01\",\"events\":1,\"input_tokens\":null,\"output_tokens\":null,"
                "\"cache_read_tokens\":null,\"cache_write_tokens\":null,\"reasoning_tokens\":null,"
                "\"total_tokens\":null,\"cost_usd\":null,\"cost_source\":null,\"unpriced_events\":1}],"
                "\"totals\":{\"events\":3,\"input_tokens\":100,\"output_tokens\":10,\"cache_read_tokens\":0,"
                "\"cache_write_tokens\":0,\"reasoning_tokens\":0,\"total_tokens\":110,\"cost_usd\":1.5,"
                "\"cost_source\":\"mixed\",\"unpriced_events\":2}}";
        static const char by[] =
                "{\"report\":\"daily\",\"breakdown\":\"model\",\"rows\":["
                "{\"key\":\"2026-11-30\",\"harness\":\"pi\",\"provider\":\"p\",\"model\":\"<i>m</i>\",\"cost_usd\":1.0,"
                "\"cost_source\":\"vendor-reported\",\"unpriced_events\":0},"
                "{\"key\":\"2026-11-30\",\"harness\":\"pi\",\"provider\":\"p\",\"model\":\"n\",\"cost_usd\":0.5,"
                "\"cost_source\":\"computed\",\"unpriced_events\":1}]}";
        int r;
        char *p = page(rep, by, &r);

        is_int(r, 0, "html_report");
        ok(p && strncmp(p, "<!DOCTYPE html>\n", 16) == 0 && strstr(p, "</html>\n"), "a whole document");
        ok(p && strstr(p, "default-src 'none'") && !strstr(p, "<script") && !strstr(p, "http:") && !strstr(p, "https:"),
           "a CSP, no script, no URL");
        ok(p && strstr(p, "<td class=\"num\">~$1.500000*</td>"), "the table's cost with both marks");
        ok(p && strstr(p, "<td class=\"num\">\xe2\x80\x94</td>"), "an unknown figure as the dash");
        ok(p && strstr(p, "</tbody>\n<tfoot>\n<tr><td>TOTAL</td>"), "TOTAL in the table's foot");
        ok(p && strstr(p, "Cost per day, by model"), "the cost chart stacks by model");
        ok(p && strstr(p, "pi: p/&lt;i&gt;m&lt;/i&gt;") && !strstr(p, "<i>"), "a model name escaped in the legend");
        ok(p && strstr(p, "<title>2026-11-30 \xc2\xb7 pi: p/n: ~$0.500000*</title>"),
           "a bar's tooltip: day, model and the figure as the table shows it");
        ok(p && strstr(p, "Tokens per day, by type"), "the tokens chart");
        ok(p && strstr(p, "Made by agentmeterctl"), "when it was made");
        free(p);

        p = page("{\"report\":\"daily\",\"rows\":[],\"totals\":{}}", NULL, &r);
        ok(r == 0 && p && strstr(p, "no usage recorded") && !strstr(p, "<svg"), "no rows: said, no chart");
        free(p);
        p = page("{\"report\":\"daily\"}", NULL, &r);
        is_int(r, -EINVAL, "not a report: -EINVAL");
        free(p);
        ok(html_wants_series("daily", NULL) && html_wants_series("project", "") &&
           !html_wants_series("daily", "harness") && !html_wants_series("session", NULL),
           "which kinds ask for the model breakdown");
}

/* ---- completion ---- */

static const struct complete_command cmds[] = {
        { "report", 1 | 2 | 4, 1, CV_KIND, "a report" },
        { "status", 1, 0, CV_NONE, "status" },
        { "__hidden", 0, 0, CV_NONE, NULL },
};
static const struct complete_option opts[] = {
        { "json", 0, 'j', 1, CV_NONE, "JSON" },
        { "harness", 1, 'H', 2, CV_HARNESS, "harnesses" },
        { "session", 1, 'I', 4, CV_SESSION, "a session" },
        { "socket", 1, 'S', 0, CV_FILE, "socket" },
};
static char last_prefix[64];
static void fake_daemon(void *u, enum complete_value what, const char *prefix, FILE *out)
{
        (void)u;
        snprintf(last_prefix, sizeof(last_prefix), "%s", prefix);
        if (what == CV_SESSION)
                fputs("s-1\tpi /work\ns-2\tpi /x\n", out);
}

static char *cands(int n, char **words)
{
        struct complete_spec sp = { cmds, 3, opts, 4, fake_daemon, NULL };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        complete_words(f, &sp, n, words);
        fclose(f);
        return buf;
}
#define CANDS(...) cands(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *), (char *[]){ __VA_ARGS__ })

static void test_complete(void)
{
        char *c;

        c = CANDS("");
        is_str(c, "report\ta report\nstatus\tstatus\n", "commands (a hidden one not offered)");
        free(c);
        c = CANDS("st");
        is_str(c, "status\tstatus\n", "a command by its prefix");
        free(c);
        c = CANDS("report", "");
        ok(c && strstr(c, "daily\n") && strstr(c, "blocks\n") && strstr(c, "tool\n"), "report kinds");
        free(c);
        c = CANDS("report", "daily", "");
        is_str(c, "", "after the kind, no more positional words");
        free(c);
        c = CANDS("status", "--");
        is_str(c, "--json\tJSON\n--socket\tsocket\n", "the options a command takes, and the global ones");
        free(c);
        c = CANDS("report", "--json", "--");
        ok(c && !strstr(c, "--json") && strstr(c, "--harness"), "an option given once is not offered again");
        free(c);
        c = CANDS("report", "--harness", "pi", "--");
        ok(c && strstr(c, "--harness"), "--harness may be repeated");
        free(c);
        c = CANDS("report", "--harness", "");
        ok(c && strstr(c, "pi\t") && strstr(c, "claude\t"), "--harness: adapter ids from the registry");
        free(c);
        c = CANDS("report", "--harness=pi,cla");
        is_str(c, "--harness=pi,claude\tClaude Code\n", "--harness=LIST: the last element, the rest kept");
        free(c);
        c = CANDS("report", "--session", "s-");
        is_str(c, "s-1\tpi /work\ns-2\tpi /x\n", "--session: the daemon's values");
        is_str(last_prefix, "s-", "... asked with the prefix");
        free(c);
        c = CANDS("report", "--session=s");
        is_str(c, "--session=s-1\tpi /work\n--session=s-2\tpi /x\n", "--session=: the option kept in front");
        free(c);
        c = CANDS("--socket", "");
        is_str(c, ":files\n", "a path: the shell completes files");
        free(c);
        c = CANDS("--socket", "/x", "rep");
        is_str(c, "report\ta report\n", "a global option's value is skipped when finding the command");
        free(c);
        ok(complete_script("bash") && complete_script("zsh") && complete_script("fish") && !complete_script("csh"),
           "the three scripts");
        ok(strstr(complete_script("bash"), "__complete") && strstr(complete_script("fish"), "__complete") &&
           strstr(complete_script("zsh"), "__complete"), "each asks agentmeterctl __complete");
}

int main(void)
{
        test_escape();
        test_series();
        test_axis();
        test_page();
        test_complete();
        return tap_done();
}
