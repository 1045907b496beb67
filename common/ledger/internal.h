/* Private to the ledger's files (ledger.c, ledger/rows.c, ledger/sums.c):
 * the handle, the named DBs, and the helpers they share. */
#pragma once

#include <lmdb.h>
#include <limits.h>
#include <stdbool.h>

#include "ledger/ledger.h"
#include "ledger/outbox.h"
#include "ledger/newkeys.h"

/* Rows and calls live in DB_ROWS, DB_ROWKEYS and DB_CALLS (ledger/store.c);
 * DB_USAGE and DB_ACTIVITY are schema 1's, open only in a ledger not yet
 * migrated (read-only, or until store_migrate). DB_OUTBOX exists only once a
 * team outbox was turned on (ledger/outbox.c). DB_SRCSTATE (ledger/srcstate.c)
 * is made by any writable open; a ledger opened read-only may lack it. */
enum { DB_META, DB_ROWS, DB_ROWKEYS, DB_CALLS, DB_SOURCES, DB_IDENTITY, DB_ROLLUP, DB_SESSIONS,
       DB_USAGE, DB_ACTIVITY, DB_OUTBOX, DB_SRCSTATE, DB_COUNT };

#define LEDGER_ERROR_MAX (PATH_MAX + 256) /* a path plus a sentence */
#define MAP_LIMIT (1ull << 40) /* the map stops doubling at 1 TiB */
#define VALUE_VERSION 1 /* first byte of every non-row value we encode */

/* The index's backlog (ledger/backlog.c): rows through+1..last are not in
 * rowkeys; their keys are in the handle's newkeys. */
struct backlog {
        uint64_t through, last;
        uint64_t txn_id; /* the txn (by id: a snapshot) they were checked against */
        bool loaded;
        bool dirty;   /* the open write txn added keys */
};

struct ledger {
        MDB_env *env;
        MDB_dbi dbi[DB_COUNT];
        bool rdonly;
        bool marked;   /* the state directory's marker is there (ledger_sync makes it) */
        bool map_full; /* the current write attempt hit MDB_MAP_FULL */
        MDB_txn *group; /* open group commit (ledger/txn.c), else NULL */
        /* the open write txn's cursors for appends to DB_ROWS and DB_CALLS
         * (ledger/store.c): a cursor left at the end of its db appends the
         * next key without a search from the root; LMDB frees them with the
         * txn, so each write txn's start forgets them (ledger/txn.c) */
        MDB_cursor *append_cursor[DB_COUNT];
        int group_err;  /* the group was lost (negative errno) */
        char path[PATH_MAX];
        char error[LEDGER_ERROR_MAX];
        struct usage_row scratch_old, scratch_new; /* commit work space */
        int64_t rollup_lo_ms, rollup_hi_ms; /* ledger_rollup_window: rollups outside it ... */
        uint64_t rollup_epoch;   /* ... changed this many times (lo > hi: no window) */
        struct sums_pending *pending; /* ledger_sums_add: a write's sums (ledger/sums.c) */
        size_t n_pending;
        bool outbox_dbi;   /* dbi[DB_OUTBOX] is open (ledger/outbox.c) */
        bool outbox_on;    /* ledger_outbox_note appends */
        uint64_t outbox_next; /* the next entry's number; 0: not read yet */
        uint64_t row_next; /* the next row id; 0: not read yet (ledger/store.c) */
        bool have_rows;     /* DB_ROWS, DB_ROWKEYS, DB_CALLS are open (a schema-1 ledger
                             * opened read-only has none) */
        bool have_old_rows; /* DB_USAGE, DB_ACTIVITY are open (schema 1, not migrated) */
        struct newkeys newkeys; /* the backlog's row keys and the key filter */
        struct backlog backlog; /* which rows newkeys holds (ledger/backlog.c) */
        bool filter_off;        /* too many keys for the filter: a lookup per row */
        bool have_srcstate;     /* dbi[DB_SRCSTATE] is open */
        bool release_due;       /* the backlog was written into rowkeys: LMDB's pool of
                                 * dirty pages is larger (ledger_release_memory) */
};

/* ---- source states (ledger/srcstate.c) ------------------------------------ */

/* Opens DB_SRCSTATE (made when writable): 0, negative errno. */
int srcstate_open(struct ledger *l, MDB_txn *txn, bool create);
/* A batch's state entries under its source path, inside txn. */
int srcstate_put_batch(struct ledger *l, MDB_txn *txn, const struct commit_batch *b);
/* A renamed source's states under its new path (ledger_move_checkpoint). */
int srcstate_move(struct ledger *l, MDB_txn *txn, const char *from, const char *to);

