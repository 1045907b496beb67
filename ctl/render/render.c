/* Report rendering: tables, CSV and JSON from the daemon's report object,
 * and the readable `tail` line. The field names are common/report/report.h's. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "jfield.h"
#include "registry.h"
#include "render/render.h"
#include "table.h"
#include "termtext.h"

/* Token columns, in the order shown. */
static const struct {
        const char *field, *title;
} tok_cols[] = {
        { "input_tokens", "input" },           { "output_tokens", "output" },
        { "cache_read_tokens", "cache read" }, { "cache_write_tokens", "cache write" },
        { "reasoning_tokens", "reasoning" },   { "total_tokens", "total tokens" },
};
#define N_TOK (sizeof(tok_cols) / sizeof(tok_cols[0]))
#define TOK_REASONING 4

/* What each report kind shows before the sums. */
struct kind_cols {
        const char *kind;
        const char *key_title;
        const char *extra[4];      /* row fields shown as columns after the key */
        const char *csv_extra[6];  /* row fields in CSV after the key */
};
static const struct kind_cols kinds[] = {
        { "daily", "date", { NULL }, { NULL } },
        { "monthly", "month", { NULL }, { NULL } },
        { "session", "session", { "harness", "last", "model", NULL },
          { "harness", "project", "provider", "model", "first", "last" } },
        { "model", "model", { "harness", NULL }, { "harness", "provider", "model", NULL } },
        { "weekly", "week", { NULL }, { NULL } },
        { "project", "project", { NULL }, { NULL } },
        { "blocks", "block start", { "harness", "last", NULL },
          { "harness", "start", "end", "last", "active", NULL } },
};

/* The columns a --breakdown adds (daily, weekly, monthly, project). */
static const struct kind_cols breakdowns[] = {
        { "harness", NULL, { "harness", NULL }, { "harness", NULL } },
        { "model", NULL, { "harness", "model", NULL }, { "harness", "provider", "model", NULL } },
};

/* The extra columns of a report: its kind's, or its breakdown's. */
static const struct kind_cols *extra_cols(struct json_object *rep)
{
        const char *b = jstr(rep, "breakdown");
        for (size_t i = 0; b && i < sizeof(breakdowns) / sizeof(breakdowns[0]); i++)
                if (strcmp(b, breakdowns[i].kind) == 0)
                        return &breakdowns[i];
        return NULL;
}

static const struct kind_cols *kind_cols(const char *kind)
{
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if (kind && strcmp(kind, kinds[i].kind) == 0)
                        return &kinds[i];
        return &kinds[0];
}

static size_t count(const char *const *v, size_t max)
{
        size_t n = 0;
        while (n < max && v[n])
                n++;
        return n;
}

