/* The live page's HTML fragments and state (view.h): the period cards, the
 * five-hour block, the month's charts (html/report.c's), the top sessions,
 * projects and models, the team's machines and users, the last calls. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blocks.h"
#include "fmt.h"
#include "html/escape.h"
#include "html/report.h"
#include "jfield.h"
#include "timefmt.h"
#include "web/feed.h"
#include "web/view.h"

#define TOP_ROWS 8

static const char *const period_names[TOP_PERIODS] = { "today", "this week", "this month" };
static const char *const period_ids[TOP_PERIODS] = { "today", "week", "month" };

static void period_cards(FILE *f, const struct web_data *d)
{
        char c[FMT_MAX], t[FMT_MAX], e[FMT_MAX];

        fputs("<section class=\"totals\" id=\"periods\">", f);
        for (int p = 0; p < TOP_PERIODS; p++) {
                struct json_object *tot = jfield(d->period[p], "totals");
                fprintf(f, "<div data-period=\"%s\"><span class=\"k\">%s</span><span class=\"v\">", period_ids[p],
                        period_names[p]);
                html_escape(f, d->period[p] ? fmt_cost(tot, "cost_usd", c) : FMT_DASH);
                fputs("</span><span class=\"k\">", f);
                html_escape(f, d->period[p] ? fmt_tokens(tot, "total_tokens", t) : FMT_DASH);
                fputs(" tokens, ", f);
                html_escape(f, d->period[p] ? fmt_tokens(tot, "events", e) : FMT_DASH);
                fputs(" calls</span></div>", f);
        }
        fputs("</section>\n", f);
}

static void hhmm(int64_t ms, char *buf)
{
        time_t t = (time_t)(ms / 1000);
        struct tm tm;
        strftime(buf, 16, "%H:%M", localtime_r(&t, &tm));
}

static void block_card(FILE *f, const struct web_data *d)
{
        struct block_info b;
        char a[FMT_MAX], c[FMT_MAX], k[FMT_MAX], l[FMT_MAX], s[16], e[16];
        int64_t now = timefmt_now_ms();

        if (d->team)
                return;
        blocks_current(&d->m.blocks, now, &b);
        fputs("<section class=\"block\" id=\"block\"><h2>5-hour block</h2>", f);
        if (!b.active) {
                fputs("<p class=\"muted\">none active (the next call starts one)</p></section>\n", f);
                return;
        }
        hhmm(b.start_ms, s);
        hhmm(b.end_ms, e);
        fprintf(f, "<p><b>%s</b> in %s calls, %s tokens%s; %s&ndash;%s, %s left</p>",
                fmt_usd((double)b.cost_nano / 1e9, a), fmt_u64(b.calls, c), fmt_u64(b.tokens, k),
                b.unpriced ? " (some unpriced)" : "", s, e, fmt_duration((uint64_t)(b.end_ms - now) / 1000, l));
        fprintf(f, "<p class=\"muted\">burn %s/h, %s tokens/min; at this rate %s by %s</p></section>\n",
                fmt_usd(b.usd_per_hour, a), fmt_u64((uint64_t)b.tokens_per_min, c),
                fmt_usd((double)b.projected_nano / 1e9, k), e);
}

static double cost_of(struct json_object *row)
{
        double v;
        return jdouble(row, "cost_usd", &v) ? v : -1;
}

static int by_cost(const void *x, const void *y)
{
        double a = cost_of(*(struct json_object *const *)x), b = cost_of(*(struct json_object *const *)y);
        return a < b ? 1 : a > b ? -1 : 0;
}

/* The month's top entries of a session, project or model report (of a
 * session report with a limit, the costliest of its rows, said so). */
