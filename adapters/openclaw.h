/* OpenClaw adapter internals shared by its files: discovery and the pi-line
 * flavor (openclaw.c), the config reader (openclaw-config.c), the SQLite
 * transcript reader (openclaw-db.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "pi_lines.h"

/* tool "openclaw", synthetic delivery-mirror/gateway-injected rows skipped,
 * custom model-snapshot entries carry the model */
extern const struct pi_flavor openclaw_flavor;

/* The adapter itself (openclaw.c); the registry lists it. */
extern const struct adapter adapter_openclaw;

/* session.store from an OpenClaw config file (JSON, or JSON5-ish: comments,
 * trailing commas, bare keys, single quotes): 0 and the string in buf,
 * -ENOENT when there is none or the file cannot be read or parsed (a broken
 * config is not an error for discovery), -ENOMEM. */
int openclaw_config_store(const char *path, char *buf, size_t cap);

/* collect_db for agents/<id>/agent/openclaw-agent.sqlite: rows of table
 * transcript_events past the rowid watermark (see openclaw-db.c for what
 * the parse_state holds for a database). Events whose event_json or
 * event_zstd cannot be decoded, or that are not JSON, are skipped and
 * counted in *io_malformed. -EBUSY locked, -EBADMSG corrupt, -EPROTO
 * unknown schema, -EACCES/-ENOENT cannot open: no rows (and no count) then. */
int openclaw_collect_db(const struct source_ctx *ctx, struct parse_state *ps,
                        uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                        uint64_t *io_malformed);
