/* The team outbox (ledger/outbox.h): named DB `outbox`, key the entry's
 * number (8 bytes big-endian, appended in order), value type, flags and
 * 16 bytes: a row's content key, or a call's place (its row's id, 8 bytes
 * big-endian, and its index, 4, then zeros); its state (on, filling, acked, next, id) in the
 * meta DB under "outbox". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "binio.h"
#include "ledger/internal.h"

#define OUTBOX_DB "outbox"
#define STATE_KEY "outbox"
#define STATE_VERSION 1
#define ENTRY_SIZE (2 + ROW_KEY_SIZE)

struct state {
        bool have, on, filling;
        uint64_t acked, next;
        uint8_t id[OUTBOX_ID_SIZE];
};

static int state_get(struct ledger *l, MDB_txn *txn, struct state *st)
{
        MDB_val k = {.mv_size = strlen(STATE_KEY), .mv_data = (void *)STATE_KEY}, v;
        struct br r;
        const uint8_t *id;
        int rc = mdb_get(txn, l->dbi[DB_META], &k, &v);

        memset(st, 0, sizeof(*st));
        if (rc == MDB_NOTFOUND)
                return 0;
        if (rc)
                return ledger_fail(l, rc);
        r = (struct br){.p = v.mv_data, .len = v.mv_size};
        if (br_u8(&r) != STATE_VERSION)
                return -EBADMSG;
        st->on = br_u8(&r);
        st->filling = br_u8(&r);
        st->acked = br_u64(&r);
        st->next = br_u64(&r);
        id = br_take(&r, OUTBOX_ID_SIZE);
        if (r.bad || !id)
                return -EBADMSG;
        memcpy(st->id, id, OUTBOX_ID_SIZE);
        st->have = true;
        return 0;
}

static int state_put(struct ledger *l, MDB_txn *txn, const struct state *st)
{
        uint8_t buf[64];
        struct bw w = {.p = buf, .cap = sizeof(buf)};
        MDB_val k = {.mv_size = strlen(STATE_KEY), .mv_data = (void *)STATE_KEY}, v;

        bw_u8(&w, STATE_VERSION);
        bw_u8(&w, st->on);
        bw_u8(&w, st->filling);
        bw_u64(&w, st->acked);
        bw_u64(&w, st->next);
        bw_bytes(&w, st->id, OUTBOX_ID_SIZE);
        v = (MDB_val){.mv_size = w.len, .mv_data = buf};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], &k, &v, 0));
}

/* The number the next entry gets: past the last queued one, the last
 * acknowledged one and every number handed out before (the state keeps
 * it across a turn off, which empties the queue). */
static int next_seq(struct ledger *l, MDB_txn *txn, uint64_t *ret)
{
        struct state st;
        MDB_cursor *c;
        MDB_val k, v;
        uint64_t n;
        int r = state_get(l, txn, &st), rc;

        if (r < 0)
                return r;
        n = st.next > st.acked + 1 ? st.next : st.acked + 1;
        if (l->outbox_next > n)
                n = l->outbox_next;
        if (!l->outbox_dbi) {
                *ret = n;
                return 0;
        }
        rc = mdb_cursor_open(txn, l->dbi[DB_OUTBOX], &c);
        if (rc)
                return ledger_fail(l, rc);
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
        if (rc == 0 && k.mv_size == 8 && be64_get(k.mv_data) + 1 > n)
                n = be64_get(k.mv_data) + 1;
        mdb_cursor_close(c);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        *ret = n;
        return 0;
}

int ledger_outbox_open(struct ledger *l, MDB_txn *txn)
{
        struct state st;
        int rc = mdb_dbi_open(txn, OUTBOX_DB, 0, &l->dbi[DB_OUTBOX]), r;

        if (rc == MDB_NOTFOUND)
                return 0; /* never turned on: a single-machine ledger */
        if (rc)
                return ledger_fail(l, rc);
        l->outbox_dbi = true;
        r = state_get(l, txn, &st);
        if (r < 0)
                return r;
        l->outbox_on = st.on;
        return 0;
}

