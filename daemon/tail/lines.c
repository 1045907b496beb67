/* Line sources: appended records read from a stored offset, plain or
 * zstd-compressed (told by the first bytes). The offset only ever moves to
 * the byte after a newline, and only with the rows of the lines before it.
 * A file is the one we read when it has the same inode, is not shorter,
 * starts with the same first line and has the same bytes before the offset
 * (and, for growth, the same consumed-bytes chain: consumed.h); anything
 * else is read again from 0. A compressed stream (zstd by its first bytes or
 * its .zst name) is read in decoded bytes,
 * its decoder kept across calls (tail_keep) so a large file costs one
 * decode, however many slices it is read in. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lines.h"
#include "tail/reader.h"

#define CHUNK (1u << 20)
#define READ_MIN (64u << 10) /* the least one read asks for */

struct tail_keep {
        uint64_t dev, ino, size;  /* the file as it was when kept */
        int64_t mtime_ns;
        uint64_t offset;          /* the checkpoint's offset then */
        uint64_t read_pos;        /* how far the read had come (>= offset) */
        bool skipping;            /* inside an over-long line (read_pos: where in it) */
        uint8_t win[MARKER_MAX];  /* with skipping: the bytes before read_pos */
        size_t win_len;
        char *pending;            /* compressed, not skipping: [offset, read_pos) */
        size_t pending_len;
        int fd;                   /* compressed: the decoder, at read_pos, and its file */
        struct zstream *z;
};

struct tail_keep *tail_keep_free(struct tail_keep *k)
{
        if (k) {
                zstream_free(k->z);
                if (k->fd >= 0)
                        close(k->fd);
                free(k->pending);
                free(k);
        }
        return NULL;
}

bool tail_keep_heavy(const struct tail_keep *k)
{
        return k && k->z;
}

/* Fingerprint of the source's start: up to and including the first newline,
 * at most HEAD_MAX bytes. A plain file's head as read when the read began
 * serves unless it was a first line still without its newline (the read
 * may have seen more of it since). */
static int head_compute(struct reader *rd, uint32_t *ret_len, uint64_t *ret_hash)
{
        char b[HEAD_MAX];
        const char *h = b;
        size_t n = 0;
        int r;

        if (!rd->z && (r = reader_head(rd, &h, &n)) < 0)
                return r;
        if (rd->z || (n < HEAD_MAX && !memchr(h, '\n', n))) {
                h = b;
                if ((r = reader_pread(rd, b, sizeof(b), 0, &n)) < 0)
                        return r;
        }
        const char *nl = memchr(h, '\n', n);
        if (nl)
                n = (size_t)(nl - h) + 1;
        *ret_len = (uint32_t)n;
        *ret_hash = n ? hash64(h, n) : 0;
        return 0;
}

/* 1 when the len bytes at off hash to hash, 0 when not (or shorter). A
 * plain file's start comes from its head, read once (reader_head). */
