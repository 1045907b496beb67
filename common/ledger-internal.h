/* Private to ledger.c and ledger-rows.c: the handle, the named DBs, and the
 * transaction helpers both halves of the ledger use. */
#pragma once

#include <lmdb.h>
#include <limits.h>
#include <stdbool.h>

#include "ledger.h"

enum { DB_META, DB_USAGE, DB_ACTIVITY, DB_SOURCES, DB_IDENTITY, DB_ROLLUP, DB_SESSIONS, DB_COUNT };

#define LEDGER_ERROR_MAX (PATH_MAX + 256) /* a path plus a sentence */
#define VALUE_VERSION 1 /* first byte of every non-row value we encode */

struct ledger {
        MDB_env *env;
        MDB_dbi dbi[DB_COUNT];
        bool rdonly;
        bool map_full; /* the current write attempt hit MDB_MAP_FULL */
        char path[PATH_MAX];
        char error[LEDGER_ERROR_MAX];
        struct usage_row scratch_old, scratch_new; /* commit work space */
};

/* ledger_errno, plus: remembers MDB_MAP_FULL so ledger_write retries. */
int ledger_fail(struct ledger *l, int rc);
/* A read txn; handles MDB_MAP_RESIZED. */
int ledger_read_begin(struct ledger *l, MDB_txn **ret_txn);
/* fn in one write txn, retried from scratch after growing the map. */
int ledger_write(struct ledger *l, int (*fn)(struct ledger *, MDB_txn *, void *), void *ctx);
/* Stores path's checkpoint and its identity entry inside txn. */
int ledger_put_checkpoint(struct ledger *l, MDB_txn *txn, const char *path,
                          const struct checkpoint *cp);
