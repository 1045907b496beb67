/* Droid <id>.settings.json snapshots as ledger rows: the difference between
 * this snapshot's cumulative tokenUsage and the highest one read (kept in
 * the parse state; a lower one is an older snapshot written back, not a
 * new count), the custom-model map,
 * and the project from the session's own transcript header. The document
 * is a few KB; the scanner keeps four members and skips the rest (the
 * system prompt) without building anything. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "binio.h"
#include "droid/snapshot.h"
#include "json/jscan.h"

#define HEAD_MAX 65536 /* the transcript's first line is looked for in this many bytes */

/* ---- the document ------------------------------------------------------------------ */

enum { T_INPUT, T_OUTPUT, T_CACHE_READ, T_CACHE_WRITE, T_THINKING, T_COUNT };

struct snap_f {
        struct jscan_span model, provider_lock;
        bool has_usage;
        struct jscan_num t[T_COUNT];
};

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct snap_f *f = u;

        if (JSCAN_KEY_IS(k, "inputTokens"))
                return jscan_read_num(s, &f->t[T_INPUT], depth);
        if (JSCAN_KEY_IS(k, "outputTokens"))
                return jscan_read_num(s, &f->t[T_OUTPUT], depth);
        if (JSCAN_KEY_IS(k, "cacheReadTokens"))
                return jscan_read_num(s, &f->t[T_CACHE_READ], depth);
        if (JSCAN_KEY_IS(k, "cacheCreationTokens"))
                return jscan_read_num(s, &f->t[T_CACHE_WRITE], depth);
        if (JSCAN_KEY_IS(k, "thinkingTokens"))
                return jscan_read_num(s, &f->t[T_THINKING], depth);
        return jscan_skip(s, depth); /* factoryCredits: not dollars */
}

static bool doc_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct snap_f *f = u;

        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &f->model, depth);
        if (JSCAN_KEY_IS(k, "providerLock"))
                return jscan_read_str(s, &f->provider_lock, depth);
        if (JSCAN_KEY_IS(k, "tokenUsage")) {
                /* only the session's own calls: inclusiveTokenUsage adds
                 * children that are sessions of their own (and misses some) */
                memset(f->t, 0, sizeof(f->t));
                f->has_usage = jscan_at(s, '{');
                if (f->has_usage)
                        return jscan_object(s, usage_key, f, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

/* ---- the parse state's private part ------------------------------------------------ */

/* Format 2: format 1 and the rollbacks seen. t[] holds each total's
 * highest value read (format 1: the last read, which was the highest
 * since its last reset). resets is kept for the keys of sessions that saw
 * a reset before format 2 (a decrease is no reset since). */
#define PRIV_VERSION_1 1
#define PRIV_LEN_1 (1 + 1 + 4 + 8 * T_COUNT)
#define PRIV_VERSION 2
#define PRIV_LEN (PRIV_LEN_1 + 4)
#define PF_SNAPSHOT 0x1u /* a snapshot has been read */
#define PF_PROJECT  0x2u /* the transcript header has been looked at */
#define PF_BELOW    0x4u /* the last snapshot read was below the highest totals */

struct priv {
        uint8_t flags;
        uint32_t resets;
        uint64_t t[T_COUNT];
        uint32_t rollbacks;
};

static struct priv priv_get(const struct parse_state *ps)
{
        struct priv p = { 0 };
        struct br r = { ps->priv, ps->priv_len, 0, false };
        uint8_t version = ps->priv_len ? ps->priv[0] : 0;

        if (!(version == PRIV_VERSION_1 && ps->priv_len == PRIV_LEN_1) &&
            !(version == PRIV_VERSION && ps->priv_len == PRIV_LEN))
                return p;
        (void)br_u8(&r);
        p.flags = br_u8(&r);
        p.resets = br_u32(&r);
        for (int i = 0; i < T_COUNT; i++)
                p.t[i] = br_u64(&r);
        if (version == PRIV_VERSION)
                p.rollbacks = br_u32(&r);
        return p;
}

static void priv_put(struct parse_state *ps, const struct priv *p)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

        bw_u8(&w, PRIV_VERSION);
        bw_u8(&w, p->flags);
        bw_u32(&w, p->resets);
        for (int i = 0; i < T_COUNT; i++)
                bw_u64(&w, p->t[i]);
        bw_u32(&w, p->rollbacks);
        ps->priv_len = (uint32_t)w.len;
}

int droid_rollbacks(const struct parse_state *ps, uint32_t *ret_rollbacks)
{
        if (!((ps->priv_len == PRIV_LEN_1 && ps->priv[0] == PRIV_VERSION_1) ||
              (ps->priv_len == PRIV_LEN && ps->priv[0] == PRIV_VERSION)))
                return -ENOENT;
        *ret_rollbacks = priv_get(ps).rollbacks;
        return 0;
}

/* ---- models -------------------------------------------------------------------------- */

const struct droid_model *droid_custom_model(const struct droid_config *c, const char *id)
{
        const char *name, *dash;
        size_t name_n;
        unsigned long n, seen = 0;
        bool any = false;
        char *end;

        if (!c || strncmp(id, "custom:", 7) != 0)
                return NULL;
        name = id + 7;
        if (!(dash = strrchr(name, '-')) || dash[1] < '0' || dash[1] > '9')
                return NULL;
        errno = 0;
        n = strtoul(dash + 1, &end, 10);
        if (errno || *end)
                return NULL;
        name_n = (size_t)(dash - name);
        for (size_t i = 0; i < c->n; i++) {
                if (strlen(c->v[i].slug) != name_n || strncasecmp(c->v[i].slug, name, name_n) != 0)
                        continue;
                any = true;
                if (seen++ == n)
                        return &c->v[i];
        }
        if (!any && n < c->n && !c->v[n].slug[0])
                return &c->v[n];
        return NULL;
}

/* ---- the session ---------------------------------------------------------------------- */

/* <dir>/<id>.settings.json: <id> into ps->session (the whole name when it
 * has another form). */
static void session_of(struct parse_state *ps, const char *path)
{
        static const char sfx[] = ".settings.json";
        const char *name = strrchr(path, '/');
        size_t n;

        name = name ? name + 1 : path;
        n = strlen(name);
        if (n > sizeof(sfx) - 1 && strcmp(name + n - (sizeof(sfx) - 1), sfx) == 0)
                n -= sizeof(sfx) - 1;
        row_set_str(ps->session, sizeof(ps->session), name, n);
}

struct head_f {
        struct jscan_span type, cwd;
};

static bool head_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct head_f *h = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &h->type, depth);
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &h->cwd, depth);
        return jscan_skip(s, depth);
}

