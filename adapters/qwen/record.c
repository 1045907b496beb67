/* Qwen Code's chat JSONL, read with the validating scanner: assistant
 * records' usageMetadata and ui_telemetry api_response rows made into one
 * row per call (see qwen/record.h for the key), tool calls from the
 * assistant's functionCall parts, the unpaired records kept in the
 * adapter-private parse state. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "adapt-util.h"
#include "binio.h"
#include "json/bytescan.h"
#include "json/jscan.h"
#include "qwen/record.h"

_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "row fields fit jscan_span_set");

/* ---- what a record holds --------------------------------------------------------- */

struct qw_usage_f {
        bool present;
        struct jscan_num prompt, output, cached, thoughts, total;
};

struct qw_call_f {
        struct jscan_span id, name;
};

struct qw_rec_f {
        struct jscan_span uuid, session, type, subtype, cwd, model;
        struct jscan_time ts;
        struct qw_usage_f usage;           /* assistant: usageMetadata */
        struct jscan_span event, ev_model, response_id, subagent;
        struct jscan_time ev_ts;
        struct qw_usage_f ev;              /* telemetry: the *_token_count members */
        uint32_t n_calls;
        struct qw_call_f calls[ROW_CALLS_MAX];
};

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct qw_usage_f *f = u;

        if (JSCAN_KEY_IS(k, "promptTokenCount"))
                return jscan_read_num(s, &f->prompt, depth);
        if (JSCAN_KEY_IS(k, "candidatesTokenCount"))
                return jscan_read_num(s, &f->output, depth);
        if (JSCAN_KEY_IS(k, "cachedContentTokenCount"))
                return jscan_read_num(s, &f->cached, depth);
        if (JSCAN_KEY_IS(k, "thoughtsTokenCount"))
                return jscan_read_num(s, &f->thoughts, depth);
        if (JSCAN_KEY_IS(k, "totalTokenCount"))
                return jscan_read_num(s, &f->total, depth);
        return jscan_skip(s, depth);
}

static bool event_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct qw_rec_f *r = u;

        if (JSCAN_KEY_IS(k, "event.name"))
                return jscan_read_str(s, &r->event, depth);
        if (JSCAN_KEY_IS(k, "event.timestamp"))
                return jscan_read_time(s, &r->ev_ts, depth);
        if (JSCAN_KEY_IS(k, "response_id"))
                return jscan_read_str(s, &r->response_id, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &r->ev_model, depth);
        if (JSCAN_KEY_IS(k, "subagent_name"))
                return jscan_read_str(s, &r->subagent, depth);
        if (JSCAN_KEY_IS(k, "input_token_count")) {
                r->ev.present = true;
                return jscan_read_num(s, &r->ev.prompt, depth);
        }
        if (JSCAN_KEY_IS(k, "output_token_count"))
                return jscan_read_num(s, &r->ev.output, depth);
        if (JSCAN_KEY_IS(k, "cached_content_token_count"))
                return jscan_read_num(s, &r->ev.cached, depth);
        if (JSCAN_KEY_IS(k, "thoughts_token_count"))
                return jscan_read_num(s, &r->ev.thoughts, depth);
        if (JSCAN_KEY_IS(k, "total_token_count"))
                return jscan_read_num(s, &r->ev.total, depth);
        return jscan_skip(s, depth); /* response_text, prompt_id, durations */
}

static bool payload_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "uiEvent") && jscan_at(s, '{'))
                return jscan_object(s, event_key, u, depth + 1);
        return jscan_skip(s, depth);
}

static bool call_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct qw_call_f *c = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &c->id, depth);
        if (JSCAN_KEY_IS(k, "name"))
                return jscan_read_str(s, &c->name, depth);
        return jscan_skip(s, depth);
}

struct part_scan {
        struct qw_rec_f *r;
        struct qw_call_f c;
        bool is_call;
};

static bool part_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct part_scan *p = u;

        if (JSCAN_KEY_IS(k, "functionCall") && jscan_at(s, '{')) {
                p->is_call = true;
                return jscan_object(s, call_key, &p->c, depth + 1);
        }
        return jscan_skip(s, depth); /* text, thought, functionResponse */
}

