/* The Codex CLI rollout line format: per-response token_usage_record rows,
 * the cumulative token_count rule for rollouts that have only those, the
 * turn's model, tool calls and the rate-limit windows. */
#pragma once

#include <stddef.h>

#include "adapter.h"

/* Dedup-key format tags: bump when a key's fields change. */
#define CODEX_KEY_RESPONSE "codex-resp-v1" /* (response_id) */
#define CODEX_KEY_TOTALS   "codex-tc-v1"   /* (scope, cumulative totals) */

/* One complete line (no newline) of a rollout.
 *
 * The first non-blank line must be a session_meta, else PARSE_NOT_SOURCE.
 * Rows (kind ROW_KIND_RESPONSE, tool "codex", provider "openai", cost none:
 * the price engine prices them): one per token_usage_record, keyed by its
 * response_id; one per token_count whose cumulative total moved and was not
 * already counted by a record, keyed by (scope, totals) with scope =
 * forked_from_id, else session_meta.session_id, else its id. Skipped:
 * info:null, a total equal to the last one (re-emits, and the token_count
 * after its record), context estimates (last usage all zero but
 * total_tokens), stale regressions; a reset (total = last usage) counts.
 * In a fork or sub-agent file a token_count older than the session_meta is
 * the parent's replayed history: it only moves the baseline. Tokens are the
 * ledger's disjoint classes (input = input - cached - cache write).
 * Tool calls (function_call, custom_tool_call, local_shell_call,
 * web_search_call) ride on the next usage row. rate_limits go to
 * out->limits. Rollouts under an OpenClaw agent's codex-home make no usage
 * rows (OpenClaw's own transcript counts those calls).
 * Everything carried from line to line is in ps (model, session, project)
 * and ps->priv (totals, scope, tier, pending calls). Returns PARSE_OK,
 * PARSE_MALFORMED, PARSE_NOT_SOURCE or -ENOMEM. */
int codex_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                     size_t len, struct row_batch *out);
