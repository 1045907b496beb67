/* Reports computed from the ledger (daily, monthly, session, model, tool):
 * the query (report/query.h), the builder's rows of sums (report/build.h)
 * and the JSON object the daemon sends and the client renders as a table,
 * CSV or JSON (report/json.h). Field names are stable (see man page):
 *
 * {"report":"daily","tz":"Europe/Berlin","since":"2026-11-01"|null,"until":...|null,
 *  "harness":["pi"]|null,"cost":"auto",
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
 * Session reports also carry "limit" (null: every session) and "rows_total"
 * (the sessions in the range): with a limit only the newest `limit` are
 * rows, "totals" still sum all rows_total of them.
 * Rows are sorted by key (daily, monthly, model), by last time (session),
 * by calls descending then key (tool). A session is listed when its
 * [first, last] overlaps the range, and its sums are the WHOLE session's.
 * Tool report: cost_share_usd sums, over the calls, the paying row's cost
 * divided by its number of calls; its "totals" are {calls, cost_share_usd}.
 * "cost" is the cost mode (auto | vendor | computed, report/query.h). */
#pragma once

#include "report/build.h"
#include "report/cache-view.h"
#include "report/json.h"
#include "report/query.h"
