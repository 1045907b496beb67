/* The report builder: rows of sums per group key (day, month, session,
 * model, tool) read from the ledger's rollups, sessions and activity, with
 * no output format attached. JSON (report-json.h), the Prometheus exporter
 * and the client's renderers sit on top. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"
#include "report-query.h"
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
struct report_entry {
        char key[ROW_PROJECT_MAX];
        char group[REPORT_GROUP_MAX]; /* second grouping key (harness, model); sort order */
        char party[REPORT_PARTY_MAX]; /* report_query.by: the machine or user; else "" */
        char harness[ROW_TOOL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];
        int64_t first_ms, last_ms;
        struct usage_sums sums;
        uint64_t calls, priced_calls;
        double share_nano;
};

struct report_result {
        enum report_kind kind;
        struct report_entry *rows; /* in report order (see report.h) */
        size_t n;
        struct usage_sums totals;  /* sum of the rows (not for tool) */
        uint64_t calls, priced_calls; /* tool report totals */
        double share_nano;
};

/* ---- where the sums come from ------------------------------------------- */

/* A report reads sums through a source: the local ledger's
 * (report_source_ledger, report-source.c), or another store that hands
 * over the same shapes (agentmeterctl --team: the team server, ctl/).
 * Every callback may be given sums of several rows at once, as long as
 * those rows agree on every field the query groups or filters by; first/
 * last are then their earliest and latest times. Times are exact for
 * blocks and sessions, and may be floored to the 15-minute bucket
 * otherwise (as the ledger's rollups are). Sums are under the query's
 * cost mode. party: the machine's or user's name when q->by asks for
 * one, else "". */
struct report_item {
        int64_t first_ms, last_ms;
        const char *tool, *provider, *model, *project, *session, *party;
        struct usage_sums sums;
};
/* Tool calls of one (harness, tool name): calls, how many of them a
 * priced row paid for, and the sum of those rows' cost / their calls. */
struct report_calls {
        const char *tool, *name, *party;
        uint64_t calls, priced_calls;
        double share_nano;
};
typedef int (*report_item_fn)(const struct report_item *it, void *u);
typedef int (*report_session_fn)(const struct session_entry *s, const char *party, void *u);
typedef int (*report_calls_fn)(const struct report_calls *c, void *u);
struct report_source {
        /* rollup-shaped sums (project ""), from_ms <= bucket < until_ms */
        int (*rollups)(void *ctx, const struct report_query *q, int64_t from_ms, int64_t until_ms,
                       report_item_fn cb, void *u);
        /* every row, with project and session (the builder applies the range) */
        int (*rows)(void *ctx, const struct report_query *q, report_item_fn cb, void *u);
        /* whole sessions' sums (cost modes auto and computed) */
        int (*sessions)(void *ctx, const struct report_query *q, report_session_fn cb, void *u);
        /* tool calls made in the range */
        int (*calls)(void *ctx, const struct report_query *q, const struct report_range *rg,
                     report_calls_fn cb, void *u);
        void *ctx;
        struct ledger *ledger; /* the ledger's source: for the report cache; else NULL */
};
/* The ledger's source (report-source.c). */
void report_source_ledger(struct ledger *l, struct report_source *ret);

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
/* A result from its entries (malloc'd, taken over): sorted as the kind's
 * report is, with the totals summed. */
void report_result_finish(const struct report_query *q, struct report_entry *rows, size_t n,
                          struct report_result *res);

/* The sums a row adds under a cost mode (vendor: a table-priced row counts
 * as unpriced). */
void report_sums_add_row(struct usage_sums *s, const struct usage_row *r, enum report_cost mode);
