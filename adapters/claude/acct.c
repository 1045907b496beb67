/* The per-transcript accounting behind Claude Code's compaction rows (see
 * claude/acct.h): what the file's own lines add up to per model, compared
 * with each cumulative cost-state, kept across restarts in parse_state.priv. */
#include <string.h>

#include "binio.h"
#include "claude/acct.h"
#include "json/jscan.h"

/* parse_state.priv, little-endian, varints LEB128:
 *   u8 CL_PRIV_FORMAT | u8 flags | varint boundaries
 *   [boundaries > 0: u64 boundary_hash, varint boundary_ms]
 *   varint unmetered, varint unmetered_tokens | u64 last_key | 5 varint last
 *   u8 n | n x (u32 model hash, 5 varint d)
 * Anything else (another format, cut short): a fresh start. */
#define CL_PRIV_FORMAT 1


static void pw_tok(struct bw *w, const struct cl_tok *t)
{
        bw_var(w, t->input);
        bw_var(w, t->output);
        bw_var(w, t->cache_read);
        bw_var(w, t->cache_write);
        bw_var(w, t->cache_write_1h);
}

static void pr_tok(struct br *r, struct cl_tok *t)
{
        t->input = br_var(r);
        t->output = br_var(r);
        t->cache_read = br_var(r);
        t->cache_write = br_var(r);
        t->cache_write_1h = br_var(r);
}

/* models are told apart by 32 bits of their name's hash */
static uint64_t model_hash(const char *model)
{
        return hash64(model, strlen(model)) & 0xffffffffu;
}

void cl_acct_load(const struct parse_state *ps, struct cl_acct *ret)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct cl_acct a = { 0 };

        *ret = a;
        if (ps->priv_len == 0 || br_u8(&r) != CL_PRIV_FORMAT)
                return;
        a.flags = br_u8(&r);
        a.boundaries = (uint32_t)br_var(&r);
        if (a.boundaries) {
                a.boundary_hash = br_u64(&r);
                a.boundary_ms = (int64_t)br_var(&r);
        }
        a.unmetered = br_var(&r);
        a.unmetered_tokens = br_var(&r);
        a.last_key = br_u64(&r);
        pr_tok(&r, &a.last);
        a.n = br_u8(&r);
        if (a.n > CL_ACCT_MODELS)
                return;
        for (uint32_t i = 0; i < a.n; i++) {
                a.m[i].model_hash = br_u32(&r);
                pr_tok(&r, &a.m[i].d);
        }
        if (!r.bad && r.pos == r.len)
                *ret = a;
}

static bool encode(const struct cl_acct *a, uint32_t n_models, struct parse_state *ps)
{
        uint8_t buf[PS_PRIV_MAX];
        struct bw w = { buf, 0, sizeof(buf), false };

        bw_u8(&w, CL_PRIV_FORMAT);
        bw_u8(&w, a->flags);
        bw_var(&w, a->boundaries);
        if (a->boundaries) {
                bw_u64(&w, a->boundary_hash);
                bw_var(&w, (uint64_t)(a->boundary_ms > 0 ? a->boundary_ms : 0));
        }
        bw_var(&w, a->unmetered);
        bw_var(&w, a->unmetered_tokens);
        bw_u64(&w, a->last_key);
        pw_tok(&w, &a->last);
        bw_u8(&w, (uint8_t)n_models);
        for (uint32_t i = 0; i < n_models; i++) {
                bw_u32(&w, (uint32_t)a->m[i].model_hash);
                pw_tok(&w, &a->m[i].d);
        }
        if (w.overflow)
                return false;
        memcpy(ps->priv, buf, w.len);
        ps->priv_len = (uint32_t)w.len;
        return true;
}

void cl_acct_store(struct parse_state *ps, struct cl_acct *a)
{
        if (a->flags & CL_OVERFLOW)
                a->n = 0;
        if (encode(a, a->n, ps))
                return;
        /* the models do not fit: from here on nothing can be exact */
        a->flags |= CL_OVERFLOW;
        a->n = 0;
        (void)encode(a, 0, ps);
}

static struct cl_tok *slot(struct cl_acct *a, const char *model, bool add)
{
        uint64_t h = model_hash(model);

        for (uint32_t i = 0; i < a->n; i++)
                if (a->m[i].model_hash == h)
                        return &a->m[i].d;
        if (!add || (a->flags & CL_OVERFLOW))
                return NULL;
        if (a->n == CL_ACCT_MODELS) {
                a->flags |= CL_OVERFLOW;
                return NULL;
        }
        a->m[a->n].model_hash = h;
        a->m[a->n].d = (struct cl_tok){ 0 };
        return &a->m[a->n++].d;
}