/* ---- the index's backlog (ledger/backlog.c) ------------------------------ */

/* A writable open: a ledger without a watermark (new, or schema 2, whose
 * rows are all indexed) gets one at its last row. */
int backlog_open(struct ledger *l, MDB_txn *txn);
/* The handle's backlog as txn sees it, read from the rows when it moved:
 * once per txn. -EBUSY: a write txn of this handle holds new keys. */
int backlog_ready(struct ledger *l, MDB_txn *txn);
/* The snapshot's last row id (0: none). */
int rows_last_id(struct ledger *l, MDB_txn *txn, uint64_t *ret_last);
/* A new row's key (backlog_ready first). */
int backlog_add(struct ledger *l, const struct row_key *key, uint64_t id);
/* A backlog row's id by its key. */
bool backlog_find(struct ledger *l, const struct row_key *key, uint64_t *ret_id);
/* After a write txn: committed, or aborted (its keys forgotten). */
void backlog_txn_end(struct ledger *l, bool committed);
/* Whether the backlog is large enough to go into rowkeys (backlog_flush). */
bool backlog_flush_due(const struct ledger *l);
/* After a commit, when due: the backlog into rowkeys in key-range pieces,
 * each its own write txn, the watermark moved by the last. The number of
 * pieces (0: not due, or another handle had written them), or negative
 * errno (l->map_full: the map is full): the keys stay for the next try,
 * which finds those of the pieces written under their rows already;
 * -EBADMSG (l->error says it): all written but some key was in rowkeys
 * under another row. */
int backlog_flush(struct ledger *l);

/* ---- test hooks (testhook.h) ---------------------------------------------- */

/* AGENTMETER_TEST_MIGRATE_CHUNK=<n> moves n rows or calls per migration
 * transaction; AGENTMETER_TEST_MIGRATE_STOP=<k> gives up after k of them (as
 * a crash would), so tests see a migration finished by a later open;
 * AGENTMETER_TEST_MIGRATE_KILL=<k> kills the process (SIGKILL) right after
 * the k-th of them has committed, counting the last one that writes the
 * schema version;
 * AGENTMETER_TEST_KEYFILTER_MAX=<n>: the key filter's largest size;
 * AGENTMETER_TEST_BACKLOG_KEYS=<n>: the index's backlog written at n keys;
 * AGENTMETER_TEST_BACKLOG_PIECE_KEYS=<n>: n keys in each piece of it;
 * AGENTMETER_TEST_BACKLOG_PIECE_KILL=<k>: SIGKILL right after its k-th
 * piece's commit.
 * Each a positive number, else the built-in size (read with
 * test_hook_number(name, 1, SIZE_MAX, size) where it is used). */

/* ---- rows and calls (ledger/store.c) ------------------------------------- */

/* A stored row: its id (0 for a schema-1 row, which has none), content key
 * and encoded value (in the txn's pages). */
struct stored_row {
        uint64_t id;
        struct row_key key;
        MDB_val enc;
};
/* A stored call: its row's id and its index (0 in schema 1), its call key,
 * its activity value. */
struct stored_call {
        uint64_t id;
        uint32_t index;
        struct row_key ck;
        MDB_val enc;
};
/* 0 and the row, or -ENOENT. */
int store_row_find(struct ledger *l, MDB_txn *txn, const struct row_key *key, struct stored_row *ret);
/* Appends a new row under the next id: 0 and its id, 1 when the key is
 * there already (nothing written). */
int store_row_insert(struct ledger *l, MDB_txn *txn, const struct row_key *key, const uint8_t *enc,
                     size_t len, uint64_t *ret_id);
int store_row_update(struct ledger *l, MDB_txn *txn, uint64_t id, const struct row_key *key,
                     const uint8_t *enc, size_t len);
/* The key filter off for good (ledger/txn.c): each new row is looked up. */
void ledger_filter_off(struct ledger *l);
/* Rows as txn sees them. */
int store_rows_count(struct ledger *l, MDB_txn *txn, uint64_t *ret_n);
/* Every row, in id order from from_id (8 bytes big-endian; NULL: the
 * first), then a schema-1 ledger's (only when from_id is NULL); fn's
 * non-zero return stops the walk and is returned. */
