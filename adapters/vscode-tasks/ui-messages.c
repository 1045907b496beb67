/* A task's ui_messages.json: `[{ts, type, say|ask, text, modelInfo?}, ...]`.
 * The usage is in say:"api_req_started" rows, whose text is itself JSON:
 * {request, tokensIn, tokensOut, cacheWrites, cacheReads, cost,
 * cancelReason?}. A row is written before its call with only `request`
 * and rewritten in place (same ts) when usage arrives; Anthropic's is
 * written twice (tokensOut 1 at message start, the final count at the end).
 * Every version of the file is read whole; the rows after the prefix it
 * shares with the version read before are emitted again, keyed (harness,
 * task id, ts) and upserted: the ledger keeps the largest of each field,
 * so the final usage replaces a provisional one and a row read twice
 * counts once.
 *
 * tokensIn depends on the provider that wrote the row (modelInfo.providerId,
 * else task_metadata.json's model_usage): `openai` (OpenAI Compatible)
 * writes prompt_tokens, cached tokens included; anthropic and
 * openai-native write the uncached part. Roo Code and Kilo Code (forks)
 * write the whole prompt whatever the protocol (their cost.ts: tokensIn is
 * totalInputTokens, input plus cache writes plus cache reads): input is
 * tokensIn less both. say:"deleted_api_reqs" rows hold the summed metrics of
 * rows the extension removed when it truncated the context: one row each. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "json/jscan.h"
#include "vscode-tasks/tasks.h"

/* ---- the usage object inside a row's text ---------------------------------- */

struct vt_usage {
        struct jscan_num in, out, cache_read, cache_write, cost;
        bool cancelled;
};

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct vt_usage *m = u;

        if (JSCAN_KEY_IS(k, "tokensIn"))
                return jscan_read_num(s, &m->in, depth);
        if (JSCAN_KEY_IS(k, "tokensOut"))
                return jscan_read_num(s, &m->out, depth);
        if (JSCAN_KEY_IS(k, "cacheReads"))
                return jscan_read_num(s, &m->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cacheWrites"))
                return jscan_read_num(s, &m->cache_write, depth);
        if (JSCAN_KEY_IS(k, "cost"))
                return jscan_read_num(s, &m->cost, depth);
        if (JSCAN_KEY_IS(k, "cancelReason")) {
                struct jscan_span r = { 0 };
                if (!jscan_read_str(s, &r, depth))
                        return false;
                m->cancelled = r.p != NULL; /* a string: the call did not finish */
                return true;
        }
        return jscan_skip(s, depth); /* request, streamingFailedMessage, ... */
}

/* ---- one row of the array ---------------------------------------------------- */

struct vt_row {
        struct jscan_time ts;
        struct jscan_span type, say, text, provider, model;
};

static bool model_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct vt_row *r = u;

        if (JSCAN_KEY_IS(k, "providerId"))
                return jscan_read_str(s, &r->provider, depth);
        if (JSCAN_KEY_IS(k, "modelId"))
                return jscan_read_str(s, &r->model, depth);
        return jscan_skip(s, depth);
}

