/* What the Claude Code parser reads from a line: only the members it needs,
 * found by the validating scanner (common/json/jscan.h); content is skipped. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "adapt-util.h"
#include "claude/acct.h"
#include "json/jscan.h"
#include "row.h"

struct cl_usage_f {
        bool present;
        struct jscan_num input, output, cache_read, cache_write, cw_5m, cw_1h, thinking;
        struct jscan_span service_tier, speed;
};

struct cl_msg_f {
        bool present;
        struct jscan_span id, model;
        struct cl_usage_f usage;
        struct adapt_calls_f calls; /* tool_use blocks */
};

struct cl_line_f {
        struct jscan_span type, subtype, session_id, request_session_id, cwd, request_id, uuid,
                agent_id;
        struct jscan_time ts;
        bool is_sidechain, is_api_error;
        struct cl_msg_f msg;
        struct cl_cost_state cs; /* cost-state modelUsage */
};

/* One JSON object at s->p into *e (reset first): false when it is not a
 * whole valid object (s->p is then somewhere inside it). */
bool cl_line_scan(struct jscan *s, struct cl_line_f *e);

/* A token count: *ret 0 when absent or negative; false when over
 * CLAUDE_TOKENS_MAX. */
bool cl_tokens(const struct jscan_num *n, uint64_t *ret);

/* Cache writes: the total, else the 5-minute + 1-hour parts; the 1-hour
 * part never above the total. false when a count is over the bound. */
bool cl_cache_writes(const struct jscan_num *total, const struct jscan_num *p5m,
                     const struct jscan_num *p1h, uint64_t *ret_cw, uint64_t *ret_1h);
