/* Copilot CLI events.jsonl lines: the usage record of each model call as a
 * row, the session context carried from session.start/resume, and the
 * premium-request multipliers summed for status. Lines are read by the
 * validating scanner, keeping only the members below (the system prompt
 * and tool output lines are passed over by a prefilter). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "adapt-util.h"
#include "binio.h"
#include "json/bytescan.h"
#include "copilot/record.h"
#include "json/jscan.h"
#include "pricing/pricing.h"

#define TOOLS_MAX ROW_CALLS_MAX

/* ---- what an event holds --------------------------------------------------------- */

struct tool_f {
        struct jscan_span name;
        struct jscan_num n;
};

struct usage_f {
        bool present;
        struct jscan_span model, api_call_id, provider_type, model_provider;
        struct jscan_num input, output, cache_read, cache_write, reasoning, cost;
        bool github_billed; /* isByok: false (GitHub bills it as premium requests) */
        uint32_t n_tools; /* toolCounts members kept (at most TOOLS_MAX) */
        struct tool_f tools[TOOLS_MAX];
};

struct event_f {
        struct jscan_span type, id, agent_id;
        struct jscan_time ts;
        struct jscan_span session_id, selected_model, new_model, cwd; /* of data */
        struct usage_f usage;                                         /* data.usage */
};

static void event_reset(struct event_f *e)
{
        memset(e, 0, offsetof(struct event_f, usage));
        memset(&e->usage, 0, offsetof(struct usage_f, tools)); /* tools: only below n_tools */
}

static bool tool_counts_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct usage_f *f = u;

        if (f->n_tools >= TOOLS_MAX)
                return jscan_skip(s, depth);
        f->tools[f->n_tools].name = *k;
        if (!jscan_read_num(s, &f->tools[f->n_tools].n, depth))
                return false;
        f->n_tools++;
        return true;
}

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct usage_f *f = u;

        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &f->model, depth);
        if (JSCAN_KEY_IS(k, "inputTokens"))
                return jscan_read_num(s, &f->input, depth);
        if (JSCAN_KEY_IS(k, "outputTokens"))
                return jscan_read_num(s, &f->output, depth);
        if (JSCAN_KEY_IS(k, "cacheReadTokens"))
                return jscan_read_num(s, &f->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cacheWriteTokens"))
                return jscan_read_num(s, &f->cache_write, depth);
        if (JSCAN_KEY_IS(k, "reasoningTokens"))
                return jscan_read_num(s, &f->reasoning, depth);
        if (JSCAN_KEY_IS(k, "cost"))
                return jscan_read_num(s, &f->cost, depth);
        if (JSCAN_KEY_IS(k, "apiCallId"))
                return jscan_read_str(s, &f->api_call_id, depth);
        if (JSCAN_KEY_IS(k, "isByok")) {
                f->github_billed = jscan_at(s, 'f');
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "providerType"))
                return jscan_read_str(s, &f->provider_type, depth);
        if (JSCAN_KEY_IS(k, "modelProvider"))
                return jscan_read_str(s, &f->model_provider, depth);
        if (JSCAN_KEY_IS(k, "toolCounts")) {
                f->n_tools = 0;
                if (jscan_at(s, '{'))
                        return jscan_object(s, tool_counts_key, f, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

static bool context_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, u, depth);
        return jscan_skip(s, depth);
}

