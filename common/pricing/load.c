/* Loading the price table in effect: the built-in text, then the user's
 * override file on top (a bad one ignored as a whole, with its line), and
 * the fingerprint that tells a reload whether prices changed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pricing/pricing.h"

#define OVERRIDE_MAX_BYTES (1u << 20)

static void table_clear(struct price_table *t)
{
        free(t->entries);
        free(t->mults);
        free(t->by_model);
        memset(t, 0, sizeof(*t));
}

static int by_model_cmp(const void *a, const void *b, void *u)
{
        const struct price_entry *e = u;
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        int c = strcmp(e[x].model, e[y].model);
        return c ? c : (x > y) - (x < y);
}

/* The lookup index price_compute uses (pricing.h); without it (no memory)
 * lookups scan the table. */
static void index_build(struct price_table *t)
{
        free(t->by_model);
        t->by_model = NULL;
        t->n_by_model = 0;
        if (!t->n_entries || !(t->by_model = malloc(t->n_entries * sizeof(*t->by_model))))
                return;
        for (size_t i = 0; i < t->n_entries; i++)
                t->by_model[i] = i;
        qsort_r(t->by_model, t->n_entries, sizeof(*t->by_model), by_model_cmp, t->entries);
        t->n_by_model = t->n_entries;
}

struct price_table *price_table_free(struct price_table *t)
{
        if (t) {
                table_clear(t);
                free(t);
        }
        return NULL;
}

/* Reads at most OVERRIDE_MAX_BYTES of a regular file; -ENOENT when absent. */
static int read_small_file(const char *path, char **ret_text, size_t *ret_len)
{
        struct stat st;
        char *buf;
        ssize_t got;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;
        }
        if (st.st_size > OVERRIDE_MAX_BYTES) {
                close(fd);
                return -EFBIG;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        got = read(fd, buf, (size_t)st.st_size + 1);
        close(fd);
        if (got < 0 || got > st.st_size) {
                free(buf);
                return got < 0 ? -EIO : -EAGAIN; /* grew while read: the next reload sees it */
        }
        *ret_text = buf;
        *ret_len = (size_t)got;
        return 0;
}

/* Text quoted from a user's file reaches the journal and terminals:
 * control bytes become '?'. */
static void defang(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        *s = '?';
}

static uint64_t count_lines_of(const struct price_table *t)
{
        uint64_t n = t->n_mults;
        for (size_t i = 0; i < t->n_entries; i++)
                n += t->entries[i].overridden;
        return n;
}

int price_table_load(const char *override_path, struct price_table **ret_table)
{
        struct price_table *t = calloc(1, sizeof(*t));
        size_t blen = strlen(pricing_builtin_text), olen = 0;
        char *otext = NULL, err[400];
        unsigned line = 0;
        int r;

        if (!t)
                return -ENOMEM;
        r = price_table_parse(t, pricing_builtin_text, blen, false, &line, err, sizeof(err));
        if (r < 0) {
                price_table_free(t);
                return r == -EINVAL ? -EBADMSG : r; /* a bug in data/prices.conf */
        }
        t->fingerprint = hash64(pricing_builtin_text, blen);
        if (!override_path)
                goto done;
        snprintf(t->override_path, sizeof(t->override_path), "%s", override_path);
        r = read_small_file(override_path, &otext, &olen);
        if (r == -ENOENT)
                goto done;
        if (r < 0) {
                snprintf(t->override_error, sizeof(t->override_error), "cannot read it: %s%s",
                         strerror(-r), r == -EFBIG ? " (over 1 MiB)" : "");
                goto done;
        }
        size_t n_builtin_mults = t->n_mults;
        r = price_table_parse(t, otext, olen, true, &line, err, sizeof(err));
        if (r == -ENOMEM)
                goto nomem;
        if (r < 0) {
                /* ignored as a whole: start again from the built-in table alone */
                struct price_table fresh = {0};
                snprintf(t->override_error, sizeof(t->override_error), "line %u: %s", line, err);
                defang(t->override_error);
                r = price_table_parse(&fresh, pricing_builtin_text, blen, false, &line, err, sizeof(err));
                if (r < 0)
                        goto nomem;
                free(t->entries);
                free(t->mults);
                t->entries = fresh.entries;
                t->n_entries = fresh.n_entries;
                t->cap_entries = fresh.cap_entries;
                t->mults = fresh.mults;
                t->n_mults = fresh.n_mults;
                t->cap_mults = fresh.cap_mults;
                goto done;
        }
        t->override_loaded = true;
        t->override_entries = (unsigned)(count_lines_of(t) - n_builtin_mults);
        t->fingerprint ^= hash64(otext, olen) * 0x9E3779B97F4A7C15ull + 1;
done:
        free(otext);
        index_build(t);
        *ret_table = t;
        return 0;
nomem:
        free(otext);
        price_table_free(t);
        return -ENOMEM;
}
