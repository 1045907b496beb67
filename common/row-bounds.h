/* Bounds on the numbers a usage row takes from a user's file: a row outside
 * them is refused (not stored) and counted, so a typo or a hostile file
 * cannot wrap a total, subtract money or vanish silently. */
#pragma once

#include "row.h"

#define ROW_TOKENS_MAX (1ULL << 40)             /* per token class, per row */
#define ROW_TOTAL_MAX (4ULL << 40)              /* the row's total */
#define ROW_COST_NANO_MAX 1000000000000000LL    /* $1,000,000 per row */
#define ROW_TIME_MS_MAX 253402300799999LL       /* 9999-12-31T23:59:59.999Z */

enum row_refusal {
        ROW_IN_BOUNDS = 0,
        ROW_BAD_TOKENS = 1, /* a token count above ROW_TOKENS_MAX (total: ROW_TOTAL_MAX) */
        ROW_BAD_COST = 2,   /* a priced row's cost negative or above ROW_COST_NANO_MAX */
        ROW_BAD_TIME = 3,   /* before 1970 or after year 9999 */
        ROW_REFUSAL_KINDS = 4,
};

/* Which bound r breaks first (tokens, cost, time), or ROW_IN_BOUNDS. */
enum row_refusal row_check_bounds(const struct usage_row *r);
/* "tokens", "cost", "time" (the status field names), NULL for ROW_IN_BOUNDS. */
const char *row_refusal_name(enum row_refusal why);
