/* Where the ledger keeps rows and tool calls (schema 2): a row is appended
 * under the next row id (db `rows`: id -> content key + row value), found
 * by its content key through db `rowkeys` (content key -> id), and its tool
 * calls sit under its id (db `calls`: id + index -> call key + activity
 * value). Keys that grow with every insert land on the last page of their
 * B-tree, so a scan writes each page about once; `rowkeys`, whose keys are
 * hashes, gets its entries in bulk (ledger/backlog.c). Schema 1 kept rows
 * and calls under their content keys (dbs `usage` and `activity`):
 * store_migrate moves them. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"
#include "testhook.h"

#define ROW_ID_SIZE 8
#define CALL_ID_SIZE 12
#define MIGRATE_CHUNK 20000 /* rows or calls moved per transaction */

static void call_id(uint8_t k[CALL_ID_SIZE], uint64_t id, uint32_t index)
{
        be64_put(k, id);
        k[8] = (uint8_t)(index >> 24);
        k[9] = (uint8_t)(index >> 16);
        k[10] = (uint8_t)(index >> 8);
        k[11] = (uint8_t)index;
}

static uint32_t call_index(const uint8_t *k)
{
        return be32_get(k + 8);
}

/* The next row id (one past the last stored), read once per handle: ids
 * taken by a transaction that then failed are gaps, never reused. */
static int next_row_id(struct ledger *l, MDB_txn *txn, uint64_t *ret)
{
        if (!l->row_next) {
                uint64_t last;
                int r = rows_last_id(l, txn, &last);
                if (r < 0)
                        return r;
                l->row_next = last + 1;
        }
        *ret = l->row_next;
        return 0;
}

/* An append (MDB_APPEND) through the write txn's cursor for db, opened at
 * its first append: left at the end of the db, it takes the next key with
 * no search from the root (mdb_put opens a cursor and searches every time). */
static int append_put(struct ledger *l, MDB_txn *txn, int db, MDB_val *k, MDB_val *v)
{
        if (!l->append_cursor[db]) {
                int rc = mdb_cursor_open(txn, l->dbi[db], &l->append_cursor[db]);
                if (rc) {
                        l->append_cursor[db] = NULL;
                        return rc;
                }
        }
        return mdb_cursor_put(l->append_cursor[db], k, v, MDB_APPEND);
}

static int put_row_value(struct ledger *l, MDB_txn *txn, uint64_t id, const struct row_key *key,
                         const uint8_t *enc, size_t len, unsigned flags)
{
        uint8_t kb[ROW_ID_SIZE], vb[ROW_KEY_SIZE + ROW_ENCODED_MAX];
        MDB_val k = {.mv_size = ROW_ID_SIZE, .mv_data = kb}, v = {.mv_size = ROW_KEY_SIZE + len, .mv_data = vb};

        if (len > ROW_ENCODED_MAX)
                return -EINVAL;
        be64_put(kb, id);
        memcpy(vb, key->b, ROW_KEY_SIZE);
        memcpy(vb + ROW_KEY_SIZE, enc, len);
        return ledger_fail(l, flags == MDB_APPEND ? append_put(l, txn, DB_ROWS, &k, &v)
                                                  : mdb_put(txn, l->dbi[DB_ROWS], &k, &v, flags));
}

static int stored_from(const MDB_val *k, const MDB_val *v, struct stored_row *ret)
{
        if (k->mv_size != ROW_ID_SIZE || v->mv_size < ROW_KEY_SIZE)
                return -EBADMSG;
        ret->id = be64_get(k->mv_data);
        memcpy(ret->key.b, v->mv_data, ROW_KEY_SIZE);
        ret->enc = (MDB_val){.mv_size = v->mv_size - ROW_KEY_SIZE,
                             .mv_data = (uint8_t *)v->mv_data + ROW_KEY_SIZE};
        return 0;
}

/* The filter of every content key (ledger/newkeys.h), built from rowkeys
 * and the backlog's keys when first needed and again, larger, when it
 * outgrew its size; off for good beyond NEWKEYS_FILTER_MAX_KEYS or when it
 * cannot be built (a lookup per row then, as without it). */
