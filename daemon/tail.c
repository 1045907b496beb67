/* Tail-reading one source from its checkpoint. The offset only ever moves to
 * the byte after a newline, and only together with the rows of the lines
 * before it (one ledger transaction), so a crash at any point re-reads at
 * most the uncommitted lines and the content keys make that harmless. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "consumed.h"
#include "lines.h"
#include "tail.h"
#include "zstream.h"
#include "timefmt.h"

#define HEAD_MAX   1024u
#define MARKER_MAX 64u
#define CHUNK      (1u << 20)

struct reader {
        struct tail_ctx *t;
        const struct source_ctx *src;
        int fd;
        struct zstream *z;      /* a compressed source: decoded-offset reads */
        struct stat st;
        struct checkpoint cp;
        struct parse_state ps;
        struct row_batch batch;
        uint8_t *outcomes;
        size_t outcomes_cap;
        char *buf;
        size_t cap, len;
        uint64_t buf_off;       /* file offset of buf[0] */
        bool skipping;          /* inside an over-long line */
        uint8_t win[MARKER_MAX];/* the bytes just before cp.offset */
        size_t win_len;
        uint64_t committed_off; /* cp.offset at the last commit */
        uint64_t read_since_commit;
        uint64_t lines_since, malformed_since, oversized_since;
        bool dirty;             /* something to commit even without rows */
        bool at_end;            /* read_lines reached the end of the source */
        struct consumed_acc acc;/* the consumed-bytes chain, fed from buf */
};


_Static_assert(PS_ENCODED_MAX <= CHECKPOINT_STATE_MAX, "an encoded parse_state fits a checkpoint");

static int64_t mtime_ns(const struct stat *st)
{
        return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        *ret_n = got;
        return 0;
}

/* Bytes of the source at off: of the file, or of its decoded stream. */
static int src_pread(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        if (rd->z)
                return zstream_pread(rd->z, buf, n, off, ret_n);
        return pread_full(rd->fd, buf, n, off, ret_n);
}

/* Fingerprint of the source's start: up to and including the first newline,
 * at most HEAD_MAX bytes. */
static int head_compute(struct reader *rd, uint32_t *ret_len, uint64_t *ret_hash)
{
        char b[HEAD_MAX];
        size_t n;
        int r = src_pread(rd, b, sizeof(b), 0, &n);
        if (r < 0)
                return r;
        char *nl = memchr(b, '\n', n);
        if (nl)
                n = (size_t)(nl - b) + 1;
        *ret_len = (uint32_t)n;
        *ret_hash = n ? hash64(b, n) : 0;
        return 0;
}

/* 1 when the len bytes at off hash to hash, 0 when not (or shorter). */
static int bytes_match(struct reader *rd, uint64_t off, uint32_t len, uint64_t hash)
{
        char b[HEAD_MAX];
        size_t n;
        if (len == 0)
                return 1;
        if (len > sizeof(b) || src_pread(rd, b, len, off, &n) < 0 || n != len)
                return 0;
        return hash64(b, n) == hash;
}

static void win_push(struct reader *rd, const char *p, size_t n)
{
        if (n >= MARKER_MAX) {
                memcpy(rd->win, p + n - MARKER_MAX, MARKER_MAX);
                rd->win_len = MARKER_MAX;
                return;
        }
        size_t keep = rd->win_len + n > MARKER_MAX ? MARKER_MAX - n : rd->win_len;
        memmove(rd->win, rd->win + rd->win_len - keep, keep);
        memcpy(rd->win + keep, p, n);
        rd->win_len = keep + n;
}

static void checkpoint_reset(struct checkpoint *cp, const struct stat *st)
{
        cp->offset = 0;
        cp->head_len = 0;
        cp->head_hash = 0;
        cp->marker_len = 0;
        cp->marker_hash = 0;
        cp->state_len = 0;
        cp->consumed_known = 0;
        cp->sum_len = cp->sum_hash = cp->tail_hash = 0;
        cp->dev = st->st_dev;
        cp->ino = st->st_ino;
        cp->resets++;
}

static void fresh_checkpoint(struct checkpoint *cp, const struct source_ctx *src,
                             const struct stat *st, uint8_t kind)
{
        memset(cp, 0, sizeof(*cp));
        cp->kind = kind;
        row_set_str(cp->tool, sizeof(cp->tool), src->adapter->id, strlen(src->adapter->id));
        cp->dev = st->st_dev;
        cp->ino = st->st_ino;
}