static bool part_elem(struct jscan *s, void *u, int depth)
{
        struct qw_rec_f *r = u;
        struct part_scan p = { .r = r };

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        if (!jscan_object(s, part_key, &p, depth + 1))
                return false;
        if (p.is_call) {
                if (r->n_calls < ROW_CALLS_MAX)
                        r->calls[r->n_calls] = p.c;
                r->n_calls++;
        }
        return true;
}

static bool message_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "parts") && jscan_at(s, '['))
                return jscan_array(s, part_elem, u, depth + 1);
        return jscan_skip(s, depth);
}

static bool record_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct qw_rec_f *r = u;

        if (JSCAN_KEY_IS(k, "uuid"))
                return jscan_read_str(s, &r->uuid, depth);
        if (JSCAN_KEY_IS(k, "sessionId"))
                return jscan_read_str(s, &r->session, depth);
        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &r->type, depth);
        if (JSCAN_KEY_IS(k, "subtype"))
                return jscan_read_str(s, &r->subtype, depth);
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &r->cwd, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &r->model, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &r->ts, depth);
        if (JSCAN_KEY_IS(k, "usageMetadata")) {
                r->usage = (struct qw_usage_f){ 0 };
                if (!jscan_at(s, '{'))
                        return jscan_skip(s, depth);
                r->usage.present = true;
                return jscan_object(s, usage_key, &r->usage, depth + 1);
        }
        if (JSCAN_KEY_IS(k, "message") && jscan_at(s, '{')) {
                r->n_calls = 0;
                return jscan_object(s, message_key, r, depth + 1);
        }
        if (JSCAN_KEY_IS(k, "systemPayload") && jscan_at(s, '{'))
                return jscan_object(s, payload_key, r, depth + 1);
        return jscan_skip(s, depth);
}

/* ---- the unpaired records (parse_state.priv) --------------------------------------- *
 * u8 version (1) | u8 n | n x (16-byte key | u64 tokens hash | u8 side),
 * the most recent last. */

#define QW_PRIV_VERSION 1
#define QW_PENDING 4 /* a call's two records are adjacent; a few spare for interleaving */

enum qw_side { QW_ASSISTANT = 1, QW_TELEMETRY = 2 };

struct qw_pending {
        struct row_key key;
        uint64_t tokens; /* hash of the token counts */
        uint8_t side;
};

struct qw_state {
        uint8_t n;
        struct qw_pending v[QW_PENDING];
};
_Static_assert(2 + QW_PENDING * (ROW_KEY_SIZE + 8 + 1) <= PS_PRIV_MAX, "the pending records fit priv");

static void state_load(const struct parse_state *ps, struct qw_state *st)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };

        st->n = 0;
        if (ps->priv_len == 0 || br_u8(&r) != QW_PRIV_VERSION)
                return;
        uint8_t n = br_u8(&r);
        for (uint8_t i = 0; i < n && i < QW_PENDING; i++) {
                const uint8_t *k = br_take(&r, ROW_KEY_SIZE);
                if (!k)
                        break;
                memcpy(st->v[i].key.b, k, ROW_KEY_SIZE);
                st->v[i].tokens = br_u64(&r);
                st->v[i].side = br_u8(&r);
                if (r.bad)
                        break;
                st->n = (uint8_t)(i + 1);
        }
}

static void state_save(const struct qw_state *st, struct parse_state *ps)
{
        struct bw w = { ps->priv, 0, PS_PRIV_MAX, false };

        bw_u8(&w, QW_PRIV_VERSION);
        bw_u8(&w, st->n);
        for (uint8_t i = 0; i < st->n; i++) {
                bw_bytes(&w, st->v[i].key.b, ROW_KEY_SIZE);
                bw_u64(&w, st->v[i].tokens);
                bw_u8(&w, st->v[i].side);
        }
        ps->priv_len = (uint32_t)w.len;
}

/* The partner of a record on the other side with the same tokens hash
 * (the most recent first): removed from the list and its key in ret. */
