/* The pi session line format (pi coding agent, and OpenClaw which writes the
 * same lines): one parser, with what differs between harnesses kept as data. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"

struct json_object;

struct pi_flavor {
        const char *tool;             /* the rows' tool id: "pi", "openclaw" */
        bool skip_synthetic_openclaw; /* drop provider "openclaw" rows with model
                                       * "delivery-mirror" / "gateway-injected"
                                       * (no row, and the carried model stays) */
        bool model_snapshot;          /* custom "model-snapshot" entries
                                       * (data.provider, data.modelId) set the
                                       * carried model (OpenClaw) */
};

/* Dedup-key format tag: bump when the key's fields change. */
#define PI_KEY_FORMAT "pi-msg-v1"

/* One complete line (no newline). It may hold several JSON objects glued
 * together (a torn-then-resumed file): every one is handled; a bad part is
 * skipped to the next `{"type":"` and the rest still counts.
 *
 * Returns PARSE_OK, PARSE_MALFORMED (some of the line was not JSON; rows of
 * its good objects ARE appended), PARSE_NOT_SOURCE (the first non-blank line
 * is not a {"type":"session","id":string} header; ps gets PS_NOT_SOURCE and
 * every later call returns PARSE_NOT_SOURCE at once), or -ENOMEM.
 *
 * Lines that cannot matter (no "usage", "model_change", "model-snapshot"
 * and not the first line) are not JSON-parsed: PARSE_OK when they look like
 * one object ({ ... }), PARSE_MALFORMED otherwise. Blank lines: PARSE_OK.
 * The others go through a validating scanner that keeps only the fields it
 * needs (nesting deeper than 512 is malformed). ps->last_time_ms (the time
 * fallback for entries without one) follows the parsed lines only.
 * Rows: tool = fl->tool, session = header id, project = header cwd,
 * n_calls <= ROW_CALLS_MAX; key = PI_KEY_FORMAT over (row kind, provider,
 * model, time ms, responseId or "", input, output, cacheRead, cacheWrite,
 * cost_nano): never the path, session id or entry id.
 * ctx may be NULL (source_hash 0). Keeps no state outside ps. */
int pi_parse_line(const struct pi_flavor *fl, const struct source_ctx *ctx,
                  struct parse_state *ps, const char *line, size_t len,
                  struct row_batch *out);

