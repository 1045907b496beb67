/* The per-session snapshot set of the running-total stores (Hermes Agent,
 * Goose): kept in parse_state.priv, the most recently changed first, so a
 * session's next change is measured against what was read before it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "binio.h"
#include "running-totals.h"

/* parse_state.priv, little-endian:
 *   u8 TOT_PRIV_FORMAT | u8 flags | u64 fp | var at_ms | var seen_ms |
 *   var steps | var calls | var resets | var unmetered | u32 rest | u8 n |
 *   n x (u32 id | TOT_N x var) */
#define TOT_PRIV_FORMAT 1
#define F_DONE   0x01u
#define F_SEEDED 0x02u

struct tot_state tot_state_get(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct tot_state s = { 0 };
        uint8_t flags;

        if (ps->priv_len == 0 || br_u8(&r) != TOT_PRIV_FORMAT)
                return (struct tot_state){ 0 };
        flags = br_u8(&r);
        s.fp = br_u64(&r);
        s.at_ms = (int64_t)br_var(&r);
        s.seen_ms = (int64_t)br_var(&r);
        s.steps = br_var(&r);
        s.calls = br_var(&r);
        s.resets = br_var(&r);
        s.unmetered = br_var(&r);
        s.rest = br_u32(&r);
        s.n = br_u8(&r);
        if (s.n > TOT_SET_MAX)
                return (struct tot_state){ 0 };
        for (uint32_t i = 0; i < s.n; i++) {
                s.s[i].id = br_u32(&r);
                for (int k = 0; k < TOT_N; k++)
                        s.s[i].v[k] = br_var(&r);
        }
        if (r.bad || r.pos != r.len)
                return (struct tot_state){ 0 };
        s.done = flags & F_DONE;
        s.seeded = flags & F_SEEDED;
        s.valid = true;
        return s;
}

void tot_state_put(struct parse_state *ps, const struct tot_state *st)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };
        size_t n_at, end;
        uint32_t kept = 0;

        bw_u8(&w, TOT_PRIV_FORMAT);
        bw_u8(&w, (uint8_t)((st->done ? F_DONE : 0) | (st->seeded ? F_SEEDED : 0)));
        bw_u64(&w, st->fp);
        bw_var(&w, (uint64_t)st->at_ms);
        bw_var(&w, (uint64_t)st->seen_ms);
        bw_var(&w, st->steps);
        bw_var(&w, st->calls);
        bw_var(&w, st->resets);
        bw_var(&w, st->unmetered);
        bw_u32(&w, st->rest);
        n_at = w.len;
        bw_u8(&w, 0);
        end = w.len;
        for (uint32_t i = 0; i < st->n && !w.overflow; i++) {
                bw_u32(&w, st->s[i].id);
                for (int k = 0; k < TOT_N; k++)
                        bw_var(&w, st->s[i].v[k]);
                if (w.overflow)
                        break;
                end = w.len;
                kept++;
        }
        ps->priv[n_at] = (uint8_t)kept;
        ps->priv_len = (uint32_t)end;
}

uint32_t tot_session_id(const char *session)
{
        uint64_t h = hash64(session, strlen(session));
        return (uint32_t)(h ^ (h >> 32));
}

uint32_t tot_snap_digest(const char *session, const uint64_t cur[TOT_N])
{
        uint64_t buf[TOT_N + 1];

        buf[0] = tot_session_id(session);
        memcpy(buf + 1, cur, sizeof(uint64_t) * TOT_N);
        return (uint32_t)hash64(buf, sizeof(buf));
}

static uint32_t held_digest(const struct tot_snap *p)
{
        uint64_t buf[TOT_N + 1];

        buf[0] = p->id;
        memcpy(buf + 1, p->v, sizeof(uint64_t) * TOT_N);
        return (uint32_t)hash64(buf, sizeof(buf));
}