static int bytes_match(struct reader *rd, uint64_t off, uint32_t len, uint64_t hash)
{
        char b[HEAD_MAX];
        const char *h = b;
        size_t n;
        if (len == 0)
                return 1;
        if (len > sizeof(b))
                return 0;
        if (off == 0 && !rd->z ? reader_head(rd, &h, &n) < 0 : reader_pread(rd, b, len, off, &n) < 0)
                return 0;
        return n >= len && hash64(h, len) == hash;
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

/* The reader's buffer as the consumed-bytes chain sees it. */
static struct consumed_window acc_window(const struct reader *rd)
{
        return (struct consumed_window){.p = (const uint8_t *)rd->buf, .off = rd->buf_off, .len = rd->len};
}

/* Feeds the consumed-bytes chain up to file offset upto from buf (the bytes
 * before it are fed already); anything else falls back to re-reading. */
static void acc_catch_up(struct reader *rd, uint64_t upto)
{
        struct consumed_window w = acc_window(rd);
        (void)consumed_acc_feed(&rd->acc, &w, upto);
}

/* Fed up to upto, the chain's pending bytes are copied out of buf: the
 * caller is about to drop buf's bytes before upto. */
static void acc_let_go(struct reader *rd, uint64_t upto)
{
        struct consumed_window w = acc_window(rd);
        acc_catch_up(rd, upto);
        (void)consumed_acc_hold(&rd->acc, &w);
}

/* The line-source fields of the checkpoint, then the shared commit. */
static int commit(struct reader *rd)
{
        struct checkpoint *cp = &rd->cp;
        struct checkpoint saved = *cp;
        int r;

        /* The size and mtime recorded are the open's while nothing past
         * that size was read: a stat older than every byte read can only
         * make a later look read or verify again, never miss a change
         * (one made between the read and a fresher stat would be missed).
         * Past it (the file grew meanwhile), or compressed, a fresh one. */
        bool fresh = rd->z || rd->buf_off + rd->len > (uint64_t)rd->st.st_size;
        if (!fresh || fstat(rd->fd, &rd->st) == 0) {
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
        /* inside a skipped line the window has moved past the offset */
        const uint8_t *w = rd->skipping ? rd->skip_win : rd->win;
        size_t wn = rd->skipping ? rd->skip_win_len : rd->win_len;
        cp->marker_len = (uint32_t)wn;
        cp->marker_hash = wn ? hash64(w, wn) : 0;
        if (rd->z) {
                cp->consumed_known = 0; /* decoded bytes are not hashed */
        } else {
                struct consumed_window window = acc_window(rd);
                acc_catch_up(rd, cp->offset);
                r = consumed_acc_apply(&rd->acc, rd->fd, cp, &window);
                if (r < 0)
                        return r;
        }
        r = reader_commit(rd);
        if (r < 0) {
                *cp = saved;
                rd->acc.valid = false; /* ahead of the checkpoint now */
        }
        return r;
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
        size_t from = (size_t)(rd->cp.offset - rd->buf_off); /* buf may start before the offset */
        const char *s;
        size_t n = lines_trim(rd->buf + from, rd->len - from, &s);
        struct parse_state copy = rd->ps;

        if (n == 0 || !lines_is_complete_json(s, n))
                return 0;
        int r = rd->src->adapter->parse_line(rd->src, &copy, s, n, &rd->batch);
        return r < 0 ? r : 0;
}

static int grow(struct reader *rd)
{
        size_t limit = rd->t->limits.max_line + 1;
        /* a kept buffer smaller than a chunk (a document's) starts at one */
        size_t ncap = rd->cap >= CHUNK ? rd->cap * 2 : CHUNK;
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

/* Whether this read may stop where it is and go on later: once a line has
 * been consumed (the offset moved), or anywhere when what it holds can be
 * kept (a compressed stream's decoder, the point an over-long line is
 * skipped to). Stopping inside the first line otherwise would re-read it
 * from its start next time, forever. */
static bool may_yield(const struct reader *rd, uint64_t start_offset)
{
        return rd->cp.offset > start_offset || (rd->t->keep && (rd->z || rd->skipping));
}

/* How much the next read asks for: what buf has room for, at most what
 * the slice has left (at least READ_MIN): a decoder's output counts like
 * bytes read. */
static size_t read_size(const struct reader *rd, uint64_t budget)
{
        size_t want = rd->cap - rd->len;
        uint64_t ask = budget > READ_MIN ? budget : READ_MIN;
        return ask < want ? (size_t)ask : want;
}

/* A worker's read of a file from 0 (new to the ledger, or started over)
 * reads its first chunk before anything else, and takes the head from it:
 * one pread a file instead of two (a 1 KB head, then the chunk). The chunk
 * is what read_lines' first read would have asked for (read_size); it is
 * used only if the read does start at 0 (first_n, else dropped). A file
 * that is not plain lines after all (zstd) has cost one chunk read more. */
static int read_first(struct reader *rd, uint64_t budget)
{
        size_t k;
        int r;

        if (rd->cap == 0 && (r = grow(rd)) < 0)
                return r;
        bool missed;
        r = reader_pread_first(rd, rd->buf, read_size(rd, budget), 0, &k, &missed);
        if (r < 0)
                return r;
        if (missed && rd->t->counters)
                rd->t->counters->cold_reads++;
        if (k < HEAD_MAX && k < (uint64_t)rd->st.st_size)
                return 0; /* short of the head: reader_head reads it */
        rd->head_n = k < HEAD_MAX ? k : HEAD_MAX;
        memcpy(rd->head, rd->buf, rd->head_n);
        rd->head_read = true;
        rd->first_n = k;
        return 0;
}

/* Reads from buf_off + len on (buf holds [buf_off, buf_off + len) already:
 * a kept partial line). */
static int read_lines(struct reader *rd, uint64_t *io_budget)
{
        const struct tail_limits *lim = &rd->t->limits;
        const uint64_t start_offset = rd->cp.offset;
        int r;

        if (!rd->z) {
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
                                memcpy(rd->skip_win, rd->win, rd->win_len);
                                rd->skip_win_len = rd->win_len;
                                win_push(rd, rd->buf, rd->len);
                                acc_let_go(rd, rd->buf_off + rd->len);
                                rd->buf_off += rd->len;
                                rd->len = 0;
                        }
                }
                size_t k, want = read_size(rd, *io_budget);
                if (rd->first_n && rd->buf_off == 0 && rd->len == 0 && !rd->skipping) {
                        /* read with the head: buf[0, k), asked for with the
                         * same room and budget (nothing read or spent since) */
                        k = rd->first_n;
                } else {
                        r = reader_pread_some(rd, rd->buf + rd->len, want, rd->buf_off + rd->len, &k);
                        if (r < 0)
                                return r;
                }
                rd->first_n = 0;
                if (k == 0) {
                        rd->at_end = true;
                        break;
                }
                rd->len += k;
                /* a plain file read short of what was asked, up to the size
                 * it had when this read began, is at its end: a second read
                 * would return nothing (a later append is a later read) */
                bool at_end = !rd->z && k < want && rd->buf_off + rd->len >= (uint64_t)rd->st.st_size;
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
                        acc_let_go(rd, rd->buf_off + rd->len);
                        rd->buf_off += rd->len;
                        rd->len = 0;
                } else if (at_end) {
                        /* buf stays as it is (the consumed bytes before the
                         * offset): the commit hashes the chain's last part
                         * where it lies, handle_partial reads the rest */
                        acc_catch_up(rd, rd->buf_off + used);
                } else {
                        acc_let_go(rd, rd->buf_off + used);
                        memmove(rd->buf, p, rd->len - used);
                        rd->buf_off += used;
                        rd->len -= used;
                }
                if (at_end) {
                        *io_budget -= *io_budget < (uint64_t)k ? *io_budget : (uint64_t)k;
                        rd->at_end = true;
                        break;
                }
                if (*io_budget <= (uint64_t)k && may_yield(rd, start_offset)) {
                        *io_budget = 0;
                        return TAIL_MORE;
                }
                *io_budget -= *io_budget < (uint64_t)k ? *io_budget : (uint64_t)k;
        }
        if (!rd->skipping && rd->buf_off + rd->len > rd->cp.offset) {
                r = handle_partial(rd);
                if (r < 0)
                        return r;
        }
        return TAIL_DONE;
}

