/* Claude Code transcript lines to usage rows: assistant responses keyed by
 * message.id and upserted (split and streamed lines, fork and sub-agent
 * copies count once), read with the validating scanner (common/json/jscan.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "adapt-util.h"
#include "claude/acct.h"
#include "claude/fields.h"
#include "claude/record.h"
#include "json/jscan.h"
#include "lines.h"

_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "row fields fit jscan_span_set");

/* ---- rows ------------------------------------------------------------------------ */

/* The price-relevant tier: "fast" (usage.speed) beats a service tier;
 * "standard" and unknown values are "". */
static void set_tier(char *dst, size_t cap, const struct cl_usage_f *u)
{
        static const char *const known[] = { "priority", "flex", "batch", NULL };

        dst[0] = 0;
        if (jscan_span_eq(&u->speed, "fast")) {
                row_set_str(dst, cap, "fast", 4);
                return;
        }
        for (size_t i = 0; known[i]; i++)
                if (jscan_span_eq(&u->service_tier, known[i])) {
                        row_set_str(dst, cap, known[i], strlen(known[i]));
                        return;
                }
}

static bool span_has(const struct jscan_span *sp)
{
        return sp->p && sp->n > 0;
}

static void add_calls(struct usage_row *row, const struct cl_msg_f *m)
{
        uint32_t n = adapt_calls_stored(&m->calls);

        for (uint32_t i = 0; i < n; i++) {
                jscan_span_set(row->calls[i].id, sizeof(row->calls[i].id), &m->calls.v[i].id);
                jscan_span_set(row->calls[i].name, sizeof(row->calls[i].name), &m->calls.v[i].name);
        }
        row->n_calls = n;
}

/* Whether a response spawned a sub-agent (its calls are in another file). */
static bool spawns_agent(const struct cl_msg_f *m)
{
        uint32_t n = adapt_calls_stored(&m->calls);

        for (uint32_t i = 0; i < n; i++)
                if (jscan_span_eq(&m->calls.v[i].name, "Agent") || jscan_span_eq(&m->calls.v[i].name, "Task"))
                        return true;
        return false;
}

static void row_key_of(const struct cl_line_f *e, const struct usage_row *row, struct row_key *ret)
{
        struct keyhash h;
        char buf[256];
        size_t n;

        if (span_has(&e->msg.id) || span_has(&e->request_id)) {
                const struct jscan_span *id = span_has(&e->msg.id) ? &e->msg.id : &e->request_id;
                (void)keyhash_begin(&h, span_has(&e->msg.id) ? CLAUDE_KEY_MSG : CLAUDE_KEY_REQ);
                n = jscan_span_decode(id, buf, sizeof(buf) - 1);
                buf[n] = 0;
                keyhash_str(&h, buf);
        } else {
                (void)keyhash_begin(&h, CLAUDE_KEY_LINE);
                keyhash_str(&h, row->model);
                keyhash_u64(&h, (uint64_t)row->time_ms);
                keyhash_u64(&h, row->input);
                keyhash_u64(&h, row->output);
                keyhash_u64(&h, row->cache_read);
                keyhash_u64(&h, row->cache_write);
        }
        keyhash_end(&h, ret);
}