int ledger_outbox_note_call(struct ledger *l, MDB_txn *txn, uint64_t id, uint32_t index)
{
        struct row_key place = {0};

        if (!l->outbox_on)
                return 0;
        be64_put(place.b, id);
        place.b[8] = (uint8_t)(index >> 24);
        place.b[9] = (uint8_t)(index >> 16);
        place.b[10] = (uint8_t)(index >> 8);
        place.b[11] = (uint8_t)index;
        return ledger_outbox_note(l, txn, OUTBOX_CALL, &place, 0);
}

static void place_of(const struct row_key *place, uint64_t *ret_id, uint32_t *ret_index)
{
        *ret_id = be64_get(place->b);
        *ret_index = be32_get(place->b + 8);
}

int ledger_outbox_note(struct ledger *l, MDB_txn *txn, enum outbox_type type,
                       const struct row_key *key, unsigned flags)
{
        uint8_t kb[8], vb[ENTRY_SIZE];
        MDB_val k = {.mv_size = 8, .mv_data = kb}, v = {.mv_size = ENTRY_SIZE, .mv_data = vb};
        int r, rc;

        if (!l->outbox_on)
                return 0;
        /* the number only grows: one taken by a txn that then failed is a gap */
        if (l->outbox_next == 0 && (r = next_seq(l, txn, &l->outbox_next)) < 0)
                return r;
        be64_put(kb, l->outbox_next);
        vb[0] = (uint8_t)type;
        vb[1] = (uint8_t)flags;
        memcpy(vb + 2, key->b, ROW_KEY_SIZE);
        rc = mdb_put(txn, l->dbi[DB_OUTBOX], &k, &v, MDB_APPEND);
        if (rc == MDB_KEYEXIST) /* cannot happen with one writer; read the end again */
                l->outbox_next = 0;
        if (rc)
                return ledger_fail(l, rc);
        l->outbox_next++;
        return 0;
}

int ledger_outbox_state(struct ledger *l, struct outbox_state *ret_state)
{
        struct outbox_state out = {0};
        struct state st;
        MDB_txn *txn;
        MDB_stat ms;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = state_get(l, txn, &st);
        if (r == 0 && l->outbox_dbi) {
                r = ledger_errno(mdb_stat(txn, l->dbi[DB_OUTBOX], &ms));
                out.entries = ms.ms_entries;
        }
        if (r == 0)
                r = next_seq(l, txn, &out.next_seq);
        ledger_read_end(l, txn);
        if (r < 0)
                return r;
        out.on = st.on;
        out.filling = st.filling;
        out.acked_seq = st.acked;
        memcpy(out.id, st.id, OUTBOX_ID_SIZE);
        *ret_state = out;
        return 0;
}

static int new_id(uint8_t id[OUTBOX_ID_SIZE])
{
        size_t n = 0;
        while (n < OUTBOX_ID_SIZE) {
                ssize_t k = getrandom(id + n, OUTBOX_ID_SIZE - n, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                n += (size_t)k;
        }
        return 0;
}

struct set_ctx {
        bool on;
        bool opened; /* the DB was made (or opened) in this txn */
};

static int set_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct set_ctx *c = u;
        struct state st;
        uint64_t rows;
        int r = state_get(l, txn, &st), rc;

        c->opened = false;
        if (r < 0)
                return r;
        if (!c->on) {
                if (!st.have && !l->outbox_dbi)
                        return 0; /* never on: nothing to write, no DB made */
                r = next_seq(l, txn, &st.next); /* counting what the drop removes */
                if (r < 0)
                        return r;
                if (l->outbox_dbi && (rc = mdb_drop(txn, l->dbi[DB_OUTBOX], 0)) != 0)
                        return ledger_fail(l, rc);
                if (!st.have)
                        return 0;
                st.on = st.filling = false;
                return state_put(l, txn, &st);
        }
        if (!l->outbox_dbi) {
                rc = mdb_dbi_open(txn, OUTBOX_DB, MDB_CREATE, &l->dbi[DB_OUTBOX]);
                if (rc)
                        return ledger_fail(l, rc);
                c->opened = true;
        }
        if (st.on && st.have)
                return 0;
        if (!st.have && (r = new_id(st.id)) < 0)
                return r;
        if ((r = store_rows_count(l, txn, &rows)) < 0)
                return r;
        st.on = true;
        st.filling = rows > 0; /* the history goes too */
        return state_put(l, txn, &st);
}

