/* Rate-limit windows a harness reports (Codex token_count.rate_limits): the
 * latest snapshot per root, kept in the ledger and shown by status. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "row.h"

#define LIMITS_ID_MAX 48

struct limit_window {
        bool present;
        uint32_t used_centi;     /* used percent x 100 (0..10000; larger values clamped) */
        uint32_t window_minutes; /* 0: not given */
        int64_t resets_at_s;     /* epoch seconds; 0: not given */
};

struct rate_limits {
        int64_t observed_ms;             /* time of the line that carried it */
        char tool[ROW_TOOL_MAX];
        char limit_id[LIMITS_ID_MAX];    /* "codex", ... ("" when not given) */
        char plan_type[LIMITS_ID_MAX];   /* "plus", "pro", ... ("" when null) */
        struct limit_window primary, secondary;
};

/* JSON text of a snapshot: {"observed_ms","tool","limit_id","plan_type",
 * "primary":{"used_percent","window_minutes","resets_at"}|null,"secondary":...}.
 * -ENOBUFS when cap is too small, -ENOMEM. */
int limits_format(const struct rate_limits *rl, char *buf, size_t cap);
/* The reverse; -EBADMSG for text that is not such an object. */
int limits_parse(const char *text, struct rate_limits *ret_rl);
