/* Running totals per session turned into positive deltas: the snapshot set
 * a table adapter keeps in parse_state.priv (Hermes Agent, Goose), the
 * step between two snapshots of one session, and its content key. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapter.h"

/* The counters of one snapshot, in this order. */
enum { TOT_INPUT, TOT_OUTPUT, TOT_CACHE_READ, TOT_CACHE_WRITE, TOT_REASONING, TOT_CALLS, TOT_COST_NANO, TOT_N };

#define TOT_SET_MAX 64 /* snapshots held in memory; as many as fit priv are kept */

struct tot_snap {
        uint32_t id; /* hash of the session id */
        uint64_t v[TOT_N];
};

/* What a database source keeps between calls. */
struct tot_state {
        bool valid;
        bool done;      /* the last call read everything of the database with ... */
        bool seeded;    /* a first scan has been read (later first sights are live) */
        uint64_t fp;    /* ... this fingerprint ... */
        int64_t at_ms;  /* ... at this time */
        int64_t seen_ms; /* sessions begun at or before this were seen by a read */
        uint64_t steps, calls, resets, unmetered;
        uint32_t rest;  /* digest of the snapshots of the sessions seen but not held */
        uint32_t n;     /* snapshots, the most recently changed first */
        struct tot_snap s[TOT_SET_MAX];
};

/* parse_state.priv <-> state. get: an all-zero state (valid false) for
 * anything but a whole state of this format. put: the snapshots past what
 * fits are dropped (tot_finish has folded them into the digest). */
struct tot_state tot_state_get(const struct parse_state *ps);
void tot_state_put(struct parse_state *ps, const struct tot_state *st);

uint32_t tot_session_id(const char *session);

/* What one session's current totals mean against the state:
 * TOT_FIRST  never seen: the totals are new (whole)
 * TOT_STEP   seen, grew: *ret_delta is the growth
 * TOT_SAME   seen, unchanged
 * TOT_RESET  seen, a counter went down: the totals count whole again
 * TOT_UNHELD seen by an earlier read, but its snapshot is not held (more
 *            sessions changed since than priv holds): the caller adds
 *            tot_snap_digest of it to the digest it passes to tot_finish
 * Otherwise the state's snapshot of the session becomes cur and moves to the
 * front; a snapshot pushed out of the set is added to *io_evicted. */
enum tot_change { TOT_FIRST, TOT_STEP, TOT_SAME, TOT_RESET, TOT_UNHELD };
enum tot_change tot_update(struct tot_state *st, const char *session, bool begun_before,
                           const uint64_t cur[TOT_N], uint64_t ret_delta[TOT_N], uint64_t ret_prev[TOT_N],
                           uint32_t *io_evicted);
uint32_t tot_snap_digest(const char *session, const uint64_t cur[TOT_N]);

/* After a read: the sessions not held changed since the last read when
 * their digest differs from the one kept (one unmetered change: which
 * session grew, and by what, cannot be known); the snapshots that will not
 * fit priv join the digest of the rest (counted with at_ms and seen_ms at
 * their widest, so the caller may set them afterwards). */
void tot_finish(struct tot_state *st, uint32_t unheld, uint32_t evicted);

/* The content key of a step: tag, session id, the totals before (zeros for
 * a first sight), after, and whether it followed a reset. The same step
 * read again is the same key; two sessions with equal totals differ. */
int tot_step_key(const char *tag, const char *session, const uint64_t prev[TOT_N], const uint64_t cur[TOT_N],
                 bool reset, struct row_key *ret_key); /* 0; -ENOMEM */

/* A double from SQLite as a bounded count (negative, NaN: 0). */
uint64_t tot_count(double v);
/* USD as nano-USD, bounded. */
uint64_t tot_usd_nano(double usd);

/* SQLite sidecars: a write to db-wal or db-journal is a change of the
 * database; our own read-only opens touch -shm (adapter.source_of). */
enum source_of_result tot_sqlite_source_of(const char *path, bool content_changed, char *ret_source, size_t cap);
