/* Reading a source from its checkpoint: the part every kind shares (see
 * tail/reader.h). A source's position only ever moves together with the
 * rows read before it (one ledger transaction), so a crash at any point
 * re-reads at most what was not committed, and the content keys make that
 * harmless. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tail/reader.h"
#include "timefmt.h"

_Static_assert(PS_ENCODED_MAX <= CHECKPOINT_STATE_MAX, "an encoded parse_state fits a checkpoint");

/* One pread, again when a signal interrupts it: the bytes read, or -errno. */
static ssize_t pread_once(int fd, void *buf, size_t n, uint64_t off)
{
        ssize_t k;
        while ((k = pread(fd, buf, n, (off_t)off)) < 0 && errno == EINTR)
                ;
        return k < 0 ? -errno : k;
}

int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = pread_once(fd, (char *)buf + got, n - got, off + got);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        *ret_n = got;
        return 0;
}

int reader_pread(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        if (rd->z)
                return zstream_pread(rd->z, buf, n, off, ret_n);
        return pread_full(rd->fd, buf, n, off, ret_n);
}

int reader_pread_some(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        if (rd->z)
                return zstream_pread(rd->z, buf, n, off, ret_n);
        ssize_t k = pread_once(rd->fd, buf, n, off);
        if (k < 0)
                return (int)k;
        *ret_n = (size_t)k;
        return 0;
}

int reader_pread_first(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n,
                       bool *ret_missed)
{
        bool missed = false;

        if (!rd->z) {
                struct iovec iov = {buf, n};
                ssize_t k;
                while ((k = preadv2(rd->fd, &iov, 1, (off_t)off, RWF_NOWAIT)) < 0 && errno == EINTR)
                        ;
                if (k >= 0 && ((size_t)k == n || off + (uint64_t)k >= (uint64_t)rd->st.st_size)) {
                        *ret_n = (size_t)k;
                        *ret_missed = false;
                        return 0;
                }
                /* nothing or only part of it cached: read it as always (a
                 * kernel or file system without RWF_NOWAIT: EOPNOTSUPP) */
                missed = k >= 0 || errno == EAGAIN;
        }
        int r = reader_pread_some(rd, buf, n, off, ret_n);
        if (r < 0)
                return r;
        *ret_missed = missed;
        return 0;
}

int reader_head(struct reader *rd, const char **ret_head, size_t *ret_n)
{
        if (!rd->head_read) {
                int r = pread_full(rd->fd, rd->head, sizeof(rd->head), 0, &rd->head_n);
                if (r < 0)
                        return r;
                rd->head_read = true;
        }
        *ret_head = rd->head;
        *ret_n = rd->head_n;
        return 0;
}

int reader_open(struct reader *rd)
{
        int fd = open(rd->src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &rd->st) < 0) {
                int e = -errno;
                close(fd);
                return e;
        }
        if (!S_ISREG(rd->st.st_mode)) {
                close(fd);
                return S_ISDIR(rd->st.st_mode) ? -EISDIR : -EINVAL;
        }
        rd->fd = fd;
        if (rd->t->spare) { /* given back by reader_finish */
                struct tail_spare *sp = rd->t->spare;
                rd->batch = sp->rows;
                rd->buf = sp->buf;
                rd->cap = sp->cap;
                rd->acc.part = sp->part;
                *sp = (struct tail_spare){0};
        }
        return 0;
}

void checkpoint_reset(struct checkpoint *cp, const struct stat *st)
{
        cp->offset = 0;
        cp->head_len = 0;
        cp->head_hash = 0;
        cp->marker_len = 0;
        cp->marker_hash = 0;
        cp->state_len = 0;
        cp->consumed_known = 0;
        cp->sum_len = cp->sum_hash = cp->tail_hash = 0;
        cp->flags = 0;
        cp->dev = st->st_dev;
        cp->ino = st->st_ino;
        cp->resets++;
}

int reader_checkpoint(struct reader *rd, uint8_t kind)
{
        int r;

        if (rd->t->defer) { /* a worker's read: the writer looked it up */
                r = rd->t->given_cp ? 0 : -ENOENT;
                if (r == 0)
                        rd->cp = *rd->t->given_cp;
        } else {
                r = ledger_get_checkpoint(rd->t->ledger, rd->src->path, &rd->cp);
        }

        if (r == 0) {
                rd->have_cp = true;
                if (rd->cp.kind != kind) {
                        checkpoint_reset(&rd->cp, &rd->st);
                        rd->cp.kind = kind;
                        rd->cp.size = 0;
                        rd->cp.mtime_ns = 0;
                        rd->dirty = true;
                }
                return 0;
        }
        if (r != -ENOENT)
                return r;
        memset(&rd->cp, 0, sizeof(rd->cp));
        rd->cp.kind = kind;
        row_set_str(rd->cp.tool, sizeof(rd->cp.tool), rd->src->adapter->id, strlen(rd->src->adapter->id));
        rd->cp.dev = rd->st.st_dev;
        rd->cp.ino = rd->st.st_ino;
        rd->dirty = true;
        return 0;
}

bool reader_state(struct reader *rd)
{
        if (!rd->cp.state_len)
                return true;
        if (parse_state_decode(rd->cp.state, rd->cp.state_len, &rd->ps) == 0)
                return true;
        memset(&rd->ps, 0, sizeof(rd->ps));
        return false;
}

static void counts_from(struct tail_outcome *out, const struct checkpoint *cp)
{
        out->have_counts = true;
        out->counts = (struct source_counts){
                .bytes_read = cp->bytes_read, .lines = cp->lines, .malformed = cp->malformed,
                .oversized = cp->oversized, .rows = cp->rows_added, .last_commit_ms = cp->last_commit_ms,
        };
}

