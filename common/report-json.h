/* Reports as the JSON object the daemon sends over the socket and the
 * client renders as a table, CSV or JSON (field names in report.h). */
#pragma once

#include <stdint.h>

#include "report-build.h"

struct json_object;
struct usage_row;
struct usage_sums;

/* The report object for a built result. NULL on -ENOMEM. */
struct json_object *report_to_json(const struct report_query *q, const struct report_result *res);

/* report_build + report_to_json. -EINVAL (bad date or zone; *ret_error says
 * which, in a thread-local buffer valid until the next call). */
int report_run(struct ledger *l, const struct report_query *q, struct json_object **ret_report,
               const char **ret_error);

/* Adds the <sums> fields of report.h to object o. */
void report_sums_json(struct json_object *o, const struct usage_sums *s);

/* "vendor-reported", "computed", "mixed", or NULL when nothing is priced. */
const char *report_sums_cost_source(const struct usage_sums *s);

/* USD from nano-USD as a JSON number whose text is rounded to the
 * micro-dollar (half away from zero). */
struct json_object *report_money_json(int64_t nano);

/* JSON for one row (used by `tail` and tests): harness, session, project,
 * provider, model, kind, time, tokens..., cost_usd, cost_source, tool_calls. */
struct json_object *report_row_json(const struct usage_row *r);
