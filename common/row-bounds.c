/* The per-row bounds of row-bounds.h, checked once before a row is stored. */
#include <stddef.h>

#include "row-bounds.h"

enum row_refusal row_check_bounds(const struct usage_row *r)
{
        const uint64_t t[] = {r->input, r->output, r->cache_read, r->cache_write, r->reasoning,
                              r->cache_write_1h};

        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                if (t[i] > ROW_TOKENS_MAX)
                        return ROW_BAD_TOKENS;
        if (r->total > ROW_TOTAL_MAX)
                return ROW_BAD_TOKENS;
        if (r->cost_source != COST_NONE && (r->cost_nano < 0 || r->cost_nano > ROW_COST_NANO_MAX))
                return ROW_BAD_COST;
        if (r->time_ms < 0 || r->time_ms > ROW_TIME_MS_MAX)
                return ROW_BAD_TIME;
        return ROW_IN_BOUNDS;
}

const char *row_refusal_name(enum row_refusal why)
{
        switch (why) {
        case ROW_BAD_TOKENS: return "tokens";
        case ROW_BAD_COST: return "cost";
        case ROW_BAD_TIME: return "time";
        default: return NULL;
        }
}