int ledger_outbox_set(struct ledger *l, bool on)
{
        struct set_ctx c = {.on = on};
        bool had_dbi = l->outbox_dbi;
        int r;

        if ((!on && !had_dbi) || (on && l->outbox_on))
                return 0; /* never on, or on already: no write at all (a reload) */
        r = ledger_write(l, set_txn, &c);
        if (r < 0) {
                if (c.opened)
                        l->outbox_dbi = had_dbi; /* the abort closed the handle */
                return r;
        }
        if (c.opened)
                l->outbox_dbi = true;
        l->outbox_on = on;
        return 0;
}

/* ---- the full walk ------------------------------------------------------- */

struct fill_ctx {
        struct outbox_walk *w, next;
        size_t max, n;
        bool done;
};

struct fill_note {
        struct fill_ctx *c;
        struct ledger *l;
        MDB_txn *txn;
};

/* Rows, then calls, each noted; at the walk's bound the next one's key is
 * where the next walk starts (1 stops this one). */
static int note_row(const struct stored_row *r, void *u)
{
        struct fill_note *f = u;
        struct fill_ctx *c = f->c;
        if (c->n == c->max) {
                be64_put(c->next.key, r->id);
                c->next.started = true;
                return 1;
        }
        c->n++;
        return ledger_outbox_note(f->l, f->txn, OUTBOX_ROW, &r->key, 0);
}

static int note_call(const struct stored_call *call, void *u)
{
        struct fill_note *f = u;
        struct fill_ctx *c = f->c;
        if (c->n == c->max) {
                be64_put(c->next.key, call->id);
                c->next.key[8] = (uint8_t)(call->index >> 24);
                c->next.key[9] = (uint8_t)(call->index >> 16);
                c->next.key[10] = (uint8_t)(call->index >> 8);
                c->next.key[11] = (uint8_t)call->index;
                c->next.started = true;
                return 1;
        }
        c->n++;
        return ledger_outbox_note_call(f->l, f->txn, call->id, call->index);
}

static int fill_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct fill_ctx *c = u;
        struct fill_note f = {c, l, txn};
        int r = 0;

        c->done = false;
        c->n = 0;
        c->next = *c->w;
        while (c->next.phase < 2 && c->n < c->max) {
                const uint8_t *from = c->next.started ? c->next.key : NULL;
                c->next.started = false;
                r = c->next.phase == 0 ? store_rows_walk(l, txn, from, note_row, &f)
                                       : store_calls_walk(l, txn, from, note_call, &f);
                if (r < 0)
                        return r;
                if (r == 0) { /* this phase to its end */
                        c->next.phase++;
                        c->next.started = false;
                }
        }
        if (c->next.phase == 2) {
                struct state st;
                r = state_get(l, txn, &st);
                if (r == 0 && st.filling) {
                        st.filling = false;
                        r = next_seq(l, txn, &st.next);
                        if (r == 0)
                                r = state_put(l, txn, &st);
                }
                if (r < 0)
                        return r;
                c->done = true;
        }
        return 0;
}

int ledger_outbox_fill(struct ledger *l, struct outbox_walk *cursor, size_t max_items,
                       bool *ret_done)
{
        struct fill_ctx c = {.w = cursor, .max = max_items ? max_items : 1};
        int r;

        if (!l->outbox_on)
                return -ESRCH;
        r = ledger_write(l, fill_txn, &c);
        if (r < 0)
                return r;
        *cursor = c.next;
        *ret_done = c.done;
        return 0;
}

static int refill_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct state st;
        bool new_identity = *(bool *)u;
        int r = state_get(l, txn, &st);

        if (r < 0)
                return r;
        if (!st.on)
                return -ESRCH;
        if (new_identity && (r = new_id(st.id)) < 0)
                return r;
        st.filling = true;
        r = next_seq(l, txn, &st.next);
        return r < 0 ? r : state_put(l, txn, &st);
}

int ledger_outbox_refill(struct ledger *l)
{
        bool new_identity = false;
        return ledger_write(l, refill_txn, &new_identity);
}

int ledger_outbox_new_id(struct ledger *l)
{
        bool new_identity = true;
        return ledger_write(l, refill_txn, &new_identity);
}

/* ---- reading and acknowledging ------------------------------------------- */

