/* Repricing stored rows: a resumable walk over the usage db in bounded
 * write transactions; each changed row is rewritten and its old
 * contribution to the sums swapped for the new one in the same txn (the
 * rows are written back after the cursor walk, so it never moves under
 * its own writes). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ledger-internal.h"
#include "ledger-reprice.h"

struct pending {
        uint8_t key[ROW_KEY_SIZE];
        size_t len;
        uint8_t value[ROW_ENCODED_MAX];
};

struct reprice_ctx {
        ledger_reprice_fn fn;
        void *u;
        size_t limit;
        bool have_start, done;
        uint8_t start[ROW_KEY_SIZE], next[ROW_KEY_SIZE];
        struct reprice_result txn_res; /* of the current attempt */
        struct usage_row old, now;
        struct pending *pend;          /* limit entries: rows to write back */
        size_t n_pend;
};

/* Reads one row, lets fn reprice it; a changed row has its sums swapped
 * now and its new value queued (written after the cursor walk). */
static int reprice_one(struct ledger *l, MDB_txn *txn, const MDB_val *k, const MDB_val *v,
                       struct reprice_ctx *x)
{
        struct pending *p = &x->pend[x->n_pend];
        int r;

        if (k->mv_size != ROW_KEY_SIZE)
                return -EBADMSG;
        r = row_decode(v->mv_data, v->mv_size, &x->old);
        if (r < 0)
                return r;
        memcpy(x->old.key.b, k->mv_data, ROW_KEY_SIZE);
        x->now = x->old;
        x->txn_res.rows_seen++;
        if (x->fn(x->u, &x->now) <= 0)
                return 0;
        /* only the price may move; anything else would corrupt the sums' keys */
        x->now.time_ms = x->old.time_ms;
        x->now.flags = x->old.flags;
        r = row_encode(&x->now, p->value, sizeof(p->value), &p->len);
        if (r == 0)
                r = ledger_sums_apply(l, txn, &x->old, -1);
        if (r == 0)
                r = ledger_sums_apply(l, txn, &x->now, +1);
        if (r == 0) /* the team server takes the new cost too */
                r = ledger_outbox_note(l, txn, OUTBOX_ROW, &x->old.key, OUTBOX_F_REPRICED);
        if (r < 0)
                return r;
        memcpy(p->key, k->mv_data, ROW_KEY_SIZE);
        x->n_pend++;
        x->txn_res.rows_changed++;
        x->txn_res.cost_delta_nano += (x->now.cost_source != COST_NONE ? x->now.cost_nano : 0) -
                                      (x->old.cost_source != COST_NONE ? x->old.cost_nano : 0);
        return 0;
}

static int reprice_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct reprice_ctx *x = u;
        MDB_cursor *c;
        MDB_val k, v;
        size_t n = 0;
        int r = 0, rc;

        memset(&x->txn_res, 0, sizeof(x->txn_res));
        x->done = false;
        x->n_pend = 0;
        rc = mdb_cursor_open(txn, l->dbi[DB_USAGE], &c);
        if (rc)
                return ledger_fail(l, rc);
        k = (MDB_val){.mv_size = ROW_KEY_SIZE, .mv_data = x->start};
        rc = mdb_cursor_get(c, &k, &v, x->have_start ? MDB_SET_RANGE : MDB_FIRST);
        for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                if (n == x->limit) {
                        if (k.mv_size != ROW_KEY_SIZE)
                                r = -EBADMSG;
                        else
                                memcpy(x->next, k.mv_data, ROW_KEY_SIZE);
                        break;
                }
                r = reprice_one(l, txn, &k, &v, x);
                if (r < 0)
                        break;
                n++;
        }
        if (r == 0 && rc == MDB_NOTFOUND)
                x->done = true;
        else if (r == 0 && rc != 0)
                r = ledger_fail(l, rc);
        mdb_cursor_close(c);
        for (size_t i = 0; r == 0 && i < x->n_pend; i++) {
                MDB_val pk = {.mv_size = ROW_KEY_SIZE, .mv_data = x->pend[i].key},
                        pv = {.mv_size = x->pend[i].len, .mv_data = x->pend[i].value};
                r = ledger_fail(l, mdb_put(txn, l->dbi[DB_USAGE], &pk, &pv, 0));
        }
        return r;
}

int ledger_reprice(struct ledger *l, ledger_reprice_fn fn, void *u, size_t rows_per_txn,
                   struct reprice_result *ret_result)
{
        struct reprice_ctx *x = calloc(1, sizeof(*x));
        struct reprice_result total = {0};
        int r = 0;

        if (!x)
                return -ENOMEM;
        x->fn = fn;
        x->u = u;
        x->limit = rows_per_txn ? rows_per_txn : 1;
        x->pend = calloc(x->limit, sizeof(*x->pend));
        if (!x->pend) {
                free(x);
                return -ENOMEM;
        }
        while (!x->done) {
                r = ledger_write(l, reprice_txn, x);
                if (r < 0)
                        break;
                total.rows_seen += x->txn_res.rows_seen;
                total.rows_changed += x->txn_res.rows_changed;
                total.cost_delta_nano += x->txn_res.cost_delta_nano;
                total.txns++;
                memcpy(x->start, x->next, ROW_KEY_SIZE);
                x->have_start = true;
        }
        free(x->pend);
        free(x);
        if (r == 0 && ret_result)
                *ret_result = total;
        return r;
}
