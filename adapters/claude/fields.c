/* The members of a Claude Code line the parser needs (claude/fields.h),
 * read with the validating scanner; everything else is skipped unbuilt. */
#include <stddef.h>
#include <string.h>

#include "claude/fields.h"
#include "claude/record.h"

/* true/false/null and anything else: *ret is whether it is the literal true */
static bool read_bool(struct jscan *s, bool *ret, int depth)
{
        *ret = s->end - s->p >= 4 && memcmp(s->p, "true", 4) == 0;
        return jscan_skip(s, depth);
}

static bool cache_creation_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_usage_f *f = u;

        if (JSCAN_KEY_IS(k, "ephemeral_5m_input_tokens"))
                return jscan_read_num(s, &f->cw_5m, depth);
        if (JSCAN_KEY_IS(k, "ephemeral_1h_input_tokens"))
                return jscan_read_num(s, &f->cw_1h, depth);
        return jscan_skip(s, depth);
}

static bool details_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_usage_f *f = u;

        if (JSCAN_KEY_IS(k, "thinking_tokens"))
                return jscan_read_num(s, &f->thinking, depth);
        return jscan_skip(s, depth);
}

static bool usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_usage_f *f = u;

        if (JSCAN_KEY_IS(k, "input_tokens"))
                return jscan_read_num(s, &f->input, depth);
        if (JSCAN_KEY_IS(k, "output_tokens"))
                return jscan_read_num(s, &f->output, depth);
        if (JSCAN_KEY_IS(k, "cache_read_input_tokens"))
                return jscan_read_num(s, &f->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cache_creation_input_tokens"))
                return jscan_read_num(s, &f->cache_write, depth);
        if (JSCAN_KEY_IS(k, "service_tier"))
                return jscan_read_str(s, &f->service_tier, depth);
        if (JSCAN_KEY_IS(k, "speed"))
                return jscan_read_str(s, &f->speed, depth);
        if (JSCAN_KEY_IS(k, "cache_creation") && jscan_at(s, '{'))
                return jscan_object(s, cache_creation_key, f, depth + 1);
        if (JSCAN_KEY_IS(k, "output_tokens_details") && jscan_at(s, '{'))
                return jscan_object(s, details_key, f, depth + 1);
        return jscan_skip(s, depth);
}

static bool msg_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_msg_f *m = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &m->id, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &m->model, depth);
        if (JSCAN_KEY_IS(k, "usage")) {
                m->usage = (struct cl_usage_f){ 0 };
                m->usage.present = jscan_at(s, '{');
                if (m->usage.present)
                        return jscan_object(s, usage_key, &m->usage, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "content"))
                return adapt_read_calls(s, "tool_use", &m->calls, depth);
        return jscan_skip(s, depth);
}

/* ---- cost-state ------------------------------------------------------------------ */

struct cs_model_ctx {
        struct cl_cs_model *m;
        struct jscan_num input, output, cache_read, cache_write, cw_5m, cw_1h;
};

static bool cs_usage_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cs_model_ctx *c = u;

        if (JSCAN_KEY_IS(k, "inputTokens"))
                return jscan_read_num(s, &c->input, depth);
        if (JSCAN_KEY_IS(k, "outputTokens"))
                return jscan_read_num(s, &c->output, depth);
        if (JSCAN_KEY_IS(k, "cacheReadInputTokens"))
                return jscan_read_num(s, &c->cache_read, depth);
        if (JSCAN_KEY_IS(k, "cacheCreationInputTokens"))
                return jscan_read_num(s, &c->cache_write, depth);
        if (JSCAN_KEY_IS(k, "cacheCreationEphemeral5mInputTokens"))
                return jscan_read_num(s, &c->cw_5m, depth);
        if (JSCAN_KEY_IS(k, "cacheCreationEphemeral1hInputTokens"))
                return jscan_read_num(s, &c->cw_1h, depth);
        return jscan_skip(s, depth);
}

