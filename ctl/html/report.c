/* The HTML report page: head with an inline style sheet (light, dark and
 * print), the caption and totals, the charts each kind gets (svg.c, from
 * series.c), the terminal's table (render_report_table) as <table>, the
 * blocks' notes and the cost legend. Ledger text reaches the page only
 * through html_escape; a Content-Security-Policy forbids scripts and every
 * fetch, so even a mistake here cannot load or run anything. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "html/report.h"
#include "html/escape.h"
#include "jfield.h"
#include "render/render.h"
#include "series.h"
#include "html/svg.h"
#include "table.h"

#define TOP_ENTRIES 10

static const char style[] =
        ":root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;"
        "--head:#f6f8fa;--c0:#4e79a7;--c1:#f28e2b;--c2:#e15759;--c3:#76b7b2;--c4:#59a14f;"
        "--c5:#edc948;--c6:#b07aa1;--c7:#9c755f}\n"
        "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;"
        "--line:#3d444d;--head:#151b23;--c0:#6ea8e8;--c1:#ffa54f;--c2:#ff7b72;--c3:#8fd8d2;"
        "--c4:#7ee07a;--c5:#f7d354;--c6:#d8a0e0;--c7:#c9a27e}}\n"
        "@media print{:root{color-scheme:light;--bg:#ffffff;--fg:#000000;--muted:#444c56;--line:#999999;"
        "--head:#eeeeee;--c0:#4e79a7;--c1:#f28e2b;--c2:#e15759;--c3:#76b7b2;--c4:#59a14f;"
        "--c5:#edc948;--c6:#b07aa1;--c7:#9c755f}body{margin:0;max-width:none}"
        "figure.chart,tr{break-inside:avoid}table{font-size:8pt}tfoot{display:table-row-group}}\n"
        "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
        "body{background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"
        "'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:24px auto;max-width:1200px;padding:0 16px}\n"
        "h1{font-size:22px;margin:0 0 4px}.caption,.muted,footer{color:var(--muted)}\n"
        ".totals{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}"
        ".totals div{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:140px}"
        ".totals .k{display:block;color:var(--muted);font-size:12px}"
        ".totals .v{font-size:20px;font-variant-numeric:tabular-nums}\n"
        "figure.chart{margin:20px 0}figcaption{font-weight:600;margin-bottom:6px}"
        "svg{width:100%;height:auto;display:block}\n"
        "svg .lbl{fill:var(--fg);font-size:12px}svg .grid{stroke:var(--line);stroke-width:1}"
        "svg .ax{stroke:var(--muted);stroke-width:1}\n"
        ".s0{fill:var(--c0);background:var(--c0)}.s1{fill:var(--c1);background:var(--c1)}"
        ".s2{fill:var(--c2);background:var(--c2)}.s3{fill:var(--c3);background:var(--c3)}"
        ".s4{fill:var(--c4);background:var(--c4)}.s5{fill:var(--c5);background:var(--c5)}"
        ".s6{fill:var(--c6);background:var(--c6)}.s7{fill:var(--c7);background:var(--c7)}\n"
        ".legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 16px;"
        "font-size:12px}.sw{display:inline-block;width:10px;height:10px;margin-right:6px;"
        "border-radius:2px}\n"
        "table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;margin:16px 0}"
        "th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;"
        "white-space:nowrap}th{background:var(--head)}td.num,th.num{text-align:right}"
        "tfoot td{font-weight:600;border-top:2px solid var(--fg)}"
        ".scroll{overflow-x:auto}\n";

static bool is_kind(const char *kind, const char *k)
{
        return kind && strcmp(kind, k) == 0;
}

static bool period_kind(const char *kind)
{
        return is_kind(kind, "daily") || is_kind(kind, "weekly") || is_kind(kind, "monthly");
}

int html_wants_series(const char *kind, const char *breakdown)
{
        return (period_kind(kind) || is_kind(kind, "project")) && (!breakdown || !*breakdown);
}

static double num(struct json_object *row, const char *field)
{
        double v;
        return jdouble(row, field, &v) && v > 0 ? v : 0;
}

/* "provider/model" (or the model alone) and its harness: "claude: anthropic/x". */
static void model_name(struct json_object *row, char *buf, size_t cap)
{
        const char *h = jstr(row, "harness"), *p = jstr(row, "provider"), *m = jstr(row, "model");

        snprintf(buf, cap, "%s%s%s%s%s", h ? h : "", h ? ": " : "", p && *p ? p : "",
                 p && *p ? "/" : "", m ? m : jstr(row, "key") ? jstr(row, "key") : "?");
}