static bool row_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct vt_row *r = u;

        if (JSCAN_KEY_IS(k, "ts"))
                return jscan_read_time(s, &r->ts, depth);
        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &r->type, depth);
        if (JSCAN_KEY_IS(k, "say"))
                return jscan_read_str(s, &r->say, depth);
        if (JSCAN_KEY_IS(k, "text"))
                return jscan_read_str(s, &r->text, depth);
        if (JSCAN_KEY_IS(k, "modelInfo")) {
                r->provider = r->model = (struct jscan_span){ NULL, 0 };
                if (jscan_at(s, '{'))
                        return jscan_object(s, model_key, r, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

/* ---- task_metadata.json: the provider of rows without modelInfo ------------- */

#define VT_META_ENTRIES 64

struct vt_meta {
        bool loaded;
        size_t n;
        struct {
                int64_t ts;
                char provider[ROW_PROVIDER_MAX];
                char model[ROW_MODEL_MAX];
        } v[VT_META_ENTRIES]; /* the first VT_META_ENTRIES of model_usage[] */
};

static void meta_load(struct vt_meta *m, const char *dir)
{
        char path[PATH_MAX];
        struct json_object *root = NULL, *arr;
        int w;

        m->loaded = true;
        m->n = 0;
        w = snprintf(path, sizeof(path), "%s/" VT_META_NAME, dir);
        if (w < 0 || (size_t)w >= sizeof(path) || adapt_read_json(path, VT_META_MAX, &root) < 0)
                return;
        arr = adapt_get_type(root, "model_usage", json_type_array);
        for (size_t i = 0; arr && i < json_object_array_length(arr) && m->n < VT_META_ENTRIES; i++) {
                struct json_object *e = json_object_array_get_idx(arr, i), *ts;
                const char *p = adapt_get_str(e, "model_provider_id", NULL);
                if (!p || !*p)
                        continue;
                ts = adapt_get_type(e, "ts", json_type_int);
                m->v[m->n].ts = ts ? json_object_get_int64(ts) : 0;
                ROW_SET(m->v[m->n].provider, p);
                p = adapt_get_str(e, "model_id", NULL);
                ROW_SET(m->v[m->n].model, p ? p : "");
                m->n++;
        }
        json_object_put(root);
}

/* The entry in force at ts: the last one at or before it, else the first. */
static int meta_at(const struct vt_meta *m, int64_t ts)
{
        int best = m->n ? 0 : -1;

        for (size_t i = 0; i < m->n; i++)
                if (m->v[i].ts <= ts)
                        best = (int)i;
        return best;
}

/* ---- state/taskHistory.json: the task's working directory (the project) ------- */

#define VT_HISTORY_MAX (32u << 20)

struct vt_hist {
        const char *task;
        struct jscan_span id, cwd;
        bool found;
        char *out;
        size_t cap;
};

static bool hist_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct vt_hist *h = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &h->id, depth);
        if (JSCAN_KEY_IS(k, "cwdOnTaskInitialization"))
                return jscan_read_str(s, &h->cwd, depth);
        return jscan_skip(s, depth);
}

static bool hist_elem(struct jscan *s, void *u, int depth)
{
        struct vt_hist *h = u;

        if (h->found || !jscan_at(s, '{'))
                return jscan_skip(s, depth);
        h->id = h->cwd = (struct jscan_span){ NULL, 0 };
        if (!jscan_object(s, hist_key, h, depth + 1))
                return false;
        if (h->cwd.p && jscan_span_eq(&h->id, h->task)) {
                jscan_span_set(h->out, h->cap, &h->cwd);
                h->found = h->out[0] != 0;
        }
        return true;
}

/* The cwd the extension recorded for the task in <tasks>/../state/taskHistory.json
 * (Cline CLI 2.x and the extension core 3.x keep it there), into out; "" when
 * there is none. */
static void history_cwd(const char *task_dir, const char *task, char *out, size_t cap)
{
        char path[PATH_MAX], *text = NULL;
        size_t len;
        struct vt_hist h = { .task = task, .out = out, .cap = cap };
        struct jscan s;
        int w;

        out[0] = 0;
        w = snprintf(path, sizeof(path), "%s/../../state/taskHistory.json", task_dir);
        if (w < 0 || (size_t)w >= sizeof(path) || adapt_read_file(path, VT_HISTORY_MAX, &text, &len) < 0)
                return;
        s = (struct jscan){ text, text + len };
        jscan_ws(&s);
        if (jscan_at(&s, '[') && !jscan_array(&s, hist_elem, &h, 0) && !h.found)
                out[0] = 0;
        free(text);
}

/* ---- the document ------------------------------------------------------------ */

struct vt_scan {
        const struct source_ctx *ctx;
        struct row_batch *out;
        const char *tool;
        bool total_in; /* tokensIn is the whole prompt (Roo Code, Kilo Code) */
        char task[ROW_SESSION_MAX];
        char dir[PATH_MAX];
        struct vt_meta *meta;
        const char *project;
        const char *doc;
        size_t known;    /* rows ending within this prefix were read in a version before */
        size_t last_end; /* the end of the last complete row */
        int64_t last_ts;
        int err;
};

/* A token count: a non-negative integer (a double is rounded); absent 0.
 * A negative or too large one reads as UINT64_MAX, which the row bounds
 * refuse (the call is counted as refused, never stored wrapped). */