static void top_table(FILE *f, const char *title, struct json_object *rep, int k)
{
        struct json_object *rows = jfield(rep, "rows"), *v[WEB_TOP_READ];
        size_t n = 0;
        char c[FMT_MAX], t[FMT_MAX];
        int64_t total = jfield(rep, "rows_total") ? json_object_get_int64(jfield(rep, "rows_total")) : 0;

        if (!rows || !json_object_is_type(rows, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(rows) && n < sizeof(v) / sizeof(v[0]); i++)
                v[n++] = json_object_array_get_idx(rows, i);
        qsort(v, n, sizeof(v[0]), by_cost);
        fprintf(f, "<div class=\"top\"><h2>%s</h2><div class=\"scroll\"><table><thead><tr><th>%s</th>"
                   "<th class=\"num\">cost</th><th class=\"num\">tokens</th></tr></thead><tbody>",
                title, k == WEB_TOP_SESSION ? "session" : k == WEB_TOP_PROJECT ? "project" : "model");
        for (size_t i = 0; i < n && i < TOP_ROWS; i++) {
                const char *h = jstr(v[i], "harness"), *name;
                fputs("<tr><td>", f);
                if (k == WEB_TOP_SESSION) {
                        const char *p = jstr(v[i], "project"), *slash = p ? strrchr(p, '/') : NULL;
                        html_escape(f, slash && slash[1] ? slash + 1 : p);
                        fputs(" <span class=\"muted\">", f);
                        html_escape(f, h);
                        fputs(" ", f);
                        name = jstr(v[i], "session");
                        html_escape_n(f, name ? name : "", name && strlen(name) > 8 ? 8 : name ? strlen(name) : 0);
                        fputs("</span>", f);
                } else if (k == WEB_TOP_PROJECT) {
                        html_escape(f, jstr(v[i], "project") ? jstr(v[i], "project") : "(no project)");
                } else {
                        html_escape(f, jstr(v[i], "model") ? jstr(v[i], "model") : "(unknown model)");
                        fputs(" <span class=\"muted\">", f);
                        html_escape(f, h);
                        fputs("</span>", f);
                }
                fputs("</td><td class=\"num\">", f);
                html_escape(f, fmt_cost(v[i], "cost_usd", c));
                fputs("</td><td class=\"num\">", f);
                html_escape(f, fmt_tokens(v[i], "total_tokens", t));
                fputs("</td></tr>", f);
        }
        if (n == 0)
                fputs("<tr><td colspan=\"3\" class=\"muted\">nothing this month</td></tr>", f);
        if (k == WEB_TOP_SESSION && total > (int64_t)n) /* the request's limit: the newest only */
                fprintf(f,
                        "<tr><td colspan=\"3\" class=\"muted\">the costliest of the newest %zu of %lld "
                        "sessions</td></tr>",
                        n, (long long)total);
        fputs("</tbody></table></div></div>\n", f);
}

static void calls_table(FILE *f, const struct web_data *d)
{
        char tm[FMT_MAX], tok[FMT_MAX], cost[FMT_MAX];

        fputs("<div class=\"scroll\"><table id=\"calls-table\"><thead><tr><th>time</th><th>harness</th>"
              "<th>model</th><th>project</th><th class=\"num\">tokens</th><th class=\"num\">cost</th>"
              "</tr></thead><tbody>",
              f);
        for (size_t i = d->n_recent; i-- > 0;) {
                struct json_object *r = d->recent[i];
                const char *p = jstr(r, "project"), *slash = p ? strrchr(p, '/') : NULL;
                fputs("<tr data-key=\"", f);
                html_escape(f, jstr(r, "key"));
                fputs("\"><td>", f);
                html_escape(f, fmt_time(r, "time", tm));
                fputs("</td><td>", f);
                html_escape(f, jstr(r, "harness"));
                fputs("</td><td>", f);
                html_escape(f, jstr(r, "model"));
                fputs("</td><td>", f);
                html_escape(f, slash && slash[1] ? slash + 1 : p);
                fputs("</td><td class=\"num\">", f);
                html_escape(f, fmt_tokens(r, "total_tokens", tok));
                fputs("</td><td class=\"num\">", f);
                html_escape(f, fmt_cost(r, "cost_usd", cost));
                fputs("</td></tr>", f);
        }
        if (d->n_recent == 0)
                fputs("<tr><td colspan=\"6\" class=\"muted\">no call yet</td></tr>", f);
        fputs("</tbody></table></div>\n", f);
}

static char *fragment(const struct web_data *d, bool calls)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return NULL;
        if (calls && d->team) {
                fputs("<p class=\"muted\">The team ledger keeps sums by machine and user; each "
                      "machine's own page shows its calls as they land.</p>\n", f);
        } else if (calls) {
                calls_table(f, d);
        } else {
                period_cards(f, d);
                block_card(f, d);
                if (d->daily && json_object_array_length(jfield(d->daily, "rows")) > 0)
                        (void)html_report_charts(f, d->daily, NULL);
                fputs("<section class=\"tops\">", f);
                top_table(f, "Top sessions this month", d->tops[WEB_TOP_SESSION], WEB_TOP_SESSION);
                top_table(f, "Top projects this month", d->tops[WEB_TOP_PROJECT], WEB_TOP_PROJECT);
                top_table(f, "Top models this month", d->tops[WEB_TOP_MODEL], WEB_TOP_MODEL);
                fputs("</section>\n", f);
                for (int k = 0; d->team && k < 2; k++) {
                        if (!d->parties[k])
                                continue;
                        fprintf(f, "<section class=\"party\"><h2>This month by %s</h2>\n", k ? "user" : "machine");
                        (void)html_report_table(f, d->parties[k]);
                        fputs("</section>\n", f);
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static struct json_object *plain_totals(const struct web_data *d)
{
        struct json_object *o = json_object_new_object();

        for (int p = 0; p < TOP_PERIODS; p++) {
                struct json_object *t = jfield(d->period[p], "totals");
                json_object_object_add(o, period_ids[p], t ? json_object_get(t) : NULL);
        }
        return o;
}

char *web_view_state(const struct web_data *d)
{
        _cleanup_json_ struct json_object *o = json_object_new_object();
        char *view = fragment(d, false), *calls = fragment(d, true), *text = NULL;

        if (o && view && calls) {
                json_object_object_add(o, "live", json_object_new_boolean(d->live));
                json_object_object_add(o, "team", json_object_new_boolean(d->team));
                json_object_object_add(o, "problem", d->problem[0] ? json_object_new_string(d->problem) : NULL);
                json_object_object_add(o, "totals", plain_totals(d));
                json_object_object_add(o, "view", json_object_new_string(view));
                json_object_object_add(o, "calls", json_object_new_string(calls));
                json_object_object_add(o, "legend", json_object_new_string(FMT_COST_LEGEND));
                text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                        JSON_C_TO_STRING_NOSLASHESCAPE));
        }
        free(view);
        free(calls);
        return text;
}
