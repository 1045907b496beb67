/* OpenClaw adapter internals shared by its two files: the pi-line flavor
 * (openclaw.c) and the SQLite transcript reader (openclaw-db.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "pi_lines.h"

/* tool "openclaw", synthetic delivery-mirror/gateway-injected rows skipped,
 * custom model-snapshot entries carry the model */
extern const struct pi_flavor openclaw_flavor;

/* collect_db for agents/<id>/agent/openclaw-agent.sqlite: rows of table
 * transcript_events past the rowid watermark (see openclaw-db.c for what
 * the parse_state holds for a database). -EBUSY locked, -EBADMSG corrupt,
 * -EPROTO unknown schema, -EACCES/-ENOENT cannot open: no rows then. */
int openclaw_collect_db(const struct source_ctx *ctx, struct parse_state *ps,
                        uint64_t *io_watermark, size_t max_rows, struct row_batch *out);