static void filter_ready(struct ledger *l, MDB_txn *txn)
{
        struct newkeys *nk = &l->newkeys;
        MDB_cursor *c;
        MDB_stat ms;
        MDB_val k, v;
        size_t keys;
        int rc;

        if (l->filter_off || (nk->complete && !newkeys_filter_full(nk)))
                return;
        size_t max = test_hook_number("AGENTMETER_TEST_KEYFILTER_MAX", 1, SIZE_MAX, NEWKEYS_FILTER_MAX_KEYS);
        if (mdb_stat(txn, l->dbi[DB_ROWKEYS], &ms) != 0 || (keys = ms.ms_entries + nk->n) > max) {
                ledger_filter_off(l);
                return;
        }
        /* room for as many again: built again only as the ledger doubles */
        keys = 2 * keys < max ? 2 * keys : max;
        if (newkeys_filter_reset(nk, keys) < 0 || mdb_cursor_open(txn, l->dbi[DB_ROWKEYS], &c) != 0) {
                ledger_filter_off(l);
                return;
        }
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && k.mv_size == ROW_KEY_SIZE;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
                newkeys_filter_add(nk, (const struct row_key *)k.mv_data);
        mdb_cursor_close(c);
        if (rc != MDB_NOTFOUND) {
                ledger_filter_off(l);
                return;
        }
        for (size_t i = 0; i < nk->n; i++)
                newkeys_filter_add(nk, &nk->v[i].key);
        nk->complete = true;
}

static int row_by_id(struct ledger *l, MDB_txn *txn, uint64_t id, struct stored_row *ret)
{
        uint8_t ib[ROW_ID_SIZE];
        MDB_val ik = {.mv_size = ROW_ID_SIZE, .mv_data = ib}, iv;
        int rc;

        be64_put(ib, id);
        rc = mdb_get(txn, l->dbi[DB_ROWS], &ik, &iv);
        if (rc == MDB_NOTFOUND)
                return -EBADMSG; /* an index entry without its row */
        if (rc)
                return ledger_fail(l, rc);
        return stored_from(&ik, &iv, ret);
}

int store_row_find(struct ledger *l, MDB_txn *txn, const struct row_key *key, struct stored_row *ret)
{
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)key->b}, v;
        uint64_t id;
        int rc;

        /* the filter holds every key of every snapshot: its "not there"
         * holds for a read txn too */
        if (l->have_rows && (rc = backlog_ready(l, txn)) < 0)
                return rc;
        if (l->have_rows && newkeys_maybe_known(&l->newkeys, key)) {
                if (backlog_find(l, key, &id))
                        return row_by_id(l, txn, id, ret);
                rc = mdb_get(txn, l->dbi[DB_ROWKEYS], &k, &v);
                if (rc == 0) {
                        if (v.mv_size != ROW_ID_SIZE)
                                return -EBADMSG;
                        return row_by_id(l, txn, be64_get(v.mv_data), ret);
                }
                if (rc != MDB_NOTFOUND)
                        return ledger_fail(l, rc);
        }
        if (l->have_old_rows) { /* a schema-1 ledger read as it is */
                rc = mdb_get(txn, l->dbi[DB_USAGE], &k, &v);
                if (rc == 0) {
                        ret->id = 0;
                        ret->key = *key;
                        ret->enc = v;
                        return 0;
                }
                if (rc != MDB_NOTFOUND)
                        return ledger_fail(l, rc);
        }
        return -ENOENT;
}

int store_row_insert(struct ledger *l, MDB_txn *txn, const struct row_key *key, const uint8_t *enc,
                     size_t len, uint64_t *ret_id)
{
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = (void *)key->b}, v;
        uint64_t id = 0;
        int r, rc;

        if ((r = backlog_ready(l, txn)) < 0)
                return r;
        filter_ready(l, txn);
        if (newkeys_maybe_known(&l->newkeys, key)) {
                if (backlog_find(l, key, &id))
                        return 1;
                rc = mdb_get(txn, l->dbi[DB_ROWKEYS], &k, &v);
                if (rc == 0)
                        return 1;
                if (rc != MDB_NOTFOUND)
                        return ledger_fail(l, rc);
        }
        if ((r = next_row_id(l, txn, &id)) < 0)
                return r;
        /* its rowkeys entry goes in with the backlog's (ledger/backlog.c) */
        if ((r = backlog_add(l, key, id)) < 0)
                return r;
        r = put_row_value(l, txn, id, key, enc, len, MDB_APPEND);
        if (r < 0)
                return r;
        newkeys_filter_add(&l->newkeys, key);
        l->row_next = id + 1;
        *ret_id = id;
        return 0;
}