/* Feeds the consumed-bytes chain up to file offset upto from buf (the bytes
 * before buf_off are fed already); anything else falls back to re-reading. */
static void acc_catch_up(struct reader *rd, uint64_t upto)
{
        struct consumed_acc *a = &rd->acc;

        if (!a->valid || a->off >= upto)
                return;
        if (a->off < rd->buf_off || upto > rd->buf_off + rd->len) {
                a->valid = false;
                return;
        }
        (void)consumed_acc_feed(a, (const uint8_t *)rd->buf + (a->off - rd->buf_off),
                                (size_t)(upto - a->off));
}

static int commit(struct reader *rd)
{
        struct tail_ctx *t = rd->t;
        struct checkpoint *cp = &rd->cp;
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
        if (fstat(rd->fd, &rd->st) == 0) {
                /* a compressed source's size is recorded once it has been
                 * decoded to its end: "same size and mtime" then means
                 * nothing left to read */
                cp->size = rd->z && !rd->at_end ? 0 : (uint64_t)rd->st.st_size;
                cp->mtime_ns = mtime_ns(&rd->st);
        }
        if (cp->head_len < HEAD_MAX) {
                r = head_compute(rd, &cp->head_len, &cp->head_hash);
                if (r < 0)
                        return r;
        }
        cp->marker_len = (uint32_t)rd->win_len;
        cp->marker_hash = rd->win_len ? hash64(rd->win, rd->win_len) : 0;
        r = parse_state_encode(&rd->ps, cp->state, sizeof(cp->state), &slen);
        if (r < 0)
                return r;
        cp->state_len = (uint32_t)slen;
        struct checkpoint saved_consumed = *cp;
        if (rd->z) {
                cp->consumed_known = 0; /* decoded bytes are not hashed */
        } else if (cp->kind == SOURCE_LINES) {
                acc_catch_up(rd, cp->offset);
                r = consumed_acc_apply(&rd->acc, rd->fd, cp);
                if (r < 0)
                        return r;
        }
        cp->bytes_read += rd->read_since_commit;
        cp->lines += rd->lines_since;
        cp->malformed += rd->malformed_since;
        cp->oversized += rd->oversized_since;
        cp->last_commit_ms = timefmt_now_ms();

        pricing_apply_batch(t->prices, &rd->batch);
        struct commit_batch b = {
                .source_path = rd->src->path,
                .cp = cp,
                .rows = rd->batch.rows,
                .n_rows = rd->batch.n,
                .ret_outcomes = rd->outcomes,
                .limits = rd->batch.limits,
                .limits_scope = rd->src->root_path,
        };
        r = ledger_commit(t->ledger, &b, &res);
        if (r < 0) {
                t->ledger_error = r;
                /* nothing was written: undo the counters we folded in */
                cp->bytes_read -= rd->read_since_commit;
                cp->lines -= rd->lines_since;
                cp->malformed -= rd->malformed_since;
                cp->oversized -= rd->oversized_since;
                cp->consumed_known = saved_consumed.consumed_known;
                cp->sum_len = saved_consumed.sum_len;
                cp->sum_hash = saved_consumed.sum_hash;
                cp->tail_hash = saved_consumed.tail_hash;
                rd->acc.valid = false; /* ahead of the checkpoint now */
                return r;
        }
        cp->rows_added += res.added;
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
        rd->read_since_commit = rd->lines_since = rd->malformed_since = rd->oversized_since = 0;
        rd->committed_off = cp->offset;
        rd->dirty = false;
        row_batch_clear(&rd->batch);
        return 0;
}

static int handle_line(struct reader *rd, const char *line, size_t len)
{
        const char *s;
        size_t n = lines_trim(line, len, &s);
        int r;

        if (n == 0)
                return 0; /* blank line (pi's torn-tail repair writes a bare "\n") */
        rd->lines_since++;
        r = rd->src->adapter->parse_line(rd->src, &rd->ps, s, n, &rd->batch);
        if (r < 0)
                return r;
        if (r == PARSE_MALFORMED)
                rd->malformed_since++;
        else if (r == PARSE_NOT_SOURCE)
                rd->ps.flags |= PS_NOT_SOURCE;
        return 0;
}

/* An unterminated last line that is complete JSON is counted now (a crashed
 * session's last call was spent), without moving the offset and without
 * keeping the state it implies: the line is parsed again once its newline
 * arrives, and its content key makes that harmless. */
