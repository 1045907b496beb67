/* Where a report's sums come from: the shapes a source hands the report
 * builder (report/build.h), and the local ledger as one such source
 * (report/source.c; the team server is another, ctl/team/source.c). */
#pragma once

#include <stdint.h>

#include "ledger/ledger.h"
#include "report/query.h"
#include "row.h"


/* A report reads sums through a source: the local ledger's
 * (report_source_ledger, report/source.c), or another store that hands
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
/* The ledger's source (report/source.c). */
void report_source_ledger(struct ledger *l, struct report_source *ret);

/* A row's sums under a cost mode (vendor: its table-priced cost left out). */
void report_sums_add_row(struct usage_sums *s, const struct usage_row *r, enum report_cost mode);
