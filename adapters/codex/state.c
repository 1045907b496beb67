/* The Codex parser's carried state in its own byte layout (varints), so a
 * checkpoint written by one run is read by the next. */
#include <stddef.h>
#include <string.h>

#include "binio.h"
#include "codex/state.h"

#define PRIV_VERSION 1

/* A string as u8 length + bytes (cut to max), this layout's own form. */
static void put_str(struct bw *w, const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n > max)
                n = max;
        bw_u8(w, (uint8_t)n);
        bw_bytes(w, s, n);
}

static void get_str(struct br *r, char *dst, size_t cap)
{
        size_t n = br_u8(r), k = 0;
        for (size_t i = 0; i < n; i++) {
                char c = (char)br_u8(r);
                if (k + 1 < cap)
                        dst[k++] = c;
        }
        dst[k] = 0;
}

static void tokens_put(struct bw *w, const struct tokens *t)
{
        bw_var(w, t->input);
        bw_var(w, t->cached);
        bw_var(w, t->cache_write);
        bw_var(w, t->output);
        bw_var(w, t->reasoning);
        bw_var(w, t->total);
}

static void tokens_get(struct br *r, struct tokens *t)
{
        t->input = br_var(r);
        t->cached = br_var(r);
        t->cache_write = br_var(r);
        t->output = br_var(r);
        t->reasoning = br_var(r);
        t->total = br_var(r);
}

void codex_state_save(const struct cx_state *s, struct parse_state *ps)
{
        struct bw w = { ps->priv, 0, PS_PRIV_MAX, false };

        bw_u8(&w, PRIV_VERSION);
        bw_u8(&w, s->flags);
        bw_u64(&w, s->scope);
        bw_var(&w, (uint64_t)s->meta_ms);
        tokens_put(&w, &s->prev);
        if (s->flags & CX_PENDING)
                bw_u64(&w, s->pending_usage);
        put_str(&w, s->tier, ROW_TIER_MAX - 1);
        bw_var(&w, s->n_calls);
        for (uint32_t i = 0; i < s->n_calls && i < ROW_CALLS_MAX; i++) {
                size_t before = w.len;
                put_str(&w, s->calls[i], CODEX_CALL_NAME_KEPT);
                if (w.overflow) {
                        w.len = before; /* the names that fit */
                        w.overflow = false;
                        break;
                }
        }
        ps->priv_len = (uint32_t)w.len;
}

void codex_state_load(const struct parse_state *ps, struct cx_state *s)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };

        memset(s, 0, offsetof(struct cx_state, calls));
        if (ps->priv_len == 0 || br_u8(&r) != PRIV_VERSION)
                return;
        s->flags = br_u8(&r);
        s->scope = br_u64(&r);
        s->meta_ms = (int64_t)br_var(&r);
        tokens_get(&r, &s->prev);
        if (s->flags & CX_PENDING)
                s->pending_usage = br_u64(&r);
        get_str(&r, s->tier, sizeof(s->tier));
        s->n_calls = (uint32_t)br_var(&r);
        if (r.bad) {
                memset(s, 0, offsetof(struct cx_state, calls));
                return;
        }
        if (s->n_calls > ROW_CALLS_MAX)
                s->n_calls = ROW_CALLS_MAX;
        for (uint32_t i = 0; i < s->n_calls; i++) {
                if (r.pos >= r.len) {
                        s->calls[i][0] = 0;
                        continue;
                }
                get_str(&r, s->calls[i], sizeof(s->calls[i]));
        }
}
