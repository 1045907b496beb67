/* Repricing stored rows: a resumable walk over the rows in id order in
 * bounded write transactions; each changed row is rewritten and its old
 * contribution to the sums swapped for the new one in the same txn (the
 * rows are written back after the walk, so it never moves under its own
 * writes). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "binio.h"
#include "ledger/internal.h"
#include "ledger/reprice.h"

struct pending {
        uint64_t id;
        struct row_key key;
        size_t len;
        uint8_t value[ROW_ENCODED_MAX];
};

struct reprice_ctx {
        ledger_reprice_fn fn;
        void *u;
        size_t limit;
        bool have_start, done;
        uint8_t start[8], next[8];     /* row ids, big-endian */
        struct ledger *l;
        MDB_txn *txn;
        size_t n;                      /* rows seen in this attempt */
        struct reprice_result txn_res; /* of the current attempt */
        struct usage_row old, now;
        struct pending *pend;          /* limit entries: rows to write back */
        size_t n_pend;
};

/* Reads one row, lets fn reprice it; a changed row has its sums swapped
 * now and its new value queued (written after the cursor walk). */
/* Reads one row, lets fn reprice it; a changed row has its sums swapped
 * now and its new value queued (written after the walk). 1 stops the walk
 * at the bound (its id is where the next one starts). */
static int reprice_one(const struct stored_row *st, void *u)
{
        struct reprice_ctx *x = u;
        struct ledger *l = x->l;
        MDB_txn *txn = x->txn;
        struct pending *p = &x->pend[x->n_pend];
        int r;

        if (x->n == x->limit) {
                be64_put(x->next, st->id);
                return 1;
        }
        x->n++;
        r = row_decode(st->enc.mv_data, st->enc.mv_size, &x->old);
        if (r < 0)
                return r;
        x->old.key = st->key;
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
        p->id = st->id;
        p->key = st->key;
        x->n_pend++;
        x->txn_res.rows_changed++;
        x->txn_res.cost_delta_nano += (x->now.cost_source != COST_NONE ? x->now.cost_nano : 0) -
                                      (x->old.cost_source != COST_NONE ? x->old.cost_nano : 0);
        return 0;
}

static int reprice_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct reprice_ctx *x = u;
        int r;

        memset(&x->txn_res, 0, sizeof(x->txn_res));
        x->done = false;
        x->n_pend = 0;
        x->n = 0;
        x->l = l;
        x->txn = txn;
        r = store_rows_walk(l, txn, x->have_start ? x->start : NULL, reprice_one, x);
        if (r < 0)
                return r;
        x->done = r == 0;
        for (size_t i = 0; i < x->n_pend; i++) {
                r = store_row_update(l, txn, x->pend[i].id, &x->pend[i].key, x->pend[i].value,
                                     x->pend[i].len);
                if (r < 0)
                        return r;
        }
        return 0;
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
                memcpy(x->start, x->next, sizeof(x->start));
                x->have_start = true;
        }
        free(x->pend);
        free(x);
        if (r == 0 && ret_result)
                *ret_result = total;
        return r;
}