bool cl_tokens(const struct jscan_num *n, uint64_t *ret)
{
        int64_t v;

        *ret = 0;
        if (!jscan_num_i64(n, &v) || v <= 0)
                return true;
        if ((uint64_t)v > CLAUDE_TOKENS_MAX)
                return false;
        *ret = (uint64_t)v;
        return true;
}

bool cl_cache_writes(const struct jscan_num *total, const struct jscan_num *p5m,
                         const struct jscan_num *p1h, uint64_t *ret_cw, uint64_t *ret_1h)
{
        uint64_t cw, a, b;

        if (!cl_tokens(total, &cw) || !cl_tokens(p5m, &a) || !cl_tokens(p1h, &b))
                return false;
        if (!total->present)
                cw = a + b;
        *ret_cw = cw;
        *ret_1h = b < cw ? b : cw;
        return true;
}

static bool cs_model_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_cost_state *cs = u;
        struct cs_model_ctx c = { 0 };
        struct cl_cs_model m = { 0 };

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        c.m = &m;
        if (!jscan_object(s, cs_usage_key, &c, depth + 1))
                return false;
        jscan_span_set(m.model, sizeof(m.model), k);
        if (!cl_tokens(&c.input, &m.t.input) || !cl_tokens(&c.output, &m.t.output) ||
            !cl_tokens(&c.cache_read, &m.t.cache_read) ||
            !cl_cache_writes(&c.cache_write, &c.cw_5m, &c.cw_1h, &m.t.cache_write, &m.t.cache_write_1h))
                cs->bad = true;
        if (cs->n < CL_CS_MODELS)
                cs->v[cs->n++] = m;
        else
                cs->bad = true;
        return true;
}

static bool line_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct cl_line_f *e = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &e->type, depth);
        if (JSCAN_KEY_IS(k, "subtype"))
                return jscan_read_str(s, &e->subtype, depth);
        if (JSCAN_KEY_IS(k, "sessionId"))
                return jscan_read_str(s, &e->session_id, depth);
        if (JSCAN_KEY_IS(k, "requestSessionId"))
                return jscan_read_str(s, &e->request_session_id, depth);
        if (JSCAN_KEY_IS(k, "cwd"))
                return jscan_read_str(s, &e->cwd, depth);
        if (JSCAN_KEY_IS(k, "requestId"))
                return jscan_read_str(s, &e->request_id, depth);
        if (JSCAN_KEY_IS(k, "uuid"))
                return jscan_read_str(s, &e->uuid, depth);
        if (JSCAN_KEY_IS(k, "agentId"))
                return jscan_read_str(s, &e->agent_id, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &e->ts, depth);
        if (JSCAN_KEY_IS(k, "isSidechain"))
                return read_bool(s, &e->is_sidechain, depth);
        if (JSCAN_KEY_IS(k, "isApiErrorMessage"))
                return read_bool(s, &e->is_api_error, depth);
        if (JSCAN_KEY_IS(k, "message")) {
                memset(&e->msg, 0, offsetof(struct cl_msg_f, calls)); /* calls.v: only below calls.n */
        e->msg.calls.n = 0; /* calls.v: only below calls.n */
                e->msg.calls.n = 0;
                e->msg.present = jscan_at(s, '{');
                if (e->msg.present)
                        return jscan_object(s, msg_key, &e->msg, depth + 1);
                return jscan_skip(s, depth);
        }
        if (JSCAN_KEY_IS(k, "modelUsage")) {
                e->cs.n = 0;
                e->cs.present = jscan_at(s, '{');
                if (e->cs.present)
                        return jscan_object(s, cs_model_key, &e->cs, depth + 1);
                return jscan_skip(s, depth);
        }
        return jscan_skip(s, depth);
}

bool cl_line_scan(struct jscan *s, struct cl_line_f *e)
{
        memset(e, 0, offsetof(struct cl_line_f, msg));
        memset(&e->msg, 0, offsetof(struct cl_msg_f, calls));
        e->cs.present = false;
        e->cs.bad = false;
        e->cs.n = 0;
        return jscan_at(s, '{') && jscan_object(s, line_key, e, 0);
}
