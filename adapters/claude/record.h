/* The Claude Code transcript line parser: one assistant response (written as
 * several lines that share message.id) becomes one upserted usage row. */
#pragma once

#include <stddef.h>

#include "adapter.h"

/* Dedup-key format tags: bump when a key's fields change. */
#define CLAUDE_KEY_MSG     "claude-msg-v1"     /* message.id */
#define CLAUDE_KEY_REQ     "claude-req-v1"     /* requestId, when there is no message.id */
#define CLAUDE_KEY_LINE    "claude-line-v1"    /* neither: model, time and tokens */
#define CLAUDE_KEY_COMPACT "claude-compact-v1" /* a compaction metered from cost-state */

/* A token count above this is refused (the line is malformed): it bounds
 * every sum the ledger keeps. */
#define CLAUDE_TOKENS_MAX 1000000000000ull

/* One complete line (no newline). Rows (tool "claude", provider
 * "anthropic", ROW_F_UPSERT): an `assistant` line with message.usage,
 * unless its model is `<synthetic>` or it is an API error message. Key:
 * CLAUDE_KEY_MSG over message.id, else CLAUDE_KEY_REQ over requestId,
 * else CLAUDE_KEY_LINE over (model, time ms, input, output, cache read,
 * cache write). Session: requestSessionId when the line has one (a
 * --fork-session copy names the session that made the call), else
 * sessionId; project: cwd; ROW_F_SIDECHAIN for isSidechain lines; kind
 * COMPACTION for a compaction sidechain (agentId "acompact-..."), else
 * MESSAGE. Tool calls: the tool_use blocks (id, name).
 * `cost-state` and `system`/`compact_boundary` lines feed the compaction
 * accounting of claude/acct.h (which may append a COMPACTION row); every
 * other line type is no call.
 *
 * A torn object with the next line glued to it (a crash mid-write, then an
 * append) is skipped to the next {"parentUuid": or {"type": and the rest
 * still counts.
 *
 * Returns PARSE_OK, PARSE_MALFORMED (some of the line is not a JSON object,
 * or a token count is over CLAUDE_TOKENS_MAX: no row for that object), PARSE_NOT_SOURCE (the first non-blank
 * line is not an object with a string "type"; every later call returns it
 * at once), or -ENOMEM. ctx may be NULL (source_hash 0, session fallback
 * none). Keeps no state outside ps. */
int claude_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                      size_t len, struct row_batch *out);
