/* The pi session line parser shared by Pi and OpenClaw: header check, usage
 * rows from every place pi writes usage, the carried model, tool calls, and
 * a message-identity dedup key that collapses fork copies and migrations.
 * Lines are read by a small validating JSON scanner that keeps only the
 * fields below and skips the rest (content, images) without building it. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "pi_lines.h"
#include "timefmt.h"

/* Nesting beyond this is refused as malformed (tool arguments stay far
 * below it; it bounds the scanner's recursion). */
#define JSON_MAX_DEPTH 512

/* ---- the scanner ------------------------------------------------------------ */

struct jscan {
        const char *p, *end;
};

/* A string's raw bytes between its quotes (escapes not yet decoded); p is
 * NULL when the member was absent or not a string. */
struct span {
        const char *p;
        size_t n;
};

struct jnum {
        bool present, is_int;
        int64_t i;
        double d;
};

struct jtime {
        bool present;
        int64_t ms;
};

static void ws(struct jscan *s)
{
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
                s->p++;
}

/* At '"': to after the closing quote. */
static bool jstring(struct jscan *s, struct span *out)
{
        const char *start = s->p + 1, *q = start;

        for (;;) {
                size_t bs = 0;
                q = q < s->end ? memchr(q, '"', (size_t)(s->end - q)) : NULL;
                if (!q)
                        return false;
                while (q - bs > start && q[-1 - (ptrdiff_t)bs] == '\\')
                        bs++;
                if (!(bs & 1))
                        break;
                q++;
        }
        if (out) {
                out->p = start;
                out->n = (size_t)(q - start);
        }
        s->p = q + 1;
        return true;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* A JSON number (strict grammar). */
static bool jnumber(struct jscan *s, struct jnum *out)
{
        const char *b = s->p, *p = b, *e = s->end;
        bool is_int = true;

        if (p < e && *p == '-')
                p++;
        if (p >= e || !is_digit(*p))
                return false;
        if (*p == '0')
                p++;
        else
                while (p < e && is_digit(*p))
                        p++;
        if (p < e && *p == '.') {
                p++;
                if (p >= e || !is_digit(*p))
                        return false;
                while (p < e && is_digit(*p))
                        p++;
                is_int = false;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < e && (*p == '+' || *p == '-'))
                        p++;
                if (p >= e || !is_digit(*p))
                        return false;
                while (p < e && is_digit(*p))
                        p++;
                is_int = false;
        }
        s->p = p;
        if (!out)
                return true;
        out->present = true;
        if (is_int && p - b <= 18) {
                const char *q = b;
                int64_t v = 0;
                bool neg = *q == '-';
                for (q += neg; q < p; q++)
                        v = v * 10 + (*q - '0');
                out->is_int = true;
                out->i = neg ? -v : v;
                out->d = (double)out->i;
        } else {
                char buf[64];
                size_t n = (size_t)(p - b);
                if (n >= sizeof(buf)) {
                        out->present = false; /* absurd precision: not a usable number */
                        return true;
                }
                memcpy(buf, b, n);
                buf[n] = 0;
                out->is_int = false;
                out->d = strtod(buf, NULL);
        }
        return true;
}

static bool jliteral(struct jscan *s)
{
        static const char *lits[] = { "true", "false", "null" };
        for (size_t i = 0; i < 3; i++) {
                size_t n = strlen(lits[i]);
                if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lits[i], n) == 0) {
                        s->p += n;
                        return true;
                }
        }
        return false;
}

typedef bool (*jkey_fn)(struct jscan *s, const struct span *key, void *u, int depth);
typedef bool (*jelem_fn)(struct jscan *s, void *u, int depth);

static bool jskip(struct jscan *s, int depth);

/* At '{': calls fn for each member with s at its value; fn consumes it. */
static bool jobject(struct jscan *s, jkey_fn fn, void *u, int depth)
{
        if (depth > JSON_MAX_DEPTH || s->p >= s->end || *s->p != '{')
                return false;
        s->p++;
        ws(s);
        if (s->p < s->end && *s->p == '}') {
                s->p++;
                return true;
        }
        for (;;) {
                struct span key;
                if (s->p >= s->end || *s->p != '"' || !jstring(s, &key))
                        return false;
                ws(s);
                if (s->p >= s->end || *s->p != ':')
                        return false;
                s->p++;
                ws(s);
                if (!(fn ? fn(s, &key, u, depth) : jskip(s, depth)))
                        return false;
                ws(s);
                if (s->p >= s->end)
                        return false;
                if (*s->p == '}') {
                        s->p++;
                        return true;
                }
                if (*s->p != ',')
                        return false;
                s->p++;
                ws(s);
        }
}