static int64_t fallback_time(const struct parse_state *ps)
{
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

static int assistant_row(const struct source_ctx *ctx, struct parse_state *ps,
                         const struct cl_line_f *e, struct cl_acct *acct, struct row_batch *out)
{
        const struct cl_usage_f *u = &e->msg.usage;
        struct usage_row *row;
        uint64_t in, o, cr, cw, cw1h, think;
        bool copy;
        int r;

        if (!e->msg.present || !u->present || e->is_api_error ||
            jscan_span_eq(&e->msg.model, "<synthetic>"))
                return PARSE_OK;
        if (!cl_tokens(&u->input, &in) || !cl_tokens(&u->output, &o) || !cl_tokens(&u->cache_read, &cr) ||
            !cl_tokens(&u->thinking, &think) || !cl_cache_writes(&u->cache_write, &u->cw_5m, &u->cw_1h, &cw, &cw1h))
                return PARSE_MALFORMED;
        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (e->is_sidechain ? ROW_F_SIDECHAIN : 0) |
                     (e->ts.present ? 0 : ROW_F_TIME_APPROX);
        row->kind = e->agent_id.p && e->agent_id.n > 9 && memcmp(e->agent_id.p, "acompact-", 9) == 0
                            ? ROW_KIND_COMPACTION
                            : ROW_KIND_MESSAGE;
        row->cost_source = COST_NONE;
        row->time_ms = e->ts.present ? e->ts.ms : fallback_time(ps);
        row->input = in;
        row->output = o;
        row->cache_read = cr;
        row->cache_write = cw;
        row->cache_write_1h = cw1h;
        row->reasoning = think < o ? think : o;
        row->total = in + o + cr + cw;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "claude");
        ROW_SET(row->provider, "anthropic");
        jscan_span_set(row->model, sizeof(row->model), &e->msg.model);
        /* the session that made the call: a fork copy names it in
         * requestSessionId (its sessionId is the fork's) */
        copy = span_has(&e->request_session_id) &&
               !(e->session_id.p && e->session_id.n == e->request_session_id.n &&
                 memcmp(e->session_id.p, e->request_session_id.p, e->session_id.n) == 0);
        if (span_has(&e->request_session_id))
                jscan_span_set(row->session, sizeof(row->session), &e->request_session_id);
        else
                ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        set_tier(row->tier, sizeof(row->tier), u);
        add_calls(row, &e->msg);
        row_key_of(e, row, &row->key);
        cl_acct_call(acct, &row->key, row, copy, spawns_agent(&e->msg));
        return PARSE_OK;
}

/* The compaction the cost-state difference shows, if it is exact. */
static int cost_state_row(const struct source_ctx *ctx, struct parse_state *ps,
                          const struct cl_line_f *e, struct cl_acct *acct, struct row_batch *out)
{
        struct cl_compaction c;
        struct usage_row *row;
        struct keyhash h;
        int r;

        if (!cl_acct_cost_state(acct, &e->cs, ps->model, &c))
                return e->cs.bad ? PARSE_MALFORMED : PARSE_OK;
        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        /* insert-if-absent: the first computation of it stands */
        row->flags = ROW_F_TOKENS_KNOWN | (c.time_ms ? 0 : ROW_F_TIME_APPROX);
        row->kind = ROW_KIND_COMPACTION;
        row->time_ms = c.time_ms ? c.time_ms : (e->ts.present ? e->ts.ms : fallback_time(ps));
        row->input = c.t.input;
        row->output = c.t.output;
        row->cache_read = c.t.cache_read;
        row->cache_write = c.t.cache_write;
        row->cache_write_1h = c.t.cache_write_1h;
        row->total = c.t.input + c.t.output + c.t.cache_read + c.t.cache_write;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "claude");
        ROW_SET(row->provider, "anthropic");
        ROW_SET(row->model, c.model);
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        (void)keyhash_begin(&h, CLAUDE_KEY_COMPACT);
        keyhash_str(&h, row->session);
        keyhash_str(&h, row->model);
        keyhash_u64(&h, c.boundary_hash);
        keyhash_end(&h, &row->key);
        return e->cs.bad ? PARSE_MALFORMED : PARSE_OK;
}

