/* The older Gemini CLI session file (0.33 and before): session-*.json, one
 * JSON object {sessionId, projectHash, startTime, lastUpdated, messages,
 * kind} rewritten whole after every change. */
#pragma once

#include <stddef.h>

#include "adapter.h"

/* adapter.parse_document. The messages already parsed are skipped when the
 * new version holds them byte for byte (checked by hash in the parse
 * state, because lastUpdated, written before the messages, changes on
 * every rewrite and so no prefix of the file stays the same); the last
 * message is always read again (the CLI edits it as its tools finish). */
int gemini_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc,
                          size_t len, size_t *io_known, struct row_batch *out);
