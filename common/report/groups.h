/* A report's entries while they are summed: one per (key, group, party),
 * found again through an open-addressing index, optionally on top of a
 * sorted, indexed set of entries summed earlier (the cache's, read without
 * copying them all). Shared by the builder (report/build.c) and the cache
 * (report/cache-view.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "report/entry.h"

/* Entries summed earlier, with their index (report_groups_index). */
struct report_groups_base {
        const struct report_entry *v;
        size_t n;
        const uint32_t *index;
        size_t nslot;
};

struct report_groups {
        struct report_entry *v;
        size_t n, cap;
        uint32_t *slot; /* index + 1; 0 = empty */
        size_t nslot;
        size_t last;    /* the entry found last (consecutive rollups share it) */
        /* with a base: an entry of the base is copied into v, from[] its
         * place there, when it is added to; -1 for a new one */
        const struct report_groups_base *base;
        int32_t *from;
};

/* The entry of (key, group, party): found, copied from the base, or made
 * empty with its harness set to the group (callers with another group
 * fill in harness themselves). NULL on -ENOMEM. */
struct report_entry *report_groups_get(struct report_groups *g, const char *key, const char *group,
                                       const char *party);
/* Room for one more entry in v (the index not grown; for callers that add
 * entries without it). -ENOMEM. */
int report_groups_reserve(struct report_groups *g);

/* Room for this many more entries after report_groups_load, before the
 * index is rebuilt. */
#define REPORT_GROUPS_SPARE 64
/* Index slots for n entries and REPORT_GROUPS_SPARE more. */
size_t report_groups_index_size(size_t n);
/* index (nslot slots, zeroed) over v[0..n), as report_groups_get keeps it. */
void report_groups_index(const struct report_entry *v, size_t n, uint32_t *index, size_t nslot);
/* dst (empty) becomes a copy of b's entries and of its index: no entry
 * hashed again. -ENOMEM (dst then to be freed all the same). */
int report_groups_load(struct report_groups *dst, const struct report_groups_base *b);

/* Frees v, the index and from (NULL-safe). */
void report_groups_free(struct report_groups *g);