/* The series a breakdown row belongs to: its model, or its harness. */
static void breakdown_name(struct json_object *row, char *buf, size_t cap)
{
        const char *b = NULL;
        if (jstr(row, "model"))
                model_name(row, buf, cap);
        else
                snprintf(buf, cap, "%s", (b = jstr(row, "harness")) ? b : "?");
}

/* A label for a report row as a chart category. */
static void cat_label(const char *kind, struct json_object *row, char *buf, size_t cap)
{
        const char *key = jstr(row, "key") ? jstr(row, "key") : "";
        char t[FMT_MAX];

        if (is_kind(kind, "blocks")) {
                fmt_time(row, "start", t);
                snprintf(buf, cap, "%.16s", t);
        } else if (is_kind(kind, "session")) {
                const char *p = jstr(row, "project"), *base = p ? strrchr(p, '/') : NULL;
                const char *s = jstr(row, "session") ? jstr(row, "session") : key;
                base = base && base[1] ? base + 1 : p;
                snprintf(buf, cap, "%s%s%s", base ? base : "", base ? " \xc2\xb7 " : "", s);
        } else if (is_kind(kind, "model")) {
                model_name(row, buf, cap);
        } else if (is_kind(kind, "tool")) {
                const char *h = jstr(row, "harness"), *tool = jstr(row, "tool");
                snprintf(buf, cap, "%s%s%s", h ? h : "", h ? ": " : "", tool ? tool : key);
        } else {
                snprintf(buf, cap, "%s", key);
        }
}

static const struct {
        const char *field, *name;
} token_types[] = {
        { "input_tokens", "input" },
        { "output_tokens", "output" },
        { "cache_read_tokens", "cache read" },
        { "cache_write_tokens", "cache write" },
};

/* Tokens of every row by type: one category per row. */
static int tokens_series(const char *kind, struct json_object *rows, struct series *s)
{
        char cat[512], tip[FMT_MAX];
        int r = 0;

        s->keep_order = true; /* the same colour for a type in every chart */
        for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                cat_label(kind, row, cat, sizeof(cat));
                for (size_t t = 0; r >= 0 && t < sizeof(token_types) / sizeof(token_types[0]); t++)
                        r = series_add(s, cat, token_types[t].name, num(row, token_types[t].field),
                                       fmt_tokens(row, token_types[t].field, tip));
        }
        return r;
}

/* One value per row (cost, or calls for tools), a single series. */
static int single_series(const char *kind, struct json_object *rows, const char *field,
                         const char *name, struct series *s)
{
        char cat[512], tip[FMT_MAX];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                const char *t = s->unit == SERIES_USD ? fmt_cost(row, field, tip) : fmt_tokens(row, field, tip);
                cat_label(kind, row, cat, sizeof(cat));
                r = series_add(s, cat, name, num(row, field), t);
        }
        return r;
}

/* Cost per category, stacked by each row's series (breakdown rows, or
 * blocks by harness). Categories first come from `order` (the report's
 * own rows) so empty periods keep their place. */
static int stacked_cost(const char *kind, struct json_object *order, struct json_object *rows,
                        struct series *s)
{
        char cat[512], name[512], tip[FMT_MAX];
        int r = 0;

        for (size_t i = 0; r >= 0 && order && i < json_object_array_length(order); i++) {
                cat_label(kind, json_object_array_get_idx(order, i), cat, sizeof(cat));
                r = series_cat(s, cat);
        }
        for (size_t i = 0; r >= 0 && i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                cat_label(kind, row, cat, sizeof(cat));
                if (is_kind(kind, "blocks"))
                        snprintf(name, sizeof(name), "%s", jstr(row, "harness") ? jstr(row, "harness") : "?");
                else
                        breakdown_name(row, name, sizeof(name));
                r = series_add(s, cat, name, num(row, "cost_usd"), fmt_cost(row, "cost_usd", tip));
        }
        return r;
}

/* Builds a series, then draws it (columns, or the top entries as bars). */
static int chart(FILE *f, enum series_unit unit, bool bars, const char *title,
                 int (*fill)(struct series *, const char *, struct json_object *, struct json_object *),
                 const char *kind, struct json_object *a, struct json_object *b)
{
        _cleanup_series_ struct series *s = NULL;
        int r = series_new(unit, &s);

        if (r < 0)
                return r;
        s->cut_left = is_kind(kind, "project"); /* the end of a long path says most */
        r = fill(s, kind, a, b);
        if (r >= 0)
                r = series_fold(s, SVG_SERIES_MAX, "other");
        if (r < 0)
                return r;
        if (series_empty(s))
                return 0; /* nothing to draw: no chart */
        if (bars)
                series_top_cats(s, TOP_ENTRIES);
        return bars ? svg_bars(f, title, s) : svg_columns(f, title, s);
}

static int fill_stacked(struct series *s, const char *kind, struct json_object *order, struct json_object *rows)
{
        return stacked_cost(kind, order, rows, s);
}