static int handle_partial(struct reader *rd)
{
        const char *s;
        size_t n = lines_trim(rd->buf, rd->len, &s);
        struct parse_state copy = rd->ps;

        if (n == 0 || !lines_is_complete_json(s, n))
                return 0;
        int r = rd->src->adapter->parse_line(rd->src, &copy, s, n, &rd->batch);
        return r < 0 ? r : 0;
}

static int grow(struct reader *rd)
{
        size_t limit = rd->t->limits.max_line + 1;
        size_t ncap = rd->cap ? rd->cap * 2 : CHUNK;
        if (rd->cap >= limit)
                return 0; /* full: caller switches to skipping */
        if (ncap > limit)
                ncap = limit;
        char *nb = realloc(rd->buf, ncap);
        if (!nb)
                return -ENOMEM;
        rd->buf = nb;
        rd->cap = ncap;
        return 1;
}

static int read_lines(struct reader *rd, uint64_t *io_budget)
{
        const struct tail_limits *lim = &rd->t->limits;
        int r;

        const uint64_t start_offset = rd->cp.offset;

        rd->buf_off = rd->cp.offset;
        rd->len = 0;
        if (!rd->z && rd->cp.kind == SOURCE_LINES) {
                r = consumed_acc_seed(&rd->acc, rd->fd, &rd->cp);
                if (r < 0)
                        return r;
        }
        for (;;) {
                if (rd->len == rd->cap) {
                        r = grow(rd);
                        if (r < 0)
                                return r;
                        if (r == 0) {
                                /* a line longer than max_line: drop what we
                                 * hold and skip to its newline */
                                rd->skipping = true;
                                acc_catch_up(rd, rd->buf_off + rd->len);
                                rd->buf_off += rd->len;
                                rd->len = 0;
                        }
                }
                size_t k;
                r = src_pread(rd, rd->buf + rd->len, rd->cap - rd->len, rd->buf_off + rd->len, &k);
                if (r < 0)
                        return r;
                if (k == 0) {
                        rd->at_end = true;
                        break;
                }
                rd->len += k;
                rd->read_since_commit += (uint64_t)k;

                char *p = rd->buf, *end = rd->buf + rd->len, *nl;
                while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
                        if (rd->skipping) {
                                rd->skipping = false;
                                rd->oversized_since++;
                                rd->lines_since++;
                        } else {
                                r = handle_line(rd, p, (size_t)(nl - p));
                                if (r < 0)
                                        return r;
                        }
                        win_push(rd, p, (size_t)(nl - p) + 1);
                        p = nl + 1;
                        rd->cp.offset = rd->buf_off + (uint64_t)(p - rd->buf);
                        rd->dirty = true;
                        if (rd->ps.flags & PS_NOT_SOURCE)
                                return TAIL_NOT_SOURCE;
                        if (rd->batch.n >= lim->commit_rows ||
                            rd->cp.offset - rd->committed_off >= lim->commit_bytes) {
                                r = commit(rd);
                                if (r < 0)
                                        return r;
                        }
                }
                size_t used = (size_t)(p - rd->buf);
                if (rd->skipping) {
                        /* the skipped line's bytes still end at a later
                         * newline; the marker window must hold its tail */
                        win_push(rd, p, rd->len - used);
                        acc_catch_up(rd, rd->buf_off + rd->len);
                        rd->buf_off += rd->len;
                        rd->len = 0;
                } else {
                        acc_catch_up(rd, rd->buf_off + used);
                        memmove(rd->buf, p, rd->len - used);
                        rd->buf_off += used;
                        rd->len -= used;
                }
                /* the budget bounds work per call, but only once a line
                 * has been consumed in this call: stopping inside the first
                 * (long) line would re-read it from its start next time,
                 * forever. An over-long line is skipped in one go. */
                if (!rd->skipping && rd->cp.offset > start_offset && *io_budget <= (uint64_t)k) {
                        *io_budget = 0;
                        return TAIL_MORE;
                }
                *io_budget -= *io_budget < (uint64_t)k ? *io_budget : (uint64_t)k;
        }
        if (!rd->skipping && rd->len > 0) {
                r = handle_partial(rd);
                if (r < 0)
                        return r;
        }
        return TAIL_DONE;
}

#define SPARE_ROWS_MAX 256 /* a kept rows buffer: at most ~3 MB */

static void reader_take_spare(struct reader *rd)
{
        if (rd->t->spare) {
                rd->batch = *rd->t->spare;
                memset(rd->t->spare, 0, sizeof(*rd->t->spare));
        }
}

