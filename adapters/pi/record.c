/* The pi session line parser shared by Pi and OpenClaw: header check, usage
 * rows from every place pi writes usage, the carried model, tool calls, and
 * a message-identity dedup key that collapses fork copies and migrations.
 * Lines are read by the validating scanner (common/json/jscan.h), which keeps
 * only the fields below and skips the rest (content, images). */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "json/bytescan.h"
#include "json/jscan.h"
#include "lines.h"
#include "pi/record.h"

/* Every field filled by jscan_span_set fits what it can fill. */
_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "row fields fit jscan_span_set");

/* ---- what an entry holds ------------------------------------------------------- */

struct usage_f {
        bool present; /* an object */
        struct jscan_num input, output, cache_read, cache_write, total, reasoning, reasoning_tokens;
        struct jscan_num cost_total;
};

struct msg_f {
        bool present;
        struct jscan_span role, provider, model, response_id;
        struct jscan_time ts;
        struct usage_f usage;
        struct adapt_calls_f calls; /* toolCall blocks in content */
};

struct entry_f {
        struct jscan_span type, id, cwd, provider, model_id, model, custom_type;
        struct jscan_num version;
        struct jscan_time ts;
        struct usage_f usage;
        struct msg_f msg;
        bool has_data;
        struct jscan_span data_provider, data_model_id;
};

