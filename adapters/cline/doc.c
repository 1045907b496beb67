/* The Cline session document, <session>/<stem>.messages.json: one JSON
 * object the hub rewrites whole, in place, after every step, holding the
 * whole conversation again each time. One row per assistant message with
 * metrics. The header before the messages changes on every write
 * (updated_at), so the daemon's byte-identical prefix ends there; the
 * resume point is therefore the messages array's own prefix: its length
 * and hash (of the bytes from its '[' to the end of the last message read)
 * are kept in the parse state, and a rewrite whose array begins with those
 * same bytes is read from there on. The scan is streaming (common/json/jscan.h):
 * tool outputs in the content are validated and skipped, never built. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "binio.h"
#include "cline/cline.h"
#include "json/jscan.h"

/* ---- the resume point, in parse_state.priv ----------------------------------
 *
 *   u8  layout (CL_PRIV_LAYOUT)
 *   u32 length of the array prefix read (from '[' to the end of the last
 *       complete message), 0: none
 *   u64 hash64 of those bytes
 *   u32 messages in it
 */
#define CL_PRIV_LAYOUT 1

struct cl_resume {
        uint32_t len, count;
        uint64_t hash;
};

static void resume_load(const struct parse_state *ps, struct cl_resume *ret)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct cl_resume x = { 0 };

        *ret = x;
        if (ps->priv_len == 0 || br_u8(&r) != CL_PRIV_LAYOUT)
                return;
        x.len = br_u32(&r);
        x.hash = br_u64(&r);
        x.count = br_u32(&r);
        if (!r.bad)
                *ret = x;
}

static void resume_store(struct parse_state *ps, const struct cl_resume *rs)
{
        struct bw w = { ps->priv, 0, PS_PRIV_MAX, false };

        bw_u8(&w, CL_PRIV_LAYOUT);
        bw_u32(&w, rs->len);
        bw_u64(&w, rs->hash);
        bw_u32(&w, rs->count);
        ps->priv_len = w.overflow ? 0 : (uint32_t)w.len;
}

/* ---- one message ---------------------------------------------------------------- */

struct cl_metrics {
        bool present;
        struct jscan_num in, out, cache_read, cache_write, cost;
};

struct cl_msg {
        struct jscan_span id, role, model, provider;
        bool has_model_info;
        struct jscan_time ts;
        struct cl_metrics metrics;
        struct adapt_calls_f calls; /* tool_use blocks of the content */
};

static bool metrics_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_metrics *m = u;

        if (JSCAN_KEY_IS(k, "inputTokens"))
                return jscan_read_num(s, &m->in, depth);
        if (JSCAN_KEY_IS(k, "outputTokens"))
                return jscan_read_num(s, &m->out, depth);
        if (JSCAN_KEY_IS(k, "cacheReadTokens"))
                return jscan_read_num(s, &m->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cacheWriteTokens"))
                return jscan_read_num(s, &m->cache_write, depth);
        if (JSCAN_KEY_IS(k, "cost"))
                return jscan_read_num(s, &m->cost, depth);
        return jscan_skip(s, depth);
}

static bool model_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_msg *m = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &m->model, depth);
        if (JSCAN_KEY_IS(k, "provider"))
                return jscan_read_str(s, &m->provider, depth);
        return jscan_skip(s, depth);
}

static bool msg_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_msg *m = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &m->id, depth);
        if (JSCAN_KEY_IS(k, "role"))
                return jscan_read_str(s, &m->role, depth);
        if (JSCAN_KEY_IS(k, "ts"))
                return jscan_read_time(s, &m->ts, depth);
        if (JSCAN_KEY_IS(k, "modelInfo")) {
                m->model = m->provider = (struct jscan_span){ NULL, 0 };
                m->has_model_info = jscan_at(s, '{');
                if (m->has_model_info)
                        return jscan_object(s, model_key, m, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "metrics")) {
                m->metrics = (struct cl_metrics){ .present = jscan_at(s, '{') };
                if (m->metrics.present)
                        return jscan_object(s, metrics_key, &m->metrics, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "content"))
                return adapt_read_calls(s, "tool_use", &m->calls, depth);
        return jscan_skip(s, depth);
}