static int fill_tokens(struct series *s, const char *kind, struct json_object *rows, struct json_object *u)
{
        (void)u;
        return tokens_series(kind, rows, s);
}

static int fill_cost(struct series *s, const char *kind, struct json_object *rows, struct json_object *u)
{
        (void)u;
        return single_series(kind, rows, "cost_usd", "cost", s);
}

static int fill_calls(struct series *s, const char *kind, struct json_object *rows, struct json_object *u)
{
        (void)u;
        return single_series(kind, rows, "calls", "calls", s);
}

static int fill_share(struct series *s, const char *kind, struct json_object *rows, struct json_object *u)
{
        (void)u;
        return single_series(kind, rows, "cost_share_usd", "cost share", s);
}

static const char *period_word(const char *kind)
{
        return is_kind(kind, "weekly") ? "week" : is_kind(kind, "monthly") ? "month" : "day";
}

static int charts(FILE *f, struct json_object *rep, struct json_object *by_series)
{
        const char *kind = jstr(rep, "report"), *bd = jstr(rep, "breakdown");
        struct json_object *rows = jfield(rep, "rows");
        struct json_object *srows = by_series ? jfield(by_series, "rows") : NULL;
        const char *by = srows ? (jstr(by_series, "breakdown") ? jstr(by_series, "breakdown") : "model")
                               : bd;
        char title[128];
        int r = 0;

        if (srows && !json_object_is_type(srows, json_type_array))
                srows = NULL;
        fputs("<section class=\"charts\">\n", f);
        if (period_kind(kind)) {
                if (bd && *bd)
                        srows = rows; /* the report's own breakdown stacks the costs */
                snprintf(title, sizeof(title), "Cost per %s%s%s", period_word(kind),
                         srows ? ", by " : "", srows ? by : "");
                r = srows ? chart(f, SERIES_USD, false, title, fill_stacked, kind, rows, srows)
                          : chart(f, SERIES_USD, false, title, fill_cost, kind, rows, NULL);
                snprintf(title, sizeof(title), "Tokens per %s, by type", period_word(kind));
                /* with a breakdown, a period has several rows: the tokens
                 * chart is then per period and type, summed */
                if (r >= 0)
                        r = chart(f, SERIES_TOKENS, false, title, fill_tokens, kind, rows, NULL);
        } else if (is_kind(kind, "blocks")) {
                r = chart(f, SERIES_USD, false, "Cost per 5-hour block, by harness", fill_stacked, kind,
                          rows, rows);
                if (r >= 0)
                        r = chart(f, SERIES_TOKENS, false, "Tokens per 5-hour block, by type", fill_tokens,
                                  kind, rows, NULL);
        } else if (is_kind(kind, "tool")) {
                r = chart(f, SERIES_COUNT, true, "Top tools by calls", fill_calls, kind, rows, NULL);
                if (r >= 0)
                        r = chart(f, SERIES_USD, true, "Top tools by cost share", fill_share, kind, rows, NULL);
        } else {
                const char *what = is_kind(kind, "session") ? "sessions"
                                   : is_kind(kind, "model") ? "models" : "projects";
                bool stack = is_kind(kind, "project") && (srows || (bd && *bd));
                snprintf(title, sizeof(title), "Top %s by cost%s%s", what, stack ? ", by " : "",
                         stack ? by : "");
                r = stack ? chart(f, SERIES_USD, true, title, fill_stacked, kind, NULL, srows ? srows : rows)
                          : chart(f, SERIES_USD, true, title, fill_cost, kind, rows, NULL);
                snprintf(title, sizeof(title), "Top %s by tokens, by type", what);
                if (r >= 0)
                        r = chart(f, SERIES_TOKENS, true, title, fill_tokens, kind, rows, NULL);
        }
        fputs("</section>\n", f);
        return r;
}

static int table_html(FILE *f, struct json_object *rep)
{
        _cleanup_table_ struct table *t = NULL;
        size_t nc;
        bool foot = false;
        int r = render_report_table(rep, &t);

        if (r < 0)
                return r;
        nc = table_ncols(t);
        fputs("<div class=\"scroll\"><table>\n<thead><tr>", f);
        for (size_t c = 0; c < nc; c++) {
                fputs(table_col_align(t, c) == TABLE_RIGHT ? "<th class=\"num\">" : "<th>", f);
                html_escape(f, table_header(t, c));
                fputs("</th>", f);
        }
        fputs("</tr></thead>\n<tbody>\n", f);
        for (size_t i = 0; i < table_nlines(t); i++) {
                const char *const *cells = table_line(t, i);
                if (!cells) { /* the rule above TOTAL */
                        fputs(foot ? "" : "</tbody>\n<tfoot>\n", f);
                        foot = true;
                        continue;
                }
                fputs("<tr>", f);
                for (size_t c = 0; c < nc; c++) {
                        fputs(table_col_align(t, c) == TABLE_RIGHT ? "<td class=\"num\">" : "<td>", f);
                        html_escape(f, cells[c]);
                        fputs("</td>", f);
                }
                fputs("</tr>\n", f);
        }
        fputs(foot ? "</tfoot>\n" : "</tbody>\n", f);
        fputs("</table></div>\n", f);
        return 0;
}

