/* The consumed-bytes hash chain of a line source (see consumed.h). */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "tail/consumed.h"
#include "hash/xxh.h"

static int read_exact(int fd, uint8_t *buf, size_t n, uint64_t off)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return 0; /* shorter than expected: not the same bytes */
                got += (size_t)k;
        }
        return 1;
}

/* The chain over the whole blocks [from, to) continuing from hash h. */
static int hash_chain(int fd, uint8_t *buf, uint64_t from, uint64_t to, uint64_t h, uint64_t *ret_h)
{
        for (uint64_t off = from; off + CONSUMED_BLOCK <= to; off += CONSUMED_BLOCK) {
                int r = read_exact(fd, buf, CONSUMED_BLOCK, off);
                if (r <= 0)
                        return r;
                h = xxh3_bulk(buf, CONSUMED_BLOCK, h);
        }
        *ret_h = h;
        return 1;
}

static int tail_hash(int fd, uint8_t *buf, uint64_t from, uint64_t to, uint64_t *ret_h)
{
        size_t n = (size_t)(to - from);
        int r = n ? read_exact(fd, buf, n, from) : 1;
        if (r <= 0)
                return r;
        *ret_h = xxh3_bulk(buf, n, from);
        return 1;
}

int consumed_extend(int fd, struct checkpoint *cp)
{
        uint64_t whole = cp->offset - cp->offset % CONSUMED_BLOCK, h = cp->sum_hash, th = 0;
        uint8_t *buf;
        int r;

        if (!cp->consumed_known || cp->sum_len > cp->offset) { /* none yet, or went back */
                cp->sum_len = 0;
                h = 0;
        }
        buf = malloc(CONSUMED_BLOCK);
        if (!buf)
                return -ENOMEM;
        r = hash_chain(fd, buf, cp->sum_len, whole, h, &h);
        if (r > 0)
                r = tail_hash(fd, buf, whole, cp->offset, &th);
        free(buf);
        if (r < 0)
                return r;
        if (r == 0)
                return -EAGAIN; /* the file shrank under us: the next read resets */
        cp->sum_len = whole;
        cp->sum_hash = h;
        cp->tail_hash = th;
        cp->consumed_known = 1;
        return 0;
}

int consumed_verify(int fd, const struct checkpoint *cp, bool only_tail)
{
        uint64_t h = 0, th;
        uint8_t *buf;
        int r = 1;

        if (!cp->consumed_known || cp->sum_len > cp->offset)
                return 1;
        buf = malloc(CONSUMED_BLOCK);
        if (!buf)
                return -ENOMEM;
        if (!only_tail) {
                r = hash_chain(fd, buf, 0, cp->sum_len, 0, &h);
                if (r > 0 && h != cp->sum_hash)
                        r = 0;
        }
        if (r > 0)
                r = tail_hash(fd, buf, cp->sum_len, cp->offset, &th);
        if (r > 0 && th != cp->tail_hash)
                r = 0;
        free(buf);
        return r;
}

int consumed_acc_seed(struct consumed_acc *acc, int fd, const struct checkpoint *cp)
{
        uint64_t n = cp->offset - cp->sum_len;
        int r;

        acc->valid = false;
        if (!cp->consumed_known || cp->sum_len > cp->offset) {
                if (cp->offset > 0)
                        return 0; /* the first commit chains the whole prefix */
                n = 0;
        }
        if (n >= CONSUMED_BLOCK)
                return 0;
        if (!acc->part && !(acc->part = malloc(CONSUMED_BLOCK)))
                return -ENOMEM;
        r = n ? read_exact(fd, acc->part, (size_t)n, cp->offset - n) : 1;
        if (r < 0)
                return r;
        if (r == 0)
                return 0;
        acc->sum_len = cp->offset - n;
        acc->sum_hash = cp->consumed_known ? cp->sum_hash : 0;
        acc->part_len = (size_t)n;
        acc->off = cp->offset;
        acc->valid = true;
        return 0;
}

/* Where [from, to) of the source lies in w, or NULL when w does not hold it all. */
static const uint8_t *window_at(const struct consumed_window *w, uint64_t from, uint64_t to)
{
        if (!w || from < w->off || to > w->off + w->len || from > to)
                return NULL;
        return w->p + (from - w->off);
}

int consumed_acc_feed(struct consumed_acc *acc, const struct consumed_window *w, uint64_t upto)
{
        if (!acc->valid || upto <= acc->off)
                return 0;
        if (!window_at(w, acc->sum_len + acc->part_len, upto)) {
                acc->valid = false; /* a gap: the next apply reads the file */
                return 0;
        }
        while (acc->sum_len + CONSUMED_BLOCK <= upto) {
                uint64_t end = acc->sum_len + CONSUMED_BLOCK;
                const uint8_t *block = acc->part;
                if (acc->part_len) /* its start held, the rest here */
                        memcpy(acc->part + acc->part_len, window_at(w, acc->sum_len + acc->part_len, end),
                               CONSUMED_BLOCK - acc->part_len);
                else
                        block = window_at(w, acc->sum_len, end);
                acc->sum_hash = xxh3_bulk(block, CONSUMED_BLOCK, acc->sum_hash);
                acc->sum_len += CONSUMED_BLOCK;
                acc->part_len = 0;
        }
        acc->off = upto;
        return 0;
}

int consumed_acc_hold(struct consumed_acc *acc, const struct consumed_window *w)
{
        uint64_t from = acc->sum_len + acc->part_len;
        const uint8_t *p;

        if (!acc->valid || from >= acc->off)
                return 0;
        if (!(p = window_at(w, from, acc->off))) {
                acc->valid = false;
                return 0;
        }
        memcpy(acc->part + acc->part_len, p, (size_t)(acc->off - from));
        acc->part_len = (size_t)(acc->off - acc->sum_len);
        return 0;
}

int consumed_acc_apply(struct consumed_acc *acc, int fd, struct checkpoint *cp,
                       const struct consumed_window *w)
{
        uint64_t whole = cp->offset - cp->offset % CONSUMED_BLOCK;
        int r;

        if (acc->valid && acc->sum_len == whole && cp->offset <= acc->off) {
                size_t n = (size_t)(cp->offset - whole);
                const uint8_t *tail;
                if (n == 0) {
                        tail = acc->part;
                } else if (acc->part_len == 0) {
                        tail = window_at(w, whole, cp->offset); /* all pending: where it lies */
                } else {
                        if (n > acc->part_len) /* its start held: the rest joins it */
                                (void)consumed_acc_hold(acc, w);
                        tail = acc->valid && n <= acc->part_len ? acc->part : NULL;
                }
                if (tail) {
                        cp->sum_len = whole;
                        cp->sum_hash = acc->sum_hash;
                        cp->tail_hash = xxh3_bulk(tail, n, whole);
                        cp->consumed_known = 1;
                        return 0;
                }
        }
        r = consumed_extend(fd, cp);
        if (r == 0)
                r = consumed_acc_seed(acc, fd, cp);
        return r;
}

void consumed_acc_free(struct consumed_acc *acc)
{
        free(acc->part);
        acc->part = NULL;
        acc->part_len = 0;
        acc->valid = false;
}