/* At '[': calls fn for each element with s at it; fn consumes it. */
static bool jarray(struct jscan *s, jelem_fn fn, void *u, int depth)
{
        if (depth > JSON_MAX_DEPTH || s->p >= s->end || *s->p != '[')
                return false;
        s->p++;
        ws(s);
        if (s->p < s->end && *s->p == ']') {
                s->p++;
                return true;
        }
        for (;;) {
                if (!(fn ? fn(s, u, depth) : jskip(s, depth)))
                        return false;
                ws(s);
                if (s->p >= s->end)
                        return false;
                if (*s->p == ']') {
                        s->p++;
                        return true;
                }
                if (*s->p != ',')
                        return false;
                s->p++;
                ws(s);
        }
}

/* Any value, validated and thrown away. */
static bool jskip(struct jscan *s, int depth)
{
        if (s->p >= s->end)
                return false;
        switch (*s->p) {
        case '"':
                return jstring(s, NULL);
        case '{':
                return jobject(s, NULL, NULL, depth + 1);
        case '[':
                return jarray(s, NULL, NULL, depth + 1);
        case 't':
        case 'f':
        case 'n':
                return jliteral(s);
        default:
                return jnumber(s, NULL);
        }
}

static bool read_str(struct jscan *s, struct span *out, int depth)
{
        if (s->p < s->end && *s->p == '"')
                return jstring(s, out);
        out->p = NULL;
        return jskip(s, depth);
}

static bool read_num(struct jscan *s, struct jnum *out, int depth)
{
        if (s->p < s->end && (*s->p == '-' || is_digit(*s->p))) {
                *out = (struct jnum){ 0 };
                return jnumber(s, out);
        }
        out->present = false;
        return jskip(s, depth);
}

/* An integer-valued number (ints, and finite doubles rounded). */
static bool num_i64(const struct jnum *n, int64_t *ret)
{
        if (!n->present)
                return false;
        if (n->is_int) {
                *ret = n->i;
                return true;
        }
        if (!isfinite(n->d) || n->d > 9.2e18 || n->d < -9.2e18)
                return false;
        *ret = llround(n->d);
        return true;
}

/* A time: epoch ms as a number, or an RFC 3339 string. */
static bool read_time(struct jscan *s, struct jtime *out, int depth)
{
        out->present = false;
        if (s->p < s->end && *s->p == '"') {
                struct span sp;
                if (!jstring(s, &sp))
                        return false;
                out->present = timefmt_parse_rfc3339(sp.p, sp.n, &out->ms) == 0;
                return true;
        }
        struct jnum n;
        if (!read_num(s, &n, depth))
                return false;
        out->present = num_i64(&n, &out->ms);
        return true;
}

/* ---- strings out of spans ---------------------------------------------------- */

static void put_utf8(char *o, size_t *n, size_t cap, uint32_t c)
{
        char b[4];
        size_t k;
        if (c < 0x80) {
                b[0] = (char)c;
                k = 1;
        } else if (c < 0x800) {
                b[0] = (char)(0xC0 | (c >> 6));
                b[1] = (char)(0x80 | (c & 0x3F));
                k = 2;
        } else if (c < 0x10000) {
                b[0] = (char)(0xE0 | (c >> 12));
                b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
                b[2] = (char)(0x80 | (c & 0x3F));
                k = 3;
        } else {
                b[0] = (char)(0xF0 | (c >> 18));
                b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
                b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
                b[3] = (char)(0x80 | (c & 0x3F));
                k = 4;
        }
        if (*n + k <= cap) {
                memcpy(o + *n, b, k);
                *n += k;
        }
}

