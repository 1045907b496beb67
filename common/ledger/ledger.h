/* The LMDB ledger: usage rows, tool-call activity, per-source checkpoints,
 * rollups and session sums, all changed together in one write transaction
 * per batch, so a crash keeps a batch whole or not at all. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "row.h"

#define LEDGER_SCHEMA_VERSION 4 /* 4: rows may be version-3 values (row.h); 3: the index lags
                                 * (ledger/backlog.c); 2: rows appended by id (ledger/store.c);
                                 * 1 is migrated, 2 and 3 are renumbered on a writable open */
#define LEDGER_FILE "ledger.mdb" /* inside the state directory; with -lock */

struct ledger;

/* open flags */
#define LEDGER_RDONLY 0x1u

/* Opens (creating when writable) the ledger in directory `dir`.
 * -ENOENT (read-only and missing; nothing is created), -EPROTO (schema newer
 * than this build), other negative errno; ledger_open_error() says why.
 * The env is MDB_NOSYNC (see ledger_sync) and MDB_NOTLS. A given ledger is
 * open at most once in a process (LMDB's rule: a second open of the same
 * environment breaks its locks), and no fork() after it. Test hook: AGENTMETER_TEST_MAPSIZE=<bytes>
 * sets the initial map size of a writable open (default 256 MiB, sparse). */
int ledger_open(const char *dir, unsigned flags, struct ledger **ret_ledger);
struct ledger *ledger_close(struct ledger *l); /* NULL-safe, returns NULL */
static inline void ledger_closep(struct ledger **l) { *l = ledger_close(*l); }

const char *ledger_path(const struct ledger *l); /* the data file */
/* Human-readable detail: of the last failed commit on l, or with l == NULL
 * of the last failed ledger_open() on this thread (ledger_open_error()). */
const char *ledger_error(const struct ledger *l);
const char *ledger_open_error(void);
/* mdb_env_sync(force). Commits do not fsync; a crash can only lose whole
 * recent txns, rows and checkpoints together, so lines are just re-read. */
int ledger_sync(struct ledger *l);
/* Starts writing the data file's dirty pages back without waiting for them
 * (sync_file_range, SYNC_FILE_RANGE_WRITE), so that a ledger_sync after
 * other work waits for less. Guarantees nothing by itself. */
int ledger_sync_start(struct ledger *l);
/* The bytes of the data file in use (pages up to the last one written). */
int ledger_used_bytes(struct ledger *l, uint64_t *ret_bytes);
/* Syncs, then drops the data file's pages from the page cache: after a bulk
 * ingest, so that live commits write into small folios (see ledger.c). The
 * next reads fault the pages back in. Not inside a write txn. */
int ledger_drop_cache(struct ledger *l);
/* Frees the pages LMDB keeps from past write txns for the next ones (they
 * are as many as the largest txn dirtied, held until the env closes) by
 * opening the env again: when force, or when a txn since the last release
 * wrote the index's backlog (one page per leaf of the index, at most).
 * Outside a group commit and with no read txn open; otherwise, or when
 * nothing is due, nothing is done (0). 1 when it was opened again, or
 * negative errno: then the ledger is not usable (the caller stops). */
int ledger_release_memory(struct ledger *l, bool force);

/* Group commit (ledger/txn.c): between begin and end every ledger write
 * goes into one outer txn, committed by ledger_group_end, and reads see the
 * group's writes. A failed write drops the whole group (the writes after it
 * get their own txns); then, or when its commit fails, ledger_group_end
 * returns the error: the group's rows and checkpoints are lost together and
 * the caller reads those sources again. */
int ledger_group_begin(struct ledger *l);
int ledger_group_end(struct ledger *l);
void ledger_group_abort(struct ledger *l);

/* Maps LMDB return codes (positive errno, negative MDB_*) to negative errno. */
int ledger_errno(int mdb_rc);

/* ---- checkpoints (db `sources`) ---------------------------------------- */

#define CHECKPOINT_STATE_MAX 1024

enum source_kind { SOURCE_LINES = 1, SOURCE_TABLE = 2, SOURCE_DOCUMENT = 3 };

struct checkpoint {
        uint8_t kind;      /* enum source_kind */
        char tool[ROW_TOOL_MAX];
        uint64_t dev, ino, size;
        int64_t mtime_ns;
        uint64_t offset;      /* lines: byte after last consumed newline; db: watermark */
        uint64_t head_hash;   /* hash of the first head_len bytes */
        uint32_t head_len;
        uint64_t marker_hash; /* hash of the marker_len bytes before offset */
        uint32_t marker_len;
        /* the consumed bytes (daemon/tail/consumed.h): a hash chain over the whole
         * blocks [0, sum_len) and a hash of [sum_len, offset); consumed_known
         * 0 for checkpoints written before these existed */
        uint8_t consumed_known;
        uint64_t sum_len, sum_hash, tail_hash;
        uint8_t flags;        /* CP_F_* */
        /* cumulative counters for this source */
        /* rows_added: ledger_commit adds the batch's new rows to the stored value */
        uint64_t bytes_read, lines, malformed, oversized, rows_added, resets;
        int64_t last_commit_ms;
        uint32_t state_len;   /* adapter state (opaque) */
        uint8_t state[CHECKPOINT_STATE_MAX];
};