static void reader_free(struct reader *rd)
{
        if (rd->t->spare && rd->batch.cap <= SPARE_ROWS_MAX) {
                row_batch_free(rd->t->spare);
                row_batch_clear(&rd->batch);
                *rd->t->spare = rd->batch;
                memset(&rd->batch, 0, sizeof(rd->batch));
        }
        rd->z = zstream_free(rd->z);
        if (rd->fd >= 0)
                close(rd->fd);
        free(rd->buf);
        free(rd->outcomes);
        consumed_acc_free(&rd->acc);
        row_batch_free(&rd->batch);
}

/* The end of a read: what was seen goes to the caller, r is passed on. */
static int reader_finish(struct reader *rd, struct tail_outcome *out, struct tail_outcome *ret_outcome,
                         int r)
{
        out->size = (uint64_t)rd->st.st_size;
        out->offset = rd->cp.offset;
        if (ret_outcome)
                *ret_outcome = *out;
        reader_free(rd);
        return r;
}

/* A path we have no checkpoint for may be a known file renamed (OpenClaw's
 * .reset/.deleted archives): same (dev, ino), same head, and the old name
 * no longer points at it. Then the checkpoint moves with it. */
static int adopt_renamed(struct reader *rd, struct tail_outcome *out)
{
        char old[PATH_MAX];
        struct checkpoint ocp;
        struct stat ost;
        int r;

        r = ledger_find_identity(rd->t->ledger, rd->st.st_dev, rd->st.st_ino, old, sizeof(old));
        if (r < 0 || strcmp(old, rd->src->path) == 0)
                return 0;
        if (ledger_get_checkpoint(rd->t->ledger, old, &ocp) < 0)
                return 0;
        if (ocp.dev != (uint64_t)rd->st.st_dev || ocp.ino != (uint64_t)rd->st.st_ino)
                return 0;
        if (stat(old, &ost) == 0 && ost.st_dev == rd->st.st_dev && ost.st_ino == rd->st.st_ino)
                return 0; /* a hard link: both names stay; content keys dedup */
        if (!bytes_match(rd, 0, ocp.head_len, ocp.head_hash))
                return 0;
        r = ledger_move_checkpoint(rd->t->ledger, old, rd->src->path);
        if (r < 0)
                return r;
        rd->cp = ocp;
        out->renamed = 1;
        row_set_str(out->renamed_from, sizeof(out->renamed_from), old, strlen(old));
        if (rd->t->counters)
                rd->t->counters->renames++;
        return 1;
}

static int open_source(const struct source_ctx *src, int *ret_fd, struct stat *ret_st)
{
        int fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, ret_st) < 0) {
                int e = -errno;
                close(fd);
                return e;
        }
        if (!S_ISREG(ret_st->st_mode)) {
                close(fd);
                return S_ISDIR(ret_st->st_mode) ? -EISDIR : -EINVAL;
        }
        *ret_fd = fd;
        return 0;
}

/* x.zst and x name one transcript: Codex compresses an idle rollout x into
 * x.zst (and deletes x), and a resume decompresses it back (and deletes
 * x.zst). -EINVAL when the name has no sibling form. */
static int sibling_path(const char *path, bool zstd, char *buf, size_t cap)
{
        size_t n = strlen(path);

        if (zstd) {
                if (n < 5 || strcmp(path + n - 4, ".zst") != 0 || n - 4 >= cap)
                        return -EINVAL;
                memcpy(buf, path, n - 4);
                buf[n - 4] = 0;
                return 0;
        }
        return snprintf(buf, cap, "%s.zst", path) < (int)cap ? 0 : -EINVAL;
}

/* A source without a usable checkpoint of its own takes its sibling's when
 * its (decoded) content starts with what the sibling consumed: same head,
 * same bytes before the sibling's offset. The sibling keeps its checkpoint
 * (it may still be there, and wins while it is). */