/* A plain cell for a row field: strings as they are, times shortened, numbers. */
static const char *cell(struct json_object *row, const char *field, char *buf)
{
        struct json_object *v = jfield(row, field);

        if (!v)
                return "";
        if (strcmp(field, "first") == 0 || strcmp(field, "last") == 0 ||
            strcmp(field, "time") == 0 || strcmp(field, "start") == 0 || strcmp(field, "end") == 0)
                return fmt_time(row, field, buf);
        if (json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        snprintf(buf, FMT_MAX, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        return buf;
}

static bool show_reasoning(struct json_object *rows, struct json_object *totals)
{
        if (jint_or(totals, "reasoning_tokens", 0) > 0)
                return true;
        for (size_t i = 0; i < json_object_array_length(rows); i++)
                if (jint_or(json_object_array_get_idx(rows, i), "reasoning_tokens", 0) > 0)
                        return true;
        return false;
}

void render_caption(FILE *f, struct json_object *rep)
{
        const char *since = jstr(rep, "since"), *until = jstr(rep, "until"), *tz = jstr(rep, "tz");
        struct json_object *h = jfield(rep, "harness");

        fprintf(f, "%s report", jstr(rep, "report") ? termtext_tmp(jstr(rep, "report")) : "usage");
        if (since || until)
                fprintf(f, ", %s .. %s", since ? termtext_tmp(since) : "start",
                        until ? termtext_tmp(until) : "now");
        if (tz && *tz)
                fprintf(f, ", time zone %s", termtext_tmp(tz));
        if (jbool(rep, "team"))
                fputs(", team ledger", f);
        for (int k = 0; k < 2; k++) {
                struct json_object *l = jfield(rep, k ? "users" : "machines");
                for (size_t i = 0; l && json_object_is_type(l, json_type_array) && i < json_object_array_length(l); i++)
                        fprintf(f, "%s%s", i ? "," : k ? ", user " : ", machine ",
                                termtext_tmp(json_object_get_string(json_object_array_get_idx(l, i))));
        }
        if (h && json_object_is_type(h, json_type_array) && json_object_array_length(h) > 0) {
                fputs(", harness ", f);
                for (size_t i = 0; i < json_object_array_length(h); i++)
                        fprintf(f, "%s%s", i ? "," : "",
                                termtext_tmp(json_object_get_string(json_object_array_get_idx(h, i))));
        }
        if (jstr(rep, "session"))
                fprintf(f, ", session %s", termtext_tmp(jstr(rep, "session")));
        if (jstr(rep, "project"))
                fprintf(f, ", project %s", termtext_tmp(jstr(rep, "project")));
        fputc('\n', f);
}

/* Whether the report names harness id, in a row or in its harness filter. */
static bool report_names(struct json_object *rep, struct json_object *rows, const char *id)
{
        struct json_object *h = jfield(rep, "harness");

        for (size_t i = 0; rows && i < json_object_array_length(rows); i++) {
                const char *r = jstr(json_object_array_get_idx(rows, i), "harness");
                if (r && strcmp(r, id) == 0)
                        return true;
        }
        for (size_t i = 0; h && json_object_is_type(h, json_type_array) && i < json_object_array_length(h); i++) {
                const char *r = json_object_get_string(json_object_array_get_idx(h, i));
                if (r && strcmp(r, id) == 0)
                        return true;
        }
        return false;
}

/* Beside the cost legend: what the events column counts for a harness whose
 * rows are steps between cumulative snapshots rather than model calls. */
static void events_legend(FILE *f, struct json_object *rep, struct json_object *rows)
{
        for (size_t i = 0; registry_adapters[i]; i++) {
                const struct adapter *a = registry_adapters[i];
                if (a->caps.events == CAP_EVENTS_SNAPSHOT_STEPS && report_names(rep, rows, a->id))
                        fprintf(f, "events of %s (%s): snapshot steps, each a change of its cumulative "
                                   "usage seen (one or more model calls), not calls\n",
                                a->display_name, a->id);
        }
}

static int sums_table(struct json_object *rep, struct json_object *rows, struct json_object *totals,
                      struct table **ret_table)
{
        const struct kind_cols *k = kind_cols(jstr(rep, "report"));
        const struct kind_cols *x = extra_cols(rep) ? extra_cols(rep) : k;
        size_t n_extra = count(x->extra, 4);
        bool reasoning = show_reasoning(rows, totals);
        const char *head[16];
        enum table_align al[16];
        size_t nc = 0;
        _cleanup_table_ struct table *t = NULL;
        int r;

        const char *by = jstr(rep, "by"); /* team reports: "machine" or "user" */
        /* a session's origin (the editor of a VS Code extension's task):
         * a column only when some row has one */
        bool origin = false;
        for (size_t i = 0; !origin && i < json_object_array_length(rows); i++)
                origin = jstr(json_object_array_get_idx(rows, i), "origin") != NULL;
        head[nc] = k->key_title, al[nc++] = TABLE_LEFT;
        if (by)
                head[nc] = by, al[nc++] = TABLE_LEFT;
        for (size_t i = 0; i < n_extra; i++)
                head[nc] = x->extra[i], al[nc++] = TABLE_LEFT;
        if (origin)
                head[nc] = "origin", al[nc++] = TABLE_LEFT;
        head[nc] = "events", al[nc++] = TABLE_RIGHT;
        for (size_t i = 0; i < N_TOK; i++)
                if (i != TOK_REASONING || reasoning)
                        head[nc] = tok_cols[i].title, al[nc++] = TABLE_RIGHT;
        head[nc] = "cost", al[nc++] = TABLE_RIGHT;
        r = table_new(nc, head, al, &t);
        if (r < 0)
                return r;

        size_t n = json_object_array_length(rows);
        for (size_t i = 0; i <= n; i++) {
                struct json_object *row = i < n ? json_object_array_get_idx(rows, i) : totals;
                char buf[16][FMT_MAX];
                const char *c[16];
                size_t j = 0;

                if (i == n) {
                        r = table_add_rule(t);
                        if (r < 0)
                                return r;
                }
                c[j] = i < n ? cell(row, jfield(row, "start") ? "start" : "key", buf[j]) : "TOTAL", j++;
                if (by)
                        c[j] = i < n ? cell(row, by, buf[j]) : "", j++;
                for (size_t e = 0; e < n_extra; e++, j++)
                        c[j] = i < n ? cell(row, x->extra[e], buf[j]) : "";
                if (origin)
                        c[j] = i < n ? cell(row, "origin", buf[j]) : "", j++;
                c[j] = fmt_tokens(row, "events", buf[j]), j++;
                for (size_t e = 0; e < N_TOK; e++)
                        if (e != TOK_REASONING || reasoning)
                                c[j] = fmt_tokens(row, tok_cols[e].field, buf[j]), j++;
                c[j] = fmt_cost(row, "cost_usd", buf[j]), j++;
                r = table_add(t, c);
                if (r < 0)
                        return r;
        }
        *ret_table = t;
        t = NULL;
        return 0;
}

/* Tool report: harness, tool, calls, cost share; the TOTAL is the report's
 * totals when they carry "calls", else the sum of the rows. */
/* The real limit windows a harness reported (Claude Code's status line
 * input, kept by the daemon): one line per harness and window. */
static void real_limits(FILE *f, struct json_object *rl)
{
        static const char *const windows[][2] = { { "five_hour", "5-hour" }, { "seven_day", "7-day" } };

        if (!rl || !json_object_is_type(rl, json_type_object))
                return;
        json_object_object_foreach(rl, harness, lim) {
                char when[FMT_MAX];
                for (size_t i = 0; i < 2; i++) {
                        struct json_object *w = jfield(lim, windows[i][0]);
                        double pct;
                        int64_t resets;
                        if (!w || !jdouble(w, "used_percentage", &pct))
                                continue;
                        fprintf(f, "%.20s reported its real %s window: %.1f%% used", harness,
                                windows[i][1], pct);
                        if (jint(w, "resets_at", &resets)) {
                                struct json_object *t = json_object_new_int64(resets * 1000);
                                struct json_object *o = json_object_new_object();
                                json_object_object_add(o, "t", t);
                                fprintf(f, ", resets %s", fmt_time(o, "t", when));
                                json_object_put(o);
                        }
                        fprintf(f, " (as of %s)\n", fmt_time(lim, "received_at", when));
                }
        }
}

/* The windows a harness wrote into its own files (Codex rate_limits), per
 * root: authoritative, unlike the computed blocks above. */
static void recorded_limits(FILE *f, struct json_object *arr)
{
        static const char *const windows[] = { "primary", "secondary" };

        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
                struct json_object *rl = json_object_array_get_idx(arr, i);
                char when[FMT_MAX], seen[FMT_MAX], root[256];
                for (size_t k = 0; k < 2; k++) {
                        struct json_object *w = jfield(rl, windows[k]);
                        double pct;
                        int64_t minutes = 0, resets;
                        if (!w || !jdouble(w, "used_percent", &pct))
                                continue;
                        (void)jint(w, "window_minutes", &minutes);
                        fprintf(f, "%s reported its real %s window (%lld min): %.1f%% used",
                                termtext(jstr(rl, "root"), root, sizeof(root)),
                                windows[k], (long long)minutes, pct);
                        if (jint(w, "resets_at", &resets)) {
                                struct json_object *o = json_object_new_object();
                                json_object_object_add(o, "t", json_object_new_int64(resets * 1000));
                                fprintf(f, ", resets %s", fmt_time(o, "t", when));
                                json_object_put(o);
                        }
                        fprintf(f, " (as of %s)\n", fmt_time(rl, "observed_ms", seen));
                }
        }
}

/* Blocks: one line per active block after the table. */
static void active_blocks(FILE *f, struct json_object *rows)
{
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                struct json_object *act = jfield(row, "active");
                char e[FMT_MAX], l[FMT_MAX], c[FMT_MAX], b[FMT_MAX], p[FMT_MAX], end[FMT_MAX];
                int64_t el, rem;
                if (!act || !json_object_get_boolean(act) || !jint(row, "elapsed_s", &el) ||
                    !jint(row, "remaining_s", &rem))
                        continue;
                fprintf(f, "active %s block: %s elapsed, %s left (until %s); %s so far, burn %s/h, "
                           "projected %s\n",
                        jstr(row, "harness") ? jstr(row, "harness") : "?",
                        fmt_duration((uint64_t)(el > 0 ? el : 0), e),
                        fmt_duration((uint64_t)(rem > 0 ? rem : 0), l), fmt_time(row, "end", end),
                        fmt_cost(row, "cost_usd", c), fmt_cost(row, "burn_usd_per_hour", b),
                        fmt_cost(row, "projected_cost_usd", p));
        }
}