/* ---- renames and siblings -------------------------------------------------- */

/* A path we have no checkpoint for may be a known file renamed (OpenClaw's
 * .reset/.deleted archives): same (dev, ino), same head, and the old name
 * no longer points at it. Then the checkpoint moves with it. */
static int adopt_renamed(struct reader *rd)
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
        if (ocp.kind != SOURCE_LINES || ocp.dev != (uint64_t)rd->st.st_dev ||
            ocp.ino != (uint64_t)rd->st.st_ino)
                return 0;
        if (stat(old, &ost) == 0 && ost.st_dev == rd->st.st_dev && ost.st_ino == rd->st.st_ino)
                return 0; /* a hard link: both names stay; content keys dedup */
        if (!bytes_match(rd, 0, ocp.head_len, ocp.head_hash))
                return 0;
        r = ledger_move_checkpoint(rd->t->ledger, old, rd->src->path);
        if (r < 0)
                return r;
        rd->cp = ocp;
        rd->have_cp = true;
        rd->out.renamed = 1;
        row_set_str(rd->out.renamed_from, sizeof(rd->out.renamed_from), old, strlen(old));
        if (rd->t->counters)
                rd->t->counters->renames++;
        return 1;
}

/* A source without a usable checkpoint of its own takes its sibling's
 * (adapter->sibling_of) when its (decoded) content starts with what the
 * sibling consumed: same head, same bytes before the sibling's offset. The
 * sibling keeps its checkpoint (it may still be there, and wins while it
 * is). */