int store_rows_walk(struct ledger *l, MDB_txn *txn, const uint8_t *from_id,
                    int (*fn)(const struct stored_row *r, void *u), void *u);
/* A call under row id at index: 0, 1 when that place is taken. append: the
 * row was just inserted (its calls go after every other). */
int store_call_put(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index,
                   const struct row_key *ck, const uint8_t *enc, size_t len, bool append);
/* The call keys under row id (the first cap of them), how many, and the
 * index after the last. */
int store_calls_of(struct ledger *l, MDB_txn *txn, uint64_t id, struct row_key *keys, size_t cap,
                   size_t *ret_n, uint32_t *ret_next_index);
/* 0 and the call at (id, index), or -ENOENT. */
int store_call_get(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index, struct row_key *ret_ck,
                   MDB_val *ret_enc);
/* Every call, from the place from (12 bytes: id, index; NULL: the first),
 * then a schema-1 ledger's (only from the first). */
int store_calls_walk(struct ledger *l, MDB_txn *txn, const uint8_t *from,
                     int (*fn)(const struct stored_call *c, void *u), void *u);
/* A schema-1 ledger's rows and calls into schema 2, in bounded
 * transactions (a crash between them leaves a ledger this finishes). */
int store_migrate(struct ledger *l);
/* ledger_errno, plus: remembers MDB_MAP_FULL so ledger_write retries. */
int ledger_fail(struct ledger *l, int rc);
/* A read txn; handles MDB_MAP_RESIZED. Inside a group commit it is the
 * group's txn (reads see the group's writes): end it with ledger_read_end. */
int ledger_read_begin(struct ledger *l, MDB_txn **ret_txn);
void ledger_read_end(struct ledger *l, MDB_txn *txn);
/* Doubles the map (no write txn may be open), -ENOSPC at the limit. */
int ledger_grow_map(struct ledger *l);
/* ledger_write inside the open group: fn in the group's txn (ledger/txn.c). */
int ledger_group_write(struct ledger *l, int (*fn)(struct ledger *, MDB_txn *, void *),
                       void *ctx);
/* fn in one write txn, retried from scratch after growing the map. */
int ledger_write(struct ledger *l, int (*fn)(struct ledger *, MDB_txn *, void *), void *ctx);
/* Stores path's checkpoint and its identity entry inside txn. */
int ledger_put_checkpoint(struct ledger *l, MDB_txn *txn, const char *path,
                          const struct checkpoint *cp);

/* A row's contribution (sign +1) to the rollups and session sums, or its
 * removal (-1), inside a write txn (ledger/sums.c): written at once
 * (apply), or kept in memory (add) until ledger_sums_flush writes them, as
 * the write's last step; ledger_sums_discard drops them (a write begun
 * again after a failure starts with none). */
int ledger_sums_apply(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign);
int ledger_sums_add(struct ledger *l, MDB_txn *txn, const struct usage_row *row, int sign);
int ledger_sums_flush(struct ledger *l, MDB_txn *txn);
void ledger_sums_discard(struct ledger *l);

/* Calls fn for each entry of a named DB from start (NULL: the first) in a
 * read txn, until fn returns non-zero (returned as is) or the end (0). */
/* Stores a rate-limit snapshot inside a write txn unless the stored one is
 * newer (ledger/limits.c). */
int ledger_limits_put(struct ledger *l, MDB_txn *txn, const char *scope,
                      const struct rate_limits *rl);

/* The team outbox (ledger/outbox.h): opened with the other DBs when it
 * exists; the commit's hook appends one entry inside the write txn. */
int ledger_outbox_open(struct ledger *l, MDB_txn *txn);
int ledger_outbox_note(struct ledger *l, MDB_txn *txn, enum outbox_type type,
                       const struct row_key *key, unsigned flags);
/* A call, named by its place: its row's id and its index. */
int ledger_outbox_note_call(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index);
/* An activity value (ledger/values.c): -ENOBUFS / -EBADMSG. */
int ledger_activity_encode(const struct activity_entry *e, uint8_t *buf, size_t cap, size_t *ret_len);
int ledger_activity_decode(const MDB_val *v, struct activity_entry *ret_entry);

typedef int (*ledger_entry_fn)(const MDB_val *k, const MDB_val *v, void *ctx);
int ledger_scan(struct ledger *l, int db, const MDB_val *start, ledger_entry_fn fn, void *ctx);
