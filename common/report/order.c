/* The order of a report's rows and the sort that keeps moving entries
 * cheap (see report/order.h). */
#include <stdlib.h>
#include <string.h>

#include "report/order.h"

int report_key_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        if (!c)
                c = strcmp(x->party, y->party);
        return c ? c : strcmp(x->group, y->group);
}

int report_session_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        int c;
        if (x->last_ms != y->last_ms)
                return x->last_ms < y->last_ms ? -1 : 1;
        c = strcmp(x->harness, y->harness);
        if (!c)
                c = strcmp(x->session, y->session);
        return c ? c : strcmp(x->party, y->party);
}

int report_tool_cmp(const void *a, const void *b)
{
        const struct report_entry *x = a, *y = b;
        if (x->calls != y->calls)
                return x->calls > y->calls ? -1 : 1;
        return report_key_cmp(a, b);
}

static int by_pointer(const void *a, const void *b, void *cmp)
{
        report_entry_cmp entry_cmp = (report_entry_cmp)cmp;
        return entry_cmp(*(const struct report_entry *const *)a, *(const struct report_entry *const *)b);
}

void report_sort_pointers(const struct report_entry **v, size_t n, report_entry_cmp cmp)
{
        qsort_r(v, n, sizeof(*v), by_pointer, (void *)cmp);
}

/* Tails of new entries after a sorted run up to this long are merged
 * into it; longer ones are sorted with the rest. */
#define SORT_TAIL_MAX 256

/* order[0..n) (pointers into rows): rows[0..p) as they are (sorted), the
 * tail rows[p..n) sorted and merged in. */
static void merge_tail(const struct report_entry **order, struct report_entry *rows, size_t p, size_t n,
                       report_entry_cmp cmp)
{
        const struct report_entry *tail[SORT_TAIL_MAX];
        size_t t = n - p, i = 0, j = 0, k = 0;

        for (size_t x = 0; x < t; x++)
                tail[x] = &rows[p + x];
        report_sort_pointers(tail, t, cmp);
        while (i < p || j < t) /* no two compare equal: each row is a group of its own */
                order[k++] = j == t || (i < p && cmp(&rows[i], tail[j]) <= 0) ? &rows[i++] : tail[j++];
}

/* Entries are large (~1.7 KB): pointers are sorted, then the entries moved
 * into place cycle by cycle through one spare, so each moves once and no
 * second array is made. Rows that are in order already (a cached report's,
 * kept sorted: report/cache-view.c) cost one comparison each. */
void report_sort_entries(struct report_entry *rows, size_t n, report_entry_cmp cmp)
{
        size_t *src, p = 1;
        const struct report_entry **order;
        struct report_entry spare;

        if (n < 2)
                return;
        while (p < n && cmp(&rows[p - 1], &rows[p]) <= 0)
                p++;
        if (p == n)
                return;
        order = reallocarray(NULL, n, sizeof(*order));
        src = reallocarray(NULL, n, sizeof(*src));
        if (!order || !src) {
                free(order);
                free(src);
                qsort(rows, n, sizeof(*rows), cmp); /* memory is short: in place */
                return;
        }
        if (n - p <= SORT_TAIL_MAX) {
                merge_tail(order, rows, p, n, cmp);
        } else {
                for (size_t i = 0; i < n; i++)
                        order[i] = &rows[i];
                report_sort_pointers(order, n, cmp);
        }
        for (size_t i = 0; i < n; i++)
                src[i] = (size_t)(order[i] - rows); /* position i takes rows[src[i]] */
        free(order);
        for (size_t i = 0; i < n; i++) {
                if (src[i] == i)
                        continue;
                /* the cycle through i: each entry moves once, i's via spare */
                size_t j = i;
                memcpy(&spare, &rows[i], sizeof(spare));
                while (src[j] != i) {
                        size_t k = src[j];
                        memcpy(&rows[j], &rows[k], sizeof(rows[j]));
                        src[j] = j;
                        j = k;
                }
                memcpy(&rows[j], &spare, sizeof(spare));
                src[j] = j;
        }
        free(src);
}
