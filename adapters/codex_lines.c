/* Codex rollout lines: the fields below are read by the validating scanner
 * (common/jscan.h), the rest skipped. The carried state (ps->priv) has an
 * explicit byte layout of its own, so a checkpoint resumes mid-file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codex_lines.h"
#include "jscan.h"
#include "lines.h"
#include "ratelimits.h"

#define TOKENS_MAX      (1ull << 50) /* larger numbers in a file are clamped */
#define PRIV_VERSION    1
#define CALL_NAME_KEPT  24 /* a pending call's name as kept in priv */

/* ---- the carried state ------------------------------------------------------ */

struct tokens {
        uint64_t input, cached, cache_write, output, reasoning, total;
};

#define CX_FORKLIKE 0x1u /* fork or sub-agent file: older token_counts are replay */
#define CX_PENDING  0x2u /* pending_usage holds the last record's usage */
#define CX_EMBEDDED 0x4u /* under an OpenClaw agent's codex-home: no usage rows */
#define CX_SUBAGENT 0x8u

struct cx_state {
        uint8_t flags;
        uint64_t scope;         /* hash of the key scope */
        int64_t meta_ms;        /* session_meta time */
        struct tokens prev;     /* last cumulative total seen */
        uint64_t pending_usage; /* hash of the last record's usage */
        char tier[ROW_TIER_MAX];
        uint32_t n_calls;       /* tool calls since the last usage row */
        char calls[ROW_CALLS_MAX][CALL_NAME_MAX];
};

struct wbuf {
        uint8_t *p;
        size_t n, cap;
        bool full;
};

static void put_u8(struct wbuf *w, uint8_t v)
{
        if (w->n < w->cap)
                w->p[w->n++] = v;
        else
                w->full = true;
}

static void put_var(struct wbuf *w, uint64_t v)
{
        do {
                put_u8(w, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
                v >>= 7;
        } while (v);
}

static void put_fix(struct wbuf *w, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                put_u8(w, (uint8_t)(v >> (8 * i)));
}

static void put_str(struct wbuf *w, const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n > max)
                n = max;
        put_u8(w, (uint8_t)n);
        for (size_t i = 0; i < n; i++)
                put_u8(w, (uint8_t)s[i]);
}

struct rbuf {
        const uint8_t *p;
        size_t n, pos;
        bool bad;
};

static uint8_t get_u8(struct rbuf *r)
{
        if (r->pos >= r->n) {
                r->bad = true;
                return 0;
        }
        return r->p[r->pos++];
}

static uint64_t get_var(struct rbuf *r)
{
        uint64_t v = 0;
        for (int sh = 0; sh < 64 && !r->bad; sh += 7) {
                uint8_t b = get_u8(r);
                v |= (uint64_t)(b & 0x7f) << sh;
                if (!(b & 0x80))
                        return v;
        }
        r->bad = true;
        return 0;
}

static uint64_t get_fix(struct rbuf *r)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v |= (uint64_t)get_u8(r) << (8 * i);
        return v;
}

static void get_str(struct rbuf *r, char *dst, size_t cap)
{
        size_t n = get_u8(r), k = 0;
        for (size_t i = 0; i < n; i++) {
                char c = (char)get_u8(r);
                if (k + 1 < cap)
                        dst[k++] = c;
        }
        dst[k] = 0;
}

static void tokens_put(struct wbuf *w, const struct tokens *t)
{
        put_var(w, t->input);
        put_var(w, t->cached);
        put_var(w, t->cache_write);
        put_var(w, t->output);
        put_var(w, t->reasoning);
        put_var(w, t->total);
}

static void tokens_get(struct rbuf *r, struct tokens *t)
{
        t->input = get_var(r);
        t->cached = get_var(r);
        t->cache_write = get_var(r);
        t->output = get_var(r);
        t->reasoning = get_var(r);
        t->total = get_var(r);
}

