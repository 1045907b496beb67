/* Chart numbers: a growable categories-by-series table with folding of
 * small series into "other" and the top-N cut for entry charts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "series.h"

int series_new(enum series_unit unit, struct series **ret)
{
        struct series *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->unit = unit;
        *ret = s;
        return 0;
}

static void free_cells(struct series *s)
{
        for (size_t i = 0; s->tips && i < s->n_cats * s->n_series; i++)
                free(s->tips[i]);
        free(s->tips);
        free(s->v);
        s->tips = NULL;
        s->v = NULL;
}

struct series *series_free(struct series *s)
{
        if (!s)
                return NULL;
        free_cells(s);
        for (size_t i = 0; i < s->n_cats; i++)
                free(s->cats[i]);
        for (size_t i = 0; i < s->n_series; i++)
                free(s->names[i]);
        free(s->cats);
        free(s->names);
        free(s);
        return NULL;
}

static int find(char **v, size_t n, const char *x)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], x) == 0)
                        return (int)i;
        return -1;
}

/* Reshapes the cells to n_cats x n_series (both only grow). */
static int reshape(struct series *s, size_t n_cats, size_t n_series)
{
        size_t n = n_cats * n_series;
        double *v = calloc(n ? n : 1, sizeof(*v));
        char **tips = calloc(n ? n : 1, sizeof(*tips));

        if (!v || !tips) {
                free(v);
                free(tips);
                return -ENOMEM;
        }
        for (size_t c = 0; c < s->n_cats; c++)
                for (size_t k = 0; k < s->n_series; k++) {
                        v[c * n_series + k] = s->v[c * s->n_series + k];
                        tips[c * n_series + k] = s->tips[c * s->n_series + k];
                        s->tips[c * s->n_series + k] = NULL;
                }
        free_cells(s);
        s->v = v;
        s->tips = tips;
        return 0;
}

static int push(char ***v, size_t *n, size_t *cap, const char *x)
{
        char *d = strdup(x ? x : "");

        if (!d)
                return -ENOMEM;
        if (*n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 16;
                char **nv = realloc(*v, ncap * sizeof(*nv));
                if (!nv) {
                        free(d);
                        return -ENOMEM;
                }
                *v = nv;
                *cap = ncap;
        }
        (*v)[(*n)++] = d;
        return 0;
}

int series_cat(struct series *s, const char *cat)
{
        int i = find(s->cats, s->n_cats, cat ? cat : "");
        int r;

        if (i >= 0)
                return i;
        r = reshape(s, s->n_cats + 1, s->n_series);
        if (r >= 0)
                r = push(&s->cats, &s->n_cats, &s->cap_cats, cat);
        return r < 0 ? r : (int)s->n_cats - 1;
}

static int series_name(struct series *s, const char *name)
{
        int i = find(s->names, s->n_series, name ? name : "");
        int r;

        if (i >= 0)
                return i;
        r = reshape(s, s->n_cats, s->n_series + 1);
        if (r >= 0)
                r = push(&s->names, &s->n_series, &s->cap_series, name);
        return r < 0 ? r : (int)s->n_series - 1;
}

int series_add(struct series *s, const char *cat, const char *name, double v, const char *tip)
{
        int c = series_cat(s, cat), k = c < 0 ? c : series_name(s, name);
        size_t i;

        if (k < 0)
                return k;
        i = (size_t)c * s->n_series + (size_t)k;
        if (s->v[i] != 0 || s->tips[i]) { /* a second row in the cell: a sum has no one figure */
                free(s->tips[i]);
                s->tips[i] = NULL;
                tip = NULL;
        }
        s->v[i] += v;
        if (tip) {
                char *d = strdup(tip);
                if (!d)
                        return -ENOMEM;
                free(s->tips[i]);
                s->tips[i] = d;
        }
        return 0;
}

double series_cat_sum(const struct series *s, size_t cat)
{
        double sum = 0;
        for (size_t k = 0; k < s->n_series; k++)
                if (s->v[cat * s->n_series + k] > 0)
                        sum += s->v[cat * s->n_series + k];
        return sum;
}

double series_max_stack(const struct series *s)
{
        double max = 0;
        for (size_t c = 0; c < s->n_cats; c++)
                if (series_cat_sum(s, c) > max)
                        max = series_cat_sum(s, c);
        return max;
}

bool series_empty(const struct series *s)
{
        return series_max_stack(s) <= 0;
}

