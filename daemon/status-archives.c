/* The OpenClaw archive figures of `status`. Calls from the .zst archive
 * files are those files' rows_added (their checkpoints); calls from blobs
 * inside a database carry that database's origin hash as source_hash, so
 * they are counted in the ledger, in one read walk, done again only when
 * the ledger gained rows since the last status. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "ledger.h"
#include "openclaw.h"
#include "registry.h"
#include "status-archives.h"

#define AGENT_MAX 64

struct agent_fig {
        char id[AGENT_MAX];
        uint64_t archive_calls, cold_calls, faults;
};

struct figs {
        struct agent_fig *v;
        size_t n, cap;
};

/* The blob origins of the databases, and what the ledger walk found. */
struct origin {
        uint64_t hash;
        size_t agent;
        bool cold;
        uint64_t calls;
};

struct origins {
        struct origin *v;
        size_t n, cap;
};

/* The agent a path belongs to: the component after the last "agents/",
 * else the nearest directory above the file that is not sessions/, agent/
 * or cold/ (a moved session store or agent dir). */
static void agent_of(const char *path, char *buf, size_t cap)
{
        const char *p = NULL, *end = strrchr(path, '/');
        size_t n = 0;

        for (const char *q = path; (q = strstr(q, "/agents/")); q++)
                p = q + strlen("/agents/");
        if (p && (end = strchr(p, '/'))) {
                n = (size_t)(end - p);
        } else {
                p = NULL;
                while (end && end > path) {
                        const char *s = end;
                        while (s > path && s[-1] != '/')
                                s--;
                        n = (size_t)(end - s);
                        if (!((n == 8 && memcmp(s, "sessions", 8) == 0) || (n == 5 && memcmp(s, "agent", 5) == 0) ||
                              (n == 4 && memcmp(s, "cold", 4) == 0))) {
                                p = s;
                                break;
                        }
                        end = s - 1;
                }
        }
        if (!p || n == 0)
                snprintf(buf, cap, "-");
        else
                snprintf(buf, cap, "%.*s", (int)n, p);
        for (char *c = buf; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        *c = '?'; /* a directory name is user text: nothing a terminal acts on */
}

static int fig_get(struct figs *f, const char *id, size_t *ret)
{
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->v[i].id, id) == 0) {
                        *ret = i;
                        return 0;
                }
        if (f->n == f->cap) {
                size_t ncap = f->cap ? f->cap * 2 : 8;
                struct agent_fig *v = reallocarray(f->v, ncap, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                f->v = v;
                f->cap = ncap;
        }
        memset(&f->v[f->n], 0, sizeof(f->v[0]));
        snprintf(f->v[f->n].id, sizeof(f->v[0].id), "%s", id);
        *ret = f->n++;
        return 0;
}

static int origin_add(struct origins *o, uint64_t hash, size_t agent, bool cold)
{
        if (o->n == o->cap) {
                size_t ncap = o->cap ? o->cap * 2 : 8;
                struct origin *v = reallocarray(o->v, ncap, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                o->v = v;
                o->cap = ncap;
        }
        o->v[o->n++] = (struct origin){ .hash = hash, .agent = agent, .cold = cold };
        return 0;
}

static int count_row(const struct usage_row *r, void *u)
{
        struct origins *o = u;
        for (size_t i = 0; i < o->n; i++)
                if (o->v[i].hash == r->source_hash)
                        o->v[i].calls++;
        return 0;
}

/* The last walk's result, valid while the ledger's row count and the set
 * of origins stay the same (rows are never removed). */
static struct {
        uint64_t rows, set;
        struct origins o;
} cache;

static int walk_ledger(struct ledger *l, struct origins *o)
{
        struct ledger_stats ls = { 0 };
        uint64_t set = 0x6f726967696e73ull;
        int r;

        for (size_t i = 0; i < o->n; i++) {
                uint64_t v[2] = { set, o->v[i].hash };
                set = hash64(v, sizeof(v));
        }
        r = ledger_get_stats(l, &ls);
        if (r < 0)
                return r;
        if (cache.o.v && cache.rows == ls.rows && cache.set == set && cache.o.n == o->n) {
                for (size_t i = 0; i < o->n; i++)
                        o->v[i].calls = cache.o.v[i].calls;
                return 0;
        }
        r = ledger_foreach_row(l, count_row, o);
        if (r < 0)
                return r;
        struct origin *copy = malloc(o->n * sizeof(*copy));
        if (copy) {
                memcpy(copy, o->v, o->n * sizeof(*copy));
                free(cache.o.v);
                cache.o = (struct origins){ copy, o->n, o->n };
                cache.rows = ls.rows;
                cache.set = set;
        }
        return 0;
}

static int collect(struct ingest *in, struct figs *f, struct origins *o)
{
        struct ledger *l = ingest_ledger(in);
        size_t it, ai;
        int r;

        for (struct source_rec *s = ingest_sources_first(in, &it); s; s = ingest_sources_next(in, &it)) {
                enum oc_archive_format format;
                struct checkpoint cp;
                struct parse_state ps;
                char id[AGENT_MAX];
                bool file;
                uint32_t bad;

                if (s->adapter != &adapter_openclaw || s->kind != CLASS_DB)
                        continue;
                agent_of(s->path, id, sizeof(id));
                r = fig_get(f, id, &ai);
                if (r < 0)
                        return r;
                file = openclaw_is_archive_file(s->path, &format);
                if (file && s->last_error && s->last_error != -ENOENT)
                        f->v[ai].faults++;
                if (ledger_get_checkpoint(l, s->path, &cp) < 0)
                        continue;
                if (file) {
                        if (format == OC_ARCHIVE_COLD)
                                f->v[ai].cold_calls += cp.rows_added;
                        else
                                f->v[ai].archive_calls += cp.rows_added;
                        continue;
                }
                if (cp.state_len && parse_state_decode(cp.state, cp.state_len, &ps) == 0 &&
                    openclaw_db_faults(&ps, &bad) == 0)
                        f->v[ai].faults += bad;
                r = origin_add(o, openclaw_origin_hash(s->path, OC_ARCHIVE_JSONL), ai, false);
                if (r == 0)
                        r = origin_add(o, openclaw_origin_hash(s->path, OC_ARCHIVE_COLD), ai, true);
                if (r < 0)
                        return r;
        }
        if (o->n == 0)
                return 0;
        r = walk_ledger(l, o);
        if (r < 0)
                return r;
        for (size_t i = 0; i < o->n; i++) {
                if (o->v[i].cold)
                        f->v[o->v[i].agent].cold_calls += o->v[i].calls;
                else
                        f->v[o->v[i].agent].archive_calls += o->v[i].calls;
        }
        return 0;
}

struct json_object *status_openclaw_archives(struct ingest *in)
{
        struct figs f = { 0 };
        struct origins o = { 0 };
        json_object *arr = json_object_new_array();
        int r = arr ? collect(in, &f, &o) : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < f.n; i++) {
                json_object *a = json_object_new_object();
                json_object_object_add(a, "agent", json_object_new_string(f.v[i].id));
                json_object_object_add(a, "archive_calls", json_object_new_int64((int64_t)f.v[i].archive_calls));
                json_object_object_add(a, "cold_calls", json_object_new_int64((int64_t)f.v[i].cold_calls));
                json_object_object_add(a, "archive_faults", json_object_new_int64((int64_t)f.v[i].faults));
                json_object_array_add(arr, a);
        }
        free(f.v);
        free(o.v);
        return arr; /* after a failed ledger read: empty, not wrong */
}