int store_rows_count(struct ledger *l, MDB_txn *txn, uint64_t *ret_n)
{
        MDB_stat ms;
        int rc = mdb_stat(txn, l->dbi[DB_ROWS], &ms);

        if (rc)
                return ledger_fail(l, rc);
        *ret_n = ms.ms_entries;
        return 0;
}

int store_row_update(struct ledger *l, MDB_txn *txn, uint64_t id, const struct row_key *key,
                     const uint8_t *enc, size_t len)
{
        return put_row_value(l, txn, id, key, enc, len, 0);
}

/* A cursor over db from the key start (start_len bytes; NULL: the first),
 * each entry to fn until it returns non-zero (returned as is). */
static int walk_db(struct ledger *l, MDB_txn *txn, int db, const uint8_t *start, size_t start_len,
                   int (*fn)(const MDB_val *k, const MDB_val *v, void *ctx), void *ctx)
{
        MDB_cursor *c;
        MDB_val k = {.mv_size = start_len, .mv_data = (void *)start}, v;
        int r = 0, rc = mdb_cursor_open(txn, l->dbi[db], &c);

        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, start ? MDB_SET_RANGE : MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
                if ((r = fn(&k, &v, ctx)) != 0)
                        break;
        mdb_cursor_close(c);
        if (r != 0)
                return r;
        return rc == MDB_NOTFOUND ? 0 : ledger_fail(l, rc);
}

struct walk { /* the caller's function for the entries' kind, and its data */
        int (*row)(const struct stored_row *r, void *u);
        int (*call)(const struct stored_call *c, void *u);
        void *u;
};

static int row_entry(const MDB_val *k, const MDB_val *v, void *ctx)
{
        const struct walk *w = ctx;
        struct stored_row s;
        int r = stored_from(k, v, &s);

        return r < 0 ? r : w->row(&s, w->u);
}

static int old_row_entry(const MDB_val *k, const MDB_val *v, void *ctx)
{
        const struct walk *w = ctx;
        struct stored_row s = {.enc = *v};

        if (k->mv_size != ROW_KEY_SIZE)
                return -EBADMSG;
        memcpy(s.key.b, k->mv_data, ROW_KEY_SIZE);
        return w->row(&s, w->u);
}

int store_rows_walk(struct ledger *l, MDB_txn *txn, const uint8_t *from_id,
                    int (*fn)(const struct stored_row *r, void *u), void *u)
{
        struct walk w = {.row = fn, .u = u};
        int r = l->have_rows ? walk_db(l, txn, DB_ROWS, from_id, ROW_ID_SIZE, row_entry, &w) : 0;

        if (r == 0 && l->have_old_rows && !from_id)
                r = walk_db(l, txn, DB_USAGE, NULL, 0, old_row_entry, &w);
        return r;
}

/* ---- calls --------------------------------------------------------------- */

int store_call_put(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index,
                   const struct row_key *ck, const uint8_t *enc, size_t len, bool append)
{
        uint8_t kb[CALL_ID_SIZE], vb[ROW_KEY_SIZE + 256];
        MDB_val k = {.mv_size = CALL_ID_SIZE, .mv_data = kb}, v = {.mv_size = ROW_KEY_SIZE + len, .mv_data = vb};
        int rc;

        if (len > sizeof(vb) - ROW_KEY_SIZE)
                return -EINVAL;
        call_id(kb, id, index);
        memcpy(vb, ck->b, ROW_KEY_SIZE);
        memcpy(vb + ROW_KEY_SIZE, enc, len);
        rc = append ? append_put(l, txn, DB_CALLS, &k, &v)
                    : mdb_put(txn, l->dbi[DB_CALLS], &k, &v, MDB_NOOVERWRITE);
        if (rc == MDB_KEYEXIST)
                return 1;
        return ledger_fail(l, rc);
}

