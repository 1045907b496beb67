/* The fields of a Codex rollout line the parser uses, read by the validating
 * scanner (common/json/jscan.h) without building the rest (message content). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "json/jscan.h"

struct tok_f {
        bool present;
        struct jscan_num input, cached, cache_write, output, reasoning, total;
};

struct win_f {
        bool present;
        struct jscan_num used, window, resets;
};

struct rl_f {
        bool present;
        struct win_f primary, secondary;
        struct jscan_span limit_id, plan;
};

struct payload_f {
        struct jscan_span type, id, session_id, forked_from, parent, thread_source, cwd;
        struct jscan_span model, tier, response_id, name;
        struct jscan_time ts;
        bool source_obj; /* source: {"subagent": ...} */
        bool info_obj;   /* token_count info is an object (not null) */
        struct tok_f total, last, usage, thread;
        struct rl_f rl;
};

struct line_f {
        struct jscan_span type;
        struct jscan_time ts;
        bool has_payload;
        struct payload_f p;
};

/* One line as one JSON object: true and *ret filled (spans point into
 * line), false when it is not exactly one valid object. */
bool codex_scan_line(const char *line, size_t len, struct line_f *ret);