static bool data_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct event_f *e = u;

        if (JSCAN_KEY_IS(k, "sessionId"))
                return jscan_read_str(s, &e->session_id, depth);
        if (JSCAN_KEY_IS(k, "selectedModel"))
                return jscan_read_str(s, &e->selected_model, depth);
        if (JSCAN_KEY_IS(k, "newModel"))
                return jscan_read_str(s, &e->new_model, depth);
        if (JSCAN_KEY_IS(k, "context")) {
                e->cwd.p = NULL;
                if (jscan_at(s, '{'))
                        return jscan_object(s, context_key, &e->cwd, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "usage")) {
                memset(&e->usage, 0, offsetof(struct usage_f, tools));
                if (jscan_at(s, '{')) {
                        e->usage.present = true;
                        return jscan_object(s, usage_key, &e->usage, depth + 1);
                }
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

static bool event_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct event_f *e = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &e->type, depth);
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &e->id, depth);
        if (JSCAN_KEY_IS(k, "agentId"))
                return jscan_read_str(s, &e->agent_id, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &e->ts, depth);
        if (JSCAN_KEY_IS(k, "data")) {
                if (jscan_at(s, '{'))
                        return jscan_object(s, data_key, e, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

/* ---- the parse state's private part ------------------------------------------------ */

/* u8 version, u64 usage records, u64 premium requests x 1000, u64 records
 * GitHub billed (not BYOK) */
#define PRIV_VERSION 1
#define PRIV_LEN 25

struct cp_priv {
        uint64_t records, premium_milli, github_billed;
};

static struct cp_priv priv_get(const struct parse_state *ps)
{
        struct cp_priv p = { 0 };
        struct br r = { ps->priv, ps->priv_len, 0, false };

        if (ps->priv_len == PRIV_LEN && br_u8(&r) == PRIV_VERSION) {
                p.records = br_u64(&r);
                p.premium_milli = br_u64(&r);
                p.github_billed = br_u64(&r);
        }
        return p;
}

static void priv_put(struct parse_state *ps, const struct cp_priv *p)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

        bw_u8(&w, PRIV_VERSION);
        bw_u64(&w, p->records);
        bw_u64(&w, p->premium_milli);
        bw_u64(&w, p->github_billed);
        ps->priv_len = (uint32_t)w.len;
}

int copilot_premium(const struct parse_state *ps, struct copilot_premium *ret)
{
        struct cp_priv p;

        if (ps->priv_len != PRIV_LEN)
                return -ENOENT;
        p = priv_get(ps);
        *ret = (struct copilot_premium){ .records = p.records, .premium_milli = p.premium_milli,
                                         .github_billed = p.github_billed };
        return 0;
}

/* ---- rows ------------------------------------------------------------------------------ */

/* A token count: absent or null 0; negative, fractional beyond int64 or
 * NaN: UINT64_MAX, which the row bounds refuse (counted, not stored). */
static uint64_t tokens(const struct jscan_num *n)
{
        int64_t v;

        if (!n->present)
                return 0;
        if (!jscan_num_i64(n, &v) || v < 0)
                return UINT64_MAX;
        return (uint64_t)v;
}

static void tools_of(struct usage_row *row, const struct usage_f *u)
{
        uint32_t k = 0;

        for (uint32_t i = 0; i < u->n_tools && k < ROW_CALLS_MAX; i++) {
                int64_t n;
                if (!u->tools[i].name.p || !jscan_num_i64(&u->tools[i].n, &n) || n <= 0)
                        continue;
                for (int64_t j = 0; j < n && k < ROW_CALLS_MAX; j++, k++) {
                        row->calls[k].id[0] = 0; /* Copilot's record names no call ids */
                        jscan_span_set(row->calls[k].name, sizeof(row->calls[k].name), &u->tools[i].name);
                }
        }
        row->n_calls = k;
}

static int key_of(const struct event_f *e, const char *model, uint64_t in, uint64_t outp, uint64_t cr,
                  uint64_t cw, struct row_key *ret)
{
        const struct jscan_span *id = e->usage.api_call_id.p && e->usage.api_call_id.n ? &e->usage.api_call_id : &e->id;
        char buf[512];
        size_t n = jscan_span_decode(id, buf, sizeof(buf) - 1);
        struct keyhash h;
        int r = keyhash_begin(&h, id == &e->id ? COPILOT_KEY_EVENT : COPILOT_KEY_CALL);

        if (r < 0)
                return r;
        buf[n] = 0;
        keyhash_str(&h, buf);
        keyhash_str(&h, model);
        keyhash_u64(&h, in);
        keyhash_u64(&h, outp);
        keyhash_u64(&h, cr);
        keyhash_u64(&h, cw);
        keyhash_end(&h, ret);
        return 0;
}

static int usage_record(const struct source_ctx *ctx, struct parse_state *ps, const struct event_f *e,
                        struct row_batch *out)
{
        const struct usage_f *u = &e->usage;
        struct cp_priv p = priv_get(ps);
        uint64_t in, outp, cr, cw, rs;
        struct usage_row *row;
        bool bad;
        int r;

        if (!u->present)
                return PARSE_OK;
        in = tokens(&u->input);
        outp = tokens(&u->output);
        cr = tokens(&u->cache_read);
        cw = tokens(&u->cache_write);
        rs = tokens(&u->reasoning);
        p.records++;
        p.github_billed += u->github_billed;
        if (u->cost.present && isfinite(u->cost.d) && u->cost.d > 0)
                p.premium_milli += u->cost.d < 1e9 ? (uint64_t)llround(u->cost.d * 1000) : 1000000000000ull;
        priv_put(ps, &p);
        if (in == 0 && outp == 0 && cr == 0 && cw == 0)
                return PARSE_OK; /* nothing spent on tokens */
        if (!e->usage.api_call_id.p && !e->id.p)
                return PARSE_MALFORMED; /* nothing to know the call by */

        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        bad = in == UINT64_MAX || outp == UINT64_MAX || cr == UINT64_MAX || cw == UINT64_MAX || rs == UINT64_MAX;
        row->kind = ROW_KIND_RESPONSE;
        row->cost_source = COST_NONE; /* priced from the table: cost is not dollars */
        row->flags = ROW_F_TOKENS_KNOWN | (e->agent_id.p ? ROW_F_SIDECHAIN : 0) |
                     (e->ts.present ? 0 : ROW_F_TIME_APPROX);
        row->time_ms = e->ts.present ? e->ts.ms : ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
        if (bad) {
                row->input = UINT64_MAX; /* refused by the row bounds, counted */
        } else {
                /* inputTokens includes the cache read and the cache write */
                uint64_t rest = in > cr ? in - cr : 0;
                row->input = rest > cw ? rest - cw : 0;
                row->output = outp;
                row->cache_read = cr;
                row->cache_write = cw;
                row->reasoning = rs < outp ? rs : outp;
                row->total = row->input + cr + cw + outp; /* = inputTokens + outputTokens */
        }
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "copilot");
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        if (u->provider_type.p && u->provider_type.n)
                jscan_span_set(row->provider, sizeof(row->provider), &u->provider_type);
        else if (u->model_provider.p && !jscan_span_eq(&u->model_provider, "other"))
                jscan_span_set(row->provider, sizeof(row->provider), &u->model_provider);
        if (u->model.p && u->model.n)
                jscan_span_set(row->model, sizeof(row->model), &u->model);
        else
                ROW_SET(row->model, ps->model);
        /* Copilot names models as routers do (claude-sonnet-4.5): the row
         * carries the canonical id the price table and the other harnesses
         * use (claude-sonnet-4-5), Copilot's own name as its alias */
        {
                char canon[ROW_MODEL_MAX], region[ROW_MODEL_MAX];
                if (price_normalise_id(row->model, canon, sizeof(canon), region, sizeof(region)) == 0 &&
                    strcmp(canon, row->model) != 0) {
                        ROW_SET(row->model_alias, row->model);
                        row_set_str(row->model, sizeof(row->model), canon, strlen(canon));
                }
        }
        tools_of(row, u);
        r = key_of(e, row->model, in, outp, cr, cw, &row->key);
        if (r < 0) {
                out->n--;
                return r;
        }
        return PARSE_OK;
}

