/* LMDB's return codes as the negative errno every ledger function returns:
 * the one mapping, below the transactions (ledger/txn.c) and the index's
 * backlog (ledger/backlog.c) that both use it. */
#include <errno.h>

#include "ledger/internal.h"

int ledger_errno(int rc)
{
        if (rc >= 0)
                return -rc;
        switch (rc) {
        case MDB_MAP_FULL: return -ENOSPC;
        case MDB_NOTFOUND: return -ENOENT;
        case MDB_KEYEXIST: return -EEXIST;
        case MDB_CORRUPTED:
        case MDB_INVALID: return -EBADMSG;
        case MDB_VERSION_MISMATCH: return -EPROTO;
        default: return -EIO;
        }
}

/* Maps an LMDB failure inside a write txn, remembering MAP_FULL for the retry. */
int ledger_fail(struct ledger *l, int rc)
{
        if (rc == MDB_MAP_FULL)
                l->map_full = true;
        return ledger_errno(rc);
}
