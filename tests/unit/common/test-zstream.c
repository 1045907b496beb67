/* Unit tests of the zstd stream reader: decoded-offset reads across frames
 * and buffer boundaries, going back, the kept head, the end of the stream,
 * and corrupt, cut and empty files. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>
#include <zstd.h>

#include "tap.h"
#include "testutil.h"

#include "zstream.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* Pseudo-random lines (compressible, but not trivially). */
static char *make_text(size_t n)
{
        char *t = malloc(n);
        uint32_t x = 12345;

        for (size_t i = 0; i < n; i++) {
                x = x * 1103515245u + 12345u;
                t[i] = (i % 97 == 96) ? '\n' : (char)('a' + (x >> 16) % 26);
        }
        return t;
}

/* text compressed as `frames` frames one after the other, into path */
static size_t write_zst(const char *path, const char *text, size_t n, int frames)
{
        size_t cap = ZSTD_compressBound(n) + 64 * (size_t)frames, len = 0, per = n / (size_t)frames;
        char *buf = malloc(cap);

        for (int f = 0; f < frames; f++) {
                size_t from = (size_t)f * per, k = f == frames - 1 ? n - from : per;
                len += ZSTD_compress(buf + len, cap - len, text + from, k, 3);
        }
        write_bytes(path, buf, len);
        free(buf);
        return len;
}

static int open_ro(const char *path)
{
        return open(path, O_RDONLY | O_CLOEXEC);
}

static void test_reads(void)
{
        char *tmp = tap_tmpdir(), path[PATH_MAX];
        const size_t n = 3u << 20; /* several output buffers */
        char *text = make_text(n), *got = malloc(n + 16);
        struct zstream *z = NULL;
        size_t k;
        int fd;

        pj(path, tmp, "a.zst");
        write_zst(path, text, n, 3);
        fd = open_ro(path);
        is_int(zstream_new(fd, &z), 0, "new");

        is_int(zstream_pread(z, got, 100, 0, &k), 0, "read the start");
        ok(k == 100 && memcmp(got, text, 100) == 0, "first 100 bytes");
        is_int(zstream_pread(z, got, 4096, 2000000, &k), 0, "skip forward (decode and discard)");
        ok(k == 4096 && memcmp(got, text + 2000000, 4096) == 0, "bytes at 2,000,000 (second frame)");
        is_int(zstream_pread(z, got, 64, 1999990, &k), 0, "a little back, inside the buffer");
        ok(k == 64 && memcmp(got, text + 1999990, 64) == 0, "bytes at 1,999,990");
        is_int(zstream_pread(z, got, 200, 500, &k), 0, "the head again (kept aside)");
        ok(k == 200 && memcmp(got, text + 500, 200) == 0, "bytes at 500 (kept head)");
        is_int(zstream_pread(z, got, 300, 100000, &k), 0, "far back: starts over");
        ok(k == 300 && memcmp(got, text + 100000, 300) == 0, "bytes at 100,000");
        is_int(zstream_pread(z, got, 1000, n - 10, &k), 0, "across the end");
        ok(k == 10 && memcmp(got, text + n - 10, 10) == 0, "only the last 10 bytes come back");
        is_int(zstream_pread(z, got, 10, n + 5, &k), 0, "past the end");
        is_int(k, 0, "nothing past the end");

        /* one sequential pass in odd-sized pieces equals the text */
        bool same = true;
        for (size_t off = 0; off < n;) {
                size_t want = 77777;
                if (zstream_pread(z, got, want, off, &k) < 0 || k == 0 || memcmp(got, text + off, k) != 0) {
                        same = false;
                        break;
                }
                off += k;
        }
        ok(same, "a whole sequential pass equals the decoded text");
        zstream_free(z);
        close(fd);
        free(text);
        free(got);
}

static void test_bad(void)
{
        char *tmp = tap_tmpdir(), path[PATH_MAX], cut[PATH_MAX], buf[4096];
        const size_t n = 200000;
        char *text = make_text(n), *data;
        struct zstream *z = NULL;
        size_t k, len;
        int fd;

        pj(path, tmp, "garbage.zst");
        write_file(path, "this is not a zstd stream\n");
        fd = open_ro(path);
        zstream_new(fd, &z);
        is_int(zstream_pread(z, buf, 10, 0, &k), -EBADMSG, "not zstd: -EBADMSG");
        z = zstream_free(z);
        close(fd);

        pj(path, tmp, "empty.zst");
        write_bytes(path, "", 0);
        fd = open_ro(path);
        zstream_new(fd, &z);
        ok(zstream_pread(z, buf, 10, 0, &k) == 0 && k == 0, "an empty file decodes to nothing");
        z = zstream_free(z);
        close(fd);

        pj(path, tmp, "whole.zst");
        len = write_zst(path, text, n, 1);
        data = slurp(path, &len);
        pj(cut, tmp, "cut.zst");
        write_bytes(cut, data, len / 2);
        fd = open_ro(cut);
        zstream_new(fd, &z);
        int r = 0;
        size_t total = 0;
        for (size_t off = 0; r == 0; off += k) {
                r = zstream_pread(z, buf, sizeof(buf), off, &k);
                if (r == 0 && k == 0)
                        break;
                total += r == 0 ? k : 0;
        }
        is_int(r, -EBADMSG, "a frame cut short: -EBADMSG, not a clean end");
        ok(total < n, "only part of it decoded before the error (%zu bytes)", total);
        z = zstream_free(z);
        close(fd);
        free(data);
        free(text);
}

int main(void)
{
        test_reads();
        test_bad();
        return tap_done();
}
