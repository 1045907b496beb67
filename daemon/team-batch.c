/* Reading a team batch from the outbox (team-batch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ledger-outbox.h"
#include "team-batch.h"

#define KEY_SLOTS 16384 /* > 2 x TEAM_BATCH_ITEMS, a power of two */

struct batch_keys {
        struct slot {
                uint8_t used, type;
                uint8_t key[ROW_KEY_SIZE];
        } slot[KEY_SLOTS];
};

/* 1 when (type, key) is in the batch already, else adds it. */
static int seen_before(struct batch_keys *d, uint8_t type, const struct row_key *k)
{
        uint64_t h;
        memcpy(&h, k->b, sizeof(h)); /* content keys are hashes */
        for (size_t i = (h ^ type) & (KEY_SLOTS - 1);; i = (i + 1) & (KEY_SLOTS - 1)) {
                struct slot *s = &d->slot[i];
                if (!s->used) {
                        s->used = 1;
                        s->type = type;
                        memcpy(s->key, k->b, ROW_KEY_SIZE);
                        return 0;
                }
                if (s->type == type && memcmp(s->key, k->b, ROW_KEY_SIZE) == 0)
                        return 1;
        }
}

static int batch_cb(const struct outbox_item *it, void *u)
{
        struct team_batch *b = u;
        int r;

        if (b->rows.len + b->calls.len >= TEAM_BATCH_BYTES)
                return 1; /* full: this entry goes in the next batch */
        if (seen_before(b->keys, it->type, &it->key))
                return (it->flags & OUTBOX_F_REPRICED) ? 1 : 0;
        if (it->row) {
                r = team_copy_row(&b->rows, it->row, it->flags & OUTBOX_F_REPRICED);
                b->n_rows++;
        } else {
                r = team_copy_call(&b->calls, &it->key, it->call);
                b->n_calls++;
        }
        return r;
}

int team_batch_read(struct team_batch *b, struct ledger *l)
{
        if (!b->keys && !(b->keys = malloc(sizeof(*b->keys))))
                return -ENOMEM;
        memset(b->keys, 0, sizeof(*b->keys));
        team_buf_reset(&b->rows);
        team_buf_reset(&b->calls);
        b->n_rows = b->n_calls = 0;
        return ledger_outbox_read(l, TEAM_BATCH_ITEMS, batch_cb, b, &b->last);
}

void team_batch_free(struct team_batch *b)
{
        team_buf_free(&b->rows);
        team_buf_free(&b->calls);
        free(b->keys);
        b->keys = NULL;
}