static bool take_partner(struct qw_state *st, uint8_t side, uint64_t tokens, struct row_key *ret)
{
        for (int i = st->n - 1; i >= 0; i--) {
                if (st->v[i].side == side || st->v[i].tokens != tokens)
                        continue;
                *ret = st->v[i].key;
                memmove(&st->v[i], &st->v[i + 1], (size_t)(st->n - 1 - i) * sizeof(st->v[0]));
                st->n--;
                return true;
        }
        return false;
}

static void push_pending(struct qw_state *st, const struct row_key *key, uint64_t tokens, uint8_t side)
{
        if (st->n == QW_PENDING) {
                memmove(&st->v[0], &st->v[1], (QW_PENDING - 1) * sizeof(st->v[0]));
                st->n--;
        }
        st->v[st->n++] = (struct qw_pending){ .key = *key, .tokens = tokens, .side = side };
}

/* ---- rows ------------------------------------------------------------------------------ */

/* A token count: a non-negative integer; absent 0; anything else
 * UINT64_MAX, which row_check_bounds refuses. */
static uint64_t tok(const struct jscan_num *n)
{
        int64_t v;
        if (!n->present)
                return 0;
        if (!jscan_num_i64(n, &v) || v < 0)
                return UINT64_MAX;
        return (uint64_t)v;
}

static int64_t fallback_time(const struct parse_state *ps)
{
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

static void span_str(const struct jscan_span *sp, char *buf, size_t cap)
{
        size_t n = sp->p ? jscan_span_decode(sp, buf, cap - 1) : 0;
        buf[n] = 0;
}

static int key_of(const char *fmt, const struct jscan_span *id, const struct usage_row *row, struct row_key *ret)
{
        struct keyhash h;
        char buf[512];
        int r = keyhash_begin(&h, fmt);

        if (r < 0)
                return r;
        if (id) {
                span_str(id, buf, sizeof(buf));
                keyhash_str(&h, buf);
        } else {
                keyhash_str(&h, row->model);
                keyhash_u64(&h, (uint64_t)row->time_ms);
                keyhash_u64(&h, row->input);
                keyhash_u64(&h, row->output);
                keyhash_u64(&h, row->cache_read);
                keyhash_u64(&h, row->reasoning);
        }
        keyhash_end(&h, ret);
        return 0;
}

static uint64_t tokens_hash(const struct usage_row *row)
{
        /* not the model: the two records of a call agree on every count,
         * and a harness may name the model differently in each */
        uint64_t v[5] = { row->input, row->output, row->cache_read, row->reasoning, row->total };
        return hash64(v, sizeof(v));
}

/* One record's usage as a row; side says which of the two it is. */
static int usage_row(const struct source_ctx *ctx, struct parse_state *ps, struct qw_state *st,
                     const struct qw_rec_f *e, uint8_t side, struct row_batch *out)
{
        const struct qw_usage_f *u = side == QW_TELEMETRY ? &e->ev : &e->usage;
        const struct jscan_span *model = side == QW_TELEMETRY && e->ev_model.p ? &e->ev_model : &e->model;
        const struct jscan_time *t = e->ts.present ? &e->ts : &e->ev_ts;
        uint64_t prompt = tok(&u->prompt), o = tok(&u->output), cached = tok(&u->cached),
                 thoughts = tok(&u->thoughts);
        struct usage_row *row;
        uint64_t th;
        int r;

        if ((prompt | o | cached | thoughts) == 0)
                return PARSE_OK; /* nothing came back */
        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (t->present ? 0 : ROW_F_TIME_APPROX);
        /* a side agent's call (memory extraction): a sub-agent of the session */
        if (side == QW_TELEMETRY && e->subagent.p && e->subagent.n)
                row->flags |= ROW_F_SIDECHAIN;
        row->kind = ROW_KIND_RESPONSE;
        row->cost_source = COST_NONE;
        row->time_ms = t->present ? t->ms : fallback_time(ps);
        /* the prompt counts the cached tokens; the candidates count the
         * reasoning (unlike Gemini CLI's output), which is a part of them */
        row->input = prompt == UINT64_MAX ? prompt : prompt > cached ? prompt - cached : 0;
        row->cache_read = cached;
        row->output = o;
        row->reasoning = thoughts < o ? thoughts : o;
        row->total = u->total.present ? tok(&u->total) : prompt == UINT64_MAX || o == UINT64_MAX ? UINT64_MAX : prompt + o;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "qwen");
        jscan_span_set(row->model, sizeof(row->model), model);
        if (!row->model[0])
                ROW_SET(row->model, ps->model);
        else
                ROW_SET(ps->model, row->model);
        if (e->session.p)
                jscan_span_set(row->session, sizeof(row->session), &e->session);
        else
                ROW_SET(row->session, ps->session);
        if (e->cwd.p)
                jscan_span_set(row->project, sizeof(row->project), &e->cwd);
        else
                ROW_SET(row->project, ps->project);
        row->n_calls = side == QW_ASSISTANT ? (e->n_calls < ROW_CALLS_MAX ? e->n_calls : ROW_CALLS_MAX) : 0;
        for (uint32_t i = 0; i < row->n_calls; i++) {
                jscan_span_set(row->calls[i].id, sizeof(row->calls[i].id), &e->calls[i].id);
                jscan_span_set(row->calls[i].name, sizeof(row->calls[i].name), &e->calls[i].name);
        }
        th = tokens_hash(row);
        if (!take_partner(st, side, th, &row->key)) {
                if (e->uuid.p && e->uuid.n)
                        r = key_of(QWEN_KEY_REC, &e->uuid, row, &row->key);
                else if (side == QW_TELEMETRY && e->response_id.p && e->response_id.n)
                        r = key_of(QWEN_KEY_RESP, &e->response_id, row, &row->key);
                else
                        r = key_of(QWEN_KEY_LINE, NULL, row, &row->key);
                if (r < 0) {
                        out->n--;
                        return r;
                }
                push_pending(st, &row->key, th, side);
        }
        return PARSE_OK;
}

