/* The report builder: rows of sums per group key (day, month, session,
 * model, tool) read from the ledger's rollups, sessions and activity, with
 * no output format attached. JSON (report/json.h), the Prometheus exporter
 * and the client's renderers sit on top. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "report/entry.h"
#include "report/query.h"
#include "report/source.h"

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
/* The same from any source (the cache, report/cache-view.h, only applies
 * to the ledger's). */
int report_build_from(const struct report_source *src, const struct report_query *q,
                      struct report_result *ret_result, const char **ret_error);
void report_result_free(struct report_result *res);

/* Whether q's report is read from the rollups, all of them (daily,
 * weekly, monthly, model, unless its cost mode or filters need the rows):
 * the reports report/cache-view.h can cache. */
bool report_reads_rollups(const struct report_query *q);
/* Adds the rollups of q in [from_ms, until_ms) to groups, grouped as q's
 * report groups them (report/cache-view.c reads the rollups in parts). */
struct report_groups;
int report_add_rollups(const struct report_source *src, const struct report_query *q,
                       struct report_groups *groups, int64_t from_ms, int64_t until_ms);

/* A result from its entries (malloc'd, taken over): sorted as the kind's
 * report is, with the totals summed. */
void report_result_finish(const struct report_query *q, struct report_entry *rows, size_t n,
                          struct report_result *res);