/* Layout v1: version, flags, scope (8 LE), meta_ms, prev (6 varints),
 * [pending_usage (8 LE)], tier, n_calls, then as many call names as fit
 * (the count stays exact; names that did not fit come back empty). */
static void state_save(const struct cx_state *s, struct parse_state *ps)
{
        struct wbuf w = { ps->priv, 0, PS_PRIV_MAX, false };

        put_u8(&w, PRIV_VERSION);
        put_u8(&w, s->flags);
        put_fix(&w, s->scope);
        put_var(&w, (uint64_t)s->meta_ms);
        tokens_put(&w, &s->prev);
        if (s->flags & CX_PENDING)
                put_fix(&w, s->pending_usage);
        put_str(&w, s->tier, ROW_TIER_MAX - 1);
        put_var(&w, s->n_calls);
        for (uint32_t i = 0; i < s->n_calls && i < ROW_CALLS_MAX; i++) {
                size_t before = w.n;
                put_str(&w, s->calls[i], CALL_NAME_KEPT);
                if (w.full) {
                        w.n = before;
                        break;
                }
        }
        ps->priv_len = (uint32_t)w.n;
}

static void state_load(const struct parse_state *ps, struct cx_state *s)
{
        struct rbuf r = { ps->priv, ps->priv_len, 0, false };

        memset(s, 0, offsetof(struct cx_state, calls));
        if (ps->priv_len == 0 || get_u8(&r) != PRIV_VERSION)
                return;
        s->flags = get_u8(&r);
        s->scope = get_fix(&r);
        s->meta_ms = (int64_t)get_var(&r);
        tokens_get(&r, &s->prev);
        if (s->flags & CX_PENDING)
                s->pending_usage = get_fix(&r);
        get_str(&r, s->tier, sizeof(s->tier));
        s->n_calls = (uint32_t)get_var(&r);
        if (r.bad) {
                memset(s, 0, offsetof(struct cx_state, calls));
                return;
        }
        if (s->n_calls > ROW_CALLS_MAX)
                s->n_calls = ROW_CALLS_MAX;
        for (uint32_t i = 0; i < s->n_calls; i++) {
                if (r.pos >= r.n) {
                        s->calls[i][0] = 0;
                        continue;
                }
                get_str(&r, s->calls[i], sizeof(s->calls[i]));
        }
}

/* ---- what a line holds ------------------------------------------------------ */

struct tok_f {
        bool present;
        struct jscan_num input, cached, cache_write, output, reasoning, total;
};

struct win_f {
        bool present;
        struct jscan_num used, window, resets;
};

struct rl_f {
        bool present;
        struct win_f primary, secondary;
        struct jscan_span limit_id, plan;
};

struct payload_f {
        struct jscan_span type, id, session_id, forked_from, parent, thread_source, cwd;
        struct jscan_span model, tier, response_id, name;
        struct jscan_time ts;
        bool source_obj; /* source: {"subagent": ...} */
        bool info_obj;   /* token_count info is an object (not null) */
        struct tok_f total, last, usage, thread;
        struct rl_f rl;
};

struct line_f {
        struct jscan_span type;
        struct jscan_time ts;
        bool has_payload;
        struct payload_f p;
};

static bool tok_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct tok_f *t = u;

        if (JSCAN_KEY_IS(k, "input_tokens"))
                return jscan_read_num(s, &t->input, depth);
        if (JSCAN_KEY_IS(k, "cached_input_tokens"))
                return jscan_read_num(s, &t->cached, depth);
        if (JSCAN_KEY_IS(k, "cache_write_input_tokens"))
                return jscan_read_num(s, &t->cache_write, depth);
        if (JSCAN_KEY_IS(k, "output_tokens"))
                return jscan_read_num(s, &t->output, depth);
        if (JSCAN_KEY_IS(k, "reasoning_output_tokens"))
                return jscan_read_num(s, &t->reasoning, depth);
        if (JSCAN_KEY_IS(k, "total_tokens"))
                return jscan_read_num(s, &t->total, depth);
        return jscan_skip(s, depth);
}