static double name_sum(const struct series *s, size_t k)
{
        double sum = 0;
        for (size_t c = 0; c < s->n_cats; c++)
                if (s->v[c * s->n_series + k] > 0)
                        sum += s->v[c * s->n_series + k];
        return sum;
}

/* An order of indices by descending sums (stable). */
static size_t *order_by(size_t n, double (*sum)(const struct series *, size_t), const struct series *s)
{
        size_t *o = malloc((n ? n : 1) * sizeof(*o));

        if (!o)
                return NULL;
        for (size_t i = 0; i < n; i++)
                o[i] = i;
        for (size_t i = 1; i < n; i++) /* insertion sort: small n, stable */
                for (size_t j = i; j > 0 && sum(s, o[j]) > sum(s, o[j - 1]); j--) {
                        size_t t = o[j];
                        o[j] = o[j - 1];
                        o[j - 1] = t;
                }
        return o;
}

int series_fold(struct series *s, size_t max, const char *other)
{
        size_t nz = 0, keep, n_new;
        size_t *o;
        char **names;
        double *v;
        char **tips;

        if (max < 2)
                return -EINVAL;
        o = order_by(s->keep_order ? 0 : s->n_series, name_sum, s);
        if (!o)
                return -ENOMEM;
        if (s->keep_order) { /* the order added, without the series that have no value */
                size_t *ko = realloc(o, (s->n_series ? s->n_series : 1) * sizeof(*o));
                if (!ko) {
                        free(o);
                        return -ENOMEM;
                }
                o = ko;
                for (size_t k = 0; k < s->n_series; k++)
                        if (name_sum(s, k) > 0)
                                o[nz++] = k;
        } else {
                while (nz < s->n_series && name_sum(s, o[nz]) > 0)
                        nz++;
        }
        if (nz == 0) { /* nothing to draw: leave it as it is */
                free(o);
                return 0;
        }
        keep = nz <= max ? nz : max - 1;
        n_new = nz <= max ? nz : max;
        names = calloc(n_new, sizeof(*names));
        v = calloc(s->n_cats * n_new + 1, sizeof(*v));
        tips = calloc(s->n_cats * n_new + 1, sizeof(*tips));
        if (!names || !v || !tips || (n_new > keep && !(names[keep] = strdup(other)))) {
                free(names);
                free(v);
                free(tips);
                free(o);
                return -ENOMEM;
        }
        for (size_t k = 0; k < nz; k++) { /* the series without a value are dropped */
                size_t to = k < keep ? k : keep, from = o[k];
                if (k < keep) {
                        names[to] = s->names[from];
                        s->names[from] = NULL;
                }
                for (size_t c = 0; c < s->n_cats; c++) {
                        v[c * n_new + to] += s->v[c * s->n_series + from];
                        if (k < keep) {
                                tips[c * n_new + to] = s->tips[c * s->n_series + from];
                                s->tips[c * s->n_series + from] = NULL;
                        }
                }
        }
        for (size_t k = 0; k < s->n_series; k++)
                free(s->names[k]);
        free(s->names);
        free_cells(s);
        free(o);
        s->names = names;
        s->n_series = s->cap_series = n_new;
        s->v = v;
        s->tips = tips;
        return 0;
}

void series_top_cats(struct series *s, size_t max)
{
        size_t *o = order_by(s->n_cats, series_cat_sum, s);
        size_t n = s->n_cats < max ? s->n_cats : max, ns = s->n_series;
        char **cats;
        double *v;
        char **tips;

        if (!o)
                return; /* out of memory: all categories stay */
        cats = calloc(n + 1, sizeof(*cats));
        v = calloc(n * ns + 1, sizeof(*v));
        tips = calloc(n * ns + 1, sizeof(*tips));
        if (!cats || !v || !tips) {
                free(cats);
                free(v);
                free(tips);
                free(o);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                cats[i] = s->cats[o[i]];
                s->cats[o[i]] = NULL;
                for (size_t k = 0; k < ns; k++) {
                        v[i * ns + k] = s->v[o[i] * ns + k];
                        tips[i * ns + k] = s->tips[o[i] * ns + k];
                        s->tips[o[i] * ns + k] = NULL;
                }
        }
        for (size_t i = 0; i < s->n_cats; i++)
                free(s->cats[i]);
        free(s->cats);
        free_cells(s);
        free(o);
        s->cats = cats;
        s->n_cats = s->cap_cats = n;
        s->v = v;
        s->tips = tips;
}