/* ---- events ---------------------------------------------------------------------------- */

/* The directory the file is in: the session id Copilot names it by. */
static void session_from_path(struct parse_state *ps, const struct source_ctx *ctx)
{
        const char *end, *start;

        if (!ctx || !ctx->path || !(end = strrchr(ctx->path, '/')))
                return;
        start = end;
        while (start > ctx->path && start[-1] != '/')
                start--;
        row_set_str(ps->session, sizeof(ps->session), start, (size_t)(end - start));
}

static int apply_event(const struct source_ctx *ctx, struct parse_state *ps, const struct event_f *e,
                       struct row_batch *out)
{
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN)) {
                ps->flags |= PS_HEADER_SEEN;
                if (!e->type.p) {
                        ps->flags |= PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                session_from_path(ps, ctx);
        }
        if (jscan_span_eq(&e->type, "session.usage_record")) {
                r = usage_record(ctx, ps, e, out);
        } else if (jscan_span_eq(&e->type, "session.start") || jscan_span_eq(&e->type, "session.resume")) {
                if (e->session_id.p && e->session_id.n)
                        jscan_span_set(ps->session, sizeof(ps->session), &e->session_id);
                if (e->cwd.p)
                        jscan_span_set(ps->project, sizeof(ps->project), &e->cwd);
                if (e->selected_model.p)
                        jscan_span_set(ps->model, sizeof(ps->model), &e->selected_model);
        } else if (jscan_span_eq(&e->type, "session.model_change") && !e->agent_id.p && e->new_model.p) {
                jscan_span_set(ps->model, sizeof(ps->model), &e->new_model);
        }
        if (r >= 0 && e->ts.present)
                ps->last_time_ms = e->ts.ms;
        return r;
}

