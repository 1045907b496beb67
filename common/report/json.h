/* Reports as the JSON object the daemon sends over the socket and the
 * client renders as a table, CSV or JSON (field names in report.h). */
#pragma once

#include <stdint.h>

#include "report/build.h"

struct json_object;
struct report_cache;
struct usage_row;
struct usage_sums;

/* report_build_cached (cache may be NULL), as the report's JSON text
 * (malloc'd, NUL-terminated): -EINVAL (bad date or zone; *ret_error says
 * which, in a thread-local buffer valid until the next call), -ENOMEM,
 * ledger errors. */
int report_run_text(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                    char **ret_text, size_t *ret_len, const char **ret_error);

/* The same report as an object. */
int report_run(struct ledger *l, const struct report_query *q, struct json_object **ret_report,
               const char **ret_error);
/* ... built from any source (report/build.h): agentmeterctl --team. */
int report_run_from(const struct report_source *src, const struct report_query *q,
                    struct json_object **ret_report, const char **ret_error);

/* Adds the <sums> fields of report.h to object o: 0 or -ENOMEM. */
int report_sums_json(struct json_object *o, const struct usage_sums *s);

/* "vendor-reported", "computed", "mixed", or NULL when nothing is priced. */
const char *report_sums_cost_source(const struct usage_sums *s);

/* USD from nano-USD as the text of a JSON number rounded to the
 * micro-dollar (half away from zero): "-0.000001", "12.345679". */
#define REPORT_MONEY_TEXT_MAX 40
void report_money_text(int64_t nano, char buf[REPORT_MONEY_TEXT_MAX]);
/* ... as a JSON number object printing that text. */
struct json_object *report_money_json(int64_t nano);

/* JSON for one row (used by `tail` and tests): harness, session, project,
 * provider, model, kind, time, tokens..., cost_usd, cost_source, tool_calls. */
struct json_object *report_row_json(const struct usage_row *r);
