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
 * bulk.
 *
 * The bulk write comes after the rows' commit, in pieces: the sorted keys
 * cut into key ranges, each written in its own txn, so a txn makes dirty
 * (LMDB mallocs each such page, and keeps them for its next txns) about
 * BACKLOG_PIECE_LEAVES leaves of the index, not every leaf of it (16 MB at
 * 10 GB of history). The watermark moves in the last piece's txn. A crash
 * before it leaves the rows in the backlog, which the next handle reads back
 * from the rows; the keys the first pieces wrote are then in rowkeys and in
 * the backlog at once, under the same row id, and count as written when
 * they are met again: nothing is lost, nothing counted twice.
 *
 * A handle's backlog is checked against the txn's snapshot (watermark, last
 * row id) once per txn id and read again when another handle moved them. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"
#include "testhook.h"

#define BACKLOG_FLUSH_KEYS 65536 /* about 3 MB of keys, hash slots and order */
#define BACKLOG_PIECE_LEAVES 256 /* index leaves a piece's key range spans: ~1 MB dirty */

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

bool backlog_flush_due(const struct ledger *l)
{
        const struct backlog *b = &l->backlog;

        return b->loaded && !b->dirty && l->newkeys.n &&
               l->newkeys.n >= test_hook_number("AGENTMETER_TEST_BACKLOG_KEYS", 1, SIZE_MAX, BACKLOG_FLUSH_KEYS);
}

/* Keys per piece: the index's leaves cut into ranges of about
 * BACKLOG_PIECE_LEAVES, the sorted keys cut as many times (they are hashes:
 * spread evenly over the key space). */
static size_t piece_keys(struct ledger *l, MDB_txn *txn, size_t n)
{
        MDB_stat ms;
        size_t pieces = 1;

        if (mdb_stat(txn, l->dbi[DB_ROWKEYS], &ms) == 0)
                pieces = ms.ms_leaf_pages / BACKLOG_PIECE_LEAVES + 1;
        size_t per = (n + pieces - 1) / pieces;
        return test_hook_number("AGENTMETER_TEST_BACKLOG_PIECE_KEYS", 1, SIZE_MAX, per);
}

int backlog_flush(struct ledger *l)
{
        struct backlog *b = &l->backlog;
        struct newkeys *nk = &l->newkeys;
        size_t kill_at = test_hook_number("AGENTMETER_TEST_BACKLOG_PIECE_KILL", 1, SIZE_MAX, SIZE_MAX);
        size_t n = nk->n, per = 0, done = 0, pieces = 0, conflicts = 0;

        if (!backlog_flush_due(l))
                return 0;
        /* out of memory for the order: inserted as they came (slower, the same) */
        bool sorted = newkeys_sort(nk) == 0;
        while (done < n) {
                MDB_txn *txn;
                uint64_t through, last;
                int r, rc = mdb_txn_begin(l->env, NULL, 0, &txn);

                if (rc)
                        return ledger_errno(rc);
                l->map_full = false;
                if ((r = rows_last_id(l, txn, &last)) < 0 || (r = watermark(l, txn, last, &through)) < 0) {
                        mdb_txn_abort(txn);
                        return r;
                }
                if (through != b->through) {
                        /* another handle wrote the index meanwhile: read back */
                        mdb_txn_abort(txn);
                        b->loaded = false;
                        newkeys_clear(nk);
                        return 0;
                }
                if (!per)
                        per = piece_keys(l, txn, n);
                size_t to = n - done > per ? done + per : n;
                /* a key there under another row (two rows of one content
                 * key: never made by a handle, whose lookups see every key
                 * of its snapshot) is kept as it is, and counted */
                r = ledger_fail(l, newkeys_write_range(nk, sorted, done, to, txn, l->dbi[DB_ROWKEYS], &conflicts));
                if (r == 0 && to == n)
                        r = put_watermark(l, txn, b->last);
                if (r < 0)
                        mdb_txn_abort(txn);
                else
                        r = ledger_fail(l, mdb_txn_commit(txn));
                if (r < 0) /* the keys stay (l->map_full: the map is full) */
                        return r;
                done = to;
                if (++pieces == kill_at)
                        raise(SIGKILL);
        }
        newkeys_clear(nk);
        b->through = b->last;
        l->release_due = true;
        if (conflicts) {
                snprintf(l->error, sizeof(l->error),
                         "ledger %s: %zu content keys indexed under another row (kept as they were)", l->path,
                         conflicts);
                return -EBADMSG;
        }
        return pieces < INT_MAX ? (int)pieces : INT_MAX;
}

void backlog_txn_end(struct ledger *l, bool committed)
{
        struct backlog *b = &l->backlog;

        if (!b->dirty)
                return;
        if (!committed) { /* read back from the rows at the next txn */
                b->loaded = false;
                newkeys_clear(&l->newkeys);
        }
        b->dirty = false;
}