/* ---- the document ------------------------------------------------------------------ */

struct cl_scan {
        const struct source_ctx *ctx;
        struct parse_state *ps; /* the caller's copy: committed only on success */
        struct row_batch *out;
        const char *doc;
        size_t len;
        struct cl_resume rs;      /* from the state; verified against this text */
        const char *session;      /* the session directory's name, or NULL */
        bool side;                /* a sub-agent's or team task's document */
        struct jscan_span doc_session;
        struct jscan_time updated;
        bool saw_messages;
        bool bad_shape;           /* valid JSON, but not a session document */
        size_t arr_at;            /* the messages array's '[' */
        size_t last_end;          /* the end of the last complete message, 0: none */
        uint32_t count;           /* messages up to last_end */
        uint32_t resumed_at;      /* messages taken from the resume point */
        int err;                  /* -ENOMEM from a row push */
        struct cl_msg msg;
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

static int64_t fallback_time(const struct cl_scan *d)
{
        if (d->ps->last_time_ms)
                return d->ps->last_time_ms;
        if (d->updated.present)
                return d->updated.ms;
        if (d->ctx)
                return (int64_t)d->ctx->st.st_mtim.tv_sec * 1000 + d->ctx->st.st_mtim.tv_nsec / 1000000;
        return 0;
}

static void add_calls(struct usage_row *row, const struct adapt_calls_f *calls)
{
        uint32_t n = adapt_calls_stored(calls);

        for (uint32_t i = 0; i < n; i++) {
                jscan_span_set(row->calls[i].id, sizeof(row->calls[i].id), &calls->v[i].id);
                jscan_span_set(row->calls[i].name, sizeof(row->calls[i].name), &calls->v[i].name);
        }
        row->n_calls = n;
}

/* The message just scanned: a row when it is an assistant message with
 * metrics that say something was spent (a failed turn, error_<uuid>, has
 * none; a user message never has them). */
static int emit(struct cl_scan *d)
{
        const struct cl_msg *m = &d->msg;
        const struct cl_metrics *mt = &m->metrics;
        uint64_t in, out, cr, cw, uncached;
        int64_t cost_nano = 0, ts;
        bool vendor = false;
        struct usage_row *row;
        struct keyhash h;
        int r;

        if (!mt->present || !jscan_span_eq(&m->role, "assistant"))
                return 0;
        in = tokens(&mt->in);
        out = tokens(&mt->out);
        cr = tokens(&mt->cache_read);
        cw = tokens(&mt->cache_write);
        if (mt->cost.present && !isnan(mt->cost.d) && mt->cost.d != 0) {
                double c = mt->cost.d; /* USD; out of int64 nano: the bounds refuse it */
                cost_nano = fabs(c) < 9.0e9 ? llround(c * 1e9) : c > 0 ? INT64_MAX : INT64_MIN;
                vendor = true;
        }
        if (in == 0 && out == 0 && cr == 0 && cw == 0 && !vendor)
                return 0;
        /* inputTokens is the whole prompt, cache reads and writes included */
        uncached = in == UINT64_MAX ? in : in > cr ? in - cr : 0;
        uncached = uncached == UINT64_MAX ? uncached : uncached > cw ? uncached - cw : 0;
        ts = m->ts.present ? m->ts.ms : fallback_time(d);

        r = row_batch_push(d->out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (m->ts.present ? 0 : ROW_F_TIME_APPROX) |
                     (d->side ? ROW_F_SIDECHAIN : 0);
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
        ROW_SET(row->tool, "cline");
        if (d->session)
                ROW_SET(row->session, d->session);
        else
                jscan_span_set(row->session, sizeof(row->session), &d->doc_session);
        ROW_SET(row->project, d->ps->project);
        if (m->has_model_info && m->model.p) {
                jscan_span_set(row->model, sizeof(row->model), &m->model);
                jscan_span_set(row->provider, sizeof(row->provider), &m->provider);
        } else {
                ROW_SET(row->model, d->ps->model);
                ROW_SET(row->provider, d->ps->provider);
        }
        add_calls(row, &m->calls);

        /* The message itself, never the session or the file: Cline seeds a
         * fork, a clone and a mode-switch restart with copies of the
         * messages (same id, same ts) under a new session id. */
        if (m->id.p && m->id.n) {
                r = keyhash_begin(&h, CLINE_KEY_FORMAT);
                if (r == 0) {
                        keyhash_bytes(&h, m->id.p, m->id.n);
                        keyhash_u64(&h, m->ts.present ? (uint64_t)m->ts.ms : 0);
                }
        } else {
                r = keyhash_begin(&h, CLINE_KEY_FORMAT_NOID);
                if (r == 0) {
                        keyhash_u64(&h, m->ts.present ? (uint64_t)m->ts.ms : 0);
                        keyhash_bytes(&h, m->model.p ? m->model.p : "", m->model.p ? m->model.n : 0);
                        keyhash_bytes(&h, m->provider.p ? m->provider.p : "", m->provider.p ? m->provider.n : 0);
                        keyhash_u64(&h, in);
                        keyhash_u64(&h, out);
                        keyhash_u64(&h, cr);
                        keyhash_u64(&h, cw);
                        keyhash_u64(&h, (uint64_t)cost_nano);
                }
        }
        if (r < 0) {
                d->out->n--;
                return r;
        }
        keyhash_end(&h, &row->key);
        return 0;
}

/* One element of the messages array, s at it (depth: the array's). */
static bool message(struct cl_scan *d, struct jscan *s, int depth)
{
        struct cl_msg *m = &d->msg;

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth); /* not a message: nothing to count */
        memset(m, 0, offsetof(struct cl_msg, calls));
        m->calls.n = 0;
        if (!jscan_object(s, msg_key, m, depth + 1))
                return false;
        if (m->ts.present)
                d->ps->last_time_ms = m->ts.ms;
        int r = emit(d);
        if (r < 0) {
                d->err = r;
                return false;
        }
        return true;
}

/* The messages array, s at its '[' (depth: the top object's). From the
 * resume point when the array begins with the bytes it names. */
static bool messages(struct cl_scan *d, struct jscan *s, int depth)
{
        const char *at = s->p;
        bool after = false;

        d->saw_messages = true;
        d->arr_at = (size_t)(at - d->doc);
        d->count = 0;
        d->last_end = 0;
        if (d->rs.len > 1 && d->rs.count && d->rs.len <= (size_t)(s->end - at) &&
            hash64(at, d->rs.len) == d->rs.hash) {
                s->p = at + d->rs.len; /* just after a complete message */
                d->count = d->resumed_at = d->rs.count;
                d->last_end = d->arr_at + d->rs.len;
                after = true;
        } else {
                /* read from the start: the time carried is this array's own */
                d->ps->last_time_ms = 0;
                s->p++;
        }
        for (;;) {
                jscan_ws(s);
                if (jscan_at(s, ']')) {
                        s->p++;
                        return true;
                }
                if (after) {
                        if (!jscan_at(s, ','))
                                return false;
                        s->p++;
                        jscan_ws(s);
                }
                if (!message(d, s, depth + 1))
                        return false;
                after = true;
                d->count++;
                d->last_end = (size_t)(s->p - d->doc);
        }
}

static bool top_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_scan *d = u;

