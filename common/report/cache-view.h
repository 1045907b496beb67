/* The daemon's report cache and the views it serves: `report daily`,
 * weekly, monthly and model from the sums of every rollup outside a window
 * around now, kept sorted, with only the window's rollups read again and
 * merged in. Apart from the builder (report/build.h) because it is a
 * second way to the same rows: kept entries, their index, staleness, and a
 * view over them that copies nothing (tests/unit/common/report/
 * test-report-cache.c holds it to report_build's rows). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"
#include "report/build.h"
#include "report/entry.h"
#include "report/query.h"

/* A cache that makes the rollup reports (daily, weekly, monthly, model)
 * cost what two days of rollups cost: per query, the entries of the
 * rollups outside the ledger's rollup window (ledger_rollup_window), kept
 * while none of those changed. For one ledger handle; not thread-safe. */
struct report_cache;
struct report_cache_stats {
        uint64_t hits, misses;
};
struct report_cache *report_cache_new(void); /* NULL on -ENOMEM */
void report_cache_free(struct report_cache *rc);
void report_cache_get_stats(const struct report_cache *rc, struct report_cache_stats *ret);
/* report_build, with the cache (NULL: none). Sets the ledger's rollup
 * window to a day each side of now when it has none or now is 12 hours
 * off its middle. */
int report_build_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error);
/* A rollup report (daily, weekly, monthly, model) answered from the cache
 * without copying the cached entries (a report of years of days has
 * thousands, ~1.7 KB each): rows[i] in report order, cached[i] its place
 * among the cache's rows (cached_rows, in report order) or -1 for a row
 * the window's rollups made or added to; totals as report_build sums them.
 * The cache keeps the text of its rows once written (text: report/json.c
 * writes row i of cached_rows at text[off[i], off[i + 1]), and only
 * then). Valid until the cache is used again. */
struct report_view_text {
        char *text; /* NULL until written */
        size_t *off;
};
struct report_view {
        size_t n;
        const struct report_entry **rows;
        int32_t *cached;
        struct usage_sums totals;
        const struct report_entry *cached_rows;
        size_t cached_n;
        struct report_view_text *text;
        struct report_entry *own; /* the window's rows (rows points into them) */
};
/* 1 and the view when the cache holds the query's entries outside the
 * window (a hit); 0 when the query is no rollup report or the cache has
 * not got them (report_build_cached then reads them and keeps them);
 * -errno as report_build. */
int report_view_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                       struct report_view *ret_view, const char **ret_error);
void report_view_free(struct report_view *v);