static int hex4(const char *p, const char *end, uint32_t *ret)
{
        uint32_t v = 0;
        if (end - p < 4)
                return -1;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t)(c - 'A' + 10);
                else
                        return -1;
        }
        *ret = v;
        return 0;
}

/* Decodes a span into buf (at most cap bytes, no NUL); returns the length. */
static size_t span_decode(const struct span *sp, char *buf, size_t cap)
{
        const char *p = sp->p, *end = sp->p + sp->n;
        size_t n = 0;

        if (!p)
                return 0;
        if (!memchr(p, '\\', sp->n)) {
                n = sp->n < cap ? sp->n : cap;
                memcpy(buf, p, n);
                return n;
        }
        while (p < end && n < cap) {
                if (*p != '\\') {
                        buf[n++] = *p++;
                        continue;
                }
                if (++p >= end)
                        break;
                char c = *p++;
                switch (c) {
                case 'b': buf[n++] = '\b'; break;
                case 'f': buf[n++] = '\f'; break;
                case 'n': buf[n++] = '\n'; break;
                case 'r': buf[n++] = '\r'; break;
                case 't': buf[n++] = '\t'; break;
                case 'u': {
                        uint32_t cp, lo;
                        if (hex4(p, end, &cp) < 0)
                                break;
                        p += 4;
                        if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                            hex4(p + 2, end, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                p += 6;
                        }
                        put_utf8(buf, &n, cap, cp);
                        break;
                }
                default: buf[n++] = c; break; /* \" \\ \/ */
                }
        }
        return n;
}

/* Into a fixed row/state field (truncated on a UTF-8 boundary). */
static void span_set(char *dst, size_t cap, const struct span *sp)
{
        char buf[ROW_PROJECT_MAX + 8];
        size_t n = span_decode(sp, buf, sizeof(buf));
        row_set_str(dst, cap, buf, n);
}

static bool span_eq(const struct span *sp, const char *lit)
{
        size_t n = strlen(lit);
        char buf[64];

        if (!sp->p)
                return false;
        if (sp->n == n && memcmp(sp->p, lit, n) == 0)
                return true;
        if (sp->n < n || !memchr(sp->p, '\\', sp->n) || n > sizeof(buf))
                return false;
        return span_decode(sp, buf, sizeof(buf)) == n && memcmp(buf, lit, n) == 0;
}

#define KEY_IS(k, lit) ((k)->n == sizeof(lit) - 1 && memcmp((k)->p, lit, sizeof(lit) - 1) == 0)

/* ---- what an entry holds ------------------------------------------------------- */

struct usage_f {
        bool present; /* an object */
        struct jnum input, output, cache_read, cache_write, total, reasoning, reasoning_tokens;
        struct jnum cost_total;
};

struct call_f {
        struct span id, name, ns;
};

struct msg_f {
        bool present;
        struct span role, provider, model, response_id;
        struct jtime ts;
        struct usage_f usage;
        uint32_t n_calls; /* toolCall blocks in content (stored: at most ROW_CALLS_MAX) */
        struct call_f calls[ROW_CALLS_MAX];
};

struct entry_f {
        struct span type, id, cwd, provider, model_id, model, custom_type;
        struct jnum version;
        struct jtime ts;
        struct usage_f usage;
        struct msg_f msg;
        bool has_data;
        struct span data_provider, data_model_id;
};

static bool cost_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        if (KEY_IS(k, "total"))
                return read_num(s, u, depth);
        return jskip(s, depth);
}

static bool usage_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        struct usage_f *f = u;

        if (KEY_IS(k, "input"))
                return read_num(s, &f->input, depth);
        if (KEY_IS(k, "output"))
                return read_num(s, &f->output, depth);
        if (KEY_IS(k, "cacheRead"))
                return read_num(s, &f->cache_read, depth);
        if (KEY_IS(k, "cacheWrite"))
                return read_num(s, &f->cache_write, depth);
        if (KEY_IS(k, "totalTokens"))
                return read_num(s, &f->total, depth);
        if (KEY_IS(k, "reasoning"))
                return read_num(s, &f->reasoning, depth);
        if (KEY_IS(k, "reasoningTokens"))
                return read_num(s, &f->reasoning_tokens, depth);
        if (KEY_IS(k, "cost")) {
                f->cost_total.present = false;
                if (s->p < s->end && *s->p == '{')
                        return jobject(s, cost_key, &f->cost_total, depth + 1);
                return jskip(s, depth);
        }
        return jskip(s, depth);
}

