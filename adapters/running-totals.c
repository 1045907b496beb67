/* Per-session snapshots of the running-total stores (Hermes Agent, Goose):
 * the state header in parse_state.priv, each session's last snapshot in the
 * source's keyed state, so a session's next change is measured against
 * what was read before it, however many sessions changed meanwhile. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "adapt-sqlite.h"
#include "binio.h"
#include "running-totals.h"
#include "timefmt.h"

/* parse_state.priv, little-endian. Format 3:
 *   u8 3 | u8 flags | u64 fp | var at_ms | var seen_ms | var steps |
 *   var calls | var resets | var unmetered | u32 rest | u64 gen |
 *   var stored | var beyond | var side_steps | var side_calls | var refused
 * Format 2 (read only): the same without refused.
 * Format 1 (read only): the same through rest, then u8 n |
 *   n x (u32 id | TOT_N x var), the snapshots held in priv itself.
 * A stored snapshot (key: space | session id):
 *   u8 SNAP_FORMAT | u64 gen | TOT_N x var
 * or, while the session's row is refused (tot_refuse), the same with
 *   u8 SNAP_FORMAT_REFUSED first and u32 (the refused values' digest) last */
#define TOT_PRIV_FORMAT_HELD 1
#define TOT_PRIV_FORMAT_2 2
#define TOT_PRIV_FORMAT 3
#define SNAP_FORMAT 1
#define SNAP_FORMAT_REFUSED 2
#define F_DONE   0x01u
#define F_SEEDED 0x02u

struct tot_state tot_state_get(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct tot_state s = { 0 };
        uint8_t flags, format;

        if (ps->priv_len == 0)
                return (struct tot_state){ 0 };
        format = br_u8(&r);
        if (format != TOT_PRIV_FORMAT && format != TOT_PRIV_FORMAT_2 && format != TOT_PRIV_FORMAT_HELD)
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
        if (format != TOT_PRIV_FORMAT_HELD) {
                s.gen = br_u64(&r);
                s.stored = br_var(&r);
                s.beyond = br_var(&r);
                s.side_steps = br_var(&r);
                s.side_calls = br_var(&r);
                if (format == TOT_PRIV_FORMAT)
                        s.refused = br_var(&r);
        } else {
                s.n_legacy = br_u8(&r);
                if (s.n_legacy > TOT_SET_MAX)
                        return (struct tot_state){ 0 };
                for (uint32_t i = 0; i < s.n_legacy; i++) {
                        s.legacy[i].id = br_u32(&r);
                        for (int k = 0; k < TOT_N; k++)
                                s.legacy[i].v[k] = br_var(&r);
                }
        }
        if (r.bad || r.pos != r.len)
                return (struct tot_state){ 0 };
        s.done = flags & F_DONE;
        s.seeded = flags & F_SEEDED;
        s.valid = true; /* a format-1 state has no generation yet: tot_begin gives it one */
        if (format == TOT_PRIV_FORMAT_HELD)
                s.done = false; /* read once more, to store what it held */
        return s;
}

void tot_state_put(struct parse_state *ps, const struct tot_state *st)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

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
        bw_u64(&w, st->gen);
        bw_var(&w, st->stored);
        bw_var(&w, st->beyond);
        bw_var(&w, st->side_steps);
        bw_var(&w, st->side_calls);
        bw_var(&w, st->refused);
        ps->priv_len = w.overflow ? 0 : (uint32_t)w.len; /* ~90 bytes at most: always fits */
}