#define GROW(f)                                                                                     \
        do {                                                                                        \
                uint64_t _v = t.f > a->last.f ? t.f - a->last.f : 0;                               \
                d->f += _v;                                                                        \
                if (t.f > a->last.f)                                                               \
                        a->last.f = t.f;                                                           \
        } while (0)

void cl_acct_call(struct cl_acct *a, const struct row_key *key, const struct usage_row *row,
                  bool copy, bool agent)
{
        struct cl_tok t = { row->input, row->output, row->cache_read, row->cache_write,
                            row->cache_write_1h };
        struct cl_tok *d;
        uint64_t k;

        memcpy(&k, key->b, sizeof(k));
        if (copy && !(a->flags & CL_CS_SEEN))
                a->flags |= CL_COPIES;
        if (agent)
                a->flags |= CL_RUN_AGENT;
        if (k != a->last_key) {
                a->last_key = k;
                a->last = (struct cl_tok){ 0 };
        }
        d = slot(a, row->model, true);
        if (!d)
                return;
        GROW(input);
        GROW(output);
        GROW(cache_read);
        GROW(cache_write);
        GROW(cache_write_1h);
}

void cl_acct_boundary(struct cl_acct *a, const struct jscan_span *uuid, int64_t time_ms)
{
        char buf[128];
        size_t n = jscan_span_decode(uuid, buf, sizeof(buf));

        a->boundaries++;
        a->boundary_hash = hash64(buf, n);
        a->boundary_ms = time_ms;
}

static uint64_t pos_part(uint64_t have, uint64_t want, bool *neg)
{
        if (want < have) {
                *neg = true;
                return 0;
        }
        return want - have;
}

bool cl_acct_cost_state(struct cl_acct *a, const struct cl_cost_state *cs, const char *current_model,
                        struct cl_compaction *ret)
{
        bool found = false, baseline_unknown = (a->flags & CL_COPIES) && !(a->flags & CL_CS_SEEN);

        if (cs->bad)
                return false; /* a count out of bounds: this one says nothing */
        for (uint32_t i = 0; i < cs->n; i++) {
                const struct cl_cs_model *m = &cs->v[i];
                struct cl_tok *d = slot(a, m->model, false), zero = { 0 }, x;
                bool neg = false;

                if (!d)
                        d = &zero;
                x.input = pos_part(d->input, m->t.input, &neg);
                x.output = pos_part(d->output, m->t.output, &neg);
                x.cache_read = pos_part(d->cache_read, m->t.cache_read, &neg);
                x.cache_write = pos_part(d->cache_write, m->t.cache_write, &neg);
                x.cache_write_1h = pos_part(d->cache_write_1h, m->t.cache_write_1h, &neg);
                uint64_t sum = x.input + x.output + x.cache_read + x.cache_write;
                if (sum == 0 || neg)
                        continue; /* all accounted for; or Claude Code counts less than its lines */
                if (a->boundaries && !found && !(a->flags & (CL_RUN_AGENT | CL_OVERFLOW)) &&
                    !baseline_unknown && current_model && strcmp(m->model, current_model) == 0) {
                        memset(ret, 0, sizeof(*ret));
                        memcpy(ret->model, m->model, sizeof(ret->model));
                        ret->t = x;
                        ret->boundary_hash = a->boundary_hash;
                        ret->time_ms = a->boundary_ms;
                        found = true;
                        continue;
                }
                /* explained without a compaction: a sub-agent's calls (in
                 * its own file), or a fork's inherited baseline */
                if (!a->boundaries && ((a->flags & CL_RUN_AGENT) || baseline_unknown))
                        continue;
                a->unmetered++;
                a->unmetered_tokens += sum;
        }
        /* the run ends: what the lines account for is now the cost-state */
        for (uint32_t i = 0; i < cs->n; i++) {
                struct cl_tok *d = slot(a, cs->v[i].model, true);
                if (d)
                        *d = cs->v[i].t;
        }
        a->flags = (uint8_t)((a->flags & ~CL_RUN_AGENT) | CL_CS_SEEN);
        a->boundaries = 0;
        a->boundary_hash = 0;
        a->boundary_ms = 0;
        return found;
}

void cl_acct_unmetered(const struct parse_state *ps, uint64_t *ret_runs, uint64_t *ret_tokens)
{
        struct cl_acct a;

        cl_acct_load(ps, &a);
        *ret_runs = a.unmetered;
        *ret_tokens = a.unmetered_tokens;
}
