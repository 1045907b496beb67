/* The ledger's transactions: read txns, one write txn per unit with map
 * growth on MDB_MAP_FULL, and group commit (many units, each rows +
 * checkpoint of one source, inside one outer txn, so an initial scan writes
 * each B-tree page once per group, not once per source). Everything else in
 * the ledger builds on these; they call nothing of it but the index's
 * backlog (ledger/backlog.c, which builds only on LMDB, the keys in memory,
 * the error mapping and the test hooks): it is told how each write txn
 * ended, and goes into rowkeys after a commit when it is large, here. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ledger/internal.h"

void ledger_filter_off(struct ledger *l)
{
        (void)newkeys_filter_reset(&l->newkeys, SIZE_MAX); /* frees it */
        l->filter_off = true;
}

/* After a commit: the index's backlog into rowkeys when large, in its own
 * txns, again in a map grown when it was full. The commit stands whatever
 * happens here: keys not written stay in the backlog for the next commit's
 * try. A key found indexed under another row means a writer beside this
 * handle whose keys the filter missed: the filter is off from then on (a
 * lookup per row). */
static void backlog_after_commit(struct ledger *l)
{
        int r;

        while ((r = backlog_flush(l)) < 0 && l->map_full && ledger_grow_map(l) == 0)
                ;
        if (r == -EBADMSG)
                ledger_filter_off(l);
}

int ledger_read_begin(struct ledger *l, MDB_txn **ret_txn)
{
        if (l->group) {
                *ret_txn = l->group;
                return 0;
        }
        int rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, ret_txn);
        if (rc == MDB_MAP_RESIZED) { /* the writer grew the map */
                rc = mdb_env_set_mapsize(l->env, 0);
                if (rc == 0)
                        rc = mdb_txn_begin(l->env, NULL, MDB_RDONLY, ret_txn);
        }
        return ledger_errno(rc);
}

int ledger_grow_map(struct ledger *l)
{
        MDB_envinfo info;
        int rc = mdb_env_info(l->env, &info);
        if (rc)
                return ledger_errno(rc);
        if (info.me_mapsize >= MAP_LIMIT)
                return -ENOSPC;
        return ledger_errno(mdb_env_set_mapsize(l->env, info.me_mapsize * 2));
}

/* The cursors of the last write txn were freed with it (LMDB reuses the
 * txn object itself, so its address cannot tell them apart). */
static void write_txn_started(struct ledger *l)
{
        memset(l->append_cursor, 0, sizeof(l->append_cursor));
}

/* Runs fn in one write txn; on MDB_MAP_FULL (from a put or the commit) the
 * whole txn is aborted, the map doubled, and fn run again from scratch. */
int ledger_write(struct ledger *l, int (*fn)(struct ledger *, MDB_txn *, void *), void *ctx)
{
        if (l->rdonly)
                return -EROFS;
        if (l->group) {
                int r = ledger_group_write(l, fn, ctx);
                if (r >= 0 || !l->map_full)
                        return r;
        }
        for (;;) {
                MDB_txn *txn;
                int r, rc;

                l->map_full = false;
                rc = mdb_txn_begin(l->env, NULL, 0, &txn);
                if (rc)
                        return ledger_errno(rc);
                write_txn_started(l);
                r = fn(l, txn, ctx);
                if (r < 0)
                        mdb_txn_abort(txn);
                else if ((rc = mdb_txn_commit(txn)) != 0) /* frees txn either way */
                        r = ledger_fail(l, rc);
                backlog_txn_end(l, r >= 0);
                if (r >= 0)
                        backlog_after_commit(l);
                if (r >= 0 || !l->map_full)
                        return r;
                r = ledger_grow_map(l);
                if (r < 0)
                        return r;
        }
}


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
        write_txn_started(l);
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
                backlog_txn_end(l, r == 0);
                if (r == 0)
                        backlog_after_commit(l);
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
        if (l->group) {
                mdb_txn_abort(l->group);
                backlog_txn_end(l, false);
        }
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
        backlog_txn_end(l, false);
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