static int adopt_sibling(struct reader *rd, bool zstd, struct tail_outcome *out)
{
        char sib[PATH_MAX];
        struct checkpoint scp;

        if (sibling_path(rd->src->path, zstd, sib, sizeof(sib)) < 0 ||
            ledger_get_checkpoint(rd->t->ledger, sib, &scp) < 0)
                return 0;
        if (scp.kind != SOURCE_LINES || scp.offset == 0 || scp.offset < scp.marker_len ||
            (!zstd && (uint64_t)rd->st.st_size < scp.offset))
                return 0;
        if (!bytes_match(rd, 0, scp.head_len, scp.head_hash) ||
            !bytes_match(rd, scp.offset - scp.marker_len, scp.marker_len, scp.marker_hash))
                return 0;
        rd->cp = scp;
        rd->cp.dev = rd->st.st_dev;
        rd->cp.ino = rd->st.st_ino;
        /* the sibling keeps what it counted; this one starts its own tally */
        rd->cp.bytes_read = rd->cp.lines = rd->cp.malformed = rd->cp.oversized = 0;
        rd->cp.rows_added = 0;
        out->renamed = 1;
        row_set_str(out->renamed_from, sizeof(out->renamed_from), sib, strlen(sib));
        if (rd->t->counters)
                rd->t->counters->renames++;
        return 1;
}

/* A compressed source whose plain sibling exists is not read: the plain one
 * is the transcript (being compressed, or resumed). */
static bool plain_sibling_exists(const char *path)
{
        char sib[PATH_MAX];
        struct stat st;

        return sibling_path(path, true, sib, sizeof(sib)) == 0 && stat(sib, &st) == 0 &&
               S_ISREG(st.st_mode);
}

static int tail_lines(struct tail_ctx *t, const struct source_ctx *src, bool zstd,
                      struct tail_outcome *ret_outcome)
{
        struct reader rd = { .t = t, .src = src, .fd = -1 };
        struct tail_outcome out = {0};
        uint64_t budget = t->limits.budget_bytes;
        bool reset = false, have_cp;
        int r;

        if (zstd && plain_sibling_exists(src->path)) {
                if (ret_outcome)
                        *ret_outcome = out;
                return TAIL_DONE;
        }
        r = open_source(src, &rd.fd, &rd.st);
        if (r < 0)
                return r;
        reader_take_spare(&rd); /* given back by reader_free */
        if (zstd) {
                r = zstream_new(rd.fd, &rd.z);
                if (r < 0)
                        goto finish;
        }

        r = ledger_get_checkpoint(t->ledger, src->path, &rd.cp);
        have_cp = r == 0;
        if (r == -ENOENT) {
                r = adopt_renamed(&rd, &out);
                if (r == 0)
                        r = adopt_sibling(&rd, zstd, &out);
                if (r < 0)
                        goto finish;
                if (r == 0) {
                        fresh_checkpoint(&rd.cp, src, &rd.st, SOURCE_LINES);
                        rd.dirty = true;
                }
        } else if (r < 0) {
                goto finish;
        }

        /* a compressed file is not appended to: unchanged size and mtime
         * mean nothing new, without decoding it */
        if (zstd && have_cp && rd.cp.dev == (uint64_t)rd.st.st_dev &&
            rd.cp.ino == (uint64_t)rd.st.st_ino && rd.cp.size == (uint64_t)rd.st.st_size &&
            rd.cp.mtime_ns == mtime_ns(&rd.st)) {
                r = TAIL_DONE;
                goto finish;
        }

        /* identity: same inode, not shorter than what we consumed, same
         * first line, same bytes before the offset (all in decoded bytes
         * for a compressed source, whose file size says nothing) */
        if (rd.cp.dev != (uint64_t)rd.st.st_dev || rd.cp.ino != (uint64_t)rd.st.st_ino ||
            (!zstd && (uint64_t)rd.st.st_size < rd.cp.offset) ||
            !bytes_match(&rd, 0, rd.cp.head_len, rd.cp.head_hash) ||
            (rd.cp.marker_len &&
             !bytes_match(&rd, rd.cp.offset - rd.cp.marker_len, rd.cp.marker_len,
                          rd.cp.marker_hash))) {
                r = have_cp ? adopt_sibling(&rd, zstd, &out) : 0;
                if (r < 0)
                        goto finish;
                if (r == 0) {
                        checkpoint_reset(&rd.cp, &rd.st);
                        reset = true;
                        if (t->counters)
                                t->counters->resets++;
                }
                rd.dirty = true;
        } else if (rd.cp.offset && !zstd) {
                /* Same inode, first line and marker. Growth checks the part
                 * after the last whole block (constant cost); the same size
                 * with a new mtime cannot be an append, so it, and a rescan,
                 * check every consumed byte. */
                bool full = t->verify_all || ((uint64_t)rd.st.st_size == rd.cp.offset &&
                                              mtime_ns(&rd.st) != rd.cp.mtime_ns);
                r = consumed_verify(rd.fd, &rd.cp, !full);
                if (r < 0)
                        goto finish;
                out.verified = full ? rd.cp.offset : rd.cp.offset - rd.cp.sum_len;
                if (r == 0) {
                        checkpoint_reset(&rd.cp, &rd.st);
                        reset = true;
                        rd.dirty = true;
                        if (t->counters)
                                t->counters->resets++;
                }
        }
        if (rd.cp.state_len) {
                r = parse_state_decode(rd.cp.state, rd.cp.state_len, &rd.ps);
                if (r < 0) {
                        /* unreadable state: start the file over */
                        checkpoint_reset(&rd.cp, &rd.st);
                        memset(&rd.ps, 0, sizeof(rd.ps));
                        reset = true;
                        rd.dirty = true;
                }
        }
        out.reset = reset;
        rd.committed_off = rd.cp.offset;
        if (rd.cp.marker_len) {
                size_t n;
                r = src_pread(&rd, rd.win, rd.cp.marker_len, rd.cp.offset - rd.cp.marker_len, &n);
                if (r < 0)
                        goto finish;
                rd.win_len = n;
        }