/* The cwd of the session_start line the sibling <id>.jsonl begins with.
 * true once it has been looked at for good (read, or it is not there in
 * a form we know); false while the transcript is not there yet. */
static bool project_of(struct parse_state *ps, const char *path)
{
        static const char sfx[] = ".settings.json";
        char jl[PATH_MAX], *buf;
        size_t n = strlen(path), have = 0;
        bool done = true;
        int fd;

        if (n <= sizeof(sfx) - 1 || strcmp(path + n - (sizeof(sfx) - 1), sfx) != 0 ||
            snprintf(jl, sizeof(jl), "%.*s.jsonl", (int)(n - (sizeof(sfx) - 1)), path) >= (int)sizeof(jl))
                return true;
        fd = open(jl, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return errno != ENOENT;
        buf = malloc(HEAD_MAX);
        while (buf && have < HEAD_MAX) {
                ssize_t k = pread(fd, buf + have, HEAD_MAX - have, (off_t)have);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                have += (size_t)k;
                if (memchr(buf + have - (size_t)k, '\n', (size_t)k))
                        break;
        }
        close(fd);
        if (buf) {
                const char *nl = memchr(buf, '\n', have);
                struct jscan s = { buf, nl ? nl : buf + have };
                struct head_f h = { 0 };

                if (!nl)
                        done = have >= HEAD_MAX; /* the first line is still being written */
                else if (jscan_at(&s, '{') && jscan_object(&s, head_key, &h, 0) &&
                         jscan_span_eq(&h.type, "session_start") && h.cwd.p)
                        jscan_span_set(ps->project, sizeof(ps->project), &h.cwd);
        } else {
                done = false;
        }
        free(buf);
        return done;
}

/* ---- rows ------------------------------------------------------------------------------ */

static bool totals_of(const struct snap_f *f, uint64_t *t)
{
        for (int i = 0; i < T_COUNT; i++) {
                int64_t v;
                t[i] = 0;
                if (!f->t[i].present)
                        continue;
                if (!jscan_num_i64(&f->t[i], &v) || v < 0 || !f->t[i].is_int)
                        return false;
                t[i] = (uint64_t)v;
        }
        return true;
}

static int emit(const struct source_ctx *ctx, const struct parse_state *ps, const struct snap_f *f,
                const uint64_t *now, const uint64_t *d, uint32_t resets, struct row_batch *out)
{
        const struct droid_model *m;
        struct usage_row *row;
        struct keyhash h;
        char model[ROW_MODEL_MAX];
        int r = row_batch_push(out, &row);

        if (r < 0)
                return r;
        row->kind = ROW_KIND_SNAPSHOT_STEP;
        row->cost_source = COST_NONE; /* no dollars on disk: the table prices it */
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_TIME_APPROX;
        row->time_ms = ctx ? (int64_t)ctx->st.st_mtim.tv_sec * 1000 + ctx->st.st_mtim.tv_nsec / 1000000 : 0;
        if (row->time_ms <= 0)
                row->time_ms = ps->fallback_time_ms;
        row->input = d[T_INPUT];
        row->output = d[T_OUTPUT];
        row->cache_read = d[T_CACHE_READ];
        row->cache_write = d[T_CACHE_WRITE];
        row->reasoning = d[T_THINKING] < d[T_OUTPUT] ? d[T_THINKING] : d[T_OUTPUT];
        row->total = d[T_INPUT] + d[T_OUTPUT] + d[T_CACHE_READ] + d[T_CACHE_WRITE];
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "droid");
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        jscan_span_set(model, sizeof(model), &f->model);
        m = droid_custom_model(ctx ? ctx->config : NULL, model);
        if (m) {
                ROW_SET(row->model, m->model);
                ROW_SET(row->provider, m->provider);
                row_set_str(row->model_alias, sizeof(row->model_alias), model, strlen(model));
        } else {
                row_set_str(row->model, sizeof(row->model), model, strlen(model));
                jscan_span_set(row->provider, sizeof(row->provider), &f->provider_lock);
        }

        /* the session and where its counter stands: the same snapshot gives
         * the same key whenever and wherever it is read */
        r = keyhash_begin(&h, DROID_KEY_STEP);
        if (r < 0) {
                out->n--;
                return r;
        }
        keyhash_str(&h, ps->session);
        keyhash_u64(&h, resets);
        for (int i = 0; i < T_COUNT; i++)
                keyhash_u64(&h, now[i]);
        keyhash_end(&h, &row->key);
        return 0;
}

