/* A harness's SQLite database as every table adapter reads it: read-only,
 * one read transaction per call (all queries see one snapshot, the writer
 * is never blocked), a WAL database without its -wal in a directory we
 * cannot write opened as immutable, a fingerprint of the database and its
 * -wal that tells whether anything changed and whether a writer was at
 * work a moment ago (its commit may not be visible yet: "settling"). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"

struct sqlite3;
struct sqlite3_stmt;

#define ADAPT_DB_BUSY_MS   200  /* a locked database waits this long, then -EBUSY */
#define ADAPT_DB_SETTLE_MS 1000 /* a write this recent may not be committed yet */

struct adapt_db {
        struct sqlite3 *db;
        bool immutable; /* opened without locks or -wal: a writer that started
                         * meanwhile may have changed the file under the read,
                         * so the caller checks adapt_db_fingerprint is
                         * unchanged after it and reads again otherwise */
};

/* Opens path read-only and begins a read transaction: 0; -ENOENT, -EACCES,
 * -EBUSY, -EBADMSG (not a database), -ENOMEM. */
int adapt_db_open(const char *path, struct adapt_db *ret_db);
/* Ends the read transaction and closes (NULL-safe, idempotent). */
void adapt_db_close(struct adapt_db *d);

/* SQLite result codes as negative errno: -EBUSY locked, -EBADMSG corrupt,
 * -EPROTO a schema we do not know (no such table or column), -EACCES,
 * -ENOENT, -ENOMEM, -EIO. */
int adapt_sql_errno(struct sqlite3 *db, int rc);
/* What one of those errors means for a database, in words for status and
 * the log ("the database is corrupt ..."); strerror's for any other. */
const char *adapt_db_strerror(int err);

/* A count or an amount a harness keeps in a column of its own (tokens,
 * USD): what the column holds, judged by its storage class, never by what
 * SQLite would convert it to. */
enum adapt_sql_num {
        ADAPT_NUM_OK,   /* *ret set */
        ADAPT_NUM_NULL, /* NULL: nothing reported (*ret 0) */
        ADAPT_NUM_BAD,  /* text, a blob, negative, or past the bound: not a count */
};
#define ADAPT_COUNT_MAX 1000000000000000ULL /* 10^15 tokens: past any session, below 2^53 */
#define ADAPT_USD_MAX   1e9                 /* a billion dollars */
/* A token count: an INTEGER from 0 to ADAPT_COUNT_MAX, or a REAL in that
 * range, its fraction dropped (40.4 tokens are 40, as OpenCode's are read). */
enum adapt_sql_num adapt_sql_count(struct sqlite3_stmt *st, int col, uint64_t *ret);
/* An amount in USD: a finite INTEGER or REAL from 0 to ADAPT_USD_MAX. */
enum adapt_sql_num adapt_sql_usd(struct sqlite3_stmt *st, int col, double *ret);

/* A row's key (a session id): the text of column col copied whole into
 * buf, NUL-terminated; false when it is NULL, empty or does not fit. */
bool adapt_sql_key(struct sqlite3_stmt *st, int col, char *buf, size_t cap);

/* A digest of columns cols[0..n) of the current row as written (storage
 * class and bytes): the same values give the same digest. */
uint32_t adapt_sql_digest(struct sqlite3_stmt *st, const int *cols, int n);

/* Whether the database has no tables yet (a new, empty file). */
bool adapt_db_empty(struct adapt_db *d);

/* A hash of the database's and its -wal's sizes, mtimes, change counter and
 * WAL header: what a reader leaves as it was. *ret_settling (may be NULL):
 * either was written less than ADAPT_DB_SETTLE_MS ago. */
uint64_t adapt_db_fingerprint(const char *path, bool *ret_settling);

/* One read of path, from scratch each time: read_once(ctx, ret_immutable)
 * says whether it opened the database immutable. */
typedef int (*adapt_db_read_fn)(void *ctx, bool *ret_immutable);
/* read_once, until an immutable read saw the database as *io_fp says it was
 * (a writer that came meanwhile may have changed the file under it): then
 * *io_fp and *io_settling are taken again and it reads again, three reads
 * at the most, then -EBUSY. Otherwise its result. read_once resets what an
 * earlier read of this call produced. */
int adapt_db_read_stable(const char *path, uint64_t *io_fp, bool *io_settling, adapt_db_read_fn read_once,
                         void *ctx);

/* What the -shm's wal-index says was last published: taken before a read,
 * it tells afterwards whether a commit may have been missed. */
struct adapt_wal_mark {
        uint8_t state;   /* ADAPT_WAL_NONE, _BUSY (its two copies differ: being
                          * written this instant) or _OK */
        uint32_t change; /* the writers' transaction counter */
        uint32_t mx;     /* the last frame published */
};
enum { ADAPT_WAL_NONE = 0, ADAPT_WAL_BUSY = 1, ADAPT_WAL_OK = 2 };
void adapt_db_wal_mark(const char *path, struct adapt_wal_mark *ret_mark);
/* Whether a commit is written but a read begun at before may not have seen
 * it: one was published since before, one is being published, or the -wal
 * holds a commit frame of its current generation past the last published
 * frame (the writer syncs the -wal, then publishes, with no file event in
 * between). Then a read a few milliseconds later sees it. */
bool adapt_db_commit_pending(const char *path, const struct adapt_wal_mark *before);
/* What a read to the end that found the database settling (or not), begun
 * at mark, tells the daemon: COLLECT_DONE, COLLECT_SETTLING, or
 * COLLECT_PUBLISHING when a commit may have been missed
 * (adapt_db_commit_pending). */
enum collect_result adapt_db_read_end(const char *path, bool settling, const struct adapt_wal_mark *mark);
