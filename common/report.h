/* Reports computed from the ledger (daily, monthly, session, model, tool),
 * as one JSON object that the daemon sends over the socket and the client
 * renders as a table, CSV or JSON. Field names are stable (see man page):
 *
 * {"report":"daily","tz":"Europe/Berlin","since":"2026-11-01"|null,"until":...|null,
 *  "harness":["pi"]|null,
 *  "rows":[{"key":"2026-11-30", <sums>}...], "totals":{<sums>}}
 *
 * <sums>: input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
 * reasoning_tokens, total_tokens (each null when no event in it has known
 * tokens), cost_usd (number, or null when nothing in it is priced),
 * cost_source ("vendor-reported" | "computed" | "mixed" | null),
 * unpriced_events, events, tool_calls.
 * Session rows also carry harness, session, project, model, first, last;
 * model rows harness, provider, model; tool rows harness, tool, calls,
 * cost_share_usd (null when the harness has no cost).
 * Rows are sorted by key (daily, monthly, model), by last time (session),
 * by calls descending then key (tool). A session is listed when its
 * [first, last] overlaps the range, and its sums are the WHOLE session's.
 * Tool report: cost_share_usd sums, over the calls, the paying row's cost
 * divided by its number of calls; its "totals" are {calls, cost_share_usd}. */
#pragma once

#include <stdint.h>

struct ledger;
struct json_object;

enum report_kind {
        REPORT_DAILY = 1,
        REPORT_MONTHLY,
        REPORT_SESSION,
        REPORT_MODEL,
        REPORT_TOOL,
};

#define REPORT_HARNESS_MAX 8

struct report_query {
        enum report_kind kind;
        const char *tz;     /* NULL/"" = local */
        const char *since;  /* "YYYY-MM-DD" inclusive, or NULL */
        const char *until;  /* "YYYY-MM-DD" inclusive, or NULL */
        const char *harness[REPORT_HARNESS_MAX]; /* NULL-terminated filter; empty = all */
};

/* "daily" -> REPORT_DAILY; -EINVAL. */
int report_kind_parse(const char *s, enum report_kind *ret_kind);
const char *report_kind_name(enum report_kind k);

/* Parses "pi,openclaw" into q->harness (pointers into buf, which it edits). */
int report_parse_harness_list(char *buf, struct report_query *q);

/* Builds the report. -EINVAL (bad date or zone; *ret_error says which, in a
 * thread-local buffer valid until the next call). */
int report_run(struct ledger *l, const struct report_query *q, struct json_object **ret_report,
               const char **ret_error);

/* Builds the same query from a JSON request object {"report":"daily","tz":..,
 * "since":..,"until":..,"harness":[..] or "a,b"}; strings point into req. */
int report_query_from_json(struct json_object *req, struct report_query *ret_query,
                           const char **ret_error);

/* JSON for one row (used by `tail` and tests): harness, session, project,
 * provider, model, kind, time, tokens..., cost_usd, cost_source, tool_calls. */
struct usage_row;
struct json_object *report_row_json(const struct usage_row *r);