static int tool_table(const char *by, struct json_object *rows, struct json_object *totals,
                      struct table **ret_table)
{
        const char *head[] = { "harness", "tool", "calls", "cost share", NULL };
        static const enum table_align al[] = { TABLE_LEFT, TABLE_LEFT, TABLE_RIGHT, TABLE_RIGHT, TABLE_LEFT };
        _cleanup_table_ struct table *t = NULL;
        int64_t calls = 0, unpriced = 0;
        double share = 0;
        bool any_share = false, computed = false;
        size_t nc = by ? 5 : 4; /* team reports: the machine or user last */
        int r;

        head[4] = by;
        r = table_new(nc, head, al, &t);

        if (r < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                char b[4][FMT_MAX];
                const char *tool = jstr(row, "tool") ? jstr(row, "tool") : jstr(row, "key");
                const char *c[5] = { jstr(row, "harness"), tool, fmt_tokens(row, "calls", b[2]),
                                     fmt_cost(row, "cost_share_usd", b[3]),
                                     by && jstr(row, by) ? jstr(row, by) : "" };
                const char *src = jstr(row, "cost_source");
                double v;

                calls += jint_or(row, "calls", 0);
                unpriced += jint_or(row, "unpriced_events", 0);
                if (jdouble(row, "cost_share_usd", &v))
                        share += v, any_share = true;
                if (src && (strcmp(src, "computed") == 0 || strcmp(src, "mixed") == 0))
                        computed = true;
                r = table_add(t, c);
                if (r < 0)
                        return r;
        }
        /* The TOTAL line carries the same marks as the rows it sums. */
        _cleanup_json_ struct json_object *tot = json_object_new_object();
        if (!tot)
                return -ENOMEM;
        if (jint(totals, "calls", &calls))
                any_share = jdouble(totals, "cost_share_usd", &share);
        json_object_object_add(tot, "calls", json_object_new_int64(calls));
        if (any_share)
                json_object_object_add(tot, "cost_share_usd", json_object_new_double(share));
        json_object_object_add(tot, "cost_source", json_object_new_string(computed ? "mixed" : "vendor-reported"));
        json_object_object_add(tot, "unpriced_events", json_object_new_int64(unpriced));
        char b[2][FMT_MAX];
        const char *c[5] = { "TOTAL", "", fmt_tokens(tot, "calls", b[0]),
                             fmt_cost(tot, "cost_share_usd", b[1]), "" };
        r = table_add_rule(t);
        if (r >= 0)
                r = table_add(t, c);
        if (r < 0)
                return r;
        *ret_table = t;
        t = NULL;
        return 0;
}