/* Text a FILE renderer writes (the caption, the blocks' notes), one
 * <p class=cls> per line. */
static int lines_html(FILE *f, void (*render)(FILE *, struct json_object *), struct json_object *rep,
                      const char *cls)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);

        if (!m)
                return -ENOMEM;
        render(m, rep);
        if (fclose(m) != 0) {
                free(buf);
                return -ENOMEM;
        }
        for (char *p = buf, *nl; p && *p; p = nl ? nl + 1 : NULL) {
                nl = strchr(p, '\n');
                fprintf(f, "<p class=\"%s\">", cls);
                html_escape_n(f, p, nl ? (size_t)(nl - p) : strlen(p));
                fputs("</p>\n", f);
        }
        free(buf);
        return 0;
}

static void total_card(FILE *f, const char *k, const char *v)
{
        fputs("<div><span class=\"k\">", f);
        html_escape(f, k);
        fputs("</span><span class=\"v\">", f);
        html_escape(f, v);
        fputs("</span></div>", f);
}

static void totals_html(FILE *f, struct json_object *rep)
{
        struct json_object *tot = jfield(rep, "totals");
        char b[FMT_MAX];

        fputs("<section class=\"totals\">", f);
        if (is_kind(jstr(rep, "report"), "tool")) {
                total_card(f, "tool calls", fmt_tokens(tot, "calls", b));
                total_card(f, "cost share", fmt_cost(tot, "cost_share_usd", b));
        } else {
                total_card(f, "cost", fmt_cost(tot, "cost_usd", b));
                total_card(f, "total tokens", fmt_tokens(tot, "total_tokens", b));
                total_card(f, "events", fmt_tokens(tot, "events", b));
                total_card(f, "rows", fmt_u64(json_object_array_length(jfield(rep, "rows")), b));
        }
        fputs("</section>\n", f);
}

int html_report(FILE *f, struct json_object *rep, struct json_object *by_series, const char *generated)
{
        struct json_object *rows = jfield(rep, "rows");
        const char *kind = jstr(rep, "report");
        int r = 0;

        if (!rows || !json_object_is_type(rows, json_type_array))
                return -EINVAL;
        fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'\">\n"
              "<meta name=\"color-scheme\" content=\"light dark\">\n"
              "<meta name=\"generator\" content=\"agentmeterctl " AM_VERSION "\">\n<title>agentmeterd: ", f);
        html_escape(f, kind ? kind : "usage");
        fputs(" report</title>\n<style>\n", f);
        fputs(style, f);
        fputs("</style>\n</head>\n<body>\n<header><h1>agentmeterd: ", f);
        html_escape(f, kind ? kind : "usage");
        fputs(" report</h1>\n", f);
        r = lines_html(f, render_caption, rep, "caption");
        fputs("</header>\n<main>\n", f);
        if (r >= 0 && json_object_array_length(rows) == 0) {
                fputs("<p>" RENDER_NO_ROWS "</p>\n", f);
        } else if (r >= 0) {
                totals_html(f, rep);
                r = charts(f, rep, by_series);
                if (r >= 0)
                        r = table_html(f, rep);
                if (r >= 0)
                        r = lines_html(f, render_report_notes, rep, "note");
        }
        fputs("</main>\n<footer>\n<p>", f);
        html_escape(f, FMT_COST_LEGEND);
        fputs(".</p>\n<p>Charts: costs in US dollars as in the table (a \xe2\x80\x94 cost draws no bar); "
              "tokens: input, output (reasoning included), cache read and cache write; hover a bar "
              "for its figure.</p>\n", f);
        if (generated) {
                fputs("<p>Made by agentmeterctl " AM_VERSION " at ", f);
                html_escape(f, generated);
                fputs(".</p>\n", f);
        }
        fputs("</footer>\n</body>\n</html>\n", f);
        if (r < 0)
                return r;
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

/* The parts `agentmeterctl web` puts in its live page (web/view.c). */
const char *html_report_style(void)
{
        return style;
}

int html_report_charts(FILE *f, struct json_object *rep, struct json_object *by_series)
{
        return charts(f, rep, by_series);
}

int html_report_table(FILE *f, struct json_object *rep)
{
        return table_html(f, rep);
}
