/* The report builder: rows of sums per group key (day, month, session,
 * model, tool) read from the ledger's rollups, sessions and activity, with
 * no output format attached. JSON (report/json.h), the Prometheus exporter
 * and the client's renderers sit on top. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "report/query.h"
#include "report/source.h"
#include "row.h"

#define REPORT_KEY_MAX (ROW_PROVIDER_MAX + ROW_MODEL_MAX)

/* One row of a report. Which fields are filled depends on the kind:
 * daily/weekly/monthly: key (YYYY-MM-DD / first day of the week / YYYY-MM)
 * and sums; project: key = project (cwd), sums; with a breakdown also
 * harness (and for model provider, model); model: key "provider/model",
 * harness, provider, model, sums; session: key = session, harness, session,
 * project, model (last seen), first/last, sums of the whole session; tool:
 * key = tool name, harness, calls, priced_calls and share_nano (sum over
 * calls of the paying row's cost / its calls). */
#define REPORT_GROUP_MAX (ROW_TOOL_MAX + ROW_PROVIDER_MAX + ROW_MODEL_MAX + 2)
#define REPORT_PARTY_MAX 64
#define REPORT_ORIGIN_MAX 160
struct report_entry {
        char key[ROW_PROJECT_MAX];
        char group[REPORT_GROUP_MAX]; /* second grouping key (harness, model); sort order */
        char party[REPORT_PARTY_MAX]; /* report_query.by: the machine or user; else "" */
        char harness[ROW_TOOL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];
        /* session: where it comes from, when its harness's roots say so
         * (the editor of a VS Code extension's task: "Code", "vscode-server";
         * several joined by ", "); "" when unknown (report_query.annotate) */
        char origin[REPORT_ORIGIN_MAX];
        int64_t first_ms, last_ms;
        struct usage_sums sums;
        uint64_t calls, priced_calls;
        double share_nano;
};

struct report_result {
        enum report_kind kind;
        struct report_entry *rows; /* in report order (see report.h) */
        size_t n;
        struct usage_sums totals;  /* sum of the rows (not for tool); with a
                                    * session limit, of every session in range */
        size_t rows_total;         /* the rows before a session limit cut them (else n) */
        uint64_t calls, priced_calls; /* tool report totals */
        double share_nano;
};

/* Builds the rows. -EINVAL (bad date, zone or mode; *ret_error says which,
 * thread-local, valid until the next report call), -ENOMEM, ledger errors.
 * With cost mode vendor it reads every usage row instead of the rollups
 * (the rollups do not split vendor from computed cost). */
/* The week starting on "YYYY-MM-DD" as ISO 8601 names it ("2026-W49"). */
void report_iso_week(const char *monday, char out[16]);

int report_build(struct ledger *l, const struct report_query *q, struct report_result *ret_result,
                 const char **ret_error);
/* The same from any source (the cache only applies to the ledger's). */
int report_build_from(const struct report_source *src, const struct report_query *q,
                      struct report_result *ret_result, const char **ret_error);
void report_result_free(struct report_result *res);

/* A cache that makes the rollup reports (daily, weekly, monthly, model)
 * cost what two days of rollups cost: per query, the entries of the
 * rollups outside the ledger's rollup window (ledger_rollup_window), kept
 * while none of those changed. For one ledger handle; not thread-safe. */
struct report_cache;
struct report_cache_stats {
        uint64_t hits, misses;
};
struct report_cache *report_cache_new(void); /* NULL on -ENOMEM */
void report_cache_free(struct report_cache *rc);
void report_cache_get_stats(const struct report_cache *rc, struct report_cache_stats *ret);
/* report_build, with the cache (NULL: none). Sets the ledger's rollup
 * window to a day each side of now when it has none or now is 12 hours
 * off its middle. */
int report_build_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error);
/* A rollup report (daily, weekly, monthly, model) answered from the cache
 * without copying the cached entries (a report of years of days has
 * thousands, ~1.7 KB each): rows[i] in report order, cached[i] its place
 * among the cache's rows (cached_rows, in report order) or -1 for a row
 * the window's rollups made or added to; totals as report_build sums them.
 * The cache keeps the text of its rows once written (text: report/json.c
 * writes row i of cached_rows at text[off[i], off[i + 1]), and only
 * then). Valid until the cache is used again. */
struct report_view_text {
        char *text; /* NULL until written */
        size_t *off;
};
struct report_view {
        size_t n;
        const struct report_entry **rows;
        int32_t *cached;
        struct usage_sums totals;
        const struct report_entry *cached_rows;
        size_t cached_n;
        struct report_view_text *text;
        struct report_entry *own; /* the window's rows (rows points into them) */
};
/* 1 and the view when the cache holds the query's entries outside the
 * window (a hit); 0 when the query is no rollup report or the cache has
 * not got them (report_build_cached then reads them and keeps them);
 * -errno as report_build. */
int report_view_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                       struct report_view *ret_view, const char **ret_error);
void report_view_free(struct report_view *v);

/* A result from its entries (malloc'd, taken over): sorted as the kind's
 * report is, with the totals summed. */
void report_result_finish(const struct report_query *q, struct report_entry *rows, size_t n,
                          struct report_result *res);