int render_report_table(struct json_object *rep, struct table **ret_table)
{
        struct json_object *rows = jfield(rep, "rows"), *totals = jfield(rep, "totals");
        const char *kind = jstr(rep, "report");

        if (!rows || !json_object_is_type(rows, json_type_array))
                return -EINVAL;
        return kind && strcmp(kind, "tool") == 0 ? tool_table(jstr(rep, "by"), rows, totals, ret_table)
                                                 : sums_table(rep, rows, totals, ret_table);
}

void render_report_notes(FILE *f, struct json_object *rep)
{
        const char *kind = jstr(rep, "report");
        struct json_object *rows = jfield(rep, "rows");

        if (!kind || strcmp(kind, "blocks") != 0 || !rows || !json_object_is_type(rows, json_type_array))
                return;
        active_blocks(f, rows);
        real_limits(f, jfield(rep, "rate_limits"));
        recorded_limits(f, jfield(rep, "recorded_limits"));
}

static void csv_quoted(FILE *f, const char *s, size_t n);

void render_csv_field(FILE *f, const char *raw)
{
        char *esc = termtext_dup(raw); /* controls made visible, then quoted */
        const char *s = esc ? esc : "";
        size_t n = strlen(s);

        csv_quoted(f, s, n);
        free(esc);
}

