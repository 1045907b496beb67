/* Running totals per session turned into positive deltas: each session's
 * last snapshot (kept in the source's keyed state beside its checkpoint,
 * adapter.h struct source_state, so every session keeps its own, written
 * with the rows that measured it), the step between two snapshots of one
 * session, and its content key (Hermes Agent, Goose). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapter.h"

/* The counters of one snapshot, in this order. */
enum { TOT_INPUT, TOT_OUTPUT, TOT_CACHE_READ, TOT_CACHE_WRITE, TOT_REASONING, TOT_CALLS, TOT_COST_NANO, TOT_N };

/* Snapshots one source keeps: past this many sessions (far past any real
 * store: a heavy user's Hermes has a few thousand) a new session is metered
 * once whole and then only watched by a digest (status: sessions_beyond,
 * and its later changes unmetered_changes). About 60 bytes each in the
 * ledger. */
#define TOT_STORED_MAX 100000
#define TOT_SET_MAX 64 /* snapshots a state of format 1 held in priv (read once, then stored) */

struct tot_snap {
        uint32_t id; /* hash of the session id */
        uint64_t v[TOT_N];
};

/* What a database source keeps between calls (in parse_state.priv: a
 * fixed, small header; the snapshots are in the source state). */
struct tot_state {
        bool valid;
        bool done;      /* the last call read everything of the database with ... */
        bool seeded;    /* a first scan has been read (later first sights are live) */
        uint64_t fp;    /* ... this fingerprint ... */
        int64_t at_ms;  /* ... at this time */
        int64_t seen_ms; /* sessions begun at or before this were seen by a read */
        uint64_t steps, calls, resets, unmetered;
        uint64_t side_steps, side_calls; /* steps of a second kind of total (Hermes: auxiliary calls) */
        uint32_t rest;  /* digest of the snapshots of the sessions seen but not stored */
        uint64_t gen;   /* this database's generation: snapshots of another are not its own */
        uint64_t stored; /* snapshots in the source state */
        uint64_t beyond; /* sessions first seen when TOT_STORED_MAX were stored */
        uint64_t refused; /* sessions whose row the last read refused (tot_refuse) */
        /* per read, not persisted: */
        const struct source_state *store; /* NULL: nothing can be stored */
        uint64_t max_stored;  /* 0: TOT_STORED_MAX (tests lower it) */
        uint32_t pass_rest;   /* digest of this read's sessions not stored */
        uint64_t pass_refused; /* sessions this read refused */
        uint32_t n_legacy;    /* a format-1 state's snapshots, stored by the next read */
        struct tot_snap legacy[TOT_SET_MAX];
};

/* parse_state.priv <-> state. get: an all-zero state (valid false) for
 * anything but a whole state of format 1, 2 or 3 (format 1 held up to
 * TOT_SET_MAX snapshots in priv: they come back in legacy; 2 had no
 * refused). put: format 3. */
struct tot_state tot_state_get(const struct parse_state *ps);
void tot_state_put(struct parse_state *ps, const struct tot_state *st);

/* Before a read: a state without a generation (new, or of format 1) gets
 * one (the source's identity, the time and random bits mixed), the store
 * is set, the read's digest zeroed. */
void tot_begin(struct tot_state *st, const struct source_ctx *ctx, int64_t now_ms);

uint32_t tot_session_id(const char *session);

/* What one session's current totals mean against its last snapshot:
 * TOT_FIRST  never seen: the totals are new (whole)
 * TOT_STEP   seen, grew: *ret_delta is the growth
 * TOT_SAME   seen, unchanged
 * TOT_RESET  seen, a counter went down: the totals count whole again
 * TOT_UNHELD seen by an earlier read, but its snapshot is not stored (past
 *            TOT_STORED_MAX, or no store): watched by the digest only
 * space tells apart keys of different things of one source (Hermes:
 * sessions and auxiliary calls). A snapshot that changed is put into the
 * store. Negative errno when the store fails (the read fails). */
enum tot_change { TOT_FIRST, TOT_STEP, TOT_SAME, TOT_RESET, TOT_UNHELD };
int tot_update(struct tot_state *st, char space, const char *session, bool begun_before,
               const uint64_t cur[TOT_N], uint64_t ret_delta[TOT_N], uint64_t ret_prev[TOT_N]);