static int apply_line(const struct source_ctx *ctx, struct parse_state *ps, const struct cl_line_f *e,
                      struct row_batch *out)
{
        struct cl_acct acct;
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN)) {
                ps->flags |= PS_HEADER_SEEN;
                if (!e->type.p) {
                        ps->flags |= PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
        }
        if (!e->type.p)
                return PARSE_OK;
        /* the file's session and project, carried for lines without them */
        if (span_has(&e->session_id))
                jscan_span_set(ps->session, sizeof(ps->session), &e->session_id);
        if (span_has(&e->cwd))
                jscan_span_set(ps->project, sizeof(ps->project), &e->cwd);

        cl_acct_load(ps, &acct);
        if (jscan_span_eq(&e->type, "assistant")) {
                r = assistant_row(ctx, ps, e, &acct, out);
                /* the main chain's current model (a compaction uses it) */
                if (r == PARSE_OK && !e->is_sidechain && span_has(&e->msg.model) &&
                    !jscan_span_eq(&e->msg.model, "<synthetic>"))
                        jscan_span_set(ps->model, sizeof(ps->model), &e->msg.model);
        } else if (jscan_span_eq(&e->type, "system") && jscan_span_eq(&e->subtype, "compact_boundary")) {
                if (!e->is_sidechain)
                        cl_acct_boundary(&acct, &e->uuid, e->ts.present ? e->ts.ms : 0);
        } else if (jscan_span_eq(&e->type, "cost-state") && e->cs.present) {
                r = cost_state_row(ctx, ps, e, &acct, out);
        }
        /* user, attachment, progress, api-request*, summary, unknown types:
         * no call (a user line's Agent toolUseResult.usage repeats the
         * sub-agent's last call, which its own file holds) */
        if (r >= 0)
                cl_acct_store(ps, &acct);
        if (r >= 0 && e->ts.present)
                ps->last_time_ms = e->ts.ms;
        return r;
}

/* ---- lines ------------------------------------------------------------------------ */

/* Whether a line can matter: an assistant response, a cost-state or a
 * compaction boundary (quoted needles; text inside strings has its quotes
 * escaped, and a false hit only costs a full parse). */
static bool may_matter(const char *p, size_t n, const void *u)
{
        const char *q = p, *end = p + n;

        (void)u;
        while ((q = memchr(q, '"', (size_t)(end - q)))) {
                const char *k = ++q;
                size_t left = (size_t)(end - k);
                if (left >= 10 && memcmp(k, "assistant\"", 10) == 0)
                        return true;
                if (left >= 11 && memcmp(k, "cost-state\"", 11) == 0)
                        return true;
                if (left >= 17 && memcmp(k, "compact_boundary\"", 17) == 0)
                        return true;
        }
        return false;
}

/* Where the next line-like object starts after a torn one: Claude Code
 * lines begin with {"parentUuid": or {"type": (NULL: none). */
static const char *resync(const char *p, const char *end)
{
        static const char *const starts[] = { "{\"parentUuid\":", "{\"type\":" };
        const char *best = NULL;

        for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
                const char *q = end - p > 0 ? memmem(p, (size_t)(end - p), starts[i], strlen(starts[i])) : NULL;
                if (q && (!best || q < best))
                        best = q;
        }
        return best;
}

int claude_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                      size_t len, struct row_batch *out)
{
        struct cl_line_f e;
        struct jscan s;
        bool malformed = false;
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, NULL, &r))
                return r;

        /* one object per line; a torn line with the next one glued to it
         * (a crash mid-write, then an append) keeps the objects after it */
        s = (struct jscan){ line, line + len };
        while (s.p < s.end) {
                const char *start = s.p;
                bool good;

                good = cl_line_scan(&s, &e);
                if (!good) {
                        if (!(ps->flags & PS_HEADER_SEEN)) {
                                ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                                return PARSE_NOT_SOURCE;
                        }
                        malformed = true;
                        s.p = resync(start + 1, s.end);
                        if (!s.p)
                                break;
                        continue;
                }
                r = apply_line(ctx, ps, &e, out);
                if (r < 0 || r == PARSE_NOT_SOURCE)
                        return r;
                if (r == PARSE_MALFORMED)
                        malformed = true;
                jscan_ws(&s);
        }
        return malformed ? PARSE_MALFORMED : PARSE_OK;
}