int droid_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                         size_t *io_known, struct row_batch *out)
{
        struct jscan s = { doc, doc + len };
        struct snap_f f = { 0 };
        struct priv p = priv_get(ps);
        uint64_t now[T_COUNT], high[T_COUNT], d[T_COUNT] = { 0 };
        bool below = false, grew = false;

        *io_known = 0;
        jscan_ws(&s);
        if (!jscan_at(&s, '{') || !jscan_object(&s, doc_key, &f, 0))
                return PARSE_INCOMPLETE; /* torn, or not yet written */
        jscan_ws(&s);
        if (s.p != s.end)
                return PARSE_INCOMPLETE;
        if (!f.has_usage)
                return PARSE_OK; /* no call yet */
        if (!totals_of(&f, now))
                return PARSE_MALFORMED;
        if (ctx && ctx->path) {
                session_of(ps, ctx->path);
                if (!(p.flags & PF_PROJECT) && project_of(ps, ctx->path))
                        p.flags |= PF_PROJECT;
        }
        /* the totals only grow (forks and sub-agents are sessions of their
         * own): a lower snapshot is an older one written back (the .bak
         * restored, a second Droid with an older state, a sync), and what
         * follows it counts only above the highest totals read */
        if (p.flags & PF_SNAPSHOT)
                for (int i = T_INPUT; i <= T_CACHE_WRITE; i++)
                        below |= now[i] < p.t[i];
        if (below && !(p.flags & PF_BELOW))
                p.rollbacks++;
        p.flags = below ? p.flags | PF_BELOW : p.flags & ~PF_BELOW;
        for (int i = 0; i < T_COUNT; i++) {
                uint64_t base = p.flags & PF_SNAPSHOT ? p.t[i] : 0;
                d[i] = now[i] > base ? now[i] - base : 0;
                high[i] = now[i] > base ? now[i] : base;
                grew |= i != T_THINKING && d[i] > 0;
        }
        if (grew) {
                int r = emit(ctx, ps, &f, high, d, p.resets, out);
                if (r < 0)
                        return r;
        }
        p.flags |= PF_SNAPSHOT;
        memcpy(p.t, high, sizeof(p.t));
        priv_put(ps, &p);
        return PARSE_OK;
}