int ledger_outbox_read(struct ledger *l, uint64_t after, size_t max,
                       int (*cb)(const struct outbox_item *it, void *u), void *u,
                       uint64_t *ret_last)
{
        uint8_t from[8];
        struct usage_row *row;
        struct activity_entry call;
        MDB_cursor *c = NULL;
        MDB_txn *txn = NULL;
        MDB_val k, v;
        uint64_t last = after;
        size_t n = 0;
        int r, rc;

        if (!l->outbox_dbi || after == UINT64_MAX) {
                *ret_last = after;
                return 0;
        }
        be64_put(from, after + 1);
        row = malloc(sizeof(*row));
        if (!row)
                return -ENOMEM;
        r = ledger_read_begin(l, &txn);
        if (r == 0)
                r = ledger_errno(mdb_cursor_open(txn, l->dbi[DB_OUTBOX], &c));
        k = (MDB_val){.mv_size = 8, .mv_data = from};
        for (rc = r ? MDB_NOTFOUND : mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); rc == 0 && n < max;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                struct outbox_item it = {0};
                MDB_val dv;
                int grc;

                if (k.mv_size != 8 || v.mv_size != ENTRY_SIZE) {
                        r = -EBADMSG;
                        break;
                }
                it.seq = be64_get(k.mv_data);
                it.type = ((const uint8_t *)v.mv_data)[0];
                it.flags = ((const uint8_t *)v.mv_data)[1];
                memcpy(it.key.b, (const uint8_t *)v.mv_data + 2, ROW_KEY_SIZE);
                n++;
                if (it.type == OUTBOX_ROW) {
                        struct stored_row st;
                        grc = store_row_find(l, txn, &it.key, &st);
                        dv = st.enc;
                } else if (it.type == OUTBOX_CALL) {
                        uint64_t id;
                        uint32_t index;
                        place_of(&it.key, &id, &index);
                        grc = store_call_get(l, txn, id, index, &it.key, &dv); /* its call key */
                } else {
                        grc = -ENOENT;
                }
                if (grc == -ENOENT) {
                        last = it.seq; /* gone: acknowledged with the batch */
                        continue;
                }
                if (grc) {
                        r = grc;
                        break;
                }
                if (it.type == OUTBOX_ROW) {
                        r = row_decode(dv.mv_data, dv.mv_size, row);
                        row->key = it.key;
                        it.row = row;
                } else if (it.type == OUTBOX_CALL) {
                        r = ledger_activity_decode(&dv, &call);
                        it.call = &call;
                } else {
                        last = it.seq; /* a type of a later version */
                        continue;
                }
                if (r == 0)
                        r = cb(&it, u);
                if (r != 0)
                        break; /* > 0: the batch is full before this entry */
                last = it.seq;
        }
        if (r == 0 && rc != 0 && rc != MDB_NOTFOUND)
                r = ledger_errno(rc);
        if (c)
                mdb_cursor_close(c);
        if (txn)
                ledger_read_end(l, txn);
        free(row);
        if (r < 0)
                return r;
        *ret_last = last;
        return 0;
}

static int ack_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        uint64_t seq = *(uint64_t *)u;
        struct state st;
        MDB_cursor *c;
        MDB_val k, v;
        int r = state_get(l, txn, &st), rc;

        if (r < 0)
                return r;
        if (!st.have)
                return -ESRCH;
        rc = mdb_cursor_open(txn, l->dbi[DB_OUTBOX], &c);
        if (rc)
                return ledger_fail(l, rc);
        for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) {
                if (k.mv_size != 8 || be64_get(k.mv_data) > seq)
                        break;
                rc = mdb_cursor_del(c, 0);
                if (rc)
                        break;
        }
        mdb_cursor_close(c);
        if (rc && rc != MDB_NOTFOUND)
                return ledger_fail(l, rc);
        if (seq > st.acked)
                st.acked = seq;
        r = next_seq(l, txn, &st.next);
        return r < 0 ? r : state_put(l, txn, &st);
}

int ledger_outbox_ack(struct ledger *l, uint64_t seq)
{
        if (!l->outbox_dbi)
                return -ESRCH;
        return ledger_write(l, ack_txn, &seq);
}

uint64_t ledger_outbox_counter(const struct ledger *l)
{
        return l->outbox_next;
}
