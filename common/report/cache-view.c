/* The report cache (see report/cache-view.h): per query, the entries of
 * the rollups outside the ledger's rollup window, sorted and indexed, and
 * the merge of the window's entries into them (a copy for
 * report_build_cached, a view for report_view_cached). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/cache-view.h"
#include "report/groups.h"
#include "report/order.h"
#include "report/source.h"
#include "timefmt.h"

#define CACHE_SLOTS       8
#define CACHE_ENTRIES_MAX 4096             /* all slots together: ~7 MB */
#define CACHE_WINDOW_HALF (24 * 3600000LL) /* the window: a day each side of now, ... */
#define CACHE_WINDOW_KEEP (12 * 3600000LL) /* ... moved when now is 12 hours off its middle */
#define CACHE_SIG_MAX     512

/* One query's entries after every rollup outside the window, in report
 * order, and their index for that order: a hit copies both (or reads them
 * as a base) and the window's rollups add to them, so the rows stay
 * nearly sorted. */
struct cache_slot {
        char sig[CACHE_SIG_MAX]; /* "" = free */
        int64_t lo_ms, hi_ms;
        uint64_t epoch, used;
        struct report_entry *v;
        size_t n;
        uint32_t *index;
        size_t nslot;
        struct usage_sums *sums;      /* v[i].sums, side by side: the totals without touching v */
        struct report_view_text text; /* v's rows as JSON, once report/json.c wrote them */
};

struct report_cache {
        struct cache_slot slot[CACHE_SLOTS];
        uint64_t clock;
        size_t entries;
        struct report_cache_stats stats;
};

static struct report_groups_base slot_base(const struct cache_slot *s)
{
        return (struct report_groups_base){.v = s->v, .n = s->n, .index = s->index, .nslot = s->nslot};
}

struct report_cache *report_cache_new(void)
{
        return calloc(1, sizeof(struct report_cache));
}

static void slot_clear(struct report_cache *rc, struct cache_slot *s)
{
        rc->entries -= s->n;
        free(s->v);
        free(s->index);
        free(s->sums);
        free(s->text.text);
        free(s->text.off);
        memset(s, 0, sizeof(*s));
}

void report_cache_free(struct report_cache *rc)
{
        if (!rc)
                return;
        for (size_t i = 0; i < CACHE_SLOTS; i++)
                slot_clear(rc, &rc->slot[i]);
        free(rc);
}

void report_cache_get_stats(const struct report_cache *rc, struct report_cache_stats *ret)
{
        *ret = rc->stats;
}

/* Everything of a query that decides its entries; false if it does not fit. */
static bool signature(const struct report_query *q, char sig[CACHE_SIG_MAX])
{
        int n = snprintf(sig, CACHE_SIG_MAX, "%d|%s|%s|%s|%d|%d|%d|", (int)q->kind, q->tz ? q->tz : "",
                         q->since ? q->since : "", q->until ? q->until : "", (int)q->cost, (int)q->breakdown,
                         report_week_start(q));
        for (size_t i = 0; n > 0 && n < CACHE_SIG_MAX && i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                n += snprintf(sig + n, CACHE_SIG_MAX - (size_t)n, "%s,", q->harness[i]);
        return n > 0 && n < CACHE_SIG_MAX;
}

/* Keeps g's entries (every rollup outside [lo, hi)) for sig, in sig's own
 * slot or the least recently used; not when they would take more than the
 * cache holds. */
static void cache_store(struct report_cache *rc, const char *sig, int64_t lo_ms, int64_t hi_ms,
                        uint64_t epoch, const struct report_groups *g)
{
        struct cache_slot *s = &rc->slot[0];
        struct report_entry *v;
        uint32_t *index;
        struct usage_sums *sums;
        size_t nslot;

        if (g->n > CACHE_ENTRIES_MAX)
                return;
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
                if (strcmp(rc->slot[i].sig, sig) == 0) {
                        s = &rc->slot[i];
                        break;
                }
                if (rc->slot[i].used < s->used)
                        s = &rc->slot[i];
        }
        slot_clear(rc, s);
        while (rc->entries + g->n > CACHE_ENTRIES_MAX) { /* make room: oldest first */
                struct cache_slot *old = NULL;
                for (size_t i = 0; i < CACHE_SLOTS; i++)
                        if (rc->slot[i].sig[0] && (!old || rc->slot[i].used < old->used))
                                old = &rc->slot[i];
                if (!old)
                        return;
                slot_clear(rc, old);
        }
        v = reallocarray(NULL, g->n ? g->n : 1, sizeof(*v));
        sums = reallocarray(NULL, g->n ? g->n : 1, sizeof(*sums));
        nslot = report_groups_index_size(g->n);
        index = calloc(nslot, sizeof(*index));
        if (!v || !index || !sums) {
                free(v);
                free(index);
                free(sums);
                return;
        }
        if (g->n)
                memcpy(v, g->v, g->n * sizeof(*v));
        report_sort_entries(v, g->n, report_key_cmp); /* the order of every kind cached */
        for (size_t i = 0; i < g->n; i++)
                sums[i] = v[i].sums;
        report_groups_index(v, g->n, index, nslot);
        snprintf(s->sig, sizeof(s->sig), "%s", sig);
        s->lo_ms = lo_ms;
        s->hi_ms = hi_ms;
        s->epoch = epoch;
        s->used = ++rc->clock;
        s->v = v;
        s->n = g->n;
        s->index = index;
        s->nslot = nslot;
        s->sums = sums;
        rc->entries += g->n;
}

