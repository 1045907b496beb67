/* Text tables with aligned columns for the client's human output. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "termtext.h"
#include "table.h"

struct table {
        size_t ncols;
        char **headers;
        enum table_align *align;
        char ***rows; /* rows[i] == NULL: a rule */
        size_t n, cap, data_rows;
};

size_t table_width(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t w = 0;

        while (*p) {
                uint32_t cp;
                int len;
                if (*p < 0x80) {
                        cp = *p;
                        len = 1;
                } else if ((*p & 0xe0) == 0xc0) {
                        cp = *p & 0x1f;
                        len = 2;
                } else if ((*p & 0xf0) == 0xe0) {
                        cp = *p & 0x0f;
                        len = 3;
                } else if ((*p & 0xf8) == 0xf0) {
                        cp = *p & 0x07;
                        len = 4;
                } else {
                        w++; /* stray byte: one column, as a terminal shows a replacement */
                        p++;
                        continue;
                }
                int i = 1;
                for (; i < len && (p[i] & 0xc0) == 0x80; i++)
                        cp = cp << 6 | (p[i] & 0x3f);
                if (i < len) {
                        w++;
                        p += i;
                        continue;
                }
                int cw = cp < 0x80 ? 1 : wcwidth((wchar_t)cp);
                /* Outside a UTF-8 locale wcwidth knows nothing: count CJK and
                 * emoji blocks as 2, the rest as 1. */
                if (cw < 0)
                        cw = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
                                             (cp >= 0xac00 && cp <= 0xd7a3) ||
                                             (cp >= 0xf900 && cp <= 0xfaff) ||
                                             (cp >= 0xff00 && cp <= 0xff60) ||
                                             (cp >= 0x1f300 && cp <= 0x1faff) ||
                                             (cp >= 0x20000 && cp <= 0x3fffd)
                                     ? 2
                                     : 1;
                w += (size_t)cw;
                p += len;
        }
        return w;
}

static char **dup_cells(size_t n, const char *const *cells)
{
        char **v = calloc(n, sizeof(*v));
        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                v[i] = termtext_dup(cells ? cells[i] : NULL); /* controls made visible */
                if (!v[i]) {
                        for (size_t j = 0; j < i; j++)
                                free(v[j]);
                        free(v);
                        return NULL;
                }
        }
        return v;
}

static void free_cells(size_t n, char **v)
{
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

int table_new(size_t ncols, const char *const *headers, const enum table_align *align,
              struct table **ret_table)
{
        struct table *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->ncols = ncols;
        t->headers = dup_cells(ncols, headers);
        t->align = calloc(ncols, sizeof(*t->align));
        if (!t->headers || !t->align) {
                table_free(t);
                return -ENOMEM;
        }
        if (align)
                memcpy(t->align, align, ncols * sizeof(*align));
        *ret_table = t;
        return 0;
}

struct table *table_free(struct table *t)
{
        if (!t)
                return NULL;
        free_cells(t->ncols, t->headers);
        for (size_t i = 0; i < t->n; i++)
                free_cells(t->ncols, t->rows[i]);
        free(t->rows);
        free(t->align);
        free(t);
        return NULL;
}

static int push(struct table *t, char **row)
{
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                char ***v = realloc(t->rows, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                t->rows = v;
                t->cap = cap;
        }
        t->rows[t->n++] = row;
        return 0;
}

int table_add(struct table *t, const char *const *cells)
{
        char **row = dup_cells(t->ncols, cells);

        if (!row || push(t, row) < 0) {
                free_cells(t->ncols, row);
                return -ENOMEM;
        }
        t->data_rows++;
        return 0;
}

int table_add_rule(struct table *t)
{
        return push(t, NULL);
}

size_t table_ncols(const struct table *t)
{
        return t->ncols;
}

const char *table_header(const struct table *t, size_t col)
{
        return col < t->ncols ? t->headers[col] : NULL;
}

enum table_align table_col_align(const struct table *t, size_t col)
{
        return col < t->ncols ? t->align[col] : TABLE_LEFT;
}

size_t table_nlines(const struct table *t)
{
        return t->n;
}

const char *const *table_line(const struct table *t, size_t i)
{
        return i < t->n ? (const char *const *)t->rows[i] : NULL;
}

static void print_rule(FILE *f, const size_t *w, size_t ncols)
{
        for (size_t c = 0; c < ncols; c++) {
                if (c > 0)
                        fputs("  ", f);
                for (size_t i = 0; i < w[c]; i++)
                        fputc('-', f);
        }
        fputc('\n', f);
}

static void print_row(FILE *f, const struct table *t, const size_t *w, char **cells)
{
        size_t last = t->ncols;

        /* no trailing blanks: stop after the last non-empty cell */
        while (last > 0 && !cells[last - 1][0])
                last--;
        for (size_t c = 0; c < last; c++) {
                size_t cw = table_width(cells[c]);
                size_t pad = w[c] > cw ? w[c] - cw : 0;
                bool right = t->align[c] == TABLE_RIGHT;

                if (c > 0)
                        fputs("  ", f);
                if (right)
                        fprintf(f, "%*s", (int)pad, "");
                fputs(cells[c], f);
                if (!right && c + 1 < last)
                        fprintf(f, "%*s", (int)pad, "");
        }
        fputc('\n', f);
}

int table_print(const struct table *t, FILE *f)
{
        size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        for (size_t c = 0; c < t->ncols; c++)
                w[c] = table_width(t->headers[c]);
        for (size_t i = 0; i < t->n; i++)
                for (size_t c = 0; t->rows[i] && c < t->ncols; c++) {
                        size_t cw = table_width(t->rows[i][c]);
                        if (cw > w[c])
                                w[c] = cw;
                }
        print_row(f, t, w, t->headers);
        print_rule(f, w, t->ncols);
        for (size_t i = 0; i < t->n; i++) {
                if (t->rows[i])
                        print_row(f, t, w, t->rows[i]);
                else
                        print_rule(f, w, t->ncols);
        }
        free(w);
        return ferror(f) ? -EIO : 0;
}
