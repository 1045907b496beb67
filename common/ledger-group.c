/* Group commit: many ledger_write units (each rows + checkpoint of one
 * source) inside one outer LMDB txn, so an initial scan writes each B-tree
 * page once per group instead of once per source. */
#include <errno.h>

#include "ledger-internal.h"

int ledger_group_begin(struct ledger *l)
{
        int rc;

        if (l->rdonly)
                return -EROFS;
        if (l->group)
                return 0;
        rc = mdb_txn_begin(l->env, NULL, 0, &l->group);
        if (rc) {
                l->group = NULL;
                return ledger_errno(rc);
        }
        return 0;
}

/* After a group: the map at most half used, so the next group (one ingest
 * slice) rarely meets MDB_MAP_FULL, which would cost it whole. */
static int keep_headroom(struct ledger *l)
{
        MDB_envinfo info;
        MDB_stat st;
        int rc = mdb_env_info(l->env, &info);

        if (rc == 0)
                rc = mdb_env_stat(l->env, &st);
        if (rc)
                return ledger_errno(rc);
        if ((info.me_last_pgno + 1) * (uint64_t)st.ms_psize <= info.me_mapsize / 2)
                return 0;
        rc = ledger_grow_map(l);
        return rc == -ENOSPC ? 0 : rc;
}

int ledger_group_end(struct ledger *l)
{
        MDB_txn *txn = l->group;
        int r = 0;

        l->group = NULL;
        if (txn) {
                l->map_full = false;
                r = ledger_fail(l, mdb_txn_commit(txn)); /* frees txn either way */
        }
        if (r == 0 && l->group_err < 0)
                r = l->group_err;
        l->group_err = 0;
        if (r == 0)
                r = keep_headroom(l);
        else if (l->map_full)
                (void)ledger_grow_map(l); /* so the sources read again fit */
        return r;
}

void ledger_group_abort(struct ledger *l)
{
        if (l->group)
                mdb_txn_abort(l->group);
        l->group = NULL;
        l->group_err = 0;
}

/* fn straight in the group's txn (a nested txn per unit would copy every
 * page it touches). A failed unit leaves partial writes, so the whole group
 * is dropped and remembered as lost for ledger_group_end; the writes after
 * it get their own txns. On MDB_MAP_FULL the map is grown here and
 * ledger_write runs fn again on its own. */
int ledger_group_write(struct ledger *l, int (*fn)(struct ledger *, MDB_txn *, void *),
                       void *ctx)
{
        int r;

        l->map_full = false;
        r = fn(l, l->group, ctx);
        if (r >= 0)
                return r;
        mdb_txn_abort(l->group);
        l->group = NULL;
        l->group_err = r;
        if (l->map_full) {
                int g = ledger_grow_map(l);
                if (g < 0) {
                        l->map_full = false;
                        return g;
                }
        }
        return r;
}

void ledger_read_end(struct ledger *l, MDB_txn *txn)
{
        if (txn != l->group)
                mdb_txn_abort(txn);
}