static void csv_quoted(FILE *f, const char *s, size_t n)
{
        if (n == 0)
                return;
        if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' &&
            s[n - 1] != '\t') {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (const char *p = s; *p; p++) {
                if (*p == '"')
                        fputc('"', f);
                fputc(*p, f);
        }
        fputc('"', f);
}

/* A raw CSV value: strings as they are, integers plain, cost with 6 decimals. */
static void csv_value(FILE *f, struct json_object *row, const char *field)
{
        struct json_object *v = jfield(row, field);
        char buf[FMT_MAX];

        if (!v)
                return;
        if (json_object_is_type(v, json_type_double)) {
                snprintf(buf, sizeof(buf), "%.6f", json_object_get_double(v));
                fputs(buf, f);
        } else if (json_object_is_type(v, json_type_string)) {
                render_csv_field(f, json_object_get_string(v));
        } else if (!json_object_is_type(v, json_type_object) && !json_object_is_type(v, json_type_array)) {
                render_csv_field(f, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        }
}

static const char *const csv_sums[] = {
        "events", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
        "reasoning_tokens", "total_tokens", "cost_usd", "cost_source", "unpriced_events",
        "tool_calls", NULL,
};
static const char *const csv_tool[] = { "harness", "tool", "calls", "cost_share_usd",
                                        "cost_source", "unpriced_events", NULL };

static int csv(FILE *f, struct json_object *rep, struct json_object *rows,
               struct json_object *totals)
{
        const char *kind = jstr(rep, "report");
        bool tool = kind && strcmp(kind, "tool") == 0;
        const struct kind_cols *k = kind_cols(kind);
        const struct kind_cols *x = extra_cols(rep) ? extra_cols(rep) : k;
        const char *const *extra = tool ? NULL : x->csv_extra;
        size_t n_extra = tool ? 0 : count(x->csv_extra, 6);
        const char *const *sums = tool ? csv_tool : csv_sums;
        size_t n = json_object_array_length(rows);

        const char *by = jstr(rep, "by"); /* team reports */
        fputs(tool ? "key" : k->key_title, f);
        if (by)
                fprintf(f, ",%s", by);
        for (size_t e = 0; e < n_extra; e++)
                fprintf(f, ",%s", extra[e]);
        for (size_t s = 0; sums[s]; s++)
                fprintf(f, ",%s", sums[s]);
        fputs("\r\n", f);
        for (size_t i = 0; i <= n; i++) {
                struct json_object *row = i < n ? json_object_array_get_idx(rows, i) : totals;
                if (i < n)
                        csv_value(f, row, "key");
                else
                        fputs("TOTAL", f);
                if (by) {
                        fputc(',', f);
                        if (i < n)
                                csv_value(f, row, by);
                }
                for (size_t e = 0; e < n_extra; e++) {
                        fputc(',', f);
                        if (i < n)
                                csv_value(f, row, extra[e]);
                }
                for (size_t s = 0; sums[s]; s++) {
                        fputc(',', f);
                        csv_value(f, row, sums[s]);
                }
                fputs("\r\n", f);
        }
        return 0;
}

/* A session report cut to its newest sessions says so under the table. */
static void shown_of_total(FILE *f, struct json_object *rep, struct json_object *rows)
{
        int64_t total, shown = (int64_t)json_object_array_length(rows);
        char a[FMT_MAX], b[FMT_MAX];

        if (!jint(rep, "rows_total", &total) || total <= shown)
                return;
        fmt_i64(total, b);
        fprintf(f, "showing the newest %s of %s sessions; TOTAL is all %s (--limit N or --all for more)\n",
                fmt_i64(shown, a), b, b);
}

int render_report(FILE *f, struct json_object *rep, enum render_format format, bool pretty)
{
        struct json_object *rows = jfield(rep, "rows");
        struct json_object *totals = jfield(rep, "totals");
        int r = 0;

        if (!rows || !json_object_is_type(rows, json_type_array))
                return -EINVAL;
        if (format == RENDER_JSON) {
                int fl = JSON_C_TO_STRING_NOSLASHESCAPE |
                         (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
                fprintf(f, "%s\n", json_object_to_json_string_ext(rep, fl));
        } else if (format == RENDER_CSV) {
                r = csv(f, rep, rows, totals);
        } else {
                render_caption(f, rep);
                if (json_object_array_length(rows) == 0)
                        fputs(RENDER_NO_ROWS "\n", f);
                else {
                        _cleanup_table_ struct table *t = NULL;
                        r = render_report_table(rep, &t);
                        if (r >= 0)
                                r = table_print(t, f);
                        if (r >= 0) {
                                render_report_notes(f, rep);
                                shown_of_total(f, rep, rows);
                                fputs(FMT_COST_LEGEND "\n", f);
                                events_legend(f, rep, jfield(rep, "rows"));
                        }
                }
        }
        if (r < 0)
                return r;
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

/* A token count of a tail row: "input_tokens", or the bare name as a fallback. */
static const char *row_tokens(struct json_object *row, const char *name, char *buf)
{
        char field[32];

        snprintf(field, sizeof(field), "%s_tokens", name);
        if (jfield(row, field) || !jfield(row, name))
                return fmt_tokens(row, field, buf);
        return fmt_tokens(row, name, buf);
}

static void tail_calls(FILE *f, struct json_object *row)
{
        struct json_object *tc = jfield(row, "tool_calls");
        size_t n;

        if (!tc)
                return;
        if (!json_object_is_type(tc, json_type_array)) {
                int64_t k;
                if (jint(row, "tool_calls", &k) && k > 0)
                        fprintf(f, "  %lld tool call%s", (long long)k, k == 1 ? "" : "s");
                return;
        }
        n = json_object_array_length(tc);
        for (size_t i = 0; i < n; i++) {
                struct json_object *c = json_object_array_get_idx(tc, i);
                const char *name = json_object_is_type(c, json_type_string) ? json_object_get_string(c)
                                                                            : jstr(c, "name");
                fprintf(f, "%s%s", i == 0 ? "  tools: " : ", ", name ? termtext_tmp(name) : "?");
        }
}

int render_tail_row(FILE *f, struct json_object *row)
{
        char t[FMT_MAX], in[FMT_MAX], out[FMT_MAX], cr[FMT_MAX], cw[FMT_MAX], tot[FMT_MAX],
                cost[FMT_MAX];
        const char *harness = jstr(row, "harness"), *prov = jstr(row, "provider"),
                   *model = jstr(row, "model");

        if (!row || !json_object_is_type(row, json_type_object))
                return -EINVAL;
        fprintf(f, "%s  %s  %s%s%s", fmt_time(row, "time", t), harness ? termtext_tmp(harness) : "?",
                prov && *prov ? termtext_tmp(prov) : "", prov && *prov ? "/" : "",
                model ? termtext_tmp(model) : "?");
        fprintf(f, "  in %s  out %s  cache r %s w %s  total %s  %s",
                row_tokens(row, "input", in), row_tokens(row, "output", out),
                row_tokens(row, "cache_read", cr), row_tokens(row, "cache_write", cw),
                row_tokens(row, "total", tot), fmt_cost(row, "cost_usd", cost));
        tail_calls(f, row);
        fputc('\n', f);
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