/* What a commit leaves behind, whoever wrote it. */
static void note_committed(struct reader *rd)
{
        counts_from(&rd->out, &rd->cp);
        rd->read_since_commit = rd->lines_since = rd->malformed_since = rd->oversized_since = 0;
        rd->committed_off = rd->cp.offset;
        rd->dirty = false;
        row_batch_clear(&rd->batch);
}

/* A worker's commit: the unit goes to the writer (tail_ctx.defer). The
 * counts it leaves in rd->out lack this read's rows; the writer knows them. */
static int defer_commit(struct reader *rd)
{
        struct commit_unit *u;
        int r = commit_unit_new(&rd->cp, &rd->batch, &u);

        if (r < 0)
                return r;
        u->bytes = rd->read_since_commit;
        u->lines = rd->lines_since;
        u->malformed = rd->malformed_since;
        u->oversized = rd->oversized_since;
        r = rd->t->defer(rd->t->defer_u, u);
        if (r < 0)
                return r; /* the unit is the writer's either way */
        note_committed(rd);
        return 0;
}

int reader_commit(struct reader *rd)
{
        struct tail_ctx *t = rd->t;
        struct checkpoint *cp = &rd->cp;
        struct checkpoint before = *cp;
        struct commit_result res = {0};
        size_t slen;
        int r;

        if (rd->batch.n > rd->outcomes_cap) {
                uint8_t *o = realloc(rd->outcomes, rd->batch.n);
                if (!o)
                        return -ENOMEM;
                rd->outcomes = o;
                rd->outcomes_cap = rd->batch.n;
        }
        r = parse_state_encode(&rd->ps, cp->state, sizeof(cp->state), &slen);
        if (r < 0)
                return r;
        cp->state_len = (uint32_t)slen;
        cp->bytes_read += rd->read_since_commit;
        cp->lines += rd->lines_since;
        cp->malformed += rd->malformed_since;
        cp->oversized += rd->oversized_since;
        cp->last_commit_ms = timefmt_now_ms();

        if (t->defer) {
                if (rd->states && rd->states->n)
                        return -EINVAL; /* workers read line sources only */
                return defer_commit(rd);
        }
        pricing_apply_batch(t->prices, &rd->batch);
        const struct source_state_entry *states = NULL;
        size_t n_states = rd->states ? rd->states->n : 0;
        if (n_states && (r = pending_states_view(rd->states, &states)) < 0)
                return r;
        struct commit_batch b = {
                .source_path = rd->src->path,
                .cp = cp,
                .rows = rd->batch.rows,
                .n_rows = rd->batch.n,
                .ret_outcomes = rd->outcomes,
                .limits = rd->batch.limits,
                .limits_scope = rd->src->root_path,
                .states = states,
                .n_states = n_states,
        };
        r = ledger_commit(t->ledger, &b, &res);
        if (r < 0) {
                t->ledger_error = r;
                *cp = before; /* nothing was written */
                return r;
        }
        if (t->counters) {
                t->counters->bytes_read += rd->read_since_commit;
                t->counters->lines += rd->lines_since;
                t->counters->malformed += rd->malformed_since;
                t->counters->oversized += rd->oversized_since;
                t->counters->rows_added += res.added;
                t->counters->rows_dup += res.dup;
                t->counters->rows_merged += res.merged;
                t->counters->calls_added += res.calls_added;
                t->counters->commits++;
        }
        if (t->on_rows && rd->batch.n)
                t->on_rows(t->u, rd->batch.rows, rd->outcomes, rd->batch.n);
        if (rd->states)
                pending_states_clear(rd->states);
        note_committed(rd);
        return 0;
}

#define SPARE_ROWS_MAX 256          /* a kept rows buffer: at most ~3 MB */
#define SPARE_BUF_MAX  (1u << 20)   /* a kept read buffer: at most the line reader's 1 MB
                                     * chunk (one read fills it: a bigger one would
                                     * decode more than a slice asks for) */

void tail_spare_free(struct tail_spare *s)
{
        row_batch_free(&s->rows);
        free(s->buf);
        free(s->part);
        *s = (struct tail_spare){0};
}

int reader_finish(struct reader *rd, struct tail_outcome *ret_outcome, int r)
{
        struct tail_ctx *t = rd->t;

        rd->out.size = (uint64_t)rd->st.st_size;
        rd->out.offset = rd->cp.offset;
        if (!rd->out.have_counts && rd->have_cp)
                counts_from(&rd->out, &rd->cp);
        if (ret_outcome)
                *ret_outcome = rd->out;
        if (t->spare) {
                struct tail_spare *sp = t->spare;
                if (rd->batch.cap <= SPARE_ROWS_MAX) {
                        row_batch_free(&sp->rows);
                        row_batch_clear(&rd->batch);
                        sp->rows = rd->batch;
                        memset(&rd->batch, 0, sizeof(rd->batch));
                }
                if (rd->buf && rd->cap <= SPARE_BUF_MAX) {
                        free(sp->buf);
                        sp->buf = rd->buf;
                        sp->cap = rd->cap;
                        rd->buf = NULL;
                }
                if (rd->acc.part) {
                        free(sp->part);
                        sp->part = rd->acc.part;
                        rd->acc.part = NULL;
                }
        }
        rd->z = zstream_free(rd->z);
        if (rd->fd >= 0)
                close(rd->fd);
        free(rd->buf);
        free(rd->outcomes);
        consumed_acc_free(&rd->acc);
        row_batch_free(&rd->batch);
        return r;
}
