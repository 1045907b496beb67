/* The order of a report's rows (report.h): by key, by last time for
 * sessions, by calls for tools; and the sort that moves each ~1.7 KB
 * entry once. Shared by the builder and the cache (report/cache-view.c),
 * whose kept entries are in key order. */
#pragma once

#include <stddef.h>

#include "report/entry.h"

typedef int (*report_entry_cmp)(const void *a, const void *b);

int report_key_cmp(const void *a, const void *b);     /* key, party, group */
int report_session_cmp(const void *a, const void *b); /* last time, harness, session, party */
int report_tool_cmp(const void *a, const void *b);    /* calls descending, then key */

/* rows in cmp's order. Rows in order already cost one comparison each;
 * new ones after them are merged in, and only the rows out of place move. */
void report_sort_entries(struct report_entry *rows, size_t n, report_entry_cmp cmp);
/* v[0..n) (pointers to entries) in cmp's order of what they point to. */
void report_sort_pointers(const struct report_entry **v, size_t n, report_entry_cmp cmp);