static struct cache_slot *cache_find(struct report_cache *rc, const char *sig, int64_t lo_ms,
                                     int64_t hi_ms, uint64_t epoch)
{
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
                struct cache_slot *s = &rc->slot[i];
                if (!s->sig[0] || strcmp(s->sig, sig) != 0)
                        continue;
                if (s->lo_ms == lo_ms && s->hi_ms == hi_ms && s->epoch == epoch)
                        return s;
                slot_clear(rc, s); /* stale: rollups outside the window changed */
                return NULL;
        }
        return NULL;
}

static int64_t max64(int64_t a, int64_t b)
{
        return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* The ledger's rollup window, set to a day each side of now when it has
 * none or now is 12 hours off its middle. */
static void cache_window(struct ledger *l, int64_t *lo, int64_t *hi, uint64_t *epoch)
{
        int64_t now = timefmt_now_ms();

        ledger_rollup_window(l, lo, hi, epoch);
        if (*lo > *hi || now < *lo + CACHE_WINDOW_KEEP || now > *hi - CACHE_WINDOW_KEEP) {
                ledger_rollup_window_set(l, now - CACHE_WINDOW_HALF, now + CACHE_WINDOW_HALF);
                ledger_rollup_window(l, lo, hi, epoch);
        }
}

/* The entries of every rollup in the range into g: those outside a window
 * of a day each side of now from the cache when none of those changed
 * since (ledger_rollup_window), so only the window's rollups are read; the
 * result is the same as reading them all. */
static int rollups_cached(struct ledger *l, struct report_cache *rc, const struct report_query *q,
                          const struct report_range *rg, struct report_groups *g)
{
        struct report_source src;
        char sig[CACHE_SIG_MAX];
        int64_t lo, hi, since = rg->since_ms, until = rg->until_ms;
        uint64_t epoch;
        struct cache_slot *s;
        int r;

        report_source_ledger(l, &src);
        cache_window(l, &lo, &hi, &epoch);
        if (!signature(q, sig))
                return report_add_rollups(&src, q, g, since, until);
        if ((s = cache_find(rc, sig, lo, hi, epoch))) {
                struct report_groups_base b = slot_base(s);
                s->used = ++rc->clock;
                rc->stats.hits++;
                r = report_groups_load(g, &b);
        } else {
                rc->stats.misses++;
                r = report_add_rollups(&src, q, g, since, min64(lo, until));
                if (r >= 0)
                        r = report_add_rollups(&src, q, g, max64(hi, since), until);
                if (r >= 0)
                        cache_store(rc, sig, lo, hi, epoch, g);
        }
        if (r < 0)
                return r;
        return report_add_rollups(&src, q, g, max64(lo, since), min64(hi, until));
}

int report_build_cached(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error)
{
        struct report_range rg;
        struct report_groups g = {0};
        int r;

        if (!cache || !report_reads_rollups(q))
                return report_build(l, q, ret_result, ret_error);
        r = report_query_range(q, &rg, ret_error);
        if (r < 0)
                return r;
        r = rollups_cached(l, cache, q, &rg, &g);
        if (r < 0) {
                report_fail(ret_error, r, "reading the ledger: %s", strerror(-r));
        } else {
                report_result_finish(q, g.v, g.n, ret_result);
                g.v = NULL;
        }
        report_groups_free(&g);
        return r < 0 ? r : 0;
}

/* The first of the n entries (sorted by report_key_cmp) not before e. */
static size_t lower_bound(const struct report_entry *v, size_t n, const struct report_entry *e)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (report_key_cmp(&v[mid], e) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The view of a hit: the slot's entries, but those the window's rollups
 * added to (g->from), merged in order with the window's entries (g's); the
 * totals summed in that order, as report_result_finish sums them. */
static int view_make(struct report_groups *g, struct cache_slot *s, struct report_view *ret)
{
        const struct report_entry **fresh = NULL;
        bool *skip = calloc(s->n ? s->n : 1, sizeof(*skip));
        struct report_view v = {.text = &s->text, .cached_rows = s->v, .cached_n = s->n};
        size_t skipped = 0, i = 0, k = 0;

        fresh = reallocarray(NULL, g->n ? g->n : 1, sizeof(*fresh));
        if (!skip || !fresh)
                goto oom;
        for (size_t j = 0; j < g->n; j++) {
                fresh[j] = &g->v[j];
                if (g->from[j] >= 0) {
                        skip[g->from[j]] = true;
                        skipped++;
                }
        }
        report_sort_pointers(fresh, g->n, report_key_cmp);
        v.n = s->n - skipped + g->n;
        v.rows = reallocarray(NULL, v.n ? v.n : 1, sizeof(*v.rows));
        v.cached = reallocarray(NULL, v.n ? v.n : 1, sizeof(*v.cached));
        if (!v.rows || !v.cached)
                goto oom;
        for (size_t j = 0; j <= g->n; j++) {
                size_t until = j < g->n ? lower_bound(s->v, s->n, fresh[j]) : s->n;
                for (; i < until; i++)
                        if (!skip[i]) {
                                v.rows[k] = &s->v[i];
                                v.cached[k++] = (int32_t)i;
                        }
                if (j < g->n) {
                        v.rows[k] = fresh[j];
                        v.cached[k++] = -1;
                }
        }
        for (size_t j = 0; j < v.n; j++)
                usage_sums_add(&v.totals, v.cached[j] >= 0 ? &s->sums[v.cached[j]] : &v.rows[j]->sums);
        v.own = g->v;
        g->v = NULL;
        free(skip);
        free(fresh);
        *ret = v;
        return 0;
oom:
        free(skip);
        free(fresh);
        free(v.rows);
        free(v.cached);
        return -ENOMEM;
}

int report_view_cached(struct ledger *l, struct report_cache *rc, const struct report_query *q,
                       struct report_view *ret_view, const char **ret_error)
{
        struct report_source src;
        struct report_range rg;
        struct report_groups_base b;
        struct report_groups g = {0};
        char sig[CACHE_SIG_MAX];
        int64_t lo, hi;
        uint64_t epoch;
        struct cache_slot *s;
        int r;

        if (!rc || !report_reads_rollups(q) || q->team || q->by != REPORT_BY_NONE)
                return 0;
        report_source_ledger(l, &src);
        r = report_query_range(q, &rg, ret_error);
        if (r < 0)
                return r;
        cache_window(l, &lo, &hi, &epoch);
        if (!signature(q, sig) || !(s = cache_find(rc, sig, lo, hi, epoch)))
                return 0; /* report_build_cached reads them and keeps them */
        s->used = ++rc->clock;
        rc->stats.hits++;
        b = slot_base(s);
        g.base = &b;
        r = report_add_rollups(&src, q, &g, max64(lo, rg.since_ms), min64(hi, rg.until_ms));
        if (r >= 0)
                r = view_make(&g, s, ret_view);
        if (r < 0)
                report_fail(ret_error, r, "reading the ledger: %s", strerror(-r));
        report_groups_free(&g);
        return r < 0 ? r : 1;
}

void report_view_free(struct report_view *v)
{
        if (!v)
                return;
        free(v->rows);
        free(v->cached);
        free(v->own);
        *v = (struct report_view){0};
}
