/* The OpenClaw archive figures of `status` (adapter.status_extra): per
 * agent, the calls first found in archives (deleted sessions) and cold
 * storage, and the archives that did not decode. Calls from the .zst
 * archive files are those files' rows_added (their checkpoints); calls from
 * blobs inside a database carry that database's origin hash as
 * source_hash, so they are counted in the ledger, in one read walk, done
 * again only when the ledger gained rows since the last status (the walk's
 * result is kept in the cache the daemon holds for the adapter). */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "openclaw/openclaw.h"

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
struct walk_cache {
        uint64_t rows, set;
        size_t n;
        struct origin v[]; /* one allocation: the daemon frees it with free() */
};

static int walk_ledger(struct ledger *l, struct origins *o, void **io_cache)
{
        struct walk_cache *cache = *io_cache;
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
        if (cache && cache->rows == ls.rows && cache->set == set && cache->n == o->n) {
                for (size_t i = 0; i < o->n; i++)
                        o->v[i].calls = cache->v[i].calls;
                return 0;
        }
        r = ledger_foreach_row(l, count_row, o);
        if (r < 0)
                return r;
        free(cache);
        *io_cache = cache = malloc(sizeof(*cache) + o->n * sizeof(cache->v[0]));
        if (cache) { /* else the next status walks again */
                cache->rows = ls.rows;
                cache->set = set;
                cache->n = o->n;
                memcpy(cache->v, o->v, o->n * sizeof(cache->v[0]));
        }
        return 0;
}

static int collect(const struct adapter_status_ctx *ctx, struct figs *f, struct origins *o)
{
        struct adapter_source_view v;
        size_t ai;
        int r;

        while (ctx->next(ctx->it, &v)) {
                enum oc_archive_format format;
                struct parse_state ps;
                char id[AGENT_MAX];
                bool file;
                uint32_t bad;

                file = openclaw_is_archive_file(v.path, &format);
                if (!file && v.kind != CLASS_TABLE)
                        continue;
                agent_of(v.path, id, sizeof(id));
                r = fig_get(f, id, &ai);
                if (r < 0)
                        return r;
                if (file && v.last_error && v.last_error != -ENOENT)
                        f->v[ai].faults++;
                if (!v.cp)
                        continue;
                if (file) {
                        if (format == OC_ARCHIVE_COLD)
                                f->v[ai].cold_calls += v.cp->rows_added;
                        else
                                f->v[ai].archive_calls += v.cp->rows_added;
                        continue;
                }
                if (v.cp->state_len && parse_state_decode(v.cp->state, v.cp->state_len, &ps) == 0 &&
                    openclaw_db_faults(&ps, &bad) == 0)
                        f->v[ai].faults += bad;
                r = origin_add(o, openclaw_origin_hash(v.path, OC_ARCHIVE_JSONL), ai, false);
                if (r == 0)
                        r = origin_add(o, openclaw_origin_hash(v.path, OC_ARCHIVE_COLD), ai, true);
                if (r < 0)
                        return r;
        }
        if (o->n == 0)
                return 0;
        r = walk_ledger(ctx->ledger, o, ctx->cache);
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

/* An array of {agent, archive_calls, cold_calls, archive_faults}, one per
 * agent that has a database or archive files, under "agents". */
struct json_object *openclaw_status(const struct adapter_status_ctx *ctx)
{
        struct figs f = { 0 };
        struct origins o = { 0 };
        json_object *arr = json_object_new_array(), *res;
        int r = arr ? collect(ctx, &f, &o) : -ENOMEM;

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
        res = json_object_new_object();
        json_object_object_add(res, "agents", arr); /* after a failed ledger read: empty, not wrong */
        return res;
}
