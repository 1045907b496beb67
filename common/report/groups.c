/* The grouping of a report's entries by (key, group, party) (see
 * report/groups.h): the builder adds every rollup, row or session to one. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report/groups.h"

static uint64_t group_hash(const char *key, const char *group, const char *party)
{
        uint64_t h = 1469598103934665603ULL;
        for (const char *s = key; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
        for (const char *s = group; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        h = (h ^ 0xfe) * 1099511628211ULL;
        for (const char *s = party; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

static bool same_group(const struct report_entry *e, const char *key, const char *group,
                       const char *party)
{
        return strcmp(e->key, key) == 0 && strcmp(e->group, group) == 0 && strcmp(e->party, party) == 0;
}

static void index_put(uint32_t *index, size_t nslot, const struct report_entry *e, size_t i)
{
        size_t m = nslot - 1, s = group_hash(e->key, e->group, e->party) & m;
        while (index[s])
                s = (s + 1) & m;
        index[s] = (uint32_t)(i + 1);
}

void report_groups_index(const struct report_entry *v, size_t n, uint32_t *index, size_t nslot)
{
        for (size_t i = 0; i < n; i++)
                index_put(index, nslot, &v[i], i);
}

/* The place of (key, group, party) among b's entries, or -1. */
static long base_find(const struct report_groups_base *b, const char *key, const char *group,
                      const char *party)
{
        size_t m = b->nslot - 1;
        for (size_t k = group_hash(key, group, party) & m; b->index[k]; k = (k + 1) & m)
                if (same_group(&b->v[b->index[k] - 1], key, group, party))
                        return (long)b->index[k] - 1;
        return -1;
}

int report_groups_reserve(struct report_groups *g)
{
        if (g->n == g->cap) {
                size_t ncap = g->cap ? g->cap * 2 : 32;
                struct report_entry *nv = reallocarray(g->v, ncap, sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                g->v = nv;
                if (g->base) {
                        int32_t *nf = reallocarray(g->from, ncap, sizeof(*nf));
                        if (!nf)
                                return -ENOMEM;
                        g->from = nf;
                }
                g->cap = ncap;
        }
        return 0;
}

/* Room for one more entry and its index slot. */
static int grow(struct report_groups *g)
{
        if (report_groups_reserve(g) < 0)
                return -ENOMEM;
        if (2 * (g->n + 1) > g->nslot) {
                size_t nslot = g->nslot ? g->nslot * 2 : 64;
                uint32_t *ns = calloc(nslot, sizeof(*ns));
                if (!ns || g->n >= UINT32_MAX - 1) {
                        free(ns);
                        return -ENOMEM;
                }
                free(g->slot);
                g->slot = ns;
                g->nslot = nslot;
                report_groups_index(g->v, g->n, g->slot, g->nslot);
        }
        return 0;
}

/* snprintf(dst, cap, "%s", src) without printf */
static void copy_str(char *dst, size_t cap, const char *src)
{
        row_set_str(dst, cap, src, strlen(src));
}

struct report_entry *report_groups_get(struct report_groups *g, const char *key, const char *group,
                                       const char *party)
{
        size_t m, s;

        if (g->last < g->n && same_group(&g->v[g->last], key, group, party))
                return &g->v[g->last];
        if (g->nslot) {
                m = g->nslot - 1;
                for (s = group_hash(key, group, party) & m; g->slot[s]; s = (s + 1) & m)
                        if (same_group(&g->v[g->slot[s] - 1], key, group, party))
                                return &g->v[g->last = g->slot[s] - 1];
        }
        if (grow(g) < 0)
                return NULL;
        struct report_entry *e = &g->v[g->n];
        if (g->base) {
                long b = base_find(g->base, key, group, party);
                g->from[g->n] = (int32_t)b;
                if (b >= 0) { /* the base's entry, as a copy of them all would have it */
                        memcpy(e, &g->base->v[b], sizeof(*e));
                        index_put(g->slot, g->nslot, e, g->n);
                        g->last = g->n;
                        return &g->v[g->n++];
                }
        }
        memset(e, 0, sizeof(*e));
        copy_str(e->key, sizeof(e->key), key);
        copy_str(e->group, sizeof(e->group), group);
        copy_str(e->party, sizeof(e->party), party);
        copy_str(e->harness, sizeof(e->harness), group);
        index_put(g->slot, g->nslot, e, g->n);
        g->last = g->n;
        return &g->v[g->n++];
}

size_t report_groups_index_size(size_t n)
{
        size_t nslot = 64;
        while (nslot < 2 * (n + REPORT_GROUPS_SPARE + 1)) /* grow() keeps 2 (n + 1) <= nslot */
                nslot *= 2;
        return nslot;
}

int report_groups_load(struct report_groups *dst, const struct report_groups_base *b)
{
        dst->v = reallocarray(NULL, b->n + REPORT_GROUPS_SPARE, sizeof(*b->v));
        dst->slot = reallocarray(NULL, b->nslot, sizeof(*b->index));
        if (!dst->v || !dst->slot)
                return -ENOMEM;
        if (b->n)
                memcpy(dst->v, b->v, b->n * sizeof(*b->v));
        memcpy(dst->slot, b->index, b->nslot * sizeof(*b->index));
        dst->n = b->n;
        dst->cap = b->n + REPORT_GROUPS_SPARE;
        dst->nslot = b->nslot;
        dst->last = 0;
        return 0;
}

void report_groups_free(struct report_groups *g)
{
        if (!g)
                return;
        free(g->v);
        free(g->slot);
        free(g->from);
        *g = (struct report_groups){0};
}
