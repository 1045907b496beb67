/* Aligned text tables for the terminal: columns sized to their widest cell
 * (counted in characters, so a "—" is one column), numbers right-aligned. */
#pragma once

#include "cleanup.h"

#include <stddef.h>
#include <stdio.h>

enum table_align { TABLE_LEFT = 0, TABLE_RIGHT = 1 };

struct table;

/* ncols headers and alignments (align may be NULL: all left). -ENOMEM. */
int table_new(size_t ncols, const char *const *headers, const enum table_align *align,
              struct table **ret_table);
struct table *table_free(struct table *t);
static inline void table_freep(struct table **t) { *t = table_free(*t); }

/* Copies ncols cells (NULL reads as ""). -ENOMEM. */
int table_add(struct table *t, const char *const *cells);
/* A horizontal rule across all columns (e.g. above a TOTAL line). */
int table_add_rule(struct table *t);

/* What a table holds, for renderers other than table_print (html/report.h):
 * columns, their headers and alignment, and lines in order; a line is its
 * ncols cells (escaped as termtext.h does) or NULL for a rule. */
size_t table_ncols(const struct table *t);
const char *table_header(const struct table *t, size_t col);
enum table_align table_col_align(const struct table *t, size_t col);
size_t table_nlines(const struct table *t);
const char *const *table_line(const struct table *t, size_t i);

/* Header, a rule, then the rows; columns two spaces apart, no trailing blanks. */
int table_print(const struct table *t, FILE *f);

/* Display width of a UTF-8 string (code points; wide characters count 2). */
size_t table_width(const char *s);
#define _cleanup_table_ _cleanup_(table_freep)
