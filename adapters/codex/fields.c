/* Reading a Codex rollout line's members: each object's wanted keys, the
 * rest validated and skipped. */
#include <string.h>

#include "codex/fields.h"

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

bool codex_scan_line(const char *line, size_t len, struct line_f *ret)
{
        struct jscan s = { line, line + len };

        *ret = (struct line_f){ 0 };
        if (!jscan_at(&s, '{') || !jscan_object(&s, line_key, ret, 0))
                return false;
        jscan_ws(&s);
        return s.p == s.end;
}
