/* The GitHub Copilot CLI event log (session-state/<id>/events.jsonl): one
 * usage row per session.usage_record, and the premium requests Copilot
 * counts beside them, kept in the parse state for status. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"

/* Dedup-key format tags: bump when a key's fields change. */
#define COPILOT_KEY_CALL  "copilot-call-v1"  /* (apiCallId, model, tokens) */
#define COPILOT_KEY_EVENT "copilot-event-v1" /* a record without apiCallId: (event id, model, tokens) */

/* One complete line (no newline); it may hold several events glued
 * together (a torn line the next write continued): each is read, a bad
 * part is skipped to the next `{"type":"`.
 *
 * The first non-blank line must be a JSON object with a string "type",
 * else PARSE_NOT_SOURCE (and every later call says so at once).
 * session.start / session.resume give the session id (data.sessionId; else
 * the name of the file's directory), the project (data.context.cwd) and
 * the selected model; session.model_change of the main agent (no agentId)
 * the model. Every session.usage_record becomes one row: tool "copilot",
 * kind ROW_KIND_RESPONSE, provider data.usage.providerType (else
 * modelProvider), model data.usage.model as Copilot wrote it (the price
 * engine normalises claude-sonnet-4.5 to claude-sonnet-4-5), cost none
 * (data.usage.cost is Copilot's premium-request multiplier, not dollars:
 * it is summed into the parse state, see copilot_premium), tokens in the
 * ledger's disjoint form (input = inputTokens - cacheReadTokens -
 * cacheWriteTokens, at least 0; output includes reasoning; total =
 * the sum of the four, = inputTokens + outputTokens unless cache read
 * exceeds inputTokens), a top-level agentId marks a sub-agent call
 * (ROW_F_SIDECHAIN), tool calls from data.usage.toolCounts (names, no ids).
 * Key: COPILOT_KEY_CALL over (apiCallId, model, inputTokens, outputTokens,
 * cacheReadTokens, cacheWriteTokens); never the path or session id, so a
 * fork's copy of the record is the same row. session.shutdown metrics,
 * subagent.completed totals and every other event count nothing.
 * Returns PARSE_OK, PARSE_MALFORMED (some of the line was not JSON; rows of
 * its good events ARE appended), PARSE_NOT_SOURCE or -ENOMEM. */
int copilot_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                       size_t len, struct row_batch *out);

/* What the parse state of an events.jsonl says beyond its rows: usage
 * records read, the premium requests they carried (in thousandths), and
 * how many GitHub billed (isByok false: their list price is an
 * API-equivalent estimate, Copilot bills premium requests). -ENOENT when
 * the state holds none. */
struct copilot_premium {
        uint64_t records, premium_milli, github_billed;
};
int copilot_premium(const struct parse_state *ps, struct copilot_premium *ret);
