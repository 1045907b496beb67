/* Five-hour block arithmetic for `top`, kept apart from the screen so it
 * can be tested with exact times. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"

int block_set_put(struct block_set *s, const struct block_call *c)
{
        size_t pos;

        if (c->key[0])
                for (size_t i = 0; i < s->n; i++)
                        if (strcmp(s->v[i].key, c->key) == 0) {
                                memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
                                s->n--;
                                break;
                        }
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 256;
                struct block_call *v = realloc(s->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                s->v = v;
                s->cap = cap;
        }
        pos = s->n;
        while (pos > 0 && s->v[pos - 1].time_ms > c->time_ms)
                pos--;
        memmove(s->v + pos + 1, s->v + pos, (s->n - pos) * sizeof(*s->v));
        s->v[pos] = *c;
        s->n++;
        return 0;
}

void block_set_free(struct block_set *s)
{
        free(s->v);
        *s = (struct block_set){ 0 };
}

void block_set_forget_before(struct block_set *s, int64_t ms)
{
        size_t k = 0;
        while (k < s->n && s->v[k].time_ms < ms)
                k++;
        memmove(s->v, s->v + k, (s->n - k) * sizeof(*s->v));
        s->n -= k;
}

void blocks_current(const struct block_set *s, int64_t now_ms, struct block_info *ret)
{
        struct block_info b = { 0 };
        size_t first = 0, i;
        int64_t start, end;

        for (i = 1; i < s->n; i++) /* after a five-hour gap, a call always opens a block */
                if (report_block_opens(true, s->v[i - 1].time_ms, s->v[i].time_ms))
                        first = i;
        if (s->n == 0) {
                *ret = b;
                return;
        }
        start = s->v[first].time_ms;
        for (i = first; i < s->n && s->v[i].time_ms <= now_ms; i++)
                if (report_block_opens(true, start, s->v[i].time_ms))
                        start = s->v[i].time_ms;
        end = start + REPORT_BLOCK_MS;
        if (now_ms < start || now_ms >= end) {
                *ret = b;
                return;
        }
        b.active = true;
        b.start_ms = start;
        b.end_ms = end;
        for (i = first; i < s->n; i++) {
                const struct block_call *c = &s->v[i];
                if (c->time_ms < start || c->time_ms >= end || c->time_ms > now_ms)
                        continue;
                b.calls++;
                b.tokens += c->tokens;
                if (c->priced)
                        b.cost_nano += c->cost_nano;
                else
                        b.unpriced++;
        }
        /* the rates as reports give them (report_block_live) */
        struct report_entry e = {.first_ms = start};
        struct block_live live;

        e.sums.cost_nano = b.cost_nano;
        e.sums.input = b.tokens;
        if (report_block_live(&e, now_ms, &live)) {
                b.usd_per_hour = (double)live.burn_nano_per_hour / 1e9;
                b.tokens_per_min = (double)live.tokens_per_hour / 60.0;
                b.projected_nano = live.projected_nano;
        }
        *ret = b;
}
