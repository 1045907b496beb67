/* Helpers the unit tests share: a fake environment for the adapters'
 * discover(), the totals of rows with the ledger's dedup, a file's lines
 * through an adapter's parse_line, expected totals from a fixture's JSON,
 * and small file and path helpers. All static inline: a test takes what it
 * uses and the rest costs nothing (and warns about nothing). */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "adapter.h"
#include "lines.h"
#include "row.h"
#include "tap.h"

/* The adapters the tests name directly (the product reaches them through
 * the registry's list). */
extern const struct adapter adapter_pi;
extern const struct adapter adapter_openclaw;
extern const struct adapter adapter_picoclaw;
extern const struct adapter adapter_claude;
extern const struct adapter adapter_codex;
extern const struct adapter adapter_cline;

/* ---- paths --------------------------------------------------------------------- */

/* snprintf that must fit (the tests' paths are short): a cut one exits 99 */
#define xsnprintf(buf, cap, ...)                                                 \
        do {                                                                     \
                if (snprintf((buf), (cap), __VA_ARGS__) >= (int)(cap))           \
                        exit(99);                                                \
        } while (0)

/* The source tree the fixtures are read from: $AM_SRCDIR, default ".". */
static inline const char *am_srcdir(void)
{
        const char *s = getenv("AM_SRCDIR");
        return s && *s ? s : ".";
}

/* a/b into buf (PATH_MAX bytes); returns buf. */
static inline char *pj(char *buf, const char *a, const char *b)
{
        xsnprintf(buf, PATH_MAX, "%s/%s", a, b);
        return buf;
}

static inline void mkdir_p(const char *path)
{
        char b[PATH_MAX];
        snprintf(b, sizeof(b), "%s", path);
        for (char *p = b + 1; *p; p++)
                if (*p == '/') {
                        *p = 0;
                        mkdir(b, 0755);
                        *p = '/';
                }
        mkdir(b, 0755);
}

/* ---- files --------------------------------------------------------------------- */

/* Writes n bytes to path (its directories made first); any failure exits 99. */
static inline void write_bytes(const char *path, const void *data, size_t n)
{
        char dir[PATH_MAX];
        FILE *f;

        xsnprintf(dir, sizeof(dir), "%s", path);
        mkdir_p(dirname(dir));
        f = fopen(path, "we");
        if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
                printf("# cannot write %s: %s\n", path, strerror(errno));
                exit(99);
        }
}

static inline void write_file(const char *path, const char *text)
{
        write_bytes(path, text, strlen(text));
}

/* All of f (a file or a pipe), NUL-terminated; *ret_len (if not NULL) does
 * not count the NUL. NULL on a read error. */
/* Moves a recent mtime (the last few seconds) a minute back, once. */
static inline void age_file(const char *path, int64_t now_s)
{
        struct stat st;
        struct timespec ts[2];

        if (stat(path, &st) < 0 || st.st_mtim.tv_sec < now_s - 5)
                return;
        ts[0] = st.st_mtim;
        ts[0].tv_sec -= 60;
        ts[1] = ts[0];
        (void)utimensat(AT_FDCWD, path, ts, 0);
}

/* A database and its -wal as if their writer had finished a minute ago,
 * so a reader does not wait for a commit to settle (COLLECT_SETTLING).
 * Only recent mtimes move, so files nobody wrote since keep theirs. */
static inline void age_db(const char *path)
{
        char wal[PATH_MAX];
        int64_t now_s = (int64_t)time(NULL);

        age_file(path, now_s);
        if (snprintf(wal, sizeof(wal), "%s-wal", path) < (int)sizeof(wal))
                age_file(wal, now_s);
}

static inline char *read_all(FILE *f, size_t *ret_len)
{
        char *data = NULL;
        size_t cap = 0, len = 0, k;

        do {
                if (cap - len < 65536) {
                        cap = cap ? cap * 2 : 1 << 20;
                        data = realloc(data, cap);
                        if (!data)
                                exit(99);
                }
                k = fread(data + len, 1, cap - len - 1, f);
                len += k;
        } while (k > 0);
        if (ferror(f)) {
                free(data);
                return NULL;
        }
        data[len] = 0;
        if (ret_len)
                *ret_len = len;
        return data;
}

