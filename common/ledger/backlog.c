/* The index's backlog (schema 3): db rowkeys (content key -> row id) holds
 * the rows up to a watermark, meta "rowkeys_through"; the rows after it
 * (each row's value starts with its content key) are the backlog, whose keys
 * a handle keeps in memory (ledger/newkeys.h) and writes into rowkeys, in key
 * order, only when there are BACKLOG_FLUSH_KEYS of them.
 *
 * Why: content keys are hashes, so a commit that indexed its own rows wrote
 * a random leaf of rowkeys per row: a scan's every group commit rewrote most
 * of the index (half the bytes a dense scan wrote) and every live append a
 * path of it. Now a commit writes rows and their index entries arrive in
 * bulk. The watermark moves in the txn that writes the entries, so a crash
 * leaves rows either indexed or in the backlog, which the next handle reads
 * back from the rows: nothing is lost, nothing counted twice.
 *
 * A handle's backlog is checked against the txn's snapshot (watermark, last
 * row id) once per txn id and read again when another handle moved them. */
#include <errno.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"
#include "testhook.h"

#define BACKLOG_FLUSH_KEYS 65536 /* about 3 MB of keys, hash slots and order */

static const MDB_val through_key = {.mv_size = 15, .mv_data = (void *)"rowkeys_through"};

int rows_last_id(struct ledger *l, MDB_txn *txn, uint64_t *ret_last)
{
        MDB_cursor *c;
        MDB_val k, v;
        int rc = mdb_cursor_open(txn, l->dbi[DB_ROWS], &c);

        if (rc)
                return ledger_fail(l, rc);
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
        mdb_cursor_close(c);
        if (rc == MDB_NOTFOUND) {
                *ret_last = 0;
                return 0;
        }
        if (rc)
                return ledger_fail(l, rc);
        if (k.mv_size != 8)
                return -EBADMSG;
        *ret_last = be64_get(k.mv_data);
        return 0;
}

/* The snapshot's watermark; a ledger without one (schema 2, read-only:
 * backlog_open writes it) has every row indexed. */
static int watermark(struct ledger *l, MDB_txn *txn, uint64_t last, uint64_t *ret_through)
{
        MDB_val v;
        int rc = mdb_get(txn, l->dbi[DB_META], (MDB_val *)&through_key, &v);

        if (rc == MDB_NOTFOUND) {
                *ret_through = last;
                return 0;
        }
        if (rc)
                return ledger_fail(l, rc);
        if (v.mv_size != 8)
                return -EBADMSG;
        *ret_through = be64_get(v.mv_data);
        return *ret_through <= last ? 0 : -EBADMSG;
}

/* Every row after through into the handle's keys. */
static int load(struct ledger *l, MDB_txn *txn, uint64_t through)
{
        struct newkeys *nk = &l->newkeys;
        uint8_t from[8];
        MDB_cursor *c;
        MDB_val k = {.mv_size = sizeof(from), .mv_data = from}, v;
        int r = 0, rc;

        newkeys_clear(nk);
        be64_put(from, through + 1);
        rc = mdb_cursor_open(txn, l->dbi[DB_ROWS], &c);
        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0 && r == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                if (k.mv_size != 8 || v.mv_size < ROW_KEY_SIZE) {
                        r = -EBADMSG;
                        break;
                }
                struct row_key key;
                memcpy(key.b, v.mv_data, ROW_KEY_SIZE);
                r = newkeys_add(nk, &key, be64_get(k.mv_data));
        }
        mdb_cursor_close(c);
        if (r < 0) {
                newkeys_clear(nk);
                return r;
        }
        return rc == MDB_NOTFOUND ? 0 : ledger_fail(l, rc);
}

static int put_watermark(struct ledger *l, MDB_txn *txn, uint64_t through)
{
        uint8_t tb[8];
        MDB_val v = {.mv_size = sizeof(tb), .mv_data = tb};

        be64_put(tb, through);
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], (MDB_val *)&through_key, &v, 0));
}

int backlog_open(struct ledger *l, MDB_txn *txn)
{
        MDB_val v;
        uint64_t last;
        int r, rc = mdb_get(txn, l->dbi[DB_META], (MDB_val *)&through_key, &v);

        if (rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        if ((r = rows_last_id(l, txn, &last)) < 0)
                return r;
        return put_watermark(l, txn, last);
}

int backlog_ready(struct ledger *l, MDB_txn *txn)
{
        struct backlog *b = &l->backlog;
        uint64_t id = mdb_txn_id(txn), last = 0, through = 0;
        int r;

        if (b->loaded && b->txn_id == id)
                return 0;
        if (b->dirty)
                return -EBUSY; /* another txn while a write txn holds new keys */
        if ((r = rows_last_id(l, txn, &last)) < 0 || (r = watermark(l, txn, last, &through)) < 0)
                return r;
        if (!b->loaded || b->through != through || b->last != last) {
                b->loaded = false;
                if ((r = load(l, txn, through)) < 0)
                        return r;
                /* keys another handle added may be missing from the filter */
                l->newkeys.complete = false;
                b->through = through;
                b->last = last;
                b->loaded = true;
        }
        b->txn_id = id;
        return 0;
}

int backlog_add(struct ledger *l, const struct row_key *key, uint64_t id)
{
        int r = newkeys_add(&l->newkeys, key, id);

        if (r < 0)
                return r;
        l->backlog.last = id;
        l->backlog.dirty = true;
        return 0;
}

bool backlog_find(struct ledger *l, const struct row_key *key, uint64_t *ret_id)
{
        return l->backlog.loaded && newkeys_find(&l->newkeys, key, ret_id);
}

int backlog_flush(struct ledger *l, MDB_txn *txn)
{
        struct backlog *b = &l->backlog;
        int r;

        if (!b->loaded || b->txn_id != mdb_txn_id(txn) || !l->newkeys.n ||
            l->newkeys.n < test_hook_number("AGENTMETER_TEST_BACKLOG_KEYS", 1, SIZE_MAX, BACKLOG_FLUSH_KEYS))
                return 0;
        r = ledger_fail(l, newkeys_write(&l->newkeys, txn, l->dbi[DB_ROWKEYS]));
        if (r == 0)
                r = put_watermark(l, txn, b->last);
        if (r < 0)
                return r;
        b->dirty = true;
        b->flushed = true;
        return 0;
}

void backlog_txn_end(struct ledger *l, bool committed)
{
        struct backlog *b = &l->backlog;

        if (!b->dirty)
                return;
        if (!committed) { /* read back from the rows at the next txn */
                b->loaded = false;
                newkeys_clear(&l->newkeys);
        } else if (b->flushed) {
                newkeys_clear(&l->newkeys);
                b->through = b->last;
                l->release_due = true;
        }
        b->dirty = b->flushed = false;
}
