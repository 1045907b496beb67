/* The small shared pieces of the adapter interface: capability and reason
 * names, the root list, the per-source parse-state encoding, env access. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "registry.h"

const char *cap_tokens_name(uint8_t v)
{
        switch (v) {
        case CAP_TOKENS_NONE: return "none";
        case CAP_TOKENS_EXACT: return "exact";
        }
        return "unknown";
}

const char *cap_cost_name(uint8_t v)
{
        switch (v) {
        case CAP_COST_NONE: return "none";
        case CAP_COST_VENDOR: return "vendor-reported";
        case CAP_COST_COMPUTED: return "computed";
        }
        return "unknown";
}

const char *cap_activity_name(uint8_t v)
{
        switch (v) {
        case CAP_ACTIVITY_NONE: return "none";
        case CAP_ACTIVITY_EXACT: return "exact";
        case CAP_ACTIVITY_UNATTRIBUTED: return "unattributed";
        case CAP_ACTIVITY_RECORDED: return "recorded";
        }
        return "unknown";
}

const char *cap_reasoning_name(uint8_t v)
{
        switch (v) {
        case CAP_REASONING_NONE: return "none";
        case CAP_REASONING_SUBSET: return "subset-of-output";
        }
        return "unknown";
}

const char *root_reason_name(uint8_t reason)
{
        switch (reason) {
        case ROOT_DEFAULT: return "default";
        case ROOT_ENV: return "env";
        case ROOT_CONFIG: return "config";
        case ROOT_PROFILE: return "profile";
        }
        return "unknown";
}

/* ---- root list ----------------------------------------------------------- */

/* The returned pointer is valid until the next push (the array may move). */
int root_list_push(struct root_list *l, struct root **ret_root)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 8;
                struct root *v = reallocarray(l->v, cap, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
        *ret_root = &l->v[l->n++];
        return 0;
}

void root_list_free(struct root_list *l)
{
        if (!l)
                return;
        free(l->v);
        l->v = NULL;
        l->n = l->cap = 0;
}

/* ---- environment --------------------------------------------------------- */

const char *discover_env_get(const struct discover_env *env, const char *name)
{
        const char *v;

        /* A name outside the registry's table would be a variable that
         * install does not record: refuse it (test-envscan catches callers). */
        if (!env || !env->get || !name || !registry_env_known(name))
                return NULL;
        v = env->get(env->userdata, name);
        return v && *v ? v : NULL;
}

/* ---- parse state encoding -------------------------------------------------
 * Version 1, little-endian:
 *   u8 version(=1) | u32 flags | u32 version | i64 fallback_time_ms |
 *   i64 last_time_ms | 4 x (u16 len, bytes): session, project, provider, model
 * At most 25 + 4*2 + 127+511+63+127 = 861 bytes (< CHECKPOINT_STATE_MAX). */

#define PS_ENCODING_V1 1

struct wbuf {
        uint8_t *p;
        size_t n, cap;
        int err;
};

static void put_bytes(struct wbuf *w, const void *src, size_t n)
{
        if (w->err)
                return;
        if (w->cap - w->n < n) {
                w->err = -ENOBUFS;
                return;
        }
        memcpy(w->p + w->n, src, n);
        w->n += n;
}

static void put_u64(struct wbuf *w, uint64_t v, size_t width)
{
        uint8_t b[8];
        for (size_t i = 0; i < width; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        put_bytes(w, b, width);
}

static void put_str(struct wbuf *w, const char *s, size_t field_cap)
{
        size_t n = strnlen(s, field_cap - 1);
        put_u64(w, n, 2);
        put_bytes(w, s, n);
}

int parse_state_encode(const struct parse_state *ps, uint8_t *buf, size_t cap, size_t *ret_len)
{
        struct wbuf w = { buf, 0, cap, 0 };

        put_u64(&w, PS_ENCODING_V1, 1);
        put_u64(&w, ps->flags, 4);
        put_u64(&w, ps->version, 4);
        put_u64(&w, (uint64_t)ps->fallback_time_ms, 8);
        put_u64(&w, (uint64_t)ps->last_time_ms, 8);
        put_str(&w, ps->session, sizeof(ps->session));
        put_str(&w, ps->project, sizeof(ps->project));
        put_str(&w, ps->provider, sizeof(ps->provider));
        put_str(&w, ps->model, sizeof(ps->model));
        if (w.err)
                return w.err;
        *ret_len = w.n;
        return 0;
}

struct rbuf {
        const uint8_t *p;
        size_t n, pos;
        int err;
};

static uint64_t get_u64(struct rbuf *r, size_t width)
{
        uint64_t v = 0;
        if (r->err || r->n - r->pos < width) {
                r->err = -EBADMSG;
                return 0;
        }
        for (size_t i = 0; i < width; i++)
                v |= (uint64_t)r->p[r->pos + i] << (8 * i);
        r->pos += width;
        return v;
}

static void get_str(struct rbuf *r, char *dst, size_t field_cap)
{
        size_t n = (size_t)get_u64(r, 2);
        if (r->err)
                return;
        if (n >= field_cap || r->n - r->pos < n || memchr(r->p + r->pos, 0, n)) {
                r->err = -EBADMSG;
                return;
        }
        memcpy(dst, r->p + r->pos, n);
        dst[n] = 0;
        r->pos += n;
}

int parse_state_decode(const uint8_t *buf, size_t len, struct parse_state *ret_ps)
{
        struct rbuf r = { buf, len, 0, 0 };
        struct parse_state ps;

        if (!buf)
                return -EBADMSG;
        memset(&ps, 0, sizeof(ps));
        if (get_u64(&r, 1) != PS_ENCODING_V1)
                return -EBADMSG;
        ps.flags = (uint32_t)get_u64(&r, 4);
        ps.version = (uint32_t)get_u64(&r, 4);
        ps.fallback_time_ms = (int64_t)get_u64(&r, 8);
        ps.last_time_ms = (int64_t)get_u64(&r, 8);
        get_str(&r, ps.session, sizeof(ps.session));
        get_str(&r, ps.project, sizeof(ps.project));
        get_str(&r, ps.provider, sizeof(ps.provider));
        get_str(&r, ps.model, sizeof(ps.model));
        if (r.err)
                return r.err;
        if (r.pos != r.n)
                return -EBADMSG;
        *ret_ps = ps;
        return 0;
}
