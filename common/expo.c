/* Prometheus text format 0.0.4: families, series keyed by their escaped
 * label text, sorted output, exact scaled integers as decimals. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

struct series {
        char *key; /* name{a="x",...} */
        int64_t value;
};

struct family {
        char *name, *help;
        enum expo_type type;
        uint64_t scale;
        unsigned decimals;
        struct series *v; /* sorted by key */
        size_t n, cap;
};

struct expo {
        struct family *f;
        size_t n, cap;
};

int expo_new(struct expo **ret)
{
        struct expo *e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        *ret = e;
        return 0;
}

struct expo *expo_free(struct expo *e)
{
        if (!e)
                return NULL;
        for (size_t i = 0; i < e->n; i++) {
                for (size_t k = 0; k < e->f[i].n; k++)
                        free(e->f[i].v[k].key);
                free(e->f[i].v);
                free(e->f[i].name);
                free(e->f[i].help);
        }
        free(e->f);
        free(e);
        return NULL;
}

static bool valid_name(const char *s, bool colon)
{
        if (!s || !*s || (*s >= '0' && *s <= '9'))
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '_' || (colon && *s == ':')))
                        return false;
        return true;
}

static struct family *find_family(const struct expo *e, const char *name)
{
        for (size_t i = 0; i < e->n; i++)
                if (strcmp(e->f[i].name, name) == 0)
                        return &e->f[i];
        return NULL;
}

int expo_family(struct expo *e, const char *name, enum expo_type type, const char *help,
                uint64_t scale)
{
        unsigned decimals = 0;
        struct family *f;

        if (!valid_name(name, true) || !help || scale == 0)
                return -EINVAL;
        for (uint64_t s = scale; s > 1; s /= 10, decimals++)
                if (s % 10 != 0 || decimals >= 18)
                        return -EINVAL;
        if (find_family(e, name))
                return -EEXIST;
        if (e->n == e->cap) {
                size_t ncap = e->cap ? e->cap * 2 : 16;
                struct family *nf = realloc(e->f, ncap * sizeof(*nf));
                if (!nf)
                        return -ENOMEM;
                e->f = nf;
                e->cap = ncap;
        }
        f = &e->f[e->n];
        *f = (struct family){.type = type, .scale = scale, .decimals = decimals};
        f->name = strdup(name);
        f->help = strdup(help);
        if (!f->name || !f->help) {
                free(f->name);
                free(f->help);
                return -ENOMEM;
        }
        e->n++;
        return 0;
}

/* UTF-8 sequence length at p (1..4), or 0 when it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *p)
{
        size_t n;
        unsigned c = p[0];

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
        else
                return 0;
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
                return 0; /* overlong, surrogate */
        if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
                return 0;
        return n;
}

static void escape_into(FILE *f, const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = utf8_len(p);
                if (*p == '\\')
                        fputs("\\\\", f);
                else if (*p == '"')
                        fputs("\\\"", f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (n == 0 || *p < 0x20 || *p == 0x7f)
                        fputs("\xef\xbf\xbd", f);
                else
                        fwrite(p, 1, n, f);
                p += n ? n : 1;
        }
}

int expo_escape_label(const char *s, char **ret)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        escape_into(f, s ? s : "");
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

static int series_key(const char *name, const char *const *labels, char **ret)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r = 0;

        if (!f)
                return -ENOMEM;
        fputs(name, f);
        for (size_t i = 0; labels && labels[i]; i += 2) {
                if (!valid_name(labels[i], false) || strncmp(labels[i], "__", 2) == 0) {
                        r = -EINVAL;
                        break;
                }
                fprintf(f, "%c%s=\"", i == 0 ? '{' : ',', labels[i]);
                escape_into(f, labels[i + 1] ? labels[i + 1] : "");
                fputc('"', f);
        }
        if (labels && labels[0])
                fputc('}', f);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        return 0;
}