uint32_t tot_snap_digest(const char *session, const uint64_t cur[TOT_N]);
/* tot_update for a row that does not report every counter: bit k of
 * unreported set (a NULL column) keeps the session's last value of counter
 * k (0 for a first sight): nothing reported is neither a reset nor growth.
 * io_cur gets the values measured (what the key and the snapshot hold). */
int tot_update_known(struct tot_state *st, char space, const char *session, bool begun_before,
                     uint64_t io_cur[TOT_N], uint32_t unreported, uint64_t ret_delta[TOT_N],
                     uint64_t ret_prev[TOT_N]);
/* A session whose row is refused (a counter that is text, negative or past
 * its bound, adapt_sql_count): nothing is measured, its last snapshot
 * stands (its next good row is measured against it; none yet: zeros, so
 * that row counts whole), and the read counts it in pass_refused. bad is a
 * digest of what was refused: 1 when the session's last read did not
 * refuse the same (count it malformed once), 0 when it did, negative errno
 * when the store fails. */
int tot_refuse(struct tot_state *st, char space, const char *session, bool begun_before, uint32_t bad);
/* One session's row as read, either way: refused (tot_refuse with bad;
 * counted in *io_malformed once; TOT_SAME: nothing to emit) or measured
 * (tot_update_known; a TOT_RESET counted in st->resets). The change, or
 * negative errno when the store fails. */
int tot_measure(struct tot_state *st, char space, const char *session, bool begun_before, bool refused,
                uint32_t bad, uint64_t io_cur[TOT_N], uint32_t unreported, uint64_t ret_delta[TOT_N],
                uint64_t ret_prev[TOT_N], uint64_t *io_malformed);

/* After a read: the sessions not stored changed since the last read when
 * their digest differs from the one kept (one unmetered change: which
 * session grew, and by what, cannot be known). */
void tot_finish(struct tot_state *st);

/* The content key of a step: tag, session id, the totals before (zeros for
 * a first sight), after, and whether it followed a reset. The same step
 * read again is the same key; two sessions with equal totals differ. */
int tot_step_key(const char *tag, const char *session, const uint64_t prev[TOT_N], const uint64_t cur[TOT_N],
                 bool reset, struct row_key *ret_key); /* 0; -ENOMEM */

/* Pushes a step's row onto out, keyed by tot_step_key, its kind a snapshot
 * step with its tokens known: 0 and *ret_row (the rest for the caller),
 * or negative errno with nothing pushed. */
int tot_push_step(struct row_batch *out, const char *tag, const char *session, const uint64_t prev[TOT_N],
                  const uint64_t cur[TOT_N], bool reset, struct usage_row **ret_row);
/* A step's four token classes, reasoning (at most the output, which holds
 * it), total, and a positive cost as the vendor's, from its delta d. */
void tot_fill_classes(struct usage_row *row, const uint64_t d[TOT_N]);

/* A double from SQLite as a bounded count (negative, NaN: 0). */
uint64_t tot_count(double v);
/* USD as nano-USD, bounded. */
uint64_t tot_usd_nano(double usd);

/* SQLite sidecars: a write to db-wal or db-journal is a change of the
 * database; our own read-only opens touch -shm (adapter.source_of). */
enum source_of_result tot_sqlite_source_of(const char *path, bool content_changed, char *ret_source, size_t cap);

/* A database source read whole at each change: a read begun in a fresh
 * copy of the totals before it (tot_begin done) and an empty out past
 * its rows before; *ret_immutable as adapt_db_read_stable wants it. */
typedef int (*tot_read_fn)(const struct source_ctx *ctx, struct tot_state *st, int64_t now_ms,
                           struct row_batch *out, uint64_t *io_malformed, bool *ret_immutable);
#define TOT_RECHECK_MS 30000 /* a database unchanged this long is read again all the same */
/* A collect_rows (adapter.h) of such a source (Hermes, Goose): nothing
 * read while its fingerprint is the last read's and that read is younger
 * than TOT_RECHECK_MS; else read_db, again while a writer changes the file
 * under it (adapt_db_read_stable). The totals are kept, the watermark is
 * their steps (1 at the least); a COLLECT_ result or negative errno with
 * out as it was. */
int tot_collect_db(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                   struct row_batch *out, uint64_t *io_malformed, tot_read_fn read_db);