/* A whole file (see read_all); NULL with errno set when it cannot be read. */
static inline char *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        char *data;

        if (!f)
                return NULL;
        data = read_all(f, ret_len);
        fclose(f);
        if (!data)
                errno = EIO;
        return data;
}

/* Steps through data[0..len) a line at a time: from *pos, the line's start
 * and length without its '\n' (*nl: whether it had one); false at the end. */
static inline bool next_line(const char *data, size_t len, size_t *pos, const char **line, size_t *n,
                             bool *nl)
{
        const char *e;

        if (*pos >= len)
                return false;
        e = memchr(data + *pos, '\n', len - *pos);
        *line = data + *pos;
        *n = (e ? (size_t)(e - data) : len) - *pos;
        if (nl)
                *nl = e != NULL;
        *pos += *n + 1;
        return true;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* o[k] as an integer; dflt when o is NULL or has no k. */
static inline int64_t jint(struct json_object *o, const char *k, int64_t dflt)
{
        struct json_object *v;
        return o && json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : dflt;
}

/* Calls fn with each line of path parsed as JSON (NULL for a line that is
 * not JSON); no call when path cannot be read. */
static inline void json_lines(const char *path, void (*fn)(struct json_object *o, void *u), void *u)
{
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0;

        while (f && getline(&line, &cap, f) > 0) {
                struct json_object *o = json_tokener_parse(line);
                fn(o, u);
                json_object_put(o);
        }
        free(line);
        if (f)
                fclose(f);
}

/* ---- a fake environment ------------------------------------------------------------ */

/* A small table for discover_env, and a log of every name asked for. */
struct fenv {
        const char *k[16], *v[16];
        size_t n;
        const char *asked[64];
        size_t n_asked;
};

static inline const char *fenv_get(void *u, const char *name)
{
        struct fenv *f = u;
        if (f->n_asked < 64)
                f->asked[f->n_asked++] = name;
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->k[i], name) == 0)
                        return f->v[i];
        return NULL;
}

static inline void fenv_set(struct fenv *f, const char *k, const char *v)
{
        if (f->n >= 16)
                exit(99);
        f->k[f->n] = k;
        f->v[f->n++] = v;
}

static inline struct discover_env fenv_env(struct fenv *f)
{
        return (struct discover_env){ fenv_get, f };
}

/* The same as a NULL-terminated { name, value, name, value, ..., NULL } list. */
static inline const char *kv_get(void *u, const char *name)
{
        const char *const *kv = u;
        for (size_t i = 0; kv[i]; i += 2)
                if (strcmp(kv[i], name) == 0)
                        return kv[i + 1];
        return NULL;
}

static inline const struct root *find_root(const struct root_list *l, const char *path)
{
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i].path, path) == 0)
                        return &l->v[i];
        return NULL;
}

/* ---- totals ----------------------------------------------------------------------- */

/* Sums of rows as the ledger keeps them: a key already seen is not counted
 * again (unless naive: every row counts). priced counts the rows with a
 * vendor-reported cost; synthetic the rows of OpenClaw's own provider
 * "openclaw", duplicates included. files, not_source and malformed are
 * ingest_file's counts. */
struct totals {
        uint64_t rows, input, output, cache_read, cache_write, reasoning, total, priced, calls, synthetic;
        uint64_t files, not_source, malformed;
        int64_t cost_nano;
        struct row_key *keys;
        size_t nkeys, capkeys;
        bool naive;
};

static inline bool totals_has_key(const struct totals *t, const struct row_key *k)
{
        for (size_t i = 0; i < t->nkeys; i++)
                if (memcmp(&t->keys[i], k, sizeof(*k)) == 0)
                        return true;
        return false;
}