/* checkpoint flags */
#define CP_F_UNREADABLE 0x1u /* the source as of (size, mtime_ns) could not be read to its
                              * end (a compressed stream that does not decode): not tried
                              * again until it changes */

/* 0, or -ENOENT when the path has no checkpoint. */
int ledger_get_checkpoint(struct ledger *l, const char *path, struct checkpoint *ret_cp);
/* Finds the path whose checkpoint has this (dev, ino): 0 and the path, or -ENOENT. */
int ledger_find_identity(struct ledger *l, uint64_t dev, uint64_t ino, char *ret_path,
                         size_t cap);
/* Moves a checkpoint from old_path to new_path (a rename) in one transaction;
 * -ENOENT when old_path has none. The identity entry and the source states
 * follow it. */
int ledger_move_checkpoint(struct ledger *l, const char *old_path, const char *new_path);
/* Calls cb for every checkpoint; stops at a non-zero return, which it returns
 * (ledger_foreach_checkpoint_under with no directory). */
int ledger_foreach_checkpoint(struct ledger *l,
                              int (*cb)(const char *path, const struct checkpoint *cp, void *u),
                              void *u);

/* The same for the checkpoints of the paths below directory dir only (a
 * range of the sorted keys, and the few paths too long for a key); dir NULL:
 * every checkpoint. */
int ledger_foreach_checkpoint_under(struct ledger *l, const char *dir,
                                    int (*cb)(const char *path, const struct checkpoint *cp, void *u),
                                    void *u);

/* ---- source states (db `srcstate`, ledger/srcstate.c) --------------------
 * Small values a source's reader keeps per key beside its checkpoint (a
 * table source's last running totals per session: more than a checkpoint
 * holds), written with the rows in one transaction (commit_batch.states),
 * keyed by the source path's hash and the reader's key. A ledger made
 * before this DB existed gets it at its next writable open; opened
 * read-only it simply has none. Entries outlive their source's checkpoint
 * (a reader tells its own from older ones by a generation it keeps in its
 * checkpoint state). */

#define SOURCE_STATE_KEY_MAX   200
#define SOURCE_STATE_VALUE_MAX 256

struct source_state_entry {
        const void *key;
        size_t key_len;     /* 1..SOURCE_STATE_KEY_MAX */
        const void *value;
        size_t value_len;   /* 0: delete the entry; at most SOURCE_STATE_VALUE_MAX */
};
/* 0 and the value's first cap bytes (*ret_len: its whole length), or
 * -ENOENT, or -EINVAL for a key out of bounds. */
int ledger_get_source_state(struct ledger *l, const char *path, const void *key, size_t key_len,
                            void *ret_value, size_t cap, size_t *ret_len);
/* How many entries path has (a walk of its prefix: for status and tests). */
int ledger_count_source_states(struct ledger *l, const char *path, uint64_t *ret_n);

/* ---- commit -------------------------------------------------------------- */

enum row_outcome {
        ROW_ADDED = 1,   /* new key */
        ROW_DUP = 2,     /* already counted, nothing changed */
        ROW_MERGED = 3,  /* upsert raised some field: rollups moved by the difference */
        ROW_REFUSED = 4, /* a number out of bounds (row-bounds.h): not stored, counted */
};

struct commit_batch {
        const char *source_path;     /* may be NULL: rows only */
        struct checkpoint *cp;       /* written under source_path when non-NULL; on
                                      * success its rows_added is the stored value,
                                      * this batch's new rows included (the one
                                      * place that counts them) */
        struct usage_row *rows;
        size_t n_rows;
        uint8_t *ret_outcomes;       /* optional, n_rows entries of enum row_outcome */
        const struct rate_limits *limits; /* optional: stored under limits_scope (a root)
                                           * unless an older snapshot is newer */
        const char *limits_scope;
        /* optional: source states written under source_path, in order (a
         * later entry of the same key wins); -EINVAL for one out of bounds */
        const struct source_state_entry *states;
        size_t n_states;
};

struct commit_result {
        size_t added, dup, merged, calls_added;
        size_t refused; /* out of bounds: counted in the ledger (ledger_get_refused) */
};

/* Everything in ONE write transaction: rows (insert-if-absent, or monotone
 * upsert for rows flagged ROW_F_UPSERT), their tool calls, rollups, session
 * sums, the checkpoint. Grows the map on MDB_MAP_FULL and retries.
 * Upsert: per token field and cost the maximum, the earliest time (an exact
 * time beats a ROW_F_TIME_APPROX one), the non-sidechain session, empty
 * strings filled, tool calls united by call id; rollups and session sums
 * move by the difference. -EROFS on a read-only ledger. On failure
 * ret_outcomes may hold partial values. */