static int apply_record(const struct source_ctx *ctx, struct parse_state *ps, const struct qw_rec_f *e,
                        struct row_batch *out)
{
        struct qw_state st;
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN)) {
                /* every record carries uuid, sessionId and type */
                ps->flags |= PS_HEADER_SEEN;
                if (!e->uuid.p || !e->session.p || !e->type.p) {
                        ps->flags |= PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
        }
        if (e->session.p && e->session.n)
                jscan_span_set(ps->session, sizeof(ps->session), &e->session);
        if (e->cwd.p && e->cwd.n)
                jscan_span_set(ps->project, sizeof(ps->project), &e->cwd);
        state_load(ps, &st);
        if (jscan_span_eq(&e->type, "assistant") && e->usage.present)
                r = usage_row(ctx, ps, &st, e, QW_ASSISTANT, out);
        else if (jscan_span_eq(&e->type, "system") && jscan_span_eq(&e->subtype, "ui_telemetry") &&
                 jscan_span_eq(&e->event, "qwen-code.api_response") && e->ev.present)
                r = usage_row(ctx, ps, &st, e, QW_TELEMETRY, out);
        if (r < 0)
                return r;
        state_save(&st, ps);
        if (e->ts.present)
                ps->last_time_ms = e->ts.ms;
        return PARSE_OK;
}

/* ---- lines ---------------------------------------------------------------------------- */

/* Whether a line can hold usage: an assistant's usageMetadata or an
 * api_response event (quoted needles; text inside strings has its quotes
 * escaped, and a false hit only costs a full parse). */
static bool may_matter(const char *p, size_t n, const void *u)
{
        (void)u;
        return bytescan_find(p, n, "\"usageMetadata\"", 15) || bytescan_find(p, n, "\"qwen-code.api_response\"", 24);
}

int qwen_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line, size_t len,
                    struct row_batch *out)
{
        struct qw_rec_f e;
        struct jscan s;
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, NULL, &r))
                return r;
        memset(&e, 0, offsetof(struct qw_rec_f, calls));
        s = (struct jscan){ line, line + len };
        if (!jscan_at(&s, '{') || !jscan_object(&s, record_key, &e, 0)) {
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                return PARSE_MALFORMED;
        }
        jscan_ws(&s);
        r = apply_record(ctx, ps, &e, out);
        if (r != PARSE_OK)
                return r;
        return s.p == s.end ? PARSE_OK : PARSE_MALFORMED;
}
