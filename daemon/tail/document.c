/* Document sources: a file its harness rewrites whole after every change,
 * in place (truncate and write, same inode) or by rename. Each version is
 * read whole through the descriptor opened here; a version already read
 * (same size and mtime, or the same bytes) costs a stat or a hash. The
 * checkpoint keeps, besides the file's stat, a hash of the whole last
 * version (head_hash/head_len) and of the prefix the adapter asked to be
 * remembered (offset/marker_hash), so the adapter can skip the messages
 * it holds. A version caught half-written (the adapter says incomplete) is
 * settling: nothing counted, looked at again shortly; once its writer has
 * been quiet for DOC_QUIET_MS it is what it is, counted malformed once and
 * not read again until it changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tail/reader.h"
#include "timefmt.h"

#define DOC_QUIET_MS 2000 /* a document unparsable for this long after its last write is broken */

/* Reads the whole file through rd->fd into rd->buf (NUL-terminated), at
 * most max bytes: 0, 1 when it is longer (not read), or negative errno. */
static int read_whole(struct reader *rd, size_t max)
{
        size_t want = (size_t)rd->st.st_size < max ? (size_t)rd->st.st_size : max;

        rd->len = 0;
        for (;;) {
                if (rd->len + 1 >= rd->cap) {
                        size_t ncap = rd->cap ? rd->cap * 2 : want + 4096;
                        char *nb;
                        if (ncap > max + 2)
                                ncap = max + 2;
                        if (ncap <= rd->cap)
                                return 1; /* over max */
                        if (!(nb = realloc(rd->buf, ncap)))
                                return -ENOMEM;
                        rd->buf = nb;
                        rd->cap = ncap;
                }
                ssize_t k = pread(rd->fd, rd->buf + rd->len, rd->cap - 1 - rd->len, (off_t)rd->len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                rd->len += (size_t)k;
                if (rd->len > max)
                        return 1;
        }
        rd->buf[rd->len] = 0;
        return 0;
}

/* The file changed while it was read (its stat now differs). */
static bool changed_meanwhile(struct reader *rd)
{
        struct stat now;

        if (fstat(rd->fd, &now) < 0)
                return true;
        return now.st_size != rd->st.st_size || mtime_ns(&now) != mtime_ns(&rd->st) ||
               (uint64_t)now.st_size != rd->len;
}

/* Its writer was at work a moment ago (or the clock says nothing sane). */
static bool recently_written(const struct reader *rd)
{
        int64_t age_ms = timefmt_now_ms() - mtime_ns(&rd->st) / 1000000;
        return age_ms < DOC_QUIET_MS && age_ms > -DOC_QUIET_MS;
}

/* This version seen: a stat that is the same next time needs no read. */
static void record_stat(struct reader *rd)
{
        rd->cp.dev = rd->st.st_dev;
        rd->cp.ino = rd->st.st_ino;
        rd->cp.size = (uint64_t)rd->st.st_size;
        rd->cp.mtime_ns = mtime_ns(&rd->st);
}

/* This version recorded as read: its stat and hashes, and what the adapter
 * remembers. */
static void record_version(struct reader *rd, uint64_t doc_hash, size_t known)
{
        record_stat(rd);
        rd->cp.head_hash = doc_hash;
        rd->cp.head_len = (uint32_t)(rd->len < UINT32_MAX ? rd->len : UINT32_MAX);
        rd->cp.offset = known;
        rd->cp.marker_hash = known ? hash64(rd->buf, known) : 0;
        rd->cp.marker_len = 0;
}

int tail_document(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome)
{
        struct reader rd = { .t = t, .src = src, .fd = -1 };
        uint64_t doc_hash;
        size_t known = 0;
        int r;

        if (!src->adapter->parse_document)
                return -EINVAL;
        r = reader_open(&rd);
        if (r < 0)
                return r;
        r = reader_checkpoint(&rd, SOURCE_DOCUMENT);
        if (r < 0)
                goto finish;
        /* the state every commit below writes back (a snapshot's last
         * totals live there); one that does not decode: start over */
        bool state_ok = reader_state(&rd);
        /* the version read last: nothing to do (also for one found broken) */
        if (rd.have_cp && !rd.dirty && rd.cp.dev == (uint64_t)rd.st.st_dev &&
            rd.cp.ino == (uint64_t)rd.st.st_ino && rd.cp.size == (uint64_t)rd.st.st_size &&
            rd.cp.mtime_ns == mtime_ns(&rd.st)) {
                r = rd.ps.flags & PS_NOT_SOURCE ? TAIL_NOT_SOURCE : TAIL_DONE;
                goto finish;
        }
        r = read_whole(&rd, t->limits.max_document);
        if (r < 0)
                goto finish;
        if (r == 1) {
                /* too big to hold: counted once per version, not read */
                record_stat(&rd);
                rd.oversized_since++;
                r = reader_commit(&rd);
                r = r < 0 ? r : TAIL_DONE;
                goto finish;
        }
        rd.read_since_commit = rd.len;
        if (changed_meanwhile(&rd)) {
                r = TAIL_SETTLING; /* written while we read: read the next version */
                goto finish;
        }
        doc_hash = hash64(rd.buf, rd.len);
        if (rd.have_cp && !rd.dirty && state_ok && rd.cp.head_len == rd.len && rd.cp.head_hash == doc_hash) {
                /* the same bytes again (touched, or written back as they were) */
                known = rd.cp.offset;
                record_version(&rd, doc_hash, known);
                rd.read_since_commit = 0;
                r = reader_commit(&rd);
                r = r < 0 ? r : TAIL_DONE;
                goto finish;
        }
        if (rd.have_cp && !rd.dirty && rd.cp.offset && rd.cp.offset <= rd.len &&
            hash64(rd.buf, rd.cp.offset) == rd.cp.marker_hash)
                known = rd.cp.offset;
        if (!state_ok)
                known = 0; /* no state to resume from: the adapter reads it all */

        struct parse_state ps = rd.ps;
        r = src->adapter->parse_document(src, &ps, rd.buf, rd.len, &known, &rd.batch);
        if (r < 0)
                goto finish;
        switch (r) {
        case PARSE_INCOMPLETE:
                row_batch_clear(&rd.batch);
                if (recently_written(&rd)) {
                        r = TAIL_SETTLING;
                        goto finish;
                }
                /* its writer is done, and this is what it left: broken */
                rd.malformed_since++;
                record_version(&rd, doc_hash, 0);
                break;
        case PARSE_MALFORMED:
                row_batch_clear(&rd.batch);
                rd.malformed_since++;
                record_version(&rd, doc_hash, 0);
                break;
        case PARSE_NOT_SOURCE:
                row_batch_clear(&rd.batch);
                rd.ps = ps;
                rd.ps.flags |= PS_NOT_SOURCE;
                record_version(&rd, doc_hash, 0);
                break;
        default:
                rd.ps = ps;
                rd.lines_since++; /* one version read */
                record_version(&rd, doc_hash, known <= rd.len ? known : rd.len);
        }
        {
                int parsed = r;
                r = reader_commit(&rd);
                if (r >= 0)
                        r = parsed == PARSE_NOT_SOURCE ? TAIL_NOT_SOURCE : TAIL_DONE;
        }
finish:
        return reader_finish(&rd, ret_outcome, r);
}
