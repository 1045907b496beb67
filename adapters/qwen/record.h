/* Qwen Code chat records (projects/<cwd>/chats/<session>.jsonl) to usage
 * rows: one row per API call, whether the call shows as an assistant record
 * and a ui_telemetry api_response, or (a side call such as memory
 * extraction) as the telemetry row alone. */
#pragma once

#include <stddef.h>

#include "adapter.h"

#define QWEN_KEY_REC  "qwen-rec-v1"  /* the uuid of the first record of a call */
#define QWEN_KEY_RESP "qwen-resp-v1" /* a telemetry row without a uuid: its response_id */
#define QWEN_KEY_LINE "qwen-line-v1" /* an assistant record without one: model, time, tokens */

/* adapter.parse_line. A call has two records in the file, its api_response
 * telemetry row and (for the main agent) its assistant record, one right
 * after the other, with the same model and token counts. The key is the
 * uuid of whichever of the two comes first; the second finds it among the
 * last few unpaired records kept in the parse state (same model and
 * tokens, the most recent first) and takes it. Both rows are upserted
 * (monotone), so the second adds the tool calls the assistant record
 * names and nothing is counted twice; a record with no partner is a call
 * of its own. A --fork-session copy repeats the records with their uuids
 * in the same order, so it makes the same keys. */
int qwen_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line, size_t len,
                    struct row_batch *out);