/* Finds or inserts the series `key` (taken over) in f. */
static int series_in(struct family *f, char *key, struct series **ret)
{
        size_t lo = 0, hi = f->n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(f->v[mid].key, key);
                if (c == 0) {
                        free(key);
                        *ret = &f->v[mid];
                        return 0;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (f->n == f->cap) {
                size_t ncap = f->cap ? f->cap * 2 : 16;
                struct series *nv = realloc(f->v, ncap * sizeof(*nv));
                if (!nv) {
                        free(key);
                        return -ENOMEM;
                }
                f->v = nv;
                f->cap = ncap;
        }
        memmove(&f->v[lo + 1], &f->v[lo], (f->n - lo) * sizeof(*f->v));
        f->v[lo] = (struct series){.key = key};
        f->n++;
        *ret = &f->v[lo];
        return 0;
}

static int get_series(struct expo *e, const char *family, const char *const *labels,
                      struct series **ret)
{
        struct family *f = find_family(e, family);
        char *key;
        int r;

        if (!f)
                return -ENOENT;
        r = series_key(family, labels, &key);
        if (r < 0)
                return r;
        return series_in(f, key, ret);
}

int expo_max_series(struct expo *e, const char *series, int64_t v)
{
        size_t n = strcspn(series, "{");
        struct family *f = NULL;
        struct series *s;
        char *key;
        int r;

        for (size_t i = 0; i < e->n && !f; i++)
                if (strlen(e->f[i].name) == n && strncmp(e->f[i].name, series, n) == 0)
                        f = &e->f[i];
        if (!f || f->type != EXPO_COUNTER)
                return -ENOENT;
        if (series[n] && (series[n + 1] == 0 || series[strlen(series) - 1] != '}' ||
                          strchr(series, '\n')))
                return -EINVAL;
        key = strdup(series);
        if (!key)
                return -ENOMEM;
        r = series_in(f, key, &s);
        if (r < 0)
                return r;
        if (v > s->value)
                s->value = v;
        return 0;
}

int expo_add(struct expo *e, const char *family, const char *const *labels, int64_t v)
{
        struct series *s;
        int r = get_series(e, family, labels, &s);
        if (r < 0)
                return r;
        s->value = (int64_t)((uint64_t)s->value + (uint64_t)v);
        return 0;
}

int expo_max(struct expo *e, const char *family, const char *const *labels, int64_t v)
{
        struct series *s;
        int r = get_series(e, family, labels, &s);
        if (r < 0)
                return r;
        if (v > s->value)
                s->value = v;
        return 0;
}

int expo_foreach_counter(struct expo *e, int (*cb)(const char *series, int64_t *value, void *u),
                         void *u)
{
        for (size_t i = 0; i < e->n; i++) {
                if (e->f[i].type != EXPO_COUNTER)
                        continue;
                for (size_t k = 0; k < e->f[i].n; k++) {
                        int r = cb(e->f[i].v[k].key, &e->f[i].v[k].value, u);
                        if (r)
                                return r;
                }
        }
        return 0;
}

/* v / scale as an exact decimal, trailing zeros of the fraction dropped. */
static void put_value(FILE *f, const struct family *fam, int64_t v)
{
        uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
        uint64_t whole = a / fam->scale, frac = a % fam->scale;
        unsigned d = fam->decimals;

        fprintf(f, "%s%llu", v < 0 ? "-" : "", (unsigned long long)whole);
        if (frac == 0)
                return;
        while (frac % 10 == 0) {
                frac /= 10;
                d--;
        }
        fprintf(f, ".%0*llu", (int)d, (unsigned long long)frac);
}

static void put_help(FILE *f, const char *help)
{
        for (const char *p = help; *p; p++) {
                if (*p == '\\')
                        fputs("\\\\", f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else
                        fputc(*p, f);
        }
}

int expo_render(const struct expo *e, char **ret_text, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < e->n; i++) {
                const struct family *fam = &e->f[i];
                fprintf(f, "# HELP %s ", fam->name);
                put_help(f, fam->help);
                fprintf(f, "\n# TYPE %s %s\n", fam->name,
                        fam->type == EXPO_COUNTER ? "counter" : "gauge");
                for (size_t k = 0; k < fam->n; k++) {
                        fprintf(f, "%s ", fam->v[k].key);
                        put_value(f, fam, fam->v[k].value);
                        fputc('\n', f);
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret_text = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}
