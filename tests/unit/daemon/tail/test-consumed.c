/* Unit tests of the consumed-bytes chain fed from memory (consumed_acc):
 * the same hashes as consumed_extend reading the file, for feeds of every
 * size, commits inside and across blocks, a seed from a checkpoint in the
 * middle of a block, and fallbacks when the fed bytes do not reach. */
#include <fcntl.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"

#include "tail/consumed.h"

static uint8_t *make_bytes(size_t n, uint32_t seed)
{
        uint8_t *b = malloc(n);
        for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                b[i] = (uint8_t)(seed >> 16);
        }
        return b;
}

/* The whole file as the caller's buffer: every feed finds its bytes. */
static struct consumed_window all_of(const uint8_t *data, size_t size)
{
        return (struct consumed_window){.p = data, .off = 0, .len = size};
}

static bool same_consumed(const struct checkpoint *a, const struct checkpoint *b)
{
        return a->consumed_known == b->consumed_known && a->sum_len == b->sum_len &&
               a->sum_hash == b->sum_hash && a->tail_hash == b->tail_hash;
}

int main(void)
{
        char *dir = tap_tmpdir(), path[PATH_MAX];
        const size_t size = 5 * CONSUMED_BLOCK + 12345;
        uint8_t *data = make_bytes(size, 7);
        struct consumed_window all = all_of(data, size);
        uint32_t x = 99;
        int fd;

        pj(path, dir, "f");
        write_bytes(path, data, size);
        fd = open(path, O_RDONLY);
        ok(fd >= 0, "open");

        /* feeds of random sizes (1 byte to over two blocks), a commit after each */
        struct checkpoint mem = {.kind = SOURCE_LINES}, file = {.kind = SOURCE_LINES};
        struct consumed_acc acc = {0};
        bool all_same = true, all_from_memory = true;
        ok(consumed_acc_seed(&acc, fd, &mem) == 0 && acc.valid, "a fresh source seeds from offset 0");
        uint64_t off = 0;
        while (off < size) {
                x = x * 1103515245u + 12345u;
                size_t n = 1 + (x >> 8) % (size_t)(2 * CONSUMED_BLOCK + 100);
                if (n > size - off)
                        n = size - off;
                /* the piece is all the buffer holds, as a reader's chunk
                 * after its earlier bytes were let go */
                struct consumed_window w = {.p = data + off, .off = off, .len = n};
                consumed_acc_feed(&acc, &w, off + n);
                off += n;
                mem.offset = file.offset = off;
                bool was_valid = acc.valid;
                int ra = consumed_acc_apply(&acc, fd, &mem, &w);
                consumed_acc_hold(&acc, &w);
                if (ra != 0 || consumed_extend(fd, &file) != 0)
                        all_same = false;
                all_same = all_same && same_consumed(&mem, &file);
                all_from_memory = all_from_memory && was_valid && acc.valid;
        }
        ok(all_same, "fed in random pieces: the same chain and tail hashes as re-reading the file");
        ok(all_from_memory, "and every commit was served from memory");
        ok(consumed_verify(fd, &mem, false) == 1, "the result verifies against the file");

        /* fed past the commit point, in the same block: the tail is cut there */
        struct checkpoint c1 = {.kind = SOURCE_LINES}, c2;
        consumed_acc_seed(&acc, fd, &c1);
        consumed_acc_feed(&acc, &all, CONSUMED_BLOCK + 500);
        c1.offset = CONSUMED_BLOCK + 200;
        c2 = c1;
        consumed_acc_apply(&acc, fd, &c1, &all);
        consumed_extend(fd, &c2);
        ok(same_consumed(&c1, &c2), "bytes fed beyond the offset (a skipped long line) in its block");

        /* fed past a block boundary beyond the offset: falls back to reading */
        struct checkpoint d1 = {.kind = SOURCE_LINES}, d2;
        consumed_acc_seed(&acc, fd, &d1);
        consumed_acc_feed(&acc, &all, 2 * CONSUMED_BLOCK + 10);
        d1.offset = CONSUMED_BLOCK - 10;
        d2 = d1;
        ok(consumed_acc_apply(&acc, fd, &d1, &all) == 0, "fallback works");
        consumed_extend(fd, &d2);
        ok(same_consumed(&d1, &d2), "fed past the next block: read from the file, same result");
        ok(acc.valid && acc.off == d1.offset, "and seeded again at the offset");

        /* a seed from a stored checkpoint in the middle of a block */
        struct checkpoint s = {.kind = SOURCE_LINES, .offset = 3 * CONSUMED_BLOCK + 777}, s2;
        consumed_extend(fd, &s);
        consumed_acc_seed(&acc, fd, &s);
        ok(acc.valid && acc.off == s.offset, "seeded from a checkpoint mid-block");
        struct consumed_window sw = {.p = data + s.offset, .off = s.offset, .len = CONSUMED_BLOCK};
        consumed_acc_feed(&acc, &sw, s.offset + CONSUMED_BLOCK);
        s.offset += CONSUMED_BLOCK;
        s2 = s;
        consumed_acc_apply(&acc, fd, &s, &sw);
        consumed_extend(fd, &s2);
        ok(same_consumed(&s, &s2), "continued across the next block boundary: same hashes");

        /* a checkpoint from before the consumed fields, past 0: not seeded */
        struct checkpoint old = {.kind = SOURCE_LINES, .offset = 100}, old2;
        consumed_acc_seed(&acc, fd, &old);
        ok(!acc.valid, "an old checkpoint (no consumed fields) is not seeded");
        old.offset = 300;
        old2 = old;
        consumed_acc_apply(&acc, fd, &old, &all);
        consumed_extend(fd, &old2);
        ok(same_consumed(&old, &old2) && old.consumed_known, "its first commit chains the prefix from the file");

        /* a gap in the feed (not contiguous with the buffer) invalidates */
        struct checkpoint g = {.kind = SOURCE_LINES}, g2;
        consumed_acc_seed(&acc, fd, &g);
        consumed_acc_feed(&acc, &all, 1000);
        g.offset = 5000; /* bytes 1000..5000 were never fed */
        g2 = g;
        consumed_acc_apply(&acc, fd, &g, &all);
        consumed_extend(fd, &g2);
        ok(same_consumed(&g, &g2), "an offset beyond what was fed: read from the file");

        /* one buffer for the whole file (a file read in one chunk): nothing
         * is copied out of it, the last part is hashed where it lies */
        struct checkpoint o1 = {.kind = SOURCE_LINES}, o2;
        consumed_acc_seed(&acc, fd, &o1);
        consumed_acc_feed(&acc, &all, size);
        ok(acc.valid && acc.part_len == 0 && acc.sum_len == 5 * CONSUMED_BLOCK,
           "one buffer: the whole blocks hashed in place, nothing held");
        o1.offset = size;
        o2 = o1;
        ok(consumed_acc_apply(&acc, fd, &o1, &all) == 0 && acc.part_len == 0, "committed without a copy");
        consumed_extend(fd, &o2);
        ok(same_consumed(&o1, &o2), "and the same hashes as re-reading the file");

        /* pending bytes whose buffer is gone (the caller did not hold them):
         * the chain is dropped, and the commit reads the file instead */
        struct checkpoint p1 = {.kind = SOURCE_LINES}, p2;
        consumed_acc_seed(&acc, fd, &p1);
        consumed_acc_feed(&acc, &all, 1000);
        struct consumed_window later = {.p = data + 2000, .off = 2000, .len = 1000};
        consumed_acc_feed(&acc, &later, 3000);
        ok(!acc.valid, "a buffer that no longer holds the pending bytes drops the chain");
        p1.offset = 3000;
        p2 = p1;
        ok(consumed_acc_apply(&acc, fd, &p1, &later) == 0, "which the commit then reads");
        consumed_extend(fd, &p2);
        ok(same_consumed(&p1, &p2), "with the same hashes");

        /* held, then the buffer moves on: the held start and the new bytes
         * make one block */
        struct checkpoint h1 = {.kind = SOURCE_LINES}, h2;
        consumed_acc_seed(&acc, fd, &h1);
        struct consumed_window first = {.p = data, .off = 0, .len = 40000};
        consumed_acc_feed(&acc, &first, 40000);
        consumed_acc_hold(&acc, &first);
        ok(acc.valid && acc.part_len == 40000, "held: the pending bytes copied out");
        struct consumed_window second = {.p = data + 40000, .off = 40000, .len = 60000};
        consumed_acc_feed(&acc, &second, 100000);
        h1.offset = 100000;
        h2 = h1;
        ok(consumed_acc_apply(&acc, fd, &h1, &second) == 0 && acc.valid, "the next buffer completes the block");
        consumed_extend(fd, &h2);
        ok(same_consumed(&h1, &h2), "same hashes across a held start");

        consumed_acc_free(&acc);
        close(fd);
        free(data);
        return tap_done();
}