static bool read_usage(struct jscan *s, struct usage_f *f, int depth)
{
        *f = (struct usage_f){ 0 };
        if (s->p < s->end && *s->p == '{') {
                f->present = true;
                return jobject(s, usage_key, f, depth + 1);
        }
        return jskip(s, depth);
}

struct block_f {
        struct span type;
        struct call_f c;
};

static bool block_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        struct block_f *b = u;

        if (KEY_IS(k, "type"))
                return read_str(s, &b->type, depth);
        if (KEY_IS(k, "id"))
                return read_str(s, &b->c.id, depth);
        if (KEY_IS(k, "name"))
                return read_str(s, &b->c.name, depth);
        if (KEY_IS(k, "namespace"))
                return read_str(s, &b->c.ns, depth);
        return jskip(s, depth);
}

static bool content_elem(struct jscan *s, void *u, int depth)
{
        struct msg_f *m = u;
        struct block_f b = { 0 };

        if (s->p >= s->end || *s->p != '{')
                return jskip(s, depth);
        if (!jobject(s, block_key, &b, depth + 1))
                return false;
        if (span_eq(&b.type, "toolCall")) {
                /* stored calls are capped at ROW_CALLS_MAX (see add_calls) */
                if (m->n_calls < ROW_CALLS_MAX)
                        m->calls[m->n_calls] = b.c;
                m->n_calls++;
        }
        return true;
}

static bool msg_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        struct msg_f *m = u;

        if (KEY_IS(k, "role"))
                return read_str(s, &m->role, depth);
        if (KEY_IS(k, "provider"))
                return read_str(s, &m->provider, depth);
        if (KEY_IS(k, "model"))
                return read_str(s, &m->model, depth);
        if (KEY_IS(k, "responseId"))
                return read_str(s, &m->response_id, depth);
        if (KEY_IS(k, "timestamp"))
                return read_time(s, &m->ts, depth);
        if (KEY_IS(k, "usage"))
                return read_usage(s, &m->usage, depth);
        if (KEY_IS(k, "content")) {
                m->n_calls = 0;
                if (s->p < s->end && *s->p == '[')
                        return jarray(s, content_elem, m, depth + 1);
                return jskip(s, depth);
        }
        return jskip(s, depth);
}

static bool data_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        struct entry_f *e = u;

        if (KEY_IS(k, "provider"))
                return read_str(s, &e->data_provider, depth);
        if (KEY_IS(k, "modelId"))
                return read_str(s, &e->data_model_id, depth);
        return jskip(s, depth);
}

static bool entry_key(struct jscan *s, const struct span *k, void *u, int depth)
{
        struct entry_f *e = u;

        if (KEY_IS(k, "type"))
                return read_str(s, &e->type, depth);
        if (KEY_IS(k, "id"))
                return read_str(s, &e->id, depth);
        if (KEY_IS(k, "cwd"))
                return read_str(s, &e->cwd, depth);
        if (KEY_IS(k, "provider"))
                return read_str(s, &e->provider, depth);
        if (KEY_IS(k, "modelId"))
                return read_str(s, &e->model_id, depth);
        if (KEY_IS(k, "model"))
                return read_str(s, &e->model, depth);
        if (KEY_IS(k, "customType"))
                return read_str(s, &e->custom_type, depth);
        if (KEY_IS(k, "version"))
                return read_num(s, &e->version, depth);
        if (KEY_IS(k, "timestamp"))
                return read_time(s, &e->ts, depth);
        if (KEY_IS(k, "usage"))
                return read_usage(s, &e->usage, depth);
        if (KEY_IS(k, "message")) {
                memset(&e->msg, 0, offsetof(struct msg_f, calls));
                if (s->p < s->end && *s->p == '{') {
                        e->msg.present = true;
                        return jobject(s, msg_key, &e->msg, depth + 1);
                }
                return jskip(s, depth);
        }
        if (KEY_IS(k, "data")) {
                e->data_provider.p = e->data_model_id.p = NULL;
                e->has_data = s->p < s->end && *s->p == '{';
                if (e->has_data)
                        return jobject(s, data_key, e, depth + 1);
                return jskip(s, depth);
        }
        return jskip(s, depth);
}