/* The events in [p, end): applied in order; a bad part is skipped to the
 * next event start. */
static int parse_values(const struct source_ctx *ctx, struct parse_state *ps, const char *p, const char *end,
                        struct row_batch *out)
{
        static const char resync[] = "{\"type\":\"";
        struct jscan s = { p, end };
        struct event_f ev;
        bool malformed = false;
        int r = PARSE_OK;

        jscan_ws(&s);
        while (s.p < s.end) {
                const char *start = s.p, *next;
                bool is_obj = *s.p == '{', good;

                event_reset(&ev);
                good = is_obj ? jscan_object(&s, event_key, &ev, 0) : jscan_skip(&s, 0);
                if (good && is_obj) {
                        r = apply_event(ctx, ps, &ev, out);
                        if (r < 0 || r == PARSE_NOT_SOURCE)
                                return r;
                        malformed |= r == PARSE_MALFORMED;
                        jscan_ws(&s);
                        continue;
                }
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        /* the first line is not an event */
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                malformed = true;
                if (good) { /* a bare value between events */
                        jscan_ws(&s);
                        continue;
                }
                /* a torn event glued to the next one */
                next = end - start > 1 ? memmem(start + 1, (size_t)(end - start - 1), resync, sizeof(resync) - 1)
                                       : NULL;
                if (!next)
                        break;
                s.p = next;
        }
        return malformed ? PARSE_MALFORMED : PARSE_OK;
}

/* Whether a line can change anything: an event type we read. Quoted
 * needles never match text inside JSON strings (their quotes are escaped). */
static bool may_matter(const char *p, size_t n, const void *u)
{
        static const char needle[] = "\"session.";
        const char *q = p, *end = p + n;

        (void)u;
        while ((q = bytescan_find(q, (size_t)(end - q), needle, sizeof(needle) - 1))) {
                const char *k = q + sizeof(needle) - 1;
                size_t left = (size_t)(end - k);
                if ((left >= 13 && memcmp(k, "usage_record\"", 13) == 0) ||
                    (left >= 6 && memcmp(k, "start\"", 6) == 0) || (left >= 7 && memcmp(k, "resume\"", 7) == 0) ||
                    (left >= 13 && memcmp(k, "model_change\"", 13) == 0))
                        return true;
                q = k;
        }
        return false;
}

int copilot_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line, size_t len,
                       struct row_batch *out)
{
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, NULL, &r))
                return r;
        return parse_values(ctx, ps, line, line + len, out);
}
