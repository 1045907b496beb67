/* The Codex parser's carried state in its own byte layout (varints), so a
 * checkpoint written by one run is read by the next. */
#include <stddef.h>
#include <string.h>

#include "codex_state.h"

#define PRIV_VERSION 1

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

void codex_state_save(const struct cx_state *s, struct parse_state *ps)
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
                put_str(&w, s->calls[i], CODEX_CALL_NAME_KEPT);
                if (w.full) {
                        w.n = before;
                        break;
                }
        }
        ps->priv_len = (uint32_t)w.n;
}

void codex_state_load(const struct parse_state *ps, struct cx_state *s)
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