        if (JSCAN_KEY_IS(k, "messages")) {
                if (d->saw_messages || !jscan_at(s, '[')) {
                        /* twice, or not an array: not this format (unless
                         * the text ends here: then it was cut) */
                        d->bad_shape = s->p < s->end;
                        return false;
                }
                return messages(d, s, depth);
        }
        if (JSCAN_KEY_IS(k, "sessionId"))
                return jscan_read_str(s, &d->doc_session, depth);
        if (JSCAN_KEY_IS(k, "updated_at"))
                return jscan_read_time(s, &d->updated, depth);
        return jscan_skip(s, depth);
}

/* root/<session>/<stem>.messages.json */
bool cline_doc_where(const struct source_ctx *ctx, char *session, size_t session_cap, char *manifest,
                     size_t manifest_cap, bool *ret_side)
{
        const char *root = ctx ? ctx->root_path : NULL, *path = ctx ? ctx->path : NULL;
        const char *rel, *slash, *stem;
        size_t rn, sn, stem_n;
        int w;

        if (!root || !path)
                return false;
        rn = strlen(root);
        while (rn > 1 && root[rn - 1] == '/')
                rn--;
        if (strncmp(path, root, rn) != 0 || path[rn] != '/')
                return false;
        rel = path + rn + 1;
        slash = strchr(rel, '/');
        if (!slash || slash == rel || strchr(slash + 1, '/'))
                return false;
        sn = (size_t)(slash - rel);
        stem = slash + 1;
        stem_n = strlen(stem);
        if (stem_n <= strlen(".messages.json") || sn >= session_cap)
                return false;
        stem_n -= strlen(".messages.json");
        w = snprintf(manifest, manifest_cap, "%.*s/%.*s.json", (int)(rn + 1 + sn), path, (int)sn, rel);
        if (w < 0 || (size_t)w >= manifest_cap)
                return false;
        memcpy(session, rel, sn);
        session[sn] = 0;
        *ret_side = !(stem_n == sn && memcmp(stem, rel, sn) == 0);
        return true;
}