static inline void add_rows(struct totals *t, const struct row_batch *b)
{
        for (size_t i = 0; i < b->n; i++) {
                const struct usage_row *r = &b->rows[i];
                t->synthetic += strcmp(r->provider, "openclaw") == 0;
                if (!t->naive && totals_has_key(t, &r->key))
                        continue;
                if (t->nkeys == t->capkeys) {
                        t->capkeys = t->capkeys ? 2 * t->capkeys : 64;
                        t->keys = realloc(t->keys, t->capkeys * sizeof(*t->keys));
                        if (!t->keys)
                                exit(99);
                }
                t->keys[t->nkeys++] = r->key;
                t->rows++;
                t->input += r->input;
                t->output += r->output;
                t->cache_read += r->cache_read;
                t->cache_write += r->cache_write;
                t->reasoning += r->reasoning;
                t->total += r->total;
                t->cost_nano += r->cost_nano;
                t->priced += r->cost_source == COST_VENDOR;
                t->calls += r->n_calls;
        }
}

/* t against a fixture's expected totals c ("rows", ..., "priced_rows",
 * "calls"; a missing key is 0), each test named by its key, after
 * "prefix: " when prefix is not NULL; with counts also "not_source" and
 * "malformed". */
static inline void totals_check(const struct totals *t, struct json_object *c, const char *prefix, bool counts)
{
#define TU_F(field, key)                                                                 \
        do {                                                                             \
                char _n[128];                                                            \
                if (prefix)                                                              \
                        snprintf(_n, sizeof(_n), "%s: %s", prefix, key);                 \
                else                                                                     \
                        snprintf(_n, sizeof(_n), "%s", key);                             \
                is_int(t->field, jint(c, key, 0), _n);                                   \
        } while (0)
        TU_F(rows, "rows");
        TU_F(input, "input");
        TU_F(output, "output");
        TU_F(cache_read, "cache_read");
        TU_F(cache_write, "cache_write");
        TU_F(reasoning, "reasoning");
        TU_F(total, "total");
        TU_F(cost_nano, "cost_nano");
        TU_F(priced, "priced_rows");
        TU_F(calls, "calls");
        if (counts) {
                TU_F(not_source, "not_source");
                TU_F(malformed, "malformed");
        }
#undef TU_F
}

/* ---- a file through an adapter ------------------------------------------------------ */

/* Complete lines of a file through the adapter's parse_line, into b (one
 * parse state; stops at a negative result). */
static inline int read_lines(const struct adapter *a, const char *path, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = a, .path = path, .source_hash = hash64(path, strlen(path)) };
        struct parse_state ps = { 0 };
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int r = 0;

        if (!f)
                return -errno;
        while ((n = getline(&line, &cap, f)) > 0 && r >= 0) {
                const char *s;
                size_t k = lines_trim(line, (size_t)n, &s);
                if (k)
                        r = a->parse_line(&ctx, &ps, s, k, b);
        }
        free(line);
        fclose(f);
        return r < 0 ? r : 0;
}

/* Reads a file as the tail does, rows into t: complete lines, then an
 * unterminated last line only when it is complete JSON (parsed on a copy
 * of the state). Counts the file, malformed lines, and a first line that
 * says it is not a source (which ends the file). */
static inline int ingest_file(struct totals *t, const struct adapter *a, const char *path)
{
        struct parse_state ps = { 0 };
        struct row_batch b = { 0 };
        struct source_ctx ctx = { .adapter = a, .path = path, .source_hash = hash64(path, strlen(path)) };
        size_t len, pos = 0, n;
        const char *line, *s;
        char *data = slurp(path, &len);
        bool nl;
        int r = 0;

        if (!data)
                return -errno;
        t->files++;
        while (next_line(data, len, &pos, &line, &n, &nl)) {
                n = lines_trim(line, n, &s);
                if (n == 0)
                        continue;
                if (!nl) {
                        struct parse_state copy = ps;
                        if (lines_is_complete_json(s, n))
                                r = a->parse_line(&ctx, &copy, s, n, &b);
                } else {
                        r = a->parse_line(&ctx, &ps, s, n, &b);
                }
                if (r < 0)
                        break;
                if (r == PARSE_MALFORMED)
                        t->malformed++;
                if (r == PARSE_NOT_SOURCE) {
                        t->not_source++;
                        break;
                }
        }
        add_rows(t, &b);
        row_batch_free(&b);
        free(data);
        return r < 0 ? r : 0;
}