static int adopt_sibling(struct reader *rd)
{
        char sib[PATH_MAX];
        struct checkpoint scp;

        if (!rd->src->adapter->sibling_of ||
            rd->src->adapter->sibling_of(rd->src->path, sib, sizeof(sib)) <= 0 ||
            ledger_get_checkpoint(rd->t->ledger, sib, &scp) < 0)
                return 0;
        if (scp.kind != SOURCE_LINES || scp.offset == 0 || scp.offset < scp.marker_len ||
            (!rd->z && (uint64_t)rd->st.st_size < scp.offset))
                return 0;
        if (!bytes_match(rd, 0, scp.head_len, scp.head_hash) ||
            !bytes_match(rd, scp.offset - scp.marker_len, scp.marker_len, scp.marker_hash))
                return 0;
        rd->cp = scp;
        rd->cp.dev = rd->st.st_dev;
        rd->cp.ino = rd->st.st_ino;
        rd->cp.flags = 0;
        /* the sibling keeps what it counted; this one starts its own tally */
        rd->cp.bytes_read = rd->cp.lines = rd->cp.malformed = rd->cp.oversized = 0;
        rd->cp.rows_added = 0;
        rd->out.renamed = 1;
        row_set_str(rd->out.renamed_from, sizeof(rd->out.renamed_from), sib, strlen(sib));
        if (rd->t->counters)
                rd->t->counters->renames++;
        return 1;
}

/* A compressed source whose plain sibling exists is not read: the plain one
 * is the transcript (being compressed, or resumed). */
