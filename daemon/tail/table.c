/* Table sources: rows of a SQLite database, collected by the adapter past
 * its watermark (the checkpoint's offset, with the rest of the position in
 * the adapter's parse state) and committed with the new watermark in
 * bounded batches. A different database file under the same name (another
 * inode) is read again from the start. */
#include <errno.h>
#include <string.h>

#include "tail/reader.h"

int tail_table(struct tail_ctx *t, const struct source_ctx *given, struct tail_outcome *ret_outcome)
{
        struct source_ctx src_with_state = *given, *src = &src_with_state;
        struct pending_states states;
        struct reader rd = { .t = t, .src = src, .fd = -1 };
        size_t budget_rows = t->limits.commit_rows * 16;
        int r;

        if (!src->adapter->collect_rows)
                return -EINVAL;
        /* the adapter's keyed state: in the ledger, written with the rows */
        pending_states_init(&states, t->ledger, src->path);
        if (!t->defer) {
                src_with_state.state = &states.iface;
                rd.states = &states;
        }
        r = reader_open(&rd);
        if (r < 0)
                return r;
        r = reader_checkpoint(&rd, SOURCE_TABLE);
        if (r < 0)
                goto finish;
        if (rd.have_cp && (rd.cp.dev != (uint64_t)rd.st.st_dev || rd.cp.ino != (uint64_t)rd.st.st_ino)) {
                checkpoint_reset(&rd.cp, &rd.st); /* a different database file */
                rd.out.reset = 1;
        }
        (void)reader_state(&rd); /* an unreadable state: the adapter starts over */
        rd.cp.marker_len = 0;
        rd.cp.head_len = HEAD_MAX; /* no fingerprint for databases */
        for (;;) {
                uint64_t wm = rd.cp.offset, malformed = 0;
                r = src->adapter->collect_rows(src, &rd.ps, &wm, t->limits.commit_rows, &rd.batch,
                                               &malformed);
                if (r < 0) {
                        row_batch_clear(&rd.batch);
                        pending_states_clear(&states); /* nothing of a failed read stays */
                        goto finish;
                }
                rd.cp.offset = wm;
                rd.malformed_since += malformed; /* committed with the rows */
                int collected = r;
                size_t n = rd.batch.n;
                rd.cp.size = (uint64_t)rd.st.st_size;
                rd.cp.mtime_ns = mtime_ns(&rd.st);
                r = reader_commit(&rd);
                if (r < 0)
                        goto finish;
                if (collected != COLLECT_MORE) {
                        r = collected == COLLECT_PUBLISHING ? TAIL_PUBLISHING
                            : collected == COLLECT_SETTLING ? TAIL_SETTLING
                                                            : TAIL_DONE;
                        break;
                }
                if (n >= budget_rows) {
                        r = TAIL_MORE;
                        break;
                }
                budget_rows -= n;
        }
finish:
        r = reader_finish(&rd, ret_outcome, r);
        pending_states_free(&states);
        return r;
}
