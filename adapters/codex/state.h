/* What the Codex parser carries from line to line, and its byte layout in
 * parse_state.priv (persisted with the checkpoint). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"

struct tokens {
        uint64_t input, cached, cache_write, output, reasoning, total;
};

#define CX_FORKLIKE 0x1u /* fork or sub-agent file: older token_counts are replay */
#define CX_PENDING  0x2u /* pending_usage holds the last record's usage */
#define CX_EMBEDDED 0x4u /* under an OpenClaw agent's codex-home: no usage rows */
#define CX_SUBAGENT 0x8u

struct cx_state {
        uint8_t flags;
        uint64_t scope;         /* hash of the key scope */
        int64_t meta_ms;        /* session_meta time */
        struct tokens prev;     /* last cumulative total seen */
        uint64_t pending_usage; /* hash of the last record's usage */
        char tier[ROW_TIER_MAX];
        uint32_t n_calls;       /* tool calls since the last usage row */
        char calls[ROW_CALLS_MAX][CALL_NAME_MAX];
};

/* Layout v1: version, flags, scope (8 LE), meta_ms, prev (6 varints),
 * [pending_usage (8 LE)], tier, n_calls, then as many call names as fit
 * (at most CODEX_CALL_NAME_KEPT bytes each; the count stays exact, names
 * that did not fit come back empty). An empty or unknown priv loads as a
 * zero state. */
#define CODEX_CALL_NAME_KEPT 24
void codex_state_save(const struct cx_state *s, struct parse_state *ps);
void codex_state_load(const struct parse_state *ps, struct cx_state *s);