static bool read_tok(struct jscan *s, struct tok_f *t, int depth)
{
        *t = (struct tok_f){ 0 };
        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        t->present = true;
        return jscan_object(s, tok_key, t, depth + 1);
}

static bool info_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct payload_f *p = u;

        if (JSCAN_KEY_IS(k, "total_token_usage"))
                return read_tok(s, &p->total, depth);
        if (JSCAN_KEY_IS(k, "last_token_usage"))
                return read_tok(s, &p->last, depth);
        return jscan_skip(s, depth);
}

static bool win_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct win_f *w = u;

        if (JSCAN_KEY_IS(k, "used_percent"))
                return jscan_read_num(s, &w->used, depth);
        if (JSCAN_KEY_IS(k, "window_minutes"))
                return jscan_read_num(s, &w->window, depth);
        if (JSCAN_KEY_IS(k, "resets_at"))
                return jscan_read_num(s, &w->resets, depth);
        return jscan_skip(s, depth);
}

static bool read_win(struct jscan *s, struct win_f *w, int depth)
{
        *w = (struct win_f){ 0 };
        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        w->present = true;
        return jscan_object(s, win_key, w, depth + 1);
}

static bool rl_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct rl_f *r = u;

        if (JSCAN_KEY_IS(k, "primary"))
                return read_win(s, &r->primary, depth);
        if (JSCAN_KEY_IS(k, "secondary"))
                return read_win(s, &r->secondary, depth);
        if (JSCAN_KEY_IS(k, "limit_id"))
                return jscan_read_str(s, &r->limit_id, depth);
        if (JSCAN_KEY_IS(k, "plan_type"))
                return jscan_read_str(s, &r->plan, depth);
        return jscan_skip(s, depth);
}

