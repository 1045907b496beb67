/* The numbers behind a chart of the HTML report: categories (days, blocks,
 * projects...) by series (models, harnesses, token types), each cell a value
 * and the text its tooltip shows. Built from the report's rows by html/report.c,
 * drawn by svg.c; knows nothing of either. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"

enum series_unit { SERIES_USD = 0, SERIES_TOKENS, SERIES_COUNT };

struct series {
        enum series_unit unit;
        size_t n_cats, n_series;
        char **cats;   /* labels, in the order first added */
        char **names;  /* series names, in the order first added (see series_fold) */
        double *v;     /* v[cat * n_series + s]; 0 where nothing was added */
        char **tips;   /* tips[cat * n_series + s]: the cell's figure as a table shows it, or NULL */
        size_t cap_cats, cap_series;
        bool keep_order; /* series_fold keeps the order added (token types) */
        bool cut_left;   /* a long category label is shown by its end (paths) */
};

/* -ENOMEM. */
int series_new(enum series_unit unit, struct series **ret);
struct series *series_free(struct series *s);
static inline void series_freep(struct series **s) { *s = series_free(*s); }
#define _cleanup_series_ _cleanup_(series_freep)

/* Adds a category (if new) and returns its index; -ENOMEM. */
int series_cat(struct series *s, const char *cat);
/* Adds v to the cell (cat, name), creating either when new; tip (may be
 * NULL) is the cell's figure as text, kept only while one row fills the
 * cell. -ENOMEM. */
int series_add(struct series *s, const char *cat, const char *name, double v, const char *tip);

/* Orders the series by their sums, largest first, drops those with no
 * positive value, and when more than max remain keeps max - 1 and folds
 * the rest into one named `other` (max >= 2; tips of folded cells are
 * dropped: a sum has no single figure). -EINVAL, -ENOMEM. */
int series_fold(struct series *s, size_t max, const char *other);
/* Keeps the max categories with the largest sums across series, in their
 * order of sums, largest first (for "top entries" charts). */
void series_top_cats(struct series *s, size_t max);

double series_cat_sum(const struct series *s, size_t cat);
double series_max_stack(const struct series *s); /* the largest category sum */
bool series_empty(const struct series *s);       /* no positive value anywhere */