void tot_begin(struct tot_state *st, const struct source_ctx *ctx, int64_t now_ms)
{
        if (st->gen == 0) {
                uint64_t mix[5] = { ctx->source_hash, (uint64_t)ctx->st.st_ino, (uint64_t)ctx->st.st_dev,
                                    (uint64_t)now_ms, 0 };
                /* random too: the same inode again within a millisecond (when
                 * the pool has nothing yet, mix[4] stays 0: the rest still differs) */
                if (getrandom(&mix[4], sizeof(mix[4]), GRND_NONBLOCK) != (ssize_t)sizeof(mix[4]))
                        mix[4] = 0;
                st->gen = hash64(mix, sizeof(mix)) | 1; /* never 0: 0 is "none yet" */
        }
        st->store = ctx->state;
        st->pass_rest = 0;
        st->pass_refused = 0;
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

/* The store's key of a session: space, then its id. */
static size_t snap_key(char space, const char *session, uint8_t key[SRC_STATE_KEY_MAX])
{
        size_t n = strlen(session);

        if (n + 1 > SRC_STATE_KEY_MAX)
                n = SRC_STATE_KEY_MAX - 1; /* ids are shorter (ROW_SESSION_MAX) */
        key[0] = (uint8_t)space;
        memcpy(key + 1, session, n);
        return n + 1;
}

/* The session's stored snapshot of this generation: 1, v and *ret_bad (the
 * digest of the values refused since, 0 for none); 0 when there is none
 * (or only another generation's); negative errno. */
static int snap_get(const struct tot_state *st, const uint8_t *key, size_t key_len, uint64_t v[TOT_N],
                    uint32_t *ret_bad)
{
        uint8_t buf[SRC_STATE_VALUE_MAX];
        size_t len = 0;
        int r;

        if (!st->store)
                return 0;
        r = st->store->get(st->store->u, key, key_len, buf, sizeof(buf), &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        struct br rd = { buf, len < sizeof(buf) ? len : sizeof(buf), 0, false };
        uint8_t format = br_u8(&rd);
        if ((format != SNAP_FORMAT && format != SNAP_FORMAT_REFUSED) || br_u64(&rd) != st->gen)
                return 0; /* another database's (an earlier file under this name) */
        for (int k = 0; k < TOT_N; k++)
                v[k] = br_var(&rd);
        *ret_bad = format == SNAP_FORMAT_REFUSED ? br_u32(&rd) : 0;
        return rd.bad || rd.pos != len ? 0 : 1;
}

/* bad: 0, or the digest of the values refused since v was measured */
static int snap_put(const struct tot_state *st, const uint8_t *key, size_t key_len, const uint64_t v[TOT_N],
                    uint32_t bad)
{
        uint8_t buf[SRC_STATE_VALUE_MAX];
        struct bw w = { buf, 0, sizeof(buf), false };

        bw_u8(&w, bad ? SNAP_FORMAT_REFUSED : SNAP_FORMAT);
        bw_u64(&w, st->gen);
        for (int k = 0; k < TOT_N; k++)
                bw_var(&w, v[k]);
        if (bad)
                bw_u32(&w, bad);
        if (w.overflow)
                return -ENOBUFS;
        return st->store->put(st->store->u, key, key_len, buf, w.len);
}

/* A format-1 state's snapshot of the session: 1 and v (taken out of the
 * set), 0 when it held none. */
static int legacy_take(struct tot_state *st, const char *session, uint64_t v[TOT_N])
{
        uint32_t id = tot_session_id(session);

        for (uint32_t i = 0; i < st->n_legacy; i++) {
                if (st->legacy[i].id != id)
                        continue;
                memcpy(v, st->legacy[i].v, sizeof(uint64_t) * TOT_N);
                st->legacy[i] = st->legacy[--st->n_legacy];
                return 1;
        }
        return 0;
}

int tot_update(struct tot_state *st, char space, const char *session, bool begun_before,
               const uint64_t cur[TOT_N], uint64_t ret_delta[TOT_N], uint64_t ret_prev[TOT_N])
{
        uint64_t v[TOT_N];

        memcpy(v, cur, sizeof(v));
        return tot_update_known(st, space, session, begun_before, v, 0, ret_delta, ret_prev);
}

int tot_update_known(struct tot_state *st, char space, const char *session, bool begun_before,
                     uint64_t cur[TOT_N], uint32_t unreported, uint64_t ret_delta[TOT_N],
                     uint64_t ret_prev[TOT_N])
{
        uint8_t key[SRC_STATE_KEY_MAX];
        size_t key_len = snap_key(space, session, key);
        uint64_t max = st->max_stored ? st->max_stored : TOT_STORED_MAX;
        bool from_legacy = false, same = true, down;
        uint32_t bad = 0;
        int found, r;

        memset(ret_delta, 0, sizeof(uint64_t) * TOT_N);
        memset(ret_prev, 0, sizeof(uint64_t) * TOT_N);
        found = snap_get(st, key, key_len, ret_prev, &bad);
        if (found < 0)
                return found;
        if (!found && st->n_legacy && st->store && legacy_take(st, session, ret_prev)) {
                found = 1;
                from_legacy = true; /* stored now, changed or not */
        }
        /* not reported: as it was (the zeros of a first sight otherwise) */
        for (int k = 0; k < TOT_N; k++)
                if (unreported & (1u << k))
                        cur[k] = ret_prev[k];
        if (!found) {
                if (begun_before || !st->store || st->stored >= max) {
                        /* watched by the digest only; a first sight past the
                         * bound is metered whole once, here */
                        st->pass_rest += tot_snap_digest(session, cur);
                        if (begun_before)
                                return TOT_UNHELD;
                        st->beyond++;
                        memcpy(ret_delta, cur, sizeof(uint64_t) * TOT_N);
                        return TOT_FIRST;
                }
                if ((r = snap_put(st, key, key_len, cur, 0)) < 0)
                        return r;
                st->stored++;
                memcpy(ret_delta, cur, sizeof(uint64_t) * TOT_N);
                return TOT_FIRST;
        }
        for (int k = 0; k < TOT_N; k++)
                if (cur[k] != ret_prev[k])
                        same = false;
        if (same || from_legacy) {
                /* also a snapshot refused since: good again, as it was */
                if ((from_legacy || bad) && (r = snap_put(st, key, key_len, cur, 0)) < 0)
                        return r;
                if (from_legacy)
                        st->stored++;
                if (same)
                        return TOT_SAME;
        } else if ((r = snap_put(st, key, key_len, cur, 0)) < 0) {
                return r;
        }
        /* a token counter that went down is a reset; the calls count or
         * the cost alone going down (a rewound estimate) is not */
        down = cur[TOT_INPUT] < ret_prev[TOT_INPUT] || cur[TOT_OUTPUT] < ret_prev[TOT_OUTPUT] ||
               cur[TOT_CACHE_READ] < ret_prev[TOT_CACHE_READ] || cur[TOT_CACHE_WRITE] < ret_prev[TOT_CACHE_WRITE];
        if (down) {
                memcpy(ret_delta, cur, sizeof(uint64_t) * TOT_N);
                return TOT_RESET;
        }
        for (int k = 0; k < TOT_N; k++)
                ret_delta[k] = cur[k] > ret_prev[k] ? cur[k] - ret_prev[k] : 0;
        return TOT_STEP;
}

int tot_measure(struct tot_state *st, char space, const char *session, bool begun_before, bool refused,
                uint32_t bad, uint64_t io_cur[TOT_N], uint32_t unreported, uint64_t ret_delta[TOT_N],
                uint64_t ret_prev[TOT_N], uint64_t *io_malformed)
{
        int r;

        if (refused) {
                if ((r = tot_refuse(st, space, session, begun_before, bad)) < 0)
                        return r;
                *io_malformed += (uint64_t)r;
                return TOT_SAME;
        }
        r = tot_update_known(st, space, session, begun_before, io_cur, unreported, ret_delta, ret_prev);
        if (r == TOT_RESET)
                st->resets++;
        return r;
}

int tot_refuse(struct tot_state *st, char space, const char *session, bool begun_before, uint32_t bad)
{
        uint8_t key[SRC_STATE_KEY_MAX];
        size_t key_len = snap_key(space, session, key);
        uint64_t max = st->max_stored ? st->max_stored : TOT_STORED_MAX;
        uint64_t v[TOT_N] = { 0 };
        uint32_t was = 0;
        int found, r;

        bad |= 1; /* never 0: 0 is "none" */
        st->pass_refused++;
        found = snap_get(st, key, key_len, v, &was);
        if (found < 0)
                return found;
        if (!found && st->n_legacy && st->store && legacy_take(st, session, v))
                found = 2; /* stored now, refused */
        if (found == 1 && was == bad)
                return 0; /* refused as it was at the last read */
        if (!found && (begun_before || !st->store || st->stored >= max)) {
                /* no snapshot to keep the mark in: watched by the digest
                 * (a change of what is refused is one unmetered change) */
                st->pass_rest += bad;
                return 0;
        }
        if ((r = snap_put(st, key, key_len, v, bad)) < 0)
                return r;
        if (found != 1)
                st->stored++;
        return 1;
}

void tot_finish(struct tot_state *st)
{
        if (st->seeded && st->pass_rest != st->rest)
                st->unmetered++;
        st->rest = st->pass_rest;
        st->refused = st->pass_refused;
        st->n_legacy = 0; /* what it held is stored now (or its session is gone) */
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

int tot_push_step(struct row_batch *out, const char *tag, const char *session, const uint64_t prev[TOT_N],
                  const uint64_t cur[TOT_N], bool reset, struct usage_row **ret_row)
{
        struct usage_row *row;
        int r = row_batch_push(out, &row);

        if (r < 0)
                return r;
        if ((r = tot_step_key(tag, session, prev, cur, reset, &row->key)) < 0) {
                out->n--;
                return r;
        }
        row->kind = ROW_KIND_SNAPSHOT_STEP;
        row->flags = ROW_F_TOKENS_KNOWN;
        *ret_row = row;
        return 0;
}

void tot_fill_classes(struct usage_row *row, const uint64_t d[TOT_N])
{
        row->input = d[TOT_INPUT];
        row->output = d[TOT_OUTPUT];
        row->cache_read = d[TOT_CACHE_READ];
        row->cache_write = d[TOT_CACHE_WRITE];
        row->reasoning = d[TOT_REASONING] <= d[TOT_OUTPUT] ? d[TOT_REASONING] : d[TOT_OUTPUT];
        row->total = row->input + row->output + row->cache_read + row->cache_write;
        if (d[TOT_COST_NANO] > 0) {
                row->cost_source = COST_VENDOR;
                row->cost_nano = (int64_t)d[TOT_COST_NANO];
        }
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

/* One read for tot_collect_db (adapt_db_read_stable). */
struct tot_attempt {
        const struct source_ctx *ctx;
        tot_read_fn read_db;
        int64_t now_ms;
        struct tot_state before, after;
        struct row_batch *out;
        size_t n0;
        uint64_t malformed;
};

static int tot_read_once(void *u, bool *ret_immutable)
{
        struct tot_attempt *a = u;

        a->after = a->before;
        tot_begin(&a->after, a->ctx, a->now_ms);
        a->out->n = a->n0;
        a->malformed = 0;
        return a->read_db(a->ctx, &a->after, a->now_ms, a->out, &a->malformed, ret_immutable);
}

int tot_collect_db(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                   struct row_batch *out, uint64_t *io_malformed, tot_read_fn read_db)
{
        struct tot_attempt a = { .ctx = ctx, .read_db = read_db, .before = tot_state_get(ps), .out = out,
                                 .n0 = out->n };
        struct tot_state *st = &a.after;
        bool settling = false;
        uint64_t fp = adapt_db_fingerprint(ctx->path, &settling);
        struct adapt_wal_mark mark;
        int r;

        a.now_ms = timefmt_now_ms();
        if (*io_watermark == 0) /* every read leaves it at 1 or more */
                a.before = (struct tot_state){ 0 }; /* a new database: nothing known */
        if (!settling && a.before.valid && a.before.done && a.before.fp == fp && a.now_ms >= a.before.at_ms &&
            a.now_ms - a.before.at_ms < TOT_RECHECK_MS)
                return COLLECT_DONE;
        adapt_db_wal_mark(ctx->path, &mark);
        r = adapt_db_read_stable(ctx->path, &fp, &settling, tot_read_once, &a);
        if (r < 0) {
                out->n = a.n0;
                return r;
        }
        st->valid = true;
        st->done = !settling;
        st->fp = fp;
        st->at_ms = a.now_ms;
        tot_state_put(ps, st);
        *io_watermark = st->steps ? st->steps : 1; /* "read": the daemon shows it as the position */
        *io_malformed += a.malformed;
        return adapt_db_read_end(ctx->path, settling, &mark);
}