int ledger_commit(struct ledger *l, const struct commit_batch *batch,
                  struct commit_result *ret_result);

/* ---- meta ---------------------------------------------------------------- */

/* Rows refused by row_check_bounds since the ledger was made, by reason
 * (index enum row_refusal; [0] is the total), kept in the meta DB and
 * raised in the same transaction as the batch they came in. */
struct ledger_refused {
        uint64_t n[4];
};
int ledger_get_refused(struct ledger *l, struct ledger_refused *ret_refused);

int ledger_meta_get(struct ledger *l, const char *name, char *ret_value, size_t cap);
int ledger_meta_set(struct ledger *l, const char *name, const char *value);

/* ---- rate limits (ledger/limits.c; in db `meta` as "limits/<scope>") ---- */

struct rate_limits;
/* Every stored snapshot with its scope (the root path). */
int ledger_foreach_limits(struct ledger *l,
                          int (*cb)(const char *scope, const struct rate_limits *rl, void *u),
                          void *u);

/* ---- reading ------------------------------------------------------------- */
/* Each foreach runs one read txn and calls cb inside it: cb may read the
 * ledger (e.g. ledger_get_row) but must NOT call ledger_commit or any other
 * write function. A non-zero cb return stops the walk and is returned. */

#define ROLLUP_BUCKET_MS (15 * 60 * 1000LL)

/* Sums kept by rollups and sessions. Token fields only sum rows whose
 * tokens are known (token_events of them); cost only sums priced rows. */
struct usage_sums {
        uint64_t input, output, cache_read, cache_write, reasoning, total;
        int64_t cost_nano;
        uint64_t events, priced_events, token_events, calls;
        uint64_t computed_events; /* priced by our table (the rest of priced_events: vendor) */
        uint64_t cache_write_1h;  /* the 1-hour-TTL part of cache_write */
};

void usage_sums_add_row(struct usage_sums *s, const struct usage_row *r, int sign);
void usage_sums_add(struct usage_sums *dst, const struct usage_sums *src);

struct rollup_entry {
        int64_t bucket_ms; /* start of the 15-minute UTC bucket */
        char tool[ROW_TOOL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        struct usage_sums sums;
};
/* Rollups with from_ms <= bucket < until_ms (use INT64_MIN/INT64_MAX for open ends). */
int ledger_foreach_rollup(struct ledger *l, int64_t from_ms, int64_t until_ms,
                          int (*cb)(const struct rollup_entry *e, void *u), void *u);

/* Session sums cover the whole session. When an upsert moves a row to
 * another session or an earlier time, first/last are not narrowed (a
 * rebuild makes them exact). */
struct session_entry {
        char tool[ROW_TOOL_MAX];
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];
        char model[ROW_MODEL_MAX]; /* last model seen */
        int64_t first_ms, last_ms;
        struct usage_sums sums;
};
int ledger_foreach_session(struct ledger *l,
                           int (*cb)(const struct session_entry *e, void *u), void *u);
/* One session's sums: 0, or -ENOENT. */
int ledger_get_session(struct ledger *l, const char *tool, const char *session,
                       struct session_entry *ret_entry);

struct activity_entry {
        struct row_key usage_key;
        char tool[ROW_TOOL_MAX];
        char name[CALL_NAME_MAX];
        int64_t time_ms;
        uint32_t index;
};
int ledger_foreach_activity(struct ledger *l,
                            int (*cb)(const struct activity_entry *e, void *u), void *u);

/* Every usage row (calls not filled in). */
int ledger_foreach_row(struct ledger *l, int (*cb)(const struct usage_row *r, void *u),
                       void *u);
/* 0 and the row, or -ENOENT. */
int ledger_get_row(struct ledger *l, const struct row_key *key, struct usage_row *ret_row);

struct ledger_stats {
        uint64_t rows, calls, sources, sessions, rollups;
        uint64_t file_bytes, map_bytes;
};
int ledger_get_stats(struct ledger *l, struct ledger_stats *ret_stats);

/* Drops and recomputes rollups and session sums from the usage rows. */
int ledger_rebuild_rollups(struct ledger *l);

/* For a cache of sums over rollups outside a window around now (the
 * daemon's report cache): the window [lo, hi), and an epoch that changes
 * whenever a rollup outside it may have changed through this handle (a
 * late or future-dated row, a reprice, a rebuild; also a write transaction
 * that then failed) or the window moved. Equal window and epoch: the
 * rollups outside it are as they were. No window until one is set (then
 * lo > hi). */
void ledger_rollup_window(const struct ledger *l, int64_t *ret_lo_ms, int64_t *ret_hi_ms,
                          uint64_t *ret_epoch);
void ledger_rollup_window_set(struct ledger *l, int64_t lo_ms, int64_t hi_ms);