static uint64_t tokens(const struct jscan_num *n)
{
        int64_t v;

        if (!n->present)
                return 0;
        if (!jscan_num_i64(n, &v))
                return isnan(n->d) ? 0 : UINT64_MAX;
        return v >= 0 ? (uint64_t)v : UINT64_MAX;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Whether a provider's tokensIn counts cached tokens too (OpenAI
 * Compatible writes prompt_tokens as the server sent it). */
static bool in_includes_cached(const char *provider)
{
        return strcmp(provider, "openai") == 0;
}

static int emit(struct vt_scan *d, const struct vt_row *r, const struct vt_usage *u)
{
        char provider[ROW_PROVIDER_MAX] = "", model[ROW_MODEL_MAX] = "";
        uint64_t in, out, cr, cw, uncached;
        int64_t cost_nano = 0, ts;
        bool vendor = false;
        struct usage_row *row;
        struct keyhash h;
        int x;

        in = tokens(&u->in);
        out = tokens(&u->out);
        cr = tokens(&u->cache_read);
        cw = tokens(&u->cache_write);
        if (u->cost.present && !isnan(u->cost.d) && u->cost.d != 0) {
                double c = u->cost.d; /* USD; out of int64 nano: the bounds refuse it */
                cost_nano = fabs(c) < 9.0e9 ? llround(c * 1e9) : c > 0 ? INT64_MAX : INT64_MIN;
                vendor = true;
        }
        if (in == 0 && out == 0 && cr == 0 && cw == 0 && !vendor)
                return 0; /* written before its call, and never given usage */
        ts = r->ts.present ? r->ts.ms : d->last_ts;

        if (r->provider.p) {
                jscan_span_set(provider, sizeof(provider), &r->provider);
                jscan_span_set(model, sizeof(model), &r->model);
        } else {
                if (!d->meta->loaded)
                        meta_load(d->meta, d->dir);
                x = meta_at(d->meta, ts);
                if (x >= 0) {
                        memcpy(provider, d->meta->v[x].provider, sizeof(provider));
                        memcpy(model, d->meta->v[x].model, sizeof(model));
                }
        }
        uncached = in;
        if (in != UINT64_MAX && d->total_in) {
                /* Roo Code and Kilo Code: the whole prompt, cache reads and writes included */
                uncached = in > cr ? in - cr : 0;
                uncached = uncached > cw ? uncached - cw : 0;
        } else if (in != UINT64_MAX && in_includes_cached(provider)) {
                uncached = in > cr ? in - cr : 0;
        }

        x = row_batch_push(d->out, &row);
        if (x < 0)
                return x;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (r->ts.present ? 0 : ROW_F_TIME_APPROX);
        row->kind = ROW_KIND_MESSAGE;
        row->time_ms = ts;
        row->input = uncached;
        row->output = out; /* reasoning included, not written apart */
        row->cache_read = cr;
        row->cache_write = cw;
        row->total = sat_add(sat_add(uncached, out), sat_add(cr, cw));
        row->cost_source = vendor ? COST_VENDOR : COST_NONE;
        row->cost_nano = cost_nano;
        row->source_hash = d->ctx ? d->ctx->source_hash : 0;
        ROW_SET(row->tool, d->tool);
        row_set_str(row->session, sizeof(row->session), d->task, strlen(d->task));
        row_set_str(row->project, sizeof(row->project), d->project, strlen(d->project));
        memcpy(row->provider, provider, sizeof(row->provider)); /* same sizes, NUL-terminated */
        memcpy(row->model, model, sizeof(row->model));

        x = keyhash_begin(&h, VT_KEY_FORMAT);
        if (x < 0) {
                d->out->n--;
                return x;
        }
        keyhash_str(&h, d->tool);
        keyhash_str(&h, d->task);
        keyhash_u64(&h, (uint64_t)ts);
        keyhash_end(&h, &row->key);
        return 0;
}

/* A row's text, decoded and scanned as the usage object. false: not JSON
 * (a row being streamed, or some other text): nothing to count. */
static int row_usage(struct vt_scan *d, const struct vt_row *r)
{
        struct vt_usage u = { 0 };
        struct jscan s;
        char *text;
        size_t n;
        bool ok;

        if (!r->text.p || r->text.n == 0)
                return 0;
        text = malloc(r->text.n + 1);
        if (!text)
                return -ENOMEM;
        n = jscan_span_decode(&r->text, text, r->text.n + 1);
        text[n] = 0;
        s = (struct jscan){ text, text + n };
        jscan_ws(&s);
        ok = jscan_at(&s, '{') && jscan_object(&s, usage_key, &u, 0);
        free(text);
        if (!ok || u.cancelled)
                return 0;
        return emit(d, r, &u);
}

