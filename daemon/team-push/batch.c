/* Reading a team batch from the outbox (team-push/batch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/outbox.h"
#include "team-push/batch.h"

#define KEY_SLOTS 16384 /* > 2 x TEAM_BATCH_ITEMS, a power of two */

struct batch_keys {
        struct slot {
                uint8_t type;
                uint16_t slice; /* 0: free; else the slice that took it, from 1 */
                uint8_t key[ROW_KEY_SIZE];
        } slot[KEY_SLOTS];
};

/* The slice that took (type, key) already (0: none, and now this one). */
static unsigned seen_in(struct batch_keys *d, unsigned slice, uint8_t type, const struct row_key *k)
{
        uint64_t h;
        memcpy(&h, k->b, sizeof(h)); /* content keys are hashes */
        for (size_t i = (h ^ type) & (KEY_SLOTS - 1);; i = (i + 1) & (KEY_SLOTS - 1)) {
                struct slot *s = &d->slot[i];
                if (!s->slice) {
                        s->slice = (uint16_t)slice;
                        s->type = type;
                        memcpy(s->key, k->b, ROW_KEY_SIZE);
                        return 0;
                }
                if (s->type == type && memcmp(s->key, k->b, ROW_KEY_SIZE) == 0)
                        return s->slice;
        }
}

static int batch_cb(const struct outbox_item *it, void *u)
{
        struct team_batch *b = u;
        unsigned seen;
        int r;

        if (b->n_rows + b->n_calls >= TEAM_BATCH_ITEMS || b->rows.len + b->calls.len >= TEAM_BATCH_BYTES) {
                b->complete = true;
                return 1; /* full: this entry goes in the next batch */
        }
        seen = seen_in(b->keys, b->slice, it->type, &it->key);
        if (seen) {
                /* taken in this read: the same row as it is now, nothing to add,
                 * unless a reprice must reach the server with it; taken in an
                 * earlier read: it may have changed since. Either way that
                 * entry starts the next batch. */
                if (seen == b->slice && !(it->flags & OUTBOX_F_REPRICED))
                        return 0;
                b->complete = true;
                return 1;
        }
        if (it->row) {
                r = team_copy_row(&b->rows, it->row, it->flags & OUTBOX_F_REPRICED);
                b->n_rows++;
        } else {
                r = team_copy_call(&b->calls, &it->key, it->call);
                b->n_calls++;
        }
        return r;
}

int team_batch_begin(struct team_batch *b, uint64_t after)
{
        if (!b->keys && !(b->keys = malloc(sizeof(*b->keys))))
                return -ENOMEM;
        memset(b->keys, 0, sizeof(*b->keys));
        team_buf_reset(&b->rows);
        team_buf_reset(&b->calls);
        b->n_rows = b->n_calls = 0;
        b->start = b->last = after;
        b->slice = 0;
        b->complete = false;
        return 0;
}

int team_batch_more(struct team_batch *b, struct ledger *l, size_t max)
{
        uint64_t before = b->last;
        int r;

        if (b->complete)
                return 0;
        b->slice++;
        r = ledger_outbox_read(l, b->last, max, batch_cb, b, &b->last);
        if (r < 0)
                return r;
        if (b->last == before && !b->complete)
                b->complete = true; /* nothing more in the outbox */
        if (b->slice >= UINT16_MAX)
                b->complete = true;
        return 0;
}

int team_batch_read(struct team_batch *b, struct ledger *l)
{
        int r = team_batch_begin(b, 0);
        while (r == 0 && !b->complete)
                r = team_batch_more(b, l, TEAM_BATCH_SLICE);
        return r;
}

void team_batch_free(struct team_batch *b)
{
        team_buf_free(&b->rows);
        team_buf_free(&b->calls);
        free(b->keys);
        b->keys = NULL;
}