enum tot_change tot_update(struct tot_state *st, const char *session, bool begun_before,
                           const uint64_t cur[TOT_N], uint64_t ret_delta[TOT_N], uint64_t ret_prev[TOT_N],
                           uint32_t *io_evicted)
{
        uint32_t id = tot_session_id(session), i;
        enum tot_change c;
        struct tot_snap snap = { .id = id };

        memcpy(snap.v, cur, sizeof(snap.v));
        memset(ret_delta, 0, sizeof(uint64_t) * TOT_N);
        memset(ret_prev, 0, sizeof(uint64_t) * TOT_N);
        for (i = 0; i < st->n && st->s[i].id != id; i++)
                ;
        if (i < st->n) {
                bool down, same = true;
                memcpy(ret_prev, st->s[i].v, sizeof(uint64_t) * TOT_N);
                for (int k = 0; k < TOT_N; k++)
                        if (cur[k] != ret_prev[k])
                                same = false;
                if (same)
                        return TOT_SAME; /* stays where it is: only a change moves it up */
                /* a token counter that went down is a reset; the calls count or
                 * the cost alone going down (a rewound estimate) is not */
                down = cur[TOT_INPUT] < ret_prev[TOT_INPUT] || cur[TOT_OUTPUT] < ret_prev[TOT_OUTPUT] ||
                       cur[TOT_CACHE_READ] < ret_prev[TOT_CACHE_READ] ||
                       cur[TOT_CACHE_WRITE] < ret_prev[TOT_CACHE_WRITE];
                if (down) {
                        memcpy(ret_delta, cur, sizeof(uint64_t) * TOT_N);
                        c = TOT_RESET;
                } else {
                        for (int k = 0; k < TOT_N; k++)
                                ret_delta[k] = cur[k] > ret_prev[k] ? cur[k] - ret_prev[k] : 0;
                        c = TOT_STEP;
                }
                memmove(&st->s[1], &st->s[0], sizeof(st->s[0]) * i);
        } else {
                if (begun_before)
                        return TOT_UNHELD;
                c = TOT_FIRST;
                memcpy(ret_delta, cur, sizeof(uint64_t) * TOT_N);
                if (st->n == TOT_SET_MAX)
                        *io_evicted += held_digest(&st->s[--st->n]);
                memmove(&st->s[1], &st->s[0], sizeof(st->s[0]) * st->n);
                st->n++;
        }
        st->s[0] = snap;
        return c;
}

void tot_finish(struct tot_state *st, uint32_t unheld, uint32_t evicted)
{
        struct parse_state ps;
        struct tot_state probe;

        if (st->seeded && unheld != st->rest)
                st->unmetered++;
        /* how many snapshots fit: encode once and see, with the times the
         * caller sets afterwards at their widest */
        st->rest = unheld + evicted;
        probe = *st;
        probe.at_ms = probe.seen_ms = INT64_MAX;
        tot_state_put(&ps, &probe);
        probe = tot_state_get(&ps);
        for (uint32_t i = probe.valid ? probe.n : 0; i < st->n; i++)
                st->rest += held_digest(&st->s[i]);
        if (probe.valid)
                st->n = probe.n;
}

int tot_step_key(const char *tag, const char *session, const uint64_t prev[TOT_N], const uint64_t cur[TOT_N],
                 bool reset, struct row_key *ret_key)
{
        struct keyhash h;
        int r = keyhash_begin(&h, tag);

        if (r < 0)
                return r;
        keyhash_str(&h, session);
        for (int k = 0; k < TOT_N; k++)
                keyhash_u64(&h, prev[k]);
        for (int k = 0; k < TOT_N; k++)
                keyhash_u64(&h, cur[k]);
        keyhash_u64(&h, reset ? 1 : 0);
        keyhash_end(&h, ret_key);
        return 0;
}

#define COUNT_MAX 1e15 /* a quadrillion tokens: past any real session */

uint64_t tot_count(double v)
{
        if (!(v > 0))
                return 0;
        return v >= COUNT_MAX ? (uint64_t)COUNT_MAX : (uint64_t)v;
}

uint64_t tot_usd_nano(double usd)
{
        if (!(usd > 0))
                return 0;
        if (usd >= 1e9)
                return (uint64_t)1e18;
        return (uint64_t)llround(usd * 1e9);
}

enum source_of_result tot_sqlite_source_of(const char *path, bool content_changed, char *ret_source, size_t cap)
{
        static const char *const sidecars[] = { "-wal", "-journal", "-shm", NULL };
        size_t n = strlen(path);

        for (size_t i = 0; sidecars[i]; i++) {
                size_t k = strlen(sidecars[i]);
                if (n <= k || strcmp(path + n - k, sidecars[i]) != 0)
                        continue;
                if (strcmp(sidecars[i], "-shm") == 0 || !content_changed || n - k >= cap)
                        return SOURCE_NONE;
                memcpy(ret_source, path, n - k);
                ret_source[n - k] = 0;
                return SOURCE_OTHER;
        }
        return SOURCE_SELF;
}
