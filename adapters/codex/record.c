/* Codex rollout lines: which record counts a call (token_usage_record, or
 * the token_count rule), the keys that make copies collapse, the carried
 * model, tier and tool calls, and the rate-limit snapshot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "codex/fields.h"
#include "codex/record.h"
#include "codex/state.h"
#include "lines.h"
#include "ratelimits.h"

#define TOKENS_MAX (1ull << 50) /* larger numbers in a file are clamped */

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
        for (uint32_t i = 0; i < st->n_calls && i < ROW_CALLS_MAX; i++) {
                row->calls[i].id[0] = 0; /* Codex records no call ids */
                row_set_str(row->calls[i].name, sizeof(row->calls[i].name), st->calls[i], strlen(st->calls[i]));
        }
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

        st->tier[0] = 0; /* each turn says its tier; none is the standard one */
        if (!tier->p)
                return;
        jscan_span_set(buf, sizeof(buf), tier);
        for (char *c = buf; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
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
        thread = p->thread.present ? tokens_of(&p->thread) : u;
        if (p->response_id.p)
                r = key_of_response(&p->response_id, &key);
        else
                r = key_of_totals(st, &thread, &key); /* no id: keyed as its token_count is */
        if (r < 0)
                return r;
        /* a thread total the last token_count already showed: that
         * token_count counted this call (a writer that puts the record
         * after it) */
        if (p->thread.present && tokens_eq(&thread, &st->prev))
                return PARSE_OK;
        if (!(st->flags & CX_EMBEDDED)) {
                r = emit(ctx, ps, st, l, &u, &key, out);
                if (r < 0)
                        return r;
        }
        /* the token_count that follows repeats this call: its total (the
         * thread total here) becomes the baseline, and its last usage is
         * remembered in case the thread total is missing */
        if (p->thread.present)
                st->prev = thread;
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
static bool may_matter(const char *p, size_t n, const void *u)
{
        static const char *const needles[] = {
                "turn_context\"", "token_count\"", "token_usage_record\"", "function_call\"",
                "custom_tool_call\"", "local_shell_call\"", "web_search_call\"", NULL,
        };
        const char *q = p, *end = p + n;

        (void)u;
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
        struct line_f l;
        struct cx_state *st;
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, NULL, &r))
                return r;
        if (!codex_scan_line(line, len, &l)) {
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                return PARSE_MALFORMED;
        }
        st = malloc(sizeof(*st));
        if (!st)
                return -ENOMEM;
        codex_state_load(ps, st);
        r = apply_line(ctx, ps, st, &l, out);
        if (r >= 0)
                codex_state_save(st, ps);
        free(st);
        return r;
}