int cline_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                         size_t *io_known, struct row_batch *out)
{
        struct parse_state st = *ps;
        struct cl_scan d = { .ctx = ctx, .ps = &st, .out = out, .doc = doc, .len = len };
        size_t n0 = out->n;
        char session[ROW_SESSION_MAX], manifest[PATH_MAX];
        struct jscan s = { doc, doc + len };
        bool where, ok;

        resume_load(&st, &d.rs);
        where = cline_doc_where(ctx, session, sizeof(session), manifest, sizeof(manifest), &d.side);
        if (where)
                d.session = session;
        if (where && !st.project[0]) {
                /* the project is the session's cwd, written in its manifest */
                struct cline_manifest man;
                if (cline_manifest_read(manifest, &man) == 0) {
                        ROW_SET(st.project, man.cwd);
                        if (man.model[0]) {
                                ROW_SET(st.provider, man.provider);
                                ROW_SET(st.model, man.model);
                        }
                }
        }

        jscan_ws(&s);
        if (s.p == s.end)
                return PARSE_INCOMPLETE; /* truncated, nothing written yet */
        if (!jscan_at(&s, '{'))
                return PARSE_MALFORMED;
        ok = jscan_object(&s, top_key, &d, 0);
        if (d.err < 0) {
                out->n = n0;
                return d.err;
        }
        if (!ok) {
                out->n = n0;
                /* A prefix of an object is never a whole one, so a write
                 * caught half-way fails here: the daemon reads it again
                 * shortly, and counts it malformed once its writer has been
                 * quiet and it still does not parse. */
                return d.bad_shape ? PARSE_MALFORMED : PARSE_INCOMPLETE;
        }
        jscan_ws(&s);
        if (s.p != s.end || !d.saw_messages) {
                out->n = n0;
                return PARSE_MALFORMED;
        }

        /* remember the array read so far, once the rows carry their
         * project (until then a rewrite reads them again: a monotone
         * upsert fills the project in) */
        struct cl_resume rs = { 0 };
        if (d.count && d.last_end > d.arr_at && d.last_end - d.arr_at <= UINT32_MAX && st.project[0]) {
                rs.len = (uint32_t)(d.last_end - d.arr_at);
                rs.count = d.count;
                rs.hash = d.resumed_at == d.count && d.rs.len == rs.len ? d.rs.hash
                                                                       : hash64(doc + d.arr_at, rs.len);
        }
        resume_store(&st, &rs);
        if (!d.session)
                jscan_span_set(st.session, sizeof(st.session), &d.doc_session);
        else
                ROW_SET(st.session, d.session);
        *ps = st;
        *io_known = rs.len ? d.last_end : 0;
        return PARSE_OK;
}