static bool elem(struct jscan *s, void *u, int depth)
{
        struct vt_scan *d = u;
        struct vt_row r = { 0 };

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        if (!jscan_object(s, row_key, &r, depth + 1))
                return false;
        if (r.ts.present)
                d->last_ts = r.ts.ms;
        d->last_end = (size_t)(s->p - d->doc);
        if (d->last_end <= d->known)
                return true; /* the same bytes as a version read before: its rows are in */
        if (!jscan_span_eq(&r.type, "say") ||
            !(jscan_span_eq(&r.say, "api_req_started") || jscan_span_eq(&r.say, "deleted_api_reqs")))
                return true;
        int x = row_usage(d, &r);
        if (x < 0) {
                d->err = x;
                return false;
        }
        return true;
}

/* root/<taskId>/ui_messages.json: the task id and its directory. */
static bool where(const struct source_ctx *ctx, struct vt_scan *d)
{
        const char *path = ctx ? ctx->path : NULL, *slash, *prev;
        size_t dn;

        if (!path || !(slash = strrchr(path, '/')) || slash == path)
                return false;
        dn = (size_t)(slash - path);
        if (dn >= sizeof(d->dir))
                return false;
        memcpy(d->dir, path, dn);
        d->dir[dn] = 0;
        prev = strrchr(d->dir, '/');
        prev = prev ? prev + 1 : d->dir;
        if (!*prev || strlen(prev) >= sizeof(d->task))
                return false;
        row_set_str(d->task, sizeof(d->task), prev, strlen(prev));
        return true;
}

int vt_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                      size_t *io_known, struct row_batch *out)
{
        struct vt_meta *meta = calloc(1, sizeof(*meta));
        struct vt_scan d = { .ctx = ctx, .out = out, .meta = meta, .doc = doc, .known = *io_known };
        struct jscan s = { doc, doc + len };
        char project[ROW_PROJECT_MAX];
        size_t n0 = out->n;
        bool ok;

        if (!meta)
                return -ENOMEM;
        d.tool = ctx && ctx->adapter ? ctx->adapter->id : "cline";
        d.total_in = strcmp(d.tool, "cline") != 0;
        d.last_ts = ctx ? (int64_t)ctx->st.st_mtim.tv_sec * 1000 + ctx->st.st_mtim.tv_nsec / 1000000 : 0;
        if (!where(ctx, &d)) {
                free(meta);
                return PARSE_NOT_SOURCE;
        }
        /* the project, once found, is kept in the state: read the history
         * until the task is in it */
        if (!ps->project[0])
                history_cwd(d.dir, d.task, project, sizeof(project));
        else
                memcpy(project, ps->project, sizeof(project));
        d.project = project;
        jscan_ws(&s);
        if (s.p == s.end) {
                free(meta);
                return PARSE_INCOMPLETE; /* truncated, nothing written yet */
        }
        if (!jscan_at(&s, '[')) {
                free(meta);
                return PARSE_MALFORMED;
        }
        ok = jscan_array(&s, elem, &d, 0);
        free(meta);
        if (d.err < 0) {
                out->n = n0;
                return d.err;
        }
        if (!ok) {
                out->n = n0;
                /* a prefix of an array is never a whole one: a write caught
                 * half-way is read again shortly */
                return PARSE_INCOMPLETE;
        }
        jscan_ws(&s);
        if (s.p != s.end) {
                out->n = n0;
                return PARSE_MALFORMED;
        }
        row_set_str(ps->session, sizeof(ps->session), d.task, strlen(d.task));
        memcpy(ps->project, project, sizeof(ps->project));
        ps->priv_len = 0;
        /* A row rewritten in place changes its bytes, so the prefix the
         * next version shares with this one ends before it: the rows
         * wholly inside that prefix need not be emitted again. */
        *io_known = project[0] ? d.last_end : 0; /* until the project is known, every row again:
                                                    * the upsert fills it in */
        return PARSE_OK;
}