int store_calls_of(struct ledger *l, MDB_txn *txn, uint64_t id, struct row_key *keys, size_t cap,
                   size_t *ret_n, uint32_t *ret_next_index)
{
        uint8_t kb[CALL_ID_SIZE];
        MDB_val k = {.mv_size = CALL_ID_SIZE, .mv_data = kb}, v;
        MDB_cursor *c;
        size_t n = 0;
        uint32_t next = 0;
        int rc;

        call_id(kb, id, 0);
        rc = mdb_cursor_open(txn, l->dbi[DB_CALLS], &c);
        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                if (k.mv_size != CALL_ID_SIZE || be64_get(k.mv_data) != id)
                        break;
                if (v.mv_size >= ROW_KEY_SIZE && n < cap)
                        memcpy(keys[n++].b, v.mv_data, ROW_KEY_SIZE);
                next = call_index(k.mv_data) + 1;
        }
        mdb_cursor_close(c);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        *ret_n = n;
        *ret_next_index = next;
        return 0;
}

int store_call_get(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index, struct row_key *ret_ck,
                   MDB_val *ret_enc)
{
        uint8_t kb[CALL_ID_SIZE];
        MDB_val k = {.mv_size = CALL_ID_SIZE, .mv_data = kb}, v;
        int rc;

        call_id(kb, id, index);
        rc = mdb_get(txn, l->dbi[DB_CALLS], &k, &v);
        if (rc)
                return ledger_errno(rc);
        if (v.mv_size < ROW_KEY_SIZE)
                return -EBADMSG;
        memcpy(ret_ck->b, v.mv_data, ROW_KEY_SIZE);
        *ret_enc = (MDB_val){.mv_size = v.mv_size - ROW_KEY_SIZE, .mv_data = (uint8_t *)v.mv_data + ROW_KEY_SIZE};
        return 0;
}

static int call_entry(const MDB_val *k, const MDB_val *v, void *ctx)
{
        const struct walk *w = ctx;
        struct stored_call s;

        if (k->mv_size != CALL_ID_SIZE || v->mv_size < ROW_KEY_SIZE)
                return -EBADMSG;
        s.id = be64_get(k->mv_data);
        s.index = call_index(k->mv_data);
        memcpy(s.ck.b, v->mv_data, ROW_KEY_SIZE);
        s.enc = (MDB_val){.mv_size = v->mv_size - ROW_KEY_SIZE, .mv_data = (uint8_t *)v->mv_data + ROW_KEY_SIZE};
        return w->call(&s, w->u);
}

static int old_call_entry(const MDB_val *k, const MDB_val *v, void *ctx)
{
        const struct walk *w = ctx;
        struct stored_call s = {.enc = *v};

        if (k->mv_size != ROW_KEY_SIZE)
                return -EBADMSG;
        memcpy(s.ck.b, k->mv_data, ROW_KEY_SIZE);
        return w->call(&s, w->u);
}

int store_calls_walk(struct ledger *l, MDB_txn *txn, const uint8_t *from,
                     int (*fn)(const struct stored_call *c, void *u), void *u)
{
        struct walk w = {.call = fn, .u = u};
        int r = l->have_rows ? walk_db(l, txn, DB_CALLS, from, CALL_ID_SIZE, call_entry, &w) : 0;

        if (r == 0 && l->have_old_rows && !from)
                r = walk_db(l, txn, DB_ACTIVITY, NULL, 0, old_call_entry, &w);
        return r;
}

/* ---- schema 1 -> 3 ---------------------------------------------------------- */

/* Rows or calls per migration txn: MIGRATE_CHUNK, or the test hook's
 * (ledger/internal.h). Read once per txn, not once per entry moved. */
static size_t migrate_chunk(void)
{
        return test_hook_number("AGENTMETER_TEST_MIGRATE_CHUNK", 1, SIZE_MAX, MIGRATE_CHUNK);
}

/* Up to MIGRATE_CHUNK rows out of `usage` into `rows` and `rowkeys`. */
static int migrate_rows_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        bool *done = u;
        MDB_cursor *c;
        MDB_val k, v;
        size_t n = 0, chunk = migrate_chunk();
        int r = 0, rc;

        l->row_next = 0; /* a retried txn reads it again */
        rc = mdb_cursor_open(txn, l->dbi[DB_USAGE], &c);
        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && n < chunk;
             rc = mdb_cursor_get(c, &k, &v, MDB_FIRST), n++) {
                struct row_key key;
                uint64_t id;
                if (k.mv_size != ROW_KEY_SIZE || v.mv_size > ROW_ENCODED_MAX) {
                        r = -EBADMSG;
                        break;
                }
                memcpy(key.b, k.mv_data, ROW_KEY_SIZE);
                r = store_row_insert(l, txn, &key, v.mv_data, v.mv_size, &id);
                if (r < 0)
                        break;
                r = 0; /* 1 (there already): a crash between chunks cannot leave that, but fine */
                rc = mdb_cursor_del(c, 0);
                if (rc) {
                        r = ledger_fail(l, rc);
                        break;
                }
        }
        mdb_cursor_close(c);
        if (r < 0)
                return r;
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        *done = rc == MDB_NOTFOUND;
        return 0;
}

