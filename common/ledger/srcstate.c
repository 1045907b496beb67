/* Source states: small keyed values a source's reader keeps beside its
 * checkpoint when a checkpoint's fixed state is too small (a table source's
 * last running totals of every session), committed in the rows' write
 * transaction so a crash keeps rows and states together. */
#include <errno.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"

#define SRCSTATE_DB "srcstate"
#define PREFIX_LEN 8 /* hash64 of the source path, big-endian */

int srcstate_open(struct ledger *l, MDB_txn *txn, bool create)
{
        int rc = mdb_dbi_open(txn, SRCSTATE_DB, create ? MDB_CREATE : 0, &l->dbi[DB_SRCSTATE]);

        if (rc == MDB_NOTFOUND && !create) {
                l->have_srcstate = false; /* an older ledger, read as it is */
                return 0;
        }
        if (rc)
                return ledger_fail(l, rc);
        l->have_srcstate = true;
        return 0;
}

/* prefix | key into buf: its length, or 0 for a key out of bounds. */
static size_t make_key(const char *path, const void *key, size_t key_len,
                       uint8_t buf[PREFIX_LEN + SOURCE_STATE_KEY_MAX])
{
        if (key_len == 0 || key_len > SOURCE_STATE_KEY_MAX)
                return 0;
        be64_put(buf, hash64(path, strlen(path)));
        memcpy(buf + PREFIX_LEN, key, key_len);
        return PREFIX_LEN + key_len;
}

int srcstate_put_batch(struct ledger *l, MDB_txn *txn, const struct commit_batch *b)
{
        uint8_t kb[PREFIX_LEN + SOURCE_STATE_KEY_MAX];

        if (!b->source_path || !l->have_srcstate)
                return -EINVAL;
        for (size_t i = 0; i < b->n_states; i++) {
                const struct source_state_entry *e = &b->states[i];
                MDB_val k = { .mv_size = make_key(b->source_path, e->key, e->key_len, kb), .mv_data = kb };
                MDB_val v = { .mv_size = e->value_len, .mv_data = (void *)e->value };
                int rc;

                if (!k.mv_size || e->value_len > SOURCE_STATE_VALUE_MAX)
                        return -EINVAL;
                if (e->value_len == 0) {
                        rc = mdb_del(txn, l->dbi[DB_SRCSTATE], &k, NULL);
                        if (rc == MDB_NOTFOUND)
                                rc = 0;
                } else {
                        rc = mdb_put(txn, l->dbi[DB_SRCSTATE], &k, &v, 0);
                }
                if (rc)
                        return ledger_fail(l, rc);
        }
        return 0;
}

int ledger_get_source_state(struct ledger *l, const char *path, const void *key, size_t key_len,
                            void *ret_value, size_t cap, size_t *ret_len)
{
        uint8_t kb[PREFIX_LEN + SOURCE_STATE_KEY_MAX];
        MDB_val k = { .mv_size = make_key(path, key, key_len, kb), .mv_data = kb }, v;
        MDB_txn *txn;
        int r;

        if (!k.mv_size)
                return -EINVAL;
        if (!l->have_srcstate)
                return -ENOENT;
        if ((r = ledger_read_begin(l, &txn)) < 0)
                return r;
        r = ledger_errno(mdb_get(txn, l->dbi[DB_SRCSTATE], &k, &v));
        if (r == 0) {
                memcpy(ret_value, v.mv_data, v.mv_size < cap ? v.mv_size : cap);
                *ret_len = v.mv_size;
        }
        ledger_read_end(l, txn);
        return r;
}

int ledger_count_source_states(struct ledger *l, const char *path, uint64_t *ret_n)
{
        uint8_t prefix[PREFIX_LEN];
        MDB_val k = { .mv_size = PREFIX_LEN, .mv_data = prefix }, v;
        MDB_cursor *c;
        MDB_txn *txn;
        uint64_t n = 0;
        int r, rc;

        if (!l->have_srcstate) {
                *ret_n = 0;
                return 0;
        }
        be64_put(prefix, hash64(path, strlen(path)));
        if ((r = ledger_read_begin(l, &txn)) < 0)
                return r;
        rc = mdb_cursor_open(txn, l->dbi[DB_SRCSTATE], &c);
        if (rc == 0) {
                for (rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
                     rc == 0 && k.mv_size >= PREFIX_LEN && memcmp(k.mv_data, prefix, PREFIX_LEN) == 0;
                     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
                        n++;
                mdb_cursor_close(c);
        }
        ledger_read_end(l, txn);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_errno(rc);
        *ret_n = n;
        return 0;
}

int srcstate_move(struct ledger *l, MDB_txn *txn, const char *from, const char *to)
{
        uint8_t prefix[PREFIX_LEN], kb[PREFIX_LEN + SOURCE_STATE_KEY_MAX], vb[SOURCE_STATE_VALUE_MAX];
        MDB_val k, v;
        MDB_cursor *c;
        int rc;

        if (!l->have_srcstate || hash64(from, strlen(from)) == hash64(to, strlen(to)))
                return 0; /* nothing kept, or the same prefix */
        be64_put(prefix, hash64(from, strlen(from)));
        /* one entry at a time: found under the old prefix, copied out of the
         * txn's pages, deleted, put under the new one (a put may move pages
         * under a cursor, so the walk starts again from the prefix) */
        for (;;) {
                k = (MDB_val){ .mv_size = PREFIX_LEN, .mv_data = prefix };
                if ((rc = mdb_cursor_open(txn, l->dbi[DB_SRCSTATE], &c)) != 0)
                        return ledger_fail(l, rc);
                rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
                if (rc == MDB_NOTFOUND || (rc == 0 && (k.mv_size < PREFIX_LEN || k.mv_size > sizeof(kb) ||
                                                       memcmp(k.mv_data, prefix, PREFIX_LEN) != 0))) {
                        mdb_cursor_close(c);
                        return 0;
                }
                if (rc == 0 && v.mv_size > sizeof(vb))
                        rc = MDB_CORRUPTED;
                if (rc == 0) {
                        size_t klen = k.mv_size, vlen = v.mv_size;
                        memcpy(kb, k.mv_data, klen);
                        memcpy(vb, v.mv_data, vlen);
                        rc = mdb_cursor_del(c, 0);
                        mdb_cursor_close(c);
                        c = NULL;
                        if (rc == 0) {
                                be64_put(kb, hash64(to, strlen(to)));
                                k = (MDB_val){ .mv_size = klen, .mv_data = kb };
                                v = (MDB_val){ .mv_size = vlen, .mv_data = vb };
                                rc = mdb_put(txn, l->dbi[DB_SRCSTATE], &k, &v, 0);
                        }
                }
                if (c)
                        mdb_cursor_close(c);
                if (rc)
                        return ledger_fail(l, rc);
        }
}