static bool payload_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct payload_f *p = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &p->type, depth);
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &p->id, depth);
        if (JSCAN_KEY_IS(k, "session_id"))
                return jscan_read_str(s, &p->session_id, depth);
        if (JSCAN_KEY_IS(k, "forked_from_id"))
                return jscan_read_str(s, &p->forked_from, depth);
        if (JSCAN_KEY_IS(k, "parent_thread_id"))
                return jscan_read_str(s, &p->parent, depth);
        if (JSCAN_KEY_IS(k, "thread_source"))
                return jscan_read_str(s, &p->thread_source, depth);
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &p->cwd, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &p->model, depth);
        if (JSCAN_KEY_IS(k, "service_tier"))
                return jscan_read_str(s, &p->tier, depth);
        if (JSCAN_KEY_IS(k, "response_id"))
                return jscan_read_str(s, &p->response_id, depth);
        if (JSCAN_KEY_IS(k, "name"))
                return jscan_read_str(s, &p->name, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &p->ts, depth);
        if (JSCAN_KEY_IS(k, "source")) {
                p->source_obj = jscan_at(s, '{');
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "usage"))
                return read_tok(s, &p->usage, depth);
        if (JSCAN_KEY_IS(k, "thread_token_usage"))
                return read_tok(s, &p->thread, depth);
        if (JSCAN_KEY_IS(k, "info")) {
                p->info_obj = jscan_at(s, '{');
                if (p->info_obj)
                        return jscan_object(s, info_key, p, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "rate_limits")) {
                p->rl = (struct rl_f){ 0 };
                p->rl.present = jscan_at(s, '{');
                if (p->rl.present)
                        return jscan_object(s, rl_key, &p->rl, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

static bool line_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct line_f *l = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &l->type, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &l->ts, depth);
        if (JSCAN_KEY_IS(k, "payload")) {
                l->p = (struct payload_f){ 0 };
                l->has_payload = jscan_at(s, '{');
                if (l->has_payload)
                        return jscan_object(s, payload_key, &l->p, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

/* ---- tokens ------------------------------------------------------------------- */

static uint64_t num(const struct jscan_num *n)
{
        int64_t v;
        if (!jscan_num_i64(n, &v) || v <= 0)
                return 0;
        return (uint64_t)v > TOKENS_MAX ? TOKENS_MAX : (uint64_t)v;
}

static struct tokens tokens_of(const struct tok_f *f)
{
        struct tokens t = {
                .input = num(&f->input),
                .cached = num(&f->cached),
                .cache_write = num(&f->cache_write),
                .output = num(&f->output),
                .reasoning = num(&f->reasoning),
                .total = num(&f->total),
        };
        if (!f->total.present)
                t.total = t.input + t.output;
        return t;
}

static bool tokens_eq(const struct tokens *a, const struct tokens *b)
{
        return a->input == b->input && a->cached == b->cached && a->cache_write == b->cache_write &&
               a->output == b->output && a->reasoning == b->reasoning && a->total == b->total;
}

static uint64_t tokens_hash(const struct tokens *t)
{
        uint64_t v[6] = { t->input, t->cached, t->cache_write, t->output, t->reasoning, t->total };
        return hash64(v, sizeof(v));
}

/* ---- rows --------------------------------------------------------------------- */

static int64_t line_time(const struct parse_state *ps, const struct line_f *l, bool *ret_approx)
{
        *ret_approx = !l->ts.present;
        if (l->ts.present)
                return l->ts.ms;
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

static int emit(const struct source_ctx *ctx, struct parse_state *ps, struct cx_state *st,
                const struct line_f *l, const struct tokens *u, const struct row_key *key,
                struct row_batch *out)
{
        struct usage_row *row;
        bool approx;
        uint64_t uncached;
        int r = row_batch_push(out, &row);

        if (r < 0)
                return r;
        row->key = *key;
        row->kind = ROW_KIND_RESPONSE;
        row->cost_source = COST_NONE;
        row->time_ms = line_time(ps, l, &approx);
        row->flags = ROW_F_TOKENS_KNOWN | (approx ? ROW_F_TIME_APPROX : 0) |
                     (st->flags & CX_SUBAGENT ? ROW_F_SIDECHAIN : 0);
        /* Codex input includes the cached and cache-write tokens; output
         * includes reasoning */
        uncached = u->input > u->cached ? u->input - u->cached : 0;
        uncached = uncached > u->cache_write ? uncached - u->cache_write : 0;
        row->input = uncached;
        row->cache_read = u->cached;
        row->cache_write = u->cache_write;
        row->output = u->output;
        row->reasoning = u->reasoning < u->output ? u->reasoning : u->output;
        row->total = u->total;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "codex");
        row_set_str(row->session, sizeof(row->session), ps->session, strlen(ps->session));
        row_set_str(row->project, sizeof(row->project), ps->project, strlen(ps->project));
        ROW_SET(row->provider, "openai");
        row_set_str(row->model, sizeof(row->model), ps->model, strlen(ps->model));
        row_set_str(row->tier, sizeof(row->tier), st->tier, strlen(st->tier));
        for (uint32_t i = 0; i < st->n_calls && i < ROW_CALLS_MAX; i++)
                row_set_str(row->calls[i].name, sizeof(row->calls[i].name), st->calls[i], strlen(st->calls[i]));
        row->n_calls = st->n_calls < ROW_CALLS_MAX ? st->n_calls : ROW_CALLS_MAX;
        st->n_calls = 0;
        return 0;
}

static int key_of_response(const struct jscan_span *rid, struct row_key *ret)
{
        char buf[512];
        size_t n = jscan_span_decode(rid, buf, sizeof(buf) - 1);
        struct keyhash h;
        int r = keyhash_begin(&h, CODEX_KEY_RESPONSE);

        if (r < 0)
                return r;
        buf[n] = 0;
        keyhash_str(&h, buf);
        keyhash_end(&h, ret);
        return 0;
}

/* The model is not part of it: a compaction's record precedes its turn's
 * turn_context, and a replayed prefix may lack one; scope and the six
 * cumulative numbers already name the call. */
static int key_of_totals(const struct cx_state *st, const struct tokens *t, struct row_key *ret)
{
        struct keyhash h;
        int r = keyhash_begin(&h, CODEX_KEY_TOTALS);

        if (r < 0)
                return r;
        keyhash_u64(&h, st->scope);
        keyhash_u64(&h, t->input);
        keyhash_u64(&h, t->cached);
        keyhash_u64(&h, t->cache_write);
        keyhash_u64(&h, t->output);
        keyhash_u64(&h, t->reasoning);
        keyhash_u64(&h, t->total);
        keyhash_end(&h, ret);
        return 0;
}

/* ---- entries ------------------------------------------------------------------ */

static uint64_t span_hash(const struct jscan_span *sp)
{
        char buf[ROW_SESSION_MAX];
        jscan_span_set(buf, sizeof(buf), sp);
        return hash64(buf, strlen(buf));
}

static int parse_header(const struct source_ctx *ctx, struct parse_state *ps, struct cx_state *st,
                        const struct line_f *l)
{
        const struct payload_f *p = &l->p;

        ps->flags |= PS_HEADER_SEEN;
        if (!l->has_payload || !jscan_span_eq(&l->type, "session_meta") || !p->id.p) {
                ps->flags |= PS_NOT_SOURCE;
                return PARSE_NOT_SOURCE;
        }
        memset(st, 0, offsetof(struct cx_state, calls));
        jscan_span_set(ps->session, sizeof(ps->session), &p->id);
        jscan_span_set(ps->project, sizeof(ps->project), &p->cwd);
        ROW_SET(ps->provider, "openai");
        ps->model[0] = 0;
        st->scope = span_hash(p->forked_from.p ? &p->forked_from
                              : p->session_id.p ? &p->session_id
                                                : &p->id);
        if (p->source_obj || jscan_span_eq(&p->thread_source, "subagent") || p->parent.p)
                st->flags |= CX_SUBAGENT | CX_FORKLIKE;
        if (p->forked_from.p)
                st->flags |= CX_FORKLIKE;
        if (ctx && ctx->path && strstr(ctx->path, "/agent/codex-home/"))
                st->flags |= CX_EMBEDDED;
        st->meta_ms = p->ts.present ? p->ts.ms : l->ts.present ? l->ts.ms : 0;
        return PARSE_OK;
}

static void set_tier(struct cx_state *st, const struct jscan_span *tier)
{
        static const char *const known[] = { "priority", "flex", "batch", "fast", NULL };
        char buf[ROW_TIER_MAX];

        if (!tier->p)
                return;
        jscan_span_set(buf, sizeof(buf), tier);
        for (char *c = buf; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
        st->tier[0] = 0;
        for (size_t i = 0; known[i]; i++)
                if (strcmp(buf, known[i]) == 0)
                        row_set_str(st->tier, sizeof(st->tier), buf, strlen(buf));
}

static bool is_replay(const struct cx_state *st, const struct line_f *l)
{
        return (st->flags & CX_FORKLIKE) && st->meta_ms && l->ts.present && l->ts.ms < st->meta_ms;
}

static int on_record(const struct source_ctx *ctx, struct parse_state *ps, struct cx_state *st,
                     const struct line_f *l, struct row_batch *out)
{
        const struct payload_f *p = &l->p;
        struct tokens u, thread;
        struct row_key key;
        int r;

        if (!p->usage.present)
                return PARSE_OK;
        u = tokens_of(&p->usage);
        if (p->response_id.p) {
                r = key_of_response(&p->response_id, &key);
        } else {
                /* no id: keyed as its token_count would be */
                thread = p->thread.present ? tokens_of(&p->thread) : u;
                r = key_of_totals(st, &thread, &key);
        }
        if (r < 0)
                return r;
        if (!(st->flags & CX_EMBEDDED)) {
                r = emit(ctx, ps, st, l, &u, &key, out);
                if (r < 0)
                        return r;
        }
        /* the token_count that follows repeats this call: its total (the
         * thread total here) becomes the baseline, and its last usage is
         * remembered in case the thread total is missing */
        if (p->thread.present)
                st->prev = tokens_of(&p->thread);
        st->pending_usage = tokens_hash(&u);
        st->flags |= CX_PENDING;
        return PARSE_OK;
}

static void on_rate_limits(const struct line_f *l, struct row_batch *out)
{
        const struct rl_f *f = &l->p.rl;
        const struct win_f *w[2] = { &f->primary, &f->secondary };
        struct rate_limits rl = { 0 };

        if (!f->present || !l->ts.present)
                return;
        if (out->limits && out->limits->observed_ms > l->ts.ms)
                return;
        rl.observed_ms = l->ts.ms;
        ROW_SET(rl.tool, "codex");
        jscan_span_set(rl.limit_id, sizeof(rl.limit_id), &f->limit_id);
        jscan_span_set(rl.plan_type, sizeof(rl.plan_type), &f->plan);
        for (int i = 0; i < 2; i++) {
                struct limit_window *d = i ? &rl.secondary : &rl.primary;
                int64_t v;
                if (!w[i]->present)
                        continue;
                d->present = true;
                if (w[i]->used.present && w[i]->used.d > 0)
                        d->used_centi = w[i]->used.d >= 10000.0 ? 1000000u
                                                                  : (uint32_t)(w[i]->used.d * 100.0 + 0.5);
                if (jscan_num_i64(&w[i]->window, &v) && v > 0 && v < (1 << 30))
                        d->window_minutes = (uint32_t)v;
                if (jscan_num_i64(&w[i]->resets, &v) && v > 0 && v < (1ll << 40))
                        d->resets_at_s = v;
        }
        if (!out->limits) {
                out->limits = malloc(sizeof(*out->limits));
                if (!out->limits)
                        return; /* the next snapshot will do */
        }
        *out->limits = rl;
}

static int on_token_count(const struct source_ctx *ctx, struct parse_state *ps,
                          struct cx_state *st, const struct line_f *l, struct row_batch *out)
{
        const struct payload_f *p = &l->p;
        struct tokens t, last;
        struct row_key key;
        bool counted;
        int r;

        on_rate_limits(l, out);
        if (!p->info_obj || !p->total.present || !p->last.present)
                return PARSE_OK; /* info: null (a rate-limit update only) */
        t = tokens_of(&p->total);
        last = tokens_of(&p->last);
        counted = (st->flags & CX_PENDING) && tokens_hash(&last) == st->pending_usage;
        if (tokens_eq(&t, &st->prev) || counted) {
                /* a re-emit, or the call its token_usage_record counted */
                st->prev = t;
                st->flags &= ~CX_PENDING;
                return PARSE_OK;
        }
        if (last.input == 0 && last.cached == 0 && last.cache_write == 0 && last.output == 0 &&
            last.reasoning == 0) {
                st->prev = t; /* a context estimate after a compaction */
                return PARSE_OK;
        }
        if (t.total < st->prev.total && !tokens_eq(&t, &last))
                return PARSE_OK; /* a stale regression: keep the baseline */
        st->prev = t;
        st->flags &= ~CX_PENDING;
        if (is_replay(st, l) || (st->flags & CX_EMBEDDED))
                return PARSE_OK;
        r = key_of_totals(st, &t, &key);
        if (r < 0)
                return r;
        return emit(ctx, ps, st, l, &last, &key, out);
}

static void on_call(struct cx_state *st, const struct line_f *l)
{
        const struct payload_f *p = &l->p;
        const char *fixed = NULL;
        uint32_t i;

        if (is_replay(st, l))
                return;
        if (jscan_span_eq(&p->type, "local_shell_call"))
                fixed = "local_shell";
        else if (jscan_span_eq(&p->type, "web_search_call"))
                fixed = "web_search";
        else if (!jscan_span_eq(&p->type, "function_call") &&
                 !jscan_span_eq(&p->type, "custom_tool_call"))
                return;
        if (st->n_calls >= ROW_CALLS_MAX)
                return; /* beyond 64 calls in one response only the share gets coarser */
        i = st->n_calls++;
        if (fixed)
                ROW_SET(st->calls[i], fixed);
        else
                jscan_span_set(st->calls[i], sizeof(st->calls[i]), &p->name);
}

static int apply_line(const struct source_ctx *ctx, struct parse_state *ps, struct cx_state *st,
                      const struct line_f *l, struct row_batch *out)
{
        const struct payload_f *p = &l->p;
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN))
                return parse_header(ctx, ps, st, l);
        if (!l->has_payload)
                return PARSE_OK;
        if (jscan_span_eq(&l->type, "turn_context")) {
                if (p->model.p)
                        jscan_span_set(ps->model, sizeof(ps->model), &p->model);
                set_tier(st, &p->tier);
        } else if (jscan_span_eq(&l->type, "token_usage_record")) {
                r = on_record(ctx, ps, st, l, out);
        } else if (jscan_span_eq(&l->type, "event_msg")) {
                if (jscan_span_eq(&p->type, "token_count"))
                        r = on_token_count(ctx, ps, st, l, out);
        } else if (jscan_span_eq(&l->type, "response_item")) {
                on_call(st, l);
        }
        /* a later session_meta (a resumed or replayed history) changes nothing */
        if (r >= 0 && l->ts.present)
                ps->last_time_ms = l->ts.ms;
        return r;
}

/* Whether a line can change anything: quoted type values we act on (quotes
 * inside JSON strings are escaped, so text never matches). */
static bool may_matter(const char *p, size_t n)
{
        static const char *const needles[] = {
                "turn_context\"", "token_count\"", "token_usage_record\"", "function_call\"",
                "custom_tool_call\"", "local_shell_call\"", "web_search_call\"", NULL,
        };
        const char *q = p, *end = p + n;

        while ((q = memchr(q, '"', (size_t)(end - q)))) {
                const char *k = ++q;
                size_t left = (size_t)(end - k);
                for (size_t i = 0; needles[i]; i++) {
                        size_t m = strlen(needles[i]);
                        if (left >= m && memcmp(k, needles[i], m) == 0)
                                return true;
                }
        }
        return false;
}

int codex_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                     size_t len, struct row_batch *out)
{
        struct jscan s;
        struct line_f l = { 0 };
        struct cx_state *st;
        bool good;
        int r;

        if (ps->flags & PS_NOT_SOURCE)
                return PARSE_NOT_SOURCE;
        len = lines_trim(line, len, &line);
        if (len == 0)
                return PARSE_OK;
        if ((ps->flags & PS_HEADER_SEEN) && !may_matter(line, len))
                return line[0] == '{' && line[len - 1] == '}' ? PARSE_OK : PARSE_MALFORMED;
        s = (struct jscan){ line, line + len };
        good = jscan_at(&s, '{') && jscan_object(&s, line_key, &l, 0);
        if (good) {
                jscan_ws(&s);
                good = s.p == s.end;
        }
        if (!good) {
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                return PARSE_MALFORMED;
        }
        st = malloc(sizeof(*st));
        if (!st)
                return -ENOMEM;
        state_load(ps, st);
        r = apply_line(ctx, ps, st, &l, out);
        if (r >= 0)
                state_save(st, ps);
        free(st);
        return r;
}