/* Up to MIGRATE_CHUNK calls out of `activity` into `calls`, under their
 * rows' ids (every row is in `rows` by now); an index taken twice (never
 * written so, but cheap to survive) goes after the row's last. */
static int migrate_calls_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        bool *done = u;
        MDB_cursor *c;
        MDB_val k, v;
        size_t n = 0, chunk = migrate_chunk();
        int r = 0, rc;

        rc = mdb_cursor_open(txn, l->dbi[DB_ACTIVITY], &c);
        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && n < chunk;
             rc = mdb_cursor_get(c, &k, &v, MDB_FIRST), n++) {
                struct activity_entry e;
                struct stored_row s;
                struct row_key ck;
                if (k.mv_size != ROW_KEY_SIZE) {
                        r = -EBADMSG;
                        break;
                }
                memcpy(ck.b, k.mv_data, ROW_KEY_SIZE);
                r = ledger_activity_decode(&v, &e);
                if (r == 0)
                        r = store_row_find(l, txn, &e.usage_key, &s);
                if (r == 0 && s.id) {
                        r = store_call_put(l, txn, s.id, e.index, &ck, v.mv_data, v.mv_size, false);
                        if (r == 1) {
                                struct row_key keys[1];
                                size_t nk;
                                uint32_t next;
                                r = store_calls_of(l, txn, s.id, keys, 0, &nk, &next);
                                if (r == 0)
                                        r = store_call_put(l, txn, s.id, next, &ck, v.mv_data, v.mv_size, false);
                        }
                }
                /* a call whose row is gone (or that does not decode) is dropped */
                if (r == -ENOENT || r == -EBADMSG)
                        r = 0;
                if (r < 0)
                        break;
                rc = mdb_cursor_del(c, 0);
                if (rc) {
                        r = ledger_fail(l, rc);
                        break;
                }
        }
        mdb_cursor_close(c);
        if (r < 0)
                return r;
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        *done = rc == MDB_NOTFOUND;
        return 0;
}

static int migrate_finish_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        char ver[16];
        int n = snprintf(ver, sizeof(ver), "%d", LEDGER_SCHEMA_VERSION);
        MDB_val k = {.mv_size = 14, .mv_data = (void *)"schema_version"}, v = {.mv_size = (size_t)n, .mv_data = ver};
        int rc;

        (void)u;
        if ((rc = mdb_drop(txn, l->dbi[DB_USAGE], 1)) != 0 || (rc = mdb_drop(txn, l->dbi[DB_ACTIVITY], 1)) != 0 ||
            (rc = mdb_put(txn, l->dbi[DB_META], &k, &v, 0)) != 0)
                return ledger_fail(l, rc);
        return 0;
}

int store_migrate(struct ledger *l)
{
        size_t stop = test_hook_number("AGENTMETER_TEST_MIGRATE_STOP", 1, SIZE_MAX, SIZE_MAX), txns = 0;
        size_t kill_at = test_hook_number("AGENTMETER_TEST_MIGRATE_KILL", 1, SIZE_MAX, SIZE_MAX);
        bool done = false;
        int r = 0;

        if (!l->have_old_rows)
                return 0;
        while (r == 0 && !done) {
                r = ++txns > stop ? -EINTR : ledger_write(l, migrate_rows_txn, &done);
                if (txns == kill_at)
                        raise(SIGKILL);
        }
        for (done = false; r == 0 && !done;) {
                r = ++txns > stop ? -EINTR : ledger_write(l, migrate_calls_txn, &done);
                if (txns == kill_at)
                        raise(SIGKILL);
        }
        if (r == 0) {
                r = ledger_write(l, migrate_finish_txn, NULL);
                if (++txns == kill_at)
                        raise(SIGKILL);
        }
        if (r == 0)
                l->have_old_rows = false; /* the drop closed their handles */
        return r;
}
