/* The team outbox on a real LMDB ledger: off by default (no DB made, no
 * entries), on with a walk for a ledger that has history, entries written
 * with the rows they name (added, merged, repriced, new calls; a duplicate
 * writes none), read in order, acknowledged up to a number, numbers that
 * never go back (also across off and on), and emptied when turned off. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/outbox.h"
#include "ledger/reprice.h"
#include "tap.h"
#include "team-push/batch.h"
#include "testutil.h"

#define T0 1782900000000LL

static void mk(struct usage_row *r, int i, uint64_t output)
{
        struct keyhash h;
        char id[32];

        memset(r, 0, offsetof(struct usage_row, calls));
        snprintf(id, sizeof(id), "row-%d", i);
        keyhash_begin(&h, "test-outbox");
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = T0 + i * 1000;
        r->input = 10;
        r->output = output;
        r->total = 10 + output;
        r->cost_source = COST_COMPUTED;
        r->cost_nano = 1000 * (int64_t)output;
        ROW_SET(r->tool, "claude");
        ROW_SET(r->session, "s1");
        ROW_SET(r->model, "m");
}

static int commit(struct ledger *l, struct usage_row *rows, size_t n)
{
        struct commit_batch b = { .rows = rows, .n_rows = n };
        return ledger_commit(l, &b, NULL);
}

struct seen {
        int n, rows, calls, repriced;
        uint64_t seqs[64];
        uint64_t output[64];
};

static int read_cb(const struct outbox_item *it, void *u)
{
        struct seen *s = u;
        if (s->n < 64) {
                s->seqs[s->n] = it->seq;
                s->output[s->n] = it->row ? it->row->output : 0;
        }
        s->n++;
        s->rows += it->row != NULL;
        s->calls += it->call != NULL;
        s->repriced += (it->flags & OUTBOX_F_REPRICED) != 0;
        return 0;
}

static int stop_after_two(const struct outbox_item *it, void *u)
{
        struct seen *s = u;
        (void)it;
        return ++s->n > 2 ? 1 : 0;
}

static int reprice_all(void *u, struct usage_row *row)
{
        (void)u;
        row->cost_nano /= 2;
        return 1;
}

int main(void)
{
        char dir[] = "/tmp/test-outbox.XXXXXX";
        struct ledger *l;
        struct usage_row *rows = calloc(4, sizeof(*rows));
        struct outbox_state st;
        struct seen s;
        uint64_t last;
        bool done = false;

        if (!mkdtemp(dir) || !rows)
                return 99;
        is_int(ledger_open(dir, 0, &l), 0, "open");
        is_int(ledger_outbox_state(l, &st), 0, "state of a new ledger");
        ok(!st.on && st.entries == 0, "off by default");
        mk(&rows[0], 0, 5);
        mk(&rows[1], 1, 7);
        is_int(commit(l, rows, 2), 0, "two rows while off");
        is_int(ledger_outbox_set(l, false), 0, "off again: nothing to do");
        memset(&s, 0, sizeof(s));
        is_int(ledger_outbox_read(l, 0, 100, read_cb, &s, &last), 0, "read while off");
        is_int(s.n, 0, "no entries while off");

        /* on over a history: a walk queues it */
        is_int(ledger_outbox_set(l, true), 0, "on");
        ledger_outbox_state(l, &st);
        ok(st.on && st.filling && st.entries == 0, "on with history: a walk is due");
        struct outbox_walk w = { 0 };
        int slices = 0;
        while (!done && slices < 10) {
                is_int(ledger_outbox_fill(l, &w, 1, &done), 0, "fill one entry");
                slices++;
        }
        ok(done, "the walk ended (%d slices)", slices);
        ledger_outbox_state(l, &st);
        ok(!st.filling && st.entries == 2, "both rows queued by the walk (%llu)", (unsigned long long)st.entries);

        /* commits while on: added, merged, duplicate, a new call */
        mk(&rows[2], 2, 3);
        rows[2].n_calls = 1;
        ROW_SET(rows[2].calls[0].id, "call-1");
        ROW_SET(rows[2].calls[0].name, "Bash");
        is_int(commit(l, &rows[2], 1), 0, "a new row with a call");
        mk(&rows[3], 2, 9); /* the same record grown */
        is_int(commit(l, &rows[3], 1), 0, "the row grows");
        is_int(commit(l, &rows[3], 1), 0, "the same again (a duplicate)");
        ledger_outbox_state(l, &st);
        is_int(st.entries, 5, "walk 2 + added row + its call + the merge; the duplicate adds none");

        memset(&s, 0, sizeof(s));
        is_int(ledger_outbox_read(l, 0, 100, read_cb, &s, &last), 0, "read");
        is_int(s.n, 5, "five entries");
        is_int(s.rows, 4, "four name rows");
        is_int(s.calls, 1, "one names a call");
        ok(s.seqs[0] < s.seqs[1] && s.seqs[1] < s.seqs[2] && s.seqs[3] < s.seqs[4], "in order");
        is_int(s.output[4], 9, "an entry reads the row as it is now");
        is_int(last, s.seqs[4], "last read");

        memset(&s, 0, sizeof(s));
        is_int(ledger_outbox_read(l, 0, 100, stop_after_two, &s, &last), 0, "read, stopping");
        struct seen all;
        memset(&all, 0, sizeof(all));
        ledger_outbox_read(l, 0, 100, read_cb, &all, &last);
        /* stop_after_two took two and refused the third */
        memset(&s, 0, sizeof(s));
        uint64_t two;
        ledger_outbox_read(l, 0, 100, stop_after_two, &s, &two);
        is_int(two, all.seqs[1], "a stopped read ends at the last entry taken");

        memset(&s, 0, sizeof(s));
        is_int(ledger_outbox_read(l, all.seqs[2], 100, read_cb, &s, &last), 0, "read after a number");
        ok(s.n == 2 && s.seqs[0] == all.seqs[3], "after a number: the entries past it");
        is_int(ledger_outbox_ack(l, all.seqs[1]), 0, "ack the first two");
        ledger_outbox_state(l, &st);
        is_int(st.entries, 3, "three left");
        is_int(st.acked_seq, all.seqs[1], "acked recorded");

        /* a reprice queues every changed row, flagged */
        struct reprice_result rr;
        is_int(ledger_reprice(l, reprice_all, NULL, 2, &rr), 0, "reprice");
        memset(&s, 0, sizeof(s));
        ledger_outbox_read(l, 0, 100, read_cb, &s, &last);
        is_int(s.repriced, 3, "three repriced entries");
        uint64_t before_off = last;

        /* off empties it; numbers never go back */
        is_int(ledger_outbox_set(l, false), 0, "off");
        ledger_outbox_state(l, &st);
        ok(!st.on && st.entries == 0, "off: emptied");
        mk(&rows[0], 7, 1);
        commit(l, rows, 1);
        ledger_outbox_state(l, &st);
        is_int(st.entries, 0, "a commit while off queues nothing");
        ledger_close(l);
        is_int(ledger_open(dir, 0, &l), 0, "reopen");
        is_int(ledger_outbox_set(l, true), 0, "on again");
        mk(&rows[0], 8, 1);
        commit(l, rows, 1);
        memset(&s, 0, sizeof(s));
        ledger_outbox_read(l, 0, 100, read_cb, &s, &last);
        is_int(s.n, 1, "one entry (the walk not run yet)");
        ok(s.seqs[0] > before_off, "numbers go on after off and a reopen (%llu > %llu)",
           (unsigned long long)s.seqs[0], (unsigned long long)before_off);
        ledger_outbox_state(l, &st);
        ok(st.filling, "on again over history: a walk is due");
        uint8_t id[OUTBOX_ID_SIZE];
        memcpy(id, st.id, sizeof(id));
        is_int(ledger_outbox_new_id(l), 0, "new id");
        ledger_outbox_state(l, &st);
        ok(memcmp(id, st.id, sizeof(id)) != 0 && st.filling, "a new id, and a walk due");
        ledger_close(l);

        /* the push's batches over it (daemon/team-push/batch.c), read in slices */
        ledger_open(dir, 0, &l);
        {
                struct outbox_walk w2 = { 0 };
                bool d2 = false;
                while (!d2)
                        ledger_outbox_fill(l, &w2, 100, &d2);
                ledger_outbox_state(l, &st);
                ledger_outbox_ack(l, st.next_seq - 1); /* a clean start */
        }
        mk(&rows[0], 20, 1);
        mk(&rows[1], 21, 1);
        commit(l, rows, 2);
        mk(&rows[0], 20, 2); /* row 20 grows after both were queued */
        commit(l, rows, 1);
        struct team_batch tb = { 0 };
        is_int(team_batch_begin(&tb, 0), 0, "batch: begin");
        is_int(team_batch_more(&tb, l, 2), 0, "batch: a slice of two entries");
        ok(!tb.complete && tb.n_rows == 2, "batch: two rows, not complete");
        is_int(team_batch_more(&tb, l, 2), 0, "batch: the next slice");
        ok(tb.complete && tb.n_rows == 2, "batch: a key met in an earlier slice ends it (its row may have changed)");
        uint64_t first_last = tb.last;
        is_int(team_batch_begin(&tb, first_last), 0, "batch: the next one, after the first");
        is_int(team_batch_more(&tb, l, 100), 0, "batch: read");
        ok(tb.n_rows == 1 && !team_batch_empty(&tb) && strstr(tb.rows.p, "\t2\t0\t0\t0\t0\t12\t") != NULL,
           "batch: the grown row goes again, as it is now");
        team_batch_more(&tb, l, 100);
        ok(tb.complete, "batch: complete at the end of the outbox");
        is_int(team_batch_begin(&tb, tb.last), 0, "batch: after the end");
        team_batch_more(&tb, l, 100);
        ok(team_batch_empty(&tb), "batch: nothing after the end");
        team_batch_free(&tb);
        ledger_close(l);

        /* read-only opens of the same ledger see the state */
        is_int(ledger_open(dir, LEDGER_RDONLY, &l), 0, "read-only open of a ledger with an outbox");
        ledger_outbox_state(l, &st);
        ok(st.on, "read-only: on");
        ledger_close(l);
        free(rows);
        char cmd[PATH_MAX];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        (void)!system(cmd);
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