/* ---- usage -------------------------------------------------------------------- */

struct pi_usage {
        uint64_t input, output, cache_read, cache_write, reasoning, total;
        int64_t cost_nano;
        uint8_t cost_source;
};

/* A token count: a non-negative number, else 0. */
static uint64_t tokens(const struct jnum *n, bool *ret_present)
{
        int64_t v;
        bool ok = num_i64(n, &v);
        if (ret_present)
                *ret_present = ok;
        return ok && v > 0 ? (uint64_t)v : 0;
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
                if (isfinite(c) && c != 0 && fabs(c) < 9.0e12) {
                        x.cost_nano = llround(c * 1e9);
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
        const struct span *response_id; /* NULL or absent: none */
        const struct pi_usage *usage;
        const struct msg_f *calls; /* assistant message: its tool calls */
};

static void add_calls(struct usage_row *row, const struct msg_f *m)
{
        /* n_calls is capped at ROW_CALLS_MAX so every consumer can index
         * calls[] by it (beyond 64 calls in one message only the per-call
         * cost share gets coarser). */
        uint32_t n = m->n_calls < ROW_CALLS_MAX ? m->n_calls : ROW_CALLS_MAX;

        for (uint32_t i = 0; i < n; i++) {
                const struct call_f *c = &m->calls[i];
                char buf[2 * CALL_NAME_MAX + 2];
                size_t k = 0;

                span_set(row->calls[i].id, sizeof(row->calls[i].id), &c->id);
                if (c->ns.p && c->ns.n > 0) {
                        k = span_decode(&c->ns, buf, CALL_NAME_MAX);
                        buf[k++] = '/';
                }
                k += span_decode(&c->name, buf + k, CALL_NAME_MAX);
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
                rid_n = span_decode(ev->response_id, rid, sizeof(rid) - 1);
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

static bool is_synthetic(const struct pi_flavor *fl, const struct span *provider,
                         const struct span *model)
{
        return fl->skip_synthetic_openclaw && span_eq(provider, "openclaw") &&
               (span_eq(model, "delivery-mirror") || span_eq(model, "gateway-injected"));
}

static void carry_model(struct parse_state *ps, const struct span *provider,
                        const struct span *model)
{
        if (provider->p)
                span_set(ps->provider, sizeof(ps->provider), provider);
        if (model->p)
                span_set(ps->model, sizeof(ps->model), model);
}

static int64_t fallback_time(const struct parse_state *ps)
{
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

static int parse_header(struct parse_state *ps, const struct entry_f *e)
{
        int64_t v;

        if (!span_eq(&e->type, "session") || !e->id.p) {
                ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                return PARSE_NOT_SOURCE;
        }
        ps->flags |= PS_HEADER_SEEN;
        ps->version = num_i64(&e->version, &v) && v > 0 && v < 1000000 ? (uint32_t)v : 1;
        span_set(ps->session, sizeof(ps->session), &e->id);
        span_set(ps->project, sizeof(ps->project), &e->cwd);
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
                     const struct span *provider, const struct span *model,
                     const struct jtime *own, struct row_batch *out)
{
        struct pi_usage u;
        char p[ROW_PROVIDER_MAX], m[ROW_MODEL_MAX];
        struct pi_event ev = { .kind = kind, .usage = &u, .provider = ps->provider, .model = ps->model };

        if (is_synthetic(fl, provider, model) || !usage_get(uf, &u))
                return PARSE_OK;
        if (provider->p) {
                span_set(p, sizeof(p), provider);
                ev.provider = p;
        }
        if (model->p) {
                span_set(m, sizeof(m), model);
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
        struct jtime t = m->ts.present ? m->ts : e->ts;

        if (span_eq(&m->role, "assistant")) {
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
        if (span_eq(&m->role, "toolResult") && m->usage.present)
                return usage_row(fl, ctx, ps, ROW_KIND_TOOL_RESULT, &m->usage, &m->provider, &m->model,
                                 &t, out);
        return PARSE_OK; /* user, system, bashExecution, custom, unknown roles */
}

static int apply_entry(const struct pi_flavor *fl, const struct source_ctx *ctx,
                       struct parse_state *ps, const struct entry_f *e, struct row_batch *out)
{
        static const struct span none = { NULL, 0 };
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN))
                return parse_header(ps, e);
        if (!e->type.p)
                return PARSE_OK;

        if (span_eq(&e->type, "message")) {
                if (e->msg.present)
                        r = parse_message(fl, ctx, ps, e, out);
        } else if (span_eq(&e->type, "model_change")) {
                if (!is_synthetic(fl, &e->provider, &e->model_id))
                        carry_model(ps, &e->provider, &e->model_id);
        } else if (span_eq(&e->type, "compaction")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_COMPACTION, &e->usage, &none, &none, &e->ts, out);
        } else if (span_eq(&e->type, "branch_summary")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_BRANCH_SUMMARY, &e->usage, &none, &none, &e->ts, out);
        } else if (span_eq(&e->type, "usage")) {
                r = usage_row(fl, ctx, ps, ROW_KIND_USAGE_ENTRY, &e->usage, &e->provider, &e->model,
                              &e->ts, out);
        } else if (span_eq(&e->type, "custom") && fl->model_snapshot &&
                   span_eq(&e->custom_type, "model-snapshot") && e->has_data) {
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

        ws(&s);
        while (s.p < s.end) {
                const char *start = s.p;
                bool good, is_obj = *s.p == '{';

                memset(e, 0, offsetof(struct entry_f, msg));
                memset(&e->msg, 0, offsetof(struct msg_f, calls));
                e->has_data = false;
                e->data_provider.p = e->data_model_id.p = NULL;
                good = is_obj ? jobject(&s, entry_key, e, 0) : jskip(&s, 0);
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
                ws(&s);
        }
        if (r < 0 || r == PARSE_NOT_SOURCE)
                return r;
        return malformed ? PARSE_MALFORMED : PARSE_OK;
}

/* Whether a line can change anything: usage of any kind (the key "usage"
 * or the type value "usage"), a model change, or a model snapshot. Quoted
 * needles never match text inside JSON strings (their quotes are escaped). */
static bool may_matter(const char *p, size_t n, bool snapshot)
{
        static const char usage[] = "\"usage\"", model[] = "\"model";
        const char *q = p, *end = p + n;

        if (memmem(p, n, usage, sizeof(usage) - 1))
                return true;
        while ((q = memmem(q, (size_t)(end - q), model, sizeof(model) - 1))) {
                size_t left;
                q += sizeof(model) - 1;
                left = (size_t)(end - q);
                if (left >= 8 && memcmp(q, "_change\"", 8) == 0)
                        return true;
                if (snapshot && left >= 10 && memcmp(q, "-snapshot\"", 10) == 0)
                        return true;
        }
        return false;
}

int pi_parse_line(const struct pi_flavor *fl, const struct source_ctx *ctx,
                  struct parse_state *ps, const char *line, size_t len, struct row_batch *out)
{
        if (ps->flags & PS_NOT_SOURCE)
                return PARSE_NOT_SOURCE;
        len = lines_trim(line, len, &line);
        if (len == 0)
                return PARSE_OK;
        if ((ps->flags & PS_HEADER_SEEN) && !may_matter(line, len, fl->model_snapshot))
                return line[0] == '{' && line[len - 1] == '}' ? PARSE_OK : PARSE_MALFORMED;
        return parse_values(fl, ctx, ps, line, line + len, out);
}

int pi_parse_entry(const struct pi_flavor *fl, const struct source_ctx *ctx,
                   struct parse_state *ps, struct json_object *entry, struct row_batch *out)
{
        const char *text;
        size_t len = 0;

        if (ps->flags & PS_NOT_SOURCE)
                return PARSE_NOT_SOURCE;
        if (!entry || !json_object_is_type(entry, json_type_object)) {
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                return PARSE_MALFORMED;
        }
        /* one code path for both: the entry as (plain) JSON text */
        text = json_object_to_json_string_length(entry, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                 &len);
        if (!text)
                return -ENOMEM;
        return parse_values(fl, ctx, ps, text, text + len, out);
}