static bool cost_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "total"))
                return jscan_read_num(s, u, depth);
        return jscan_skip(s, depth);
}

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct usage_f *f = u;

        if (JSCAN_KEY_IS(k, "input"))
                return jscan_read_num(s, &f->input, depth);
        if (JSCAN_KEY_IS(k, "output"))
                return jscan_read_num(s, &f->output, depth);
        if (JSCAN_KEY_IS(k, "cacheRead"))
                return jscan_read_num(s, &f->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cacheWrite"))
                return jscan_read_num(s, &f->cache_write, depth);
        if (JSCAN_KEY_IS(k, "totalTokens"))
                return jscan_read_num(s, &f->total, depth);
        if (JSCAN_KEY_IS(k, "reasoning"))
                return jscan_read_num(s, &f->reasoning, depth);
        if (JSCAN_KEY_IS(k, "reasoningTokens"))
                return jscan_read_num(s, &f->reasoning_tokens, depth);
        if (JSCAN_KEY_IS(k, "cost")) {
                f->cost_total.present = false;
                if (jscan_at(s, '{'))
                        return jscan_object(s, cost_key, &f->cost_total, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

static bool read_usage(struct jscan *s, struct usage_f *f, int depth)
{
        *f = (struct usage_f){ 0 };
        if (jscan_at(s, '{')) {
                f->present = true;
                return jscan_object(s, usage_key, f, depth + 1);
        }
        return jscan_skip(s, depth);
}

static bool msg_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct msg_f *m = u;

        if (JSCAN_KEY_IS(k, "role"))
                return jscan_read_str(s, &m->role, depth);
        if (JSCAN_KEY_IS(k, "provider"))
                return jscan_read_str(s, &m->provider, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &m->model, depth);
        if (JSCAN_KEY_IS(k, "responseId"))
                return jscan_read_str(s, &m->response_id, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &m->ts, depth);
        if (JSCAN_KEY_IS(k, "usage"))
                return read_usage(s, &m->usage, depth);
        if (JSCAN_KEY_IS(k, "content"))
                return adapt_read_calls(s, "toolCall", &m->calls, depth);
        return jscan_skip(s, depth);
}

static bool data_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct entry_f *e = u;

        if (JSCAN_KEY_IS(k, "provider"))
                return jscan_read_str(s, &e->data_provider, depth);
        if (JSCAN_KEY_IS(k, "modelId"))
                return jscan_read_str(s, &e->data_model_id, depth);
        return jscan_skip(s, depth);
}

static bool entry_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct entry_f *e = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &e->type, depth);
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &e->id, depth);
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &e->cwd, depth);
        if (JSCAN_KEY_IS(k, "provider"))
                return jscan_read_str(s, &e->provider, depth);
        if (JSCAN_KEY_IS(k, "modelId"))
                return jscan_read_str(s, &e->model_id, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &e->model, depth);
        if (JSCAN_KEY_IS(k, "customType"))
                return jscan_read_str(s, &e->custom_type, depth);
        if (JSCAN_KEY_IS(k, "version"))
                return jscan_read_num(s, &e->version, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &e->ts, depth);
        if (JSCAN_KEY_IS(k, "usage"))
                return read_usage(s, &e->usage, depth);
        if (JSCAN_KEY_IS(k, "message")) {
                memset(&e->msg, 0, offsetof(struct msg_f, calls)); /* calls.v: only below calls.n */
                e->msg.calls.n = 0;
                if (jscan_at(s, '{')) {
                        e->msg.present = true;
                        return jscan_object(s, msg_key, &e->msg, depth + 1);
                }
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "data")) {
                e->data_provider.p = e->data_model_id.p = NULL;
                e->has_data = jscan_at(s, '{');
                if (e->has_data)
                        return jscan_object(s, data_key, e, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

/* ---- usage -------------------------------------------------------------------- */

struct pi_usage {
        uint64_t input, output, cache_read, cache_write, reasoning, total;
        int64_t cost_nano;
        uint8_t cost_source;
};

/* A token count: a non-negative number; absent 0. A negative or too large
 * one (beyond int64) reads as UINT64_MAX, which row_check_bounds refuses. */
static uint64_t tokens(const struct jscan_num *n, bool *ret_present)
{
        int64_t v;
        bool ok = jscan_num_i64(n, &v);
        if (ret_present)
                *ret_present = ok || n->present;
        if (!ok)
                return n->present && !isnan(n->d) ? UINT64_MAX : 0;
        return v >= 0 ? (uint64_t)v : UINT64_MAX;
}

/* false when there is no usage object, or it is all zero (a failed call). */
static bool usage_get(const struct usage_f *f, struct pi_usage *ret)
{
        struct pi_usage x = { 0 };
        bool has_total, has_reasoning;

        if (!f->present)
                return false;
        x.input = tokens(&f->input, NULL);
        x.output = tokens(&f->output, NULL);
        x.cache_read = tokens(&f->cache_read, NULL);
        x.cache_write = tokens(&f->cache_write, NULL);
        x.total = tokens(&f->total, &has_total);
        if (!has_total)
                x.total = x.input + x.output + x.cache_read + x.cache_write;
        /* pi calls it reasoning, OpenClaw reasoningTokens: part of output */
        x.reasoning = tokens(&f->reasoning, &has_reasoning);
        if (!has_reasoning)
                x.reasoning = tokens(&f->reasoning_tokens, NULL);
        /* cost.total is the harness's USD figure; 0 means "no price known" */
        if (f->cost_total.present) {
                double c = f->cost_total.d;
                if (!isnan(c) && c != 0) { /* out of int64 nano: row_check_bounds refuses it */
                        x.cost_nano = fabs(c) < 9.0e9 ? llround(c * 1e9) : c > 0 ? INT64_MAX : INT64_MIN;
                        x.cost_source = COST_VENDOR;
                }
        }
        if (x.input == 0 && x.output == 0 && x.cache_read == 0 && x.cache_write == 0 &&
            x.total == 0 && x.reasoning == 0 && x.cost_source == COST_NONE)
                return false;
        *ret = x;
        return true;
}

/* ---- rows -------------------------------------------------------------------------- */

struct pi_event {
        uint8_t kind;
        const char *provider; /* decoded, NUL-terminated, possibly "" */
        const char *model;
        int64_t time_ms;
        bool time_approx;
        const struct jscan_span *response_id; /* NULL or absent: none */
        const struct pi_usage *usage;
        const struct msg_f *calls; /* assistant message: its tool calls */
};

static void add_calls(struct usage_row *row, const struct msg_f *m)
{
        /* n_calls is capped at ROW_CALLS_MAX so every consumer can index
         * calls[] by it (beyond 64 calls in one message only the per-call
         * cost share gets coarser). */
        uint32_t n = adapt_calls_stored(&m->calls);

        for (uint32_t i = 0; i < n; i++) {
                const struct adapt_call_f *c = &m->calls.v[i];
                char buf[2 * CALL_NAME_MAX + 2];
                size_t k = 0;

                jscan_span_set(row->calls[i].id, sizeof(row->calls[i].id), &c->id);
                if (c->ns.p && c->ns.n > 0) {
                        k = jscan_span_decode(&c->ns, buf, CALL_NAME_MAX);
                        buf[k++] = '/';
                }
                k += jscan_span_decode(&c->name, buf + k, CALL_NAME_MAX);
                row_set_str(row->calls[i].name, sizeof(row->calls[i].name), buf, k);
        }
        row->n_calls = n;
}

static int emit(const struct pi_flavor *fl, const struct source_ctx *ctx,
                const struct parse_state *ps, const struct pi_event *ev, struct row_batch *out)
{
        const struct pi_usage *u = ev->usage;
        struct usage_row *row;
        struct keyhash h;
        char rid[512];
        size_t rid_n = 0;
        int r;

        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | (ev->time_approx ? ROW_F_TIME_APPROX : 0);
        row->kind = ev->kind;
        row->cost_source = u->cost_source;
        row->time_ms = ev->time_ms;
        row->input = u->input;
        row->output = u->output;
        row->cache_read = u->cache_read;
        row->cache_write = u->cache_write;
        row->reasoning = u->reasoning;
        row->total = u->total;
        row->cost_nano = u->cost_nano;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, fl->tool);
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        ROW_SET(row->provider, ev->provider);
        ROW_SET(row->model, ev->model);
        if (ev->calls)
                add_calls(row, ev->calls);
        if (ev->response_id)
                rid_n = jscan_span_decode(ev->response_id, rid, sizeof(rid) - 1);
        rid[rid_n] = 0;

        /* Message identity: never the path, session id or entry id (forks
         * copy entries into new files; migration renumbers entries). The
         * stored (truncated) provider/model are hashed, so a re-read after a
         * restart with the carried model from the checkpoint agrees. */
        r = keyhash_begin(&h, PI_KEY_FORMAT);
        if (r < 0) {
                out->n--;
                return r;
        }
        keyhash_u64(&h, ev->kind);
        keyhash_str(&h, row->provider);
        keyhash_str(&h, row->model);
        keyhash_u64(&h, (uint64_t)ev->time_ms);
        keyhash_str(&h, rid);
        keyhash_u64(&h, u->input);
        keyhash_u64(&h, u->output);
        keyhash_u64(&h, u->cache_read);
        keyhash_u64(&h, u->cache_write);
        keyhash_u64(&h, (uint64_t)u->cost_nano);
        keyhash_end(&h, &row->key);
        return 0;
}

/* ---- entries -------------------------------------------------------------------------- */

static bool is_synthetic(const struct pi_flavor *fl, const struct jscan_span *provider,
                         const struct jscan_span *model)
{
        return fl->skip_synthetic_openclaw && jscan_span_eq(provider, "openclaw") &&
               (jscan_span_eq(model, "delivery-mirror") || jscan_span_eq(model, "gateway-injected"));
}

static void carry_model(struct parse_state *ps, const struct jscan_span *provider,
                        const struct jscan_span *model)
{
        if (provider->p)
                jscan_span_set(ps->provider, sizeof(ps->provider), provider);
        if (model->p)
                jscan_span_set(ps->model, sizeof(ps->model), model);
}

static int64_t fallback_time(const struct parse_state *ps)
{
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

static int parse_header(struct parse_state *ps, const struct entry_f *e)
{
        int64_t v;

        if (!jscan_span_eq(&e->type, "session") || !e->id.p) {
                ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                return PARSE_NOT_SOURCE;
        }
        ps->flags |= PS_HEADER_SEEN;
        ps->version = jscan_num_i64(&e->version, &v) && v > 0 && v < 1000000 ? (uint32_t)v : 1;
        jscan_span_set(ps->session, sizeof(ps->session), &e->id);
        jscan_span_set(ps->project, sizeof(ps->project), &e->cwd);
        ps->provider[0] = ps->model[0] = 0;
        /* v1 headers carry the starting model */
        carry_model(ps, &e->provider, &e->model_id);
        if (e->ts.present)
                ps->last_time_ms = e->ts.ms;
        return PARSE_OK;
}

/* A usage-bearing entry; provider/model: its own when given, else carried. */
static int usage_row(const struct pi_flavor *fl, const struct source_ctx *ctx,
                     struct parse_state *ps, uint8_t kind, const struct usage_f *uf,
                     const struct jscan_span *provider, const struct jscan_span *model,
                     const struct jscan_time *own, struct row_batch *out)
{
        struct pi_usage u;
        char p[ROW_PROVIDER_MAX], m[ROW_MODEL_MAX];
        struct pi_event ev = { .kind = kind, .usage = &u, .provider = ps->provider, .model = ps->model };

        if (is_synthetic(fl, provider, model) || !usage_get(uf, &u))
                return PARSE_OK;
        if (provider->p) {
                jscan_span_set(p, sizeof(p), provider);
                ev.provider = p;
        }
        if (model->p) {
                jscan_span_set(m, sizeof(m), model);
                ev.model = m;
        }
        ev.time_ms = own->present ? own->ms : fallback_time(ps);
        ev.time_approx = !own->present;
        return emit(fl, ctx, ps, &ev, out);
}

static int parse_message(const struct pi_flavor *fl, const struct source_ctx *ctx,
                         struct parse_state *ps, const struct entry_f *e, struct row_batch *out)
{
        const struct msg_f *m = &e->msg;
        struct jscan_time t = m->ts.present ? m->ts : e->ts;

        if (jscan_span_eq(&m->role, "assistant")) {
                struct pi_usage u;
                struct pi_event ev = { .kind = ROW_KIND_MESSAGE, .usage = &u };

                if (is_synthetic(fl, &m->provider, &m->model))
                        return PARSE_OK; /* neither a row nor the current model */
                carry_model(ps, &m->provider, &m->model);
                if (!usage_get(&m->usage, &u))
                        return PARSE_OK;
                ev.provider = ps->provider;
                ev.model = ps->model;
                ev.time_ms = t.present ? t.ms : fallback_time(ps);
                ev.time_approx = !t.present;
                ev.response_id = &m->response_id;
                ev.calls = m;
                return emit(fl, ctx, ps, &ev, out);
        }
        if (jscan_span_eq(&m->role, "toolResult") && m->usage.present)
                return usage_row(fl, ctx, ps, ROW_KIND_TOOL_RESULT, &m->usage, &m->provider, &m->model,
                                 &t, out);
        return PARSE_OK; /* user, system, bashExecution, custom, unknown roles */
}

static int apply_entry(const struct pi_flavor *fl, const struct source_ctx *ctx,
                       struct parse_state *ps, const struct entry_f *e, struct row_batch *out)
{
        static const struct jscan_span none = { NULL, 0 };
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN))
                return parse_header(ps, e);
        if (!e->type.p)
                return PARSE_OK;

        if (jscan_span_eq(&e->type, "message")) {
                if (e->msg.present)
                        r = parse_message(fl, ctx, ps, e, out);
        } else if (jscan_span_eq(&e->type, "model_change")) {
                if (!is_synthetic(fl, &e->provider, &e->model_id))
                        carry_model(ps, &e->provider, &e->model_id);
        } else if (jscan_span_eq(&e->type, "compaction")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_COMPACTION, &e->usage, &none, &none, &e->ts, out);
        } else if (jscan_span_eq(&e->type, "branch_summary")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_BRANCH_SUMMARY, &e->usage, &none, &none, &e->ts, out);
        } else if (jscan_span_eq(&e->type, "usage")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_USAGE_ENTRY, &e->usage, &e->provider, &e->model,
                              &e->ts, out);
        } else if (jscan_span_eq(&e->type, "custom") && fl->model_snapshot &&
                   jscan_span_eq(&e->custom_type, "model-snapshot") && e->has_data) {
                if (!is_synthetic(fl, &e->data_provider, &e->data_model_id))
                        carry_model(ps, &e->data_provider, &e->data_model_id);
        }
        /* other types (thinking_level_change, label, session_info, leaf,
         * context_edit, custom_message, unknown ones) carry nothing we count */
        if (r >= 0) {
                if (e->ts.present)
                        ps->last_time_ms = e->ts.ms;
                else if (e->msg.present && e->msg.ts.present)
                        ps->last_time_ms = e->msg.ts.ms;
        }
        return r;
}