static bool plain_sibling_exists(const struct reader *rd)
{
        char sib[PATH_MAX];
        struct stat st;
        char head[4];
        size_t n;

        if (!rd->src->adapter->sibling_of ||
            rd->src->adapter->sibling_of(rd->src->path, sib, sizeof(sib)) <= 0 ||
            stat(sib, &st) < 0 || !S_ISREG(st.st_mode))
                return false;
        /* the sibling is the plain form when it is not compressed itself */
        int fd = open(sib, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return false;
        bool plain = pread_full(fd, head, sizeof(head), 0, &n) == 0 && !zstream_magic(head, n);
        close(fd);
        return plain;
}

/* ---- one read --------------------------------------------------------------- */

enum keep_state {
        KEEP_NONE = 0,
        KEEP_SEEKING = 1, /* a decoder on its way to the checkpoint's offset */
        KEEP_READING = 2, /* a decoder past the offset, the bytes since in pending */
        KEEP_SKIPPING = 3,/* inside an over-long line, at read_pos */
};

static enum keep_state keep_state_of(const struct tail_keep *k)
{
        if (k->skipping)
                return KEEP_SKIPPING;
        return k->read_pos < k->offset ? KEEP_SEEKING : KEEP_READING;
}

/* The kept state of the last call, when it still fits this file: a
 * compressed file must be exactly as it was (it is never appended to); a
 * plain one may have grown (the identity checks run as always). Else it is
 * dropped. */
static struct tail_keep *keep_take(struct reader *rd)
{
        struct tail_keep *k = rd->t->keep ? *rd->t->keep : NULL;
        bool fits;

        if (!k)
                return NULL;
        *rd->t->keep = NULL;
        fits = k->dev == (uint64_t)rd->st.st_dev && k->ino == (uint64_t)rd->st.st_ino &&
               k->offset == rd->cp.offset;
        if (rd->z)
                fits = fits && k->z && k->size == (uint64_t)rd->st.st_size &&
                       k->mtime_ns == mtime_ns(&rd->st);
        else
                fits = fits && !k->z && k->skipping && (uint64_t)rd->st.st_size >= k->size;
        if (!fits)
                return tail_keep_free(k);
        if (k->z) {
                /* the kept decoder (and its descriptor) replace the new ones */
                zstream_free(rd->z);
                close(rd->fd);
                rd->fd = k->fd;
                rd->z = k->z;
                k->fd = -1;
                k->z = NULL;
        }
        return k;
}

/* Goes on where the kept state stopped: in a skipped line, or after the
 * bytes read past the offset. */
static void keep_resume(struct reader *rd, struct tail_keep *k)
{
        if (keep_state_of(k) == KEEP_SKIPPING) {
                rd->skipping = true;
                memcpy(rd->skip_win, rd->win, rd->win_len); /* as marker_read found it */
                rd->skip_win_len = rd->win_len;
                memcpy(rd->win, k->win, k->win_len);
                rd->win_len = k->win_len;
                rd->buf_off = k->read_pos;
                rd->len = 0;
        } else if (keep_state_of(k) == KEEP_READING) {
                free(rd->buf);
                rd->buf = k->pending;
                rd->cap = rd->len = k->pending_len;
                k->pending = NULL;
                rd->buf_off = k->offset;
        }
}

/* What the next call needs to go on where this one stopped (TAIL_MORE with
 * a decoder or inside an over-long line); else nothing is kept. seek_pos:
 * where a decoder on its way to the offset stopped (or UINT64_MAX). */
static void keep_store(struct reader *rd, int r, uint64_t seek_pos)
{
        struct tail_keep *k;

        if (!rd->t->keep || r != TAIL_MORE || !(rd->z || rd->skipping) || fstat(rd->fd, &rd->st) < 0)
                return;
        k = calloc(1, sizeof(*k));
        if (!k)
                return;
        *k = (struct tail_keep){
                .dev = rd->st.st_dev, .ino = rd->st.st_ino, .size = (uint64_t)rd->st.st_size,
                .mtime_ns = mtime_ns(&rd->st), .offset = rd->cp.offset,
                .read_pos = seek_pos != UINT64_MAX ? seek_pos : rd->buf_off + rd->len,
                .skipping = rd->skipping && seek_pos == UINT64_MAX, .fd = -1,
        };
        if (k->skipping) {
                memcpy(k->win, rd->win, rd->win_len);
                k->win_len = rd->win_len;
        } else if (seek_pos == UINT64_MAX) {
                k->pending = rd->buf;
                k->pending_len = rd->len;
                rd->buf = NULL;
                rd->cap = rd->len = 0;
        }
        if (rd->z) {
                k->fd = rd->fd;
                k->z = rd->z;
                rd->fd = -1;
                rd->z = NULL;
        }
        *rd->t->keep = k;
}

/* Whether the source is a zstd stream: its first bytes say so, or its
 * name does (the .zst convention; then bytes that are not zstd are a
 * corrupt stream, not plain lines). */
static int is_compressed(struct reader *rd, bool *ret)
{
        size_t len = strlen(rd->src->path), n;
        const char *head;
        int r = reader_head(rd, &head, &n);

        if (r < 0)
                return r;
        *ret = zstream_magic(head, n) || (len > 4 && strcmp(rd->src->path + len - 4, ".zst") == 0);
        return 0;
}

/* A compressed stream is decoded up to the checkpoint's marker in slices
 * (counted like read bytes), so a large file read again after a restart
 * does not hold the loop: 1 when there, 0 when the budget ran out. */
static int seek_decoded(struct reader *rd, uint64_t *io_budget)
{
        uint64_t before = zstream_produced(rd->z);
        bool reached;
        int r;

        if (rd->cp.offset == 0)
                return 1;
        r = zstream_skip(rd->z, rd->cp.offset - rd->cp.marker_len, rd->t->keep ? *io_budget : UINT64_MAX,
                         &reached);
        if (r < 0)
                return r;
        uint64_t done = zstream_produced(rd->z) - before;
        *io_budget -= *io_budget < done ? *io_budget : done;
        return reached ? 1 : 0;
}

/* The marker: the bytes just before the offset, read once into rd->win
 * (a compressed stream is not read backwards), matched against the
 * checkpoint's hash. */
static int marker_read(struct reader *rd, bool *ret_same)
{
        size_t n = 0;
        int r;

        rd->win_len = 0;
        if (!rd->cp.marker_len) {
                *ret_same = true;
                return 0;
        }
        r = reader_pread(rd, rd->win, rd->cp.marker_len, rd->cp.offset - rd->cp.marker_len, &n);
        if (r < 0)
                return r;
        rd->win_len = n;
        *ret_same = n == rd->cp.marker_len && hash64(rd->win, n) == rd->cp.marker_hash;
        return 0;
}

static void start_over(struct reader *rd)
{
        checkpoint_reset(&rd->cp, &rd->st);
        memset(&rd->ps, 0, sizeof(rd->ps));
        rd->out.reset = 1;
        rd->dirty = true;
        rd->win_len = 0;
        if (rd->t->counters)
                rd->t->counters->resets++;
}

int tail_lines(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome)
{
        struct reader rd = { .t = t, .src = src, .fd = -1 };
        struct tail_keep *k = NULL;
        uint64_t budget = t->limits.budget_bytes, produced0 = 0, seek_pos = UINT64_MAX;
        bool compressed = false;
        int r;

        r = reader_open(&rd);
        if (r < 0)
                return r;
        if (t->defer && (!t->given_cp || t->given_cp->offset == 0) && (r = read_first(&rd, budget)) < 0)
                goto finish;
        r = is_compressed(&rd, &compressed);
        if (r < 0)
                goto finish;
        if (compressed && t->defer) {
                r = TAIL_SERIAL; /* its decoder is kept between reads: the writer's */
                goto finish;
        }
        if (compressed && plain_sibling_exists(&rd)) {
                r = TAIL_DONE;
                goto finish;
        }
        if (compressed) {
                r = zstream_new(rd.fd, &rd.z);
                if (r < 0)
                        goto finish;
        }
        r = reader_checkpoint(&rd, SOURCE_LINES);
        if (r < 0)
                goto finish;
        if (!rd.have_cp && !t->defer) {
                r = adopt_renamed(&rd);
                if (r == 0)
                        r = adopt_sibling(&rd);
                if (r < 0)
                        goto finish;
        }

        /* a compressed file is not appended to: unchanged size and mtime
         * mean nothing new (or, for one that did not decode, no better luck
         * this time), without decoding it */
        if (compressed && rd.have_cp && rd.cp.dev == (uint64_t)rd.st.st_dev &&
            rd.cp.ino == (uint64_t)rd.st.st_ino && rd.cp.size == (uint64_t)rd.st.st_size &&
            rd.cp.mtime_ns == mtime_ns(&rd.st)) {
                r = rd.cp.flags & CP_F_UNREADABLE ? -EBADMSG : TAIL_DONE;
                goto finish;
        }
        rd.cp.flags &= ~CP_F_UNREADABLE; /* changed since: try again */
        k = keep_take(&rd);
        if (rd.z)
                produced0 = zstream_produced(rd.z);

        if (k && keep_state_of(k) == KEEP_READING) {
                /* the same compressed file, read on from where it stopped:
                 * its identity was checked when the read began */
                keep_resume(&rd, k);
        } else {
                /* identity: same inode, not shorter than what we consumed,
                 * same first line, same bytes before the offset (all in
                 * decoded bytes for a compressed source, whose file size
                 * says nothing) */
                bool same = rd.cp.dev == (uint64_t)rd.st.st_dev && rd.cp.ino == (uint64_t)rd.st.st_ino &&
                            (compressed || (uint64_t)rd.st.st_size >= rd.cp.offset) &&
                            bytes_match(&rd, 0, rd.cp.head_len, rd.cp.head_hash);
                if (same && compressed) {
                        r = seek_decoded(&rd, &budget);
                        if (r < 0)
                                goto decode_failed;
                        if (r == 0) {
                                seek_pos = rd.cp.offset - rd.cp.marker_len; /* on its way */
                                r = TAIL_MORE;
                                goto finish;
                        }
                }
                if (same) {
                        r = marker_read(&rd, &same);
                        if (r < 0)
                                goto decode_failed;
                }
                if (!same) {
                        r = rd.have_cp && !rd.out.renamed && !t->defer ? adopt_sibling(&rd) : 0;
                        if (r < 0)
                                goto finish;
                        if (r == 0)
                                start_over(&rd);
                        else if ((r = marker_read(&rd, &same)) < 0)
                                goto decode_failed;
                        rd.dirty = true;
                } else if (rd.cp.offset && !compressed) {
                        /* Same inode, first line and marker. Growth checks
                         * the part after the last whole block (constant
                         * cost); the same size with a new mtime cannot be an
                         * append, so it, and a rescan, check every consumed
                         * byte. */
                        bool full = t->verify_all || ((uint64_t)rd.st.st_size == rd.cp.offset &&
                                                      mtime_ns(&rd.st) != rd.cp.mtime_ns);
                        r = consumed_verify(rd.fd, &rd.cp, !full);
                        if (r < 0)
                                goto finish;
                        rd.out.verified = full ? rd.cp.offset : rd.cp.offset - rd.cp.sum_len;
                        if (r == 0)
                                start_over(&rd);
                }
                rd.buf_off = rd.cp.offset;
                rd.len = 0;
                if (k && keep_state_of(k) == KEEP_SKIPPING && !rd.out.reset)
                        keep_resume(&rd, k); /* a plain file still the same: on in the skip */
        }
        k = tail_keep_free(k);
        if (!rd.out.reset && !reader_state(&rd)) {
                /* unreadable state: start the file over */
                start_over(&rd);
                rd.buf_off = 0;
                rd.len = 0;
                rd.skipping = false;
        }
        rd.committed_off = rd.cp.offset;

        if (rd.ps.flags & PS_NOT_SOURCE) {
                r = TAIL_NOT_SOURCE;
                if (rd.dirty || rd.out.renamed)
                        r = commit(&rd) < 0 ? r : TAIL_NOT_SOURCE;
                goto finish;
        }
        if (!compressed && (uint64_t)rd.st.st_size == rd.cp.offset && !rd.dirty && !rd.out.renamed) {
                /* nothing new; record a changed mtime only */
                r = mtime_ns(&rd.st) != rd.cp.mtime_ns ? commit(&rd) : 0;
                r = r < 0 ? r : TAIL_DONE;
                goto finish;
        }

        r = read_lines(&rd, &budget);
        if (r < 0)
                goto decode_failed;
        {
                int r2 = commit(&rd);
                if (r2 < 0)
                        r = r2;
        }
        goto finish;

decode_failed:
        if (r == -EBADMSG && compressed) {
                /* a corrupt or cut stream: what decoded before it counts,
                 * and the file is not decoded again until it changes */
                rd.at_end = true;
                rd.skipping = false;
                rd.cp.flags |= CP_F_UNREADABLE;
                if (commit(&rd) < 0)
                        rd.cp.flags &= ~CP_F_UNREADABLE;
        }
finish:
        if (rd.z)
                rd.out.decoded = zstream_produced(rd.z) - produced0; /* the decoder's work */
        tail_keep_free(k);
        keep_store(&rd, r, seek_pos);
        return reader_finish(&rd, ret_outcome, r);
}