        if (rd.ps.flags & PS_NOT_SOURCE) {
                r = TAIL_NOT_SOURCE;
                if (rd.dirty || out.renamed)
                        r = commit(&rd) < 0 ? r : TAIL_NOT_SOURCE;
                goto finish;
        }
        if (!zstd && (uint64_t)rd.st.st_size == rd.cp.offset && !rd.dirty && !out.renamed) {
                /* nothing new; record a changed mtime only */
                if (mtime_ns(&rd.st) != rd.cp.mtime_ns)
                        r = commit(&rd);
                else
                        r = 0;
                r = r < 0 ? r : TAIL_DONE;
                goto finish;
        }

        r = read_lines(&rd, &budget);
        if (r == -EBADMSG && zstd) {
                /* a corrupt or cut stream: what decoded before it counts */
                (void)commit(&rd);
                goto finish;
        }
        if (r < 0)
                goto finish;
        {
                int r2 = commit(&rd);
                if (r2 < 0)
                        r = r2;
        }
finish:
        return reader_finish(&rd, &out, ret_outcome, r);
}

int tail_file(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome)
{
        return tail_lines(t, src, false, ret_outcome);
}

int tail_zstd_file(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome)
{
        return tail_lines(t, src, true, ret_outcome);
}

int tail_db(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome)
{
        struct reader rd = { .t = t, .src = src, .fd = -1 };
        struct tail_outcome out = {0};
        size_t budget_rows = t->limits.commit_rows * 16;
        int r;

        if (!src->adapter->collect_db)
                return -EINVAL;
        r = open_source(src, &rd.fd, &rd.st);
        if (r < 0)
                return r;
        reader_take_spare(&rd); /* given back by reader_free */
        r = ledger_get_checkpoint(t->ledger, src->path, &rd.cp);
        if (r == -ENOENT) {
                fresh_checkpoint(&rd.cp, src, &rd.st, SOURCE_DB);
        } else if (r < 0) {
                goto finish;
        } else if (rd.cp.dev != (uint64_t)rd.st.st_dev || rd.cp.ino != (uint64_t)rd.st.st_ino) {
                checkpoint_reset(&rd.cp, &rd.st); /* a different database file */
                out.reset = 1;
        }
        if (rd.cp.state_len && parse_state_decode(rd.cp.state, rd.cp.state_len, &rd.ps) < 0)
                memset(&rd.ps, 0, sizeof(rd.ps));
        rd.cp.marker_len = 0;
        rd.cp.head_len = HEAD_MAX; /* no fingerprint for databases */
        for (;;) {
                uint64_t wm = rd.cp.offset, malformed = 0;
                r = src->adapter->collect_db(src, &rd.ps, &wm, t->limits.commit_rows, &rd.batch,
                                             &malformed);
                if (r < 0) {
                        row_batch_clear(&rd.batch);
                        goto finish;
                }
                rd.cp.offset = wm;
                rd.malformed_since += malformed; /* committed with the rows */
                int collected = r;
                size_t n = rd.batch.n;
                r = commit(&rd);
                if (r < 0)
                        goto finish;
                if (collected != COLLECT_MORE) {
                        r = collected == COLLECT_SETTLING ? TAIL_SETTLING : TAIL_DONE;
                        break;
                }
                if (n >= budget_rows) {
                        r = TAIL_MORE;
                        break;
                }
                budget_rows -= n;
        }
finish:
        return reader_finish(&rd, &out, ret_outcome, r);
}