/* ---- lines ------------------------------------------------------------------------------ */

/* The JSON values in [p, end): entries applied in order; a bad part is
 * skipped to the next entry start. */
static int parse_values(const struct pi_flavor *fl, const struct source_ctx *ctx,
                        struct parse_state *ps, const char *p, const char *end,
                        struct row_batch *out)
{
        static const char resync[] = "{\"type\":\"";
        struct jscan s = { p, end };
        struct entry_f entry, *e = &entry;
        bool malformed = false;
        int r = PARSE_OK;

        jscan_ws(&s);
        while (s.p < s.end) {
                const char *start = s.p;
                bool good, is_obj = *s.p == '{';

                memset(e, 0, offsetof(struct entry_f, msg));
                memset(&e->msg, 0, offsetof(struct msg_f, calls)); /* calls.v: only below calls.n */
                e->msg.calls.n = 0;
                e->has_data = false;
                e->data_provider.p = e->data_model_id.p = NULL;
                good = is_obj ? jscan_object(&s, entry_key, e, 0) : jscan_skip(&s, 0);
                if (good && !is_obj) {
                        /* a bare value: not an entry */
                        if (!(ps->flags & PS_HEADER_SEEN)) {
                                ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                                r = PARSE_NOT_SOURCE;
                                break;
                        }
                        malformed = true;
                } else if (good) {
                        r = apply_entry(fl, ctx, ps, e, out);
                        if (r < 0 || r == PARSE_NOT_SOURCE)
                                break;
                        r = PARSE_OK;
                } else {
                        const char *next;
                        if (!(ps->flags & PS_HEADER_SEEN)) {
                                /* the first line is not even JSON */
                                ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                                r = PARSE_NOT_SOURCE;
                                break;
                        }
                        /* a torn object glued to the next one: skip to the
                         * next entry start and go on */
                        malformed = true;
                        next = end - start > 1 ? memmem(start + 1, (size_t)(end - start - 1), resync,
                                                        sizeof(resync) - 1)
                                               : NULL;
                        if (!next)
                                break;
                        s.p = next;
                        continue;
                }
                jscan_ws(&s);
        }
        if (r < 0 || r == PARSE_NOT_SOURCE)
                return r;
        return malformed ? PARSE_MALFORMED : PARSE_OK;
}

/* Whether a line can change anything: usage of any kind (the key "usage"
 * or the type value "usage"), a model change, or a model snapshot. Quoted
 * needles never match text inside JSON strings (their quotes are escaped). */
static bool may_matter(const char *p, size_t n, const void *u)
{
        bool snapshot = *(const bool *)u; /* the flavor's model_snapshot */
        const char *q = p, *end = p + n;

        /* `"usage"`, `"model_change"`, `"model-snapshot"` */
        while ((q = bytescan_pair(q, end, '"', 'u', 'm'))) {
                const char *k = ++q;
                size_t left = (size_t)(end - k);
                if (left >= 6 && memcmp(k, "usage\"", 6) == 0)
                        return true;
                if (left >= 13 && memcmp(k, "model_change\"", 13) == 0)
                        return true;
                if (snapshot && left >= 15 && memcmp(k, "model-snapshot\"", 15) == 0)
                        return true;
        }
        return false;
}

int pi_parse_line(const struct pi_flavor *fl, const struct source_ctx *ctx,
                  struct parse_state *ps, const char *line, size_t len, struct row_batch *out)
{
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, &fl->model_snapshot, &r))
                return r;
        return parse_values(fl, ctx, ps, line, line + len, out);
}

