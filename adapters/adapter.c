/* The small shared pieces of the adapter interface: capability and reason
 * names, the root list, the per-source parse-state encoding, env access. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "binio.h"

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

const char *cap_events_name(uint8_t v)
{
        switch (v) {
        case CAP_EVENTS_CALLS: return "calls";
        case CAP_EVENTS_SNAPSHOT_STEPS: return "snapshot-steps";
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

/* Room for one more element of size sz in *v (n used, *cap allocated). */
static int grow(void **v, size_t n, size_t *cap, size_t sz)
{
        if (n < *cap)
                return 0;
        size_t c = *cap ? *cap * 2 : 4;
        void *p = reallocarray(*v, c, sz);
        if (!p)
                return -ENOMEM;
        *v = p;
        *cap = c;
        return 0;
}

bool root_list_has_file(const struct root_list *l, const char *path)
{
        for (size_t i = 0; i < l->n_files; i++)
                if (strcmp(l->files[i].path, path) == 0)
                        return true;
        return false;
}

int root_list_add_file(struct root_list *l, const char *path)
{
        if (root_list_has_file(l, path))
                return 0;
        if (grow((void **)&l->files, l->n_files, &l->cap_files, sizeof(*l->files)) < 0)
                return -ENOMEM;
        snprintf(l->files[l->n_files++].path, sizeof(l->files[0].path), "%s", path);
        return 0;
}

int root_list_note(struct root_list *l, const struct adapter *adapter, const char *fmt, ...)
{
        va_list ap;

        if (grow((void **)&l->notes, l->n_notes, &l->cap_notes, sizeof(*l->notes)) < 0)
                return -ENOMEM;
        l->notes[l->n_notes].adapter = adapter;
        va_start(ap, fmt);
        vsnprintf(l->notes[l->n_notes].text, sizeof(l->notes[0].text), fmt, ap);
        va_end(ap);
        l->n_notes++;
        return 0;
}

void root_list_free(struct root_list *l)
{
        if (!l)
                return;
        free(l->v);
        free(l->files);
        free(l->notes);
        *l = (struct root_list){0};
}

/* ---- environment --------------------------------------------------------- */

const char *discover_env_get(const struct discover_env *env, const char *name)
{
        const char *v;

        /* The process environment answers only names some adapter declares
         * (registry_process_env), so install records every one that can move
         * a root; test-envscan checks every caller names a declared one. */
        if (!env || !env->get || !name)
                return NULL;
        v = env->get(env->userdata, name);
        return v && *v ? v : NULL;
}

/* ---- parse state encoding -------------------------------------------------
 * Little-endian:
 *   u8 encoding (2) | u32 flags | u32 version | i64 fallback_time_ms |
 *   i64 last_time_ms | 4 x (u16 len, bytes): session, project, provider,
 *   model | u16 priv_len, priv bytes
 * Encoding 1 (before the private area) is the same without the priv part;
 * it still decodes, with priv_len 0. Each adapter that uses priv reads a
 * state of encoding 1 as it meant then (see picoclaw.c, openclaw/db.c). */

#define PS_ENCODING_V1 1 /* no private area */
#define PS_ENCODING_V2 2

_Static_assert(PS_PRIV_MAX <= UINT16_MAX, "priv_len fits its u16");

int parse_state_encode(const struct parse_state *ps, uint8_t *buf, size_t cap, size_t *ret_len)
{
        struct bw w = { buf, 0, cap, false };

        if (ps->priv_len > PS_PRIV_MAX)
                return -EINVAL;
        bw_u8(&w, PS_ENCODING_V2);
        bw_u32(&w, ps->flags);
        bw_u32(&w, ps->version);
        bw_u64(&w, (uint64_t)ps->fallback_time_ms);
        bw_u64(&w, (uint64_t)ps->last_time_ms);
        bw_str(&w, ps->session, sizeof(ps->session));
        bw_str(&w, ps->project, sizeof(ps->project));
        bw_str(&w, ps->provider, sizeof(ps->provider));
        bw_str(&w, ps->model, sizeof(ps->model));
        bw_u16(&w, (uint16_t)ps->priv_len);
        bw_bytes(&w, ps->priv, ps->priv_len);
        if (w.overflow)
                return -ENOBUFS;
        *ret_len = w.len;
        return 0;
}

int parse_state_decode(const uint8_t *buf, size_t len, struct parse_state *ret_ps)
{
        struct br r = { buf, len, 0, false };
        struct parse_state ps;
        uint8_t encoding;

        if (!buf)
                return -EBADMSG;
        memset(&ps, 0, sizeof(ps));
        encoding = br_u8(&r);
        if (encoding != PS_ENCODING_V1 && encoding != PS_ENCODING_V2)
                return -EBADMSG;
        ps.flags = br_u32(&r);
        ps.version = br_u32(&r);
        ps.fallback_time_ms = (int64_t)br_u64(&r);
        ps.last_time_ms = (int64_t)br_u64(&r);
        br_str(&r, ps.session, sizeof(ps.session));
        br_str(&r, ps.project, sizeof(ps.project));
        br_str(&r, ps.provider, sizeof(ps.provider));
        br_str(&r, ps.model, sizeof(ps.model));
        if (encoding == PS_ENCODING_V2) {
                const uint8_t *q;
                ps.priv_len = br_u16(&r);
                if (ps.priv_len > PS_PRIV_MAX || !(q = br_take(&r, ps.priv_len)))
                        return -EBADMSG;
                memcpy(ps.priv, q, ps.priv_len);
        }
        if (r.bad || r.pos != r.len)
                return -EBADMSG;
        memcpy(ret_ps, &ps, sizeof(ps)); /* all bytes, padding included */
        return 0;
}
