/* The one zstd decoder of the tree (ZSTD_decompressStream), for every
 * compressed source: decoded-offset reads of a file or of bytes in memory,
 * one input and one output buffer, the head kept aside, a window limit so a
 * hostile frame cannot make us allocate more than ZSTREAM_WINDOW_LOG_MAX
 * allows. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "zstream.h"

/* 2^24 = 16 MiB: zstd's levels 1-19 stay below it (Codex's default level
 * uses 2 MiB); a frame that asks for more is refused as -EBADMSG. */
#define ZSTREAM_WINDOW_LOG_MAX 24

struct zstream {
        int fd;             /* -1: reading mem */
        const uint8_t *mem; /* ... these mem_len bytes (not owned) */
        size_t mem_len;
        ZSTD_DCtx *dctx;
        uint8_t *in, *out;
        size_t in_cap, in_pos, in_len;
        size_t out_cap, out_len;    /* out[0..out_len) holds decoded bytes from out_base */
        uint64_t file_off;  /* compressed bytes read so far */
        uint64_t out_base;  /* decoded offset of out[0] */
        bool file_eof;
        bool mid_frame;     /* the last decompress call did not end a frame */
        bool stream_end;    /* every decoded byte has been produced */
        uint8_t head[ZSTREAM_HEAD_KEEP];
        size_t head_len;
        uint64_t produced;  /* decoded bytes produced since zstream_new */
};

struct zstream *zstream_free(struct zstream *z)
{
        if (z) {
                ZSTD_freeDCtx(z->dctx);
                free(z->in);
                free(z->out);
                free(z);
        }
        return NULL;
}

int zstream_new(int fd, struct zstream **ret_z)
{
        struct zstream *z = calloc(1, sizeof(*z));

        if (!z)
                return -ENOMEM;
        z->fd = fd;
        z->in_cap = ZSTD_DStreamInSize();
        z->out_cap = ZSTD_DStreamOutSize();
        z->dctx = ZSTD_createDCtx();
        z->in = malloc(z->in_cap);
        z->out = malloc(z->out_cap);
        if (!z->dctx || !z->in || !z->out ||
            ZSTD_isError(ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, ZSTREAM_WINDOW_LOG_MAX))) {
                zstream_free(z);
                return -ENOMEM;
        }
        *ret_z = z;
        return 0;
}

static void rewind_stream(struct zstream *z)
{
        z->head_len = 0;
        ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
        z->in_pos = z->in_len = z->out_len = 0;
        z->file_off = z->out_base = 0;
        z->file_eof = z->mid_frame = z->stream_end = false;
}

static int read_input(struct zstream *z)
{
        if (z->fd < 0) {
                /* memory: all of it is the input, once */
                z->in_pos = 0;
                z->in_len = 0;
                if (z->file_off < z->mem_len) {
                        size_t k = z->mem_len - (size_t)z->file_off;
                        if (k > z->in_cap)
                                k = z->in_cap;
                        memcpy(z->in, z->mem + z->file_off, k);
                        z->in_len = k;
                        z->file_off += k;
                } else {
                        z->file_eof = true;
                }
                return 0;
        }
        for (;;) {
                ssize_t k = pread(z->fd, z->in, z->in_cap, (off_t)z->file_off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                z->in_pos = 0;
                z->in_len = (size_t)k;
                z->file_off += (uint64_t)k;
                if (k == 0)
                        z->file_eof = true;
                return 0;
        }
}

/* Replaces the output buffer with the next decoded bytes: 1 when some came,
 * 0 at the end of the stream. */
static int refill(struct zstream *z)
{
        if (z->stream_end)
                return 0;
        z->out_base += z->out_len;
        z->out_len = 0;
        for (;;) {
                if (z->in_pos == z->in_len && !z->file_eof) {
                        int r = read_input(z);
                        if (r < 0)
                                return r;
                }
                ZSTD_inBuffer ib = { z->in, z->in_len, z->in_pos };
                ZSTD_outBuffer ob = { z->out, z->out_cap, 0 };
                size_t ret = ZSTD_decompressStream(z->dctx, &ob, &ib);
                if (ZSTD_isError(ret))
                        return -EBADMSG;
                /* ret 0: a frame just ended; a call that took and gave
                 * nothing (no input left) says nothing about frames */
                if (ib.pos > z->in_pos || ob.pos > 0)
                        z->mid_frame = ret != 0;
                z->in_pos = ib.pos;
                if (ob.pos > 0) {
                        z->out_len = ob.pos;
                        z->produced += ob.pos;
                        if (z->out_base < ZSTREAM_HEAD_KEEP) {
                                size_t k = ZSTREAM_HEAD_KEEP - (size_t)z->out_base;
                                if (k > ob.pos)
                                        k = ob.pos;
                                memcpy(z->head + z->out_base, z->out, k);
                                z->head_len = (size_t)z->out_base + k;
                        }
                        return 1;
                }
                if (z->in_pos == z->in_len && z->file_eof) {
                        /* nothing more will come: a frame cut short is an error,
                         * an end between frames (or an empty file) the end */
                        if (z->mid_frame)
                                return -EBADMSG;
                        z->stream_end = true;
                        return 0;
                }
        }
}

int zstream_new_mem(const void *p, size_t n, struct zstream **ret_z)
{
        struct zstream *z;
        int r = zstream_new(-1, &z);

        if (r < 0)
                return r;
        z->mem = p;
        z->mem_len = n;
        *ret_z = z;
        return 0;
}

void zstream_set_mem(struct zstream *z, const void *p, size_t n)
{
        rewind_stream(z);
        z->fd = -1;
        z->mem = p;
        z->mem_len = n;
}

int zstream_decode_all(struct zstream *z, const void *p, size_t n, size_t max, char **io_buf,
                       size_t *io_cap, size_t *ret_len)
{
        size_t used = 0;
        int r;

        zstream_set_mem(z, p, n);
        if (n == 0)
                return -EBADMSG; /* not even one frame */
        for (;;) {
                size_t k;
                if (used == *io_cap) {
                        size_t ncap = *io_cap < 65536 ? 65536 : *io_cap * 2;
                        char *nb;
                        if (*io_cap > max)
                                return -EFBIG;
                        if (ncap > max + 1)
                                ncap = max + 1;
                        if (!(nb = realloc(*io_buf, ncap)))
                                return -ENOMEM;
                        *io_buf = nb;
                        *io_cap = ncap;
                }
                r = zstream_pread(z, *io_buf + used, *io_cap - used, used, &k);
                if (r < 0)
                        return r;
                used += k;
                if (used > max)
                        return -EFBIG;
                if (used < *io_cap)
                        break; /* the end of the stream */
        }
        *ret_len = used;
        return 0;
}

bool zstream_magic(const void *p, size_t n)
{
        const uint8_t *b = p;

        if (n < 4)
                return false;
        return (b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) ||
               ((b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18);
}

uint64_t zstream_produced(const struct zstream *z)
{
        return z->produced;
}

int zstream_skip(struct zstream *z, uint64_t off, uint64_t max, bool *ret_reached)
{
        uint64_t start = z->produced;
        int r;

        if (off < z->out_base)
                rewind_stream(z);
        while (off >= z->out_base + z->out_len) {
                if (z->produced - start >= max) {
                        *ret_reached = false;
                        return 0;
                }
                r = refill(z);
                if (r < 0)
                        return r;
                if (r == 0)
                        break; /* the stream ends before off */
        }
        *ret_reached = true;
        return 0;
}

int zstream_pread(struct zstream *z, void *buf, size_t n, uint64_t off, size_t *ret_n)
{
        size_t got = 0;
        int r;

        if (off + n <= z->head_len) {
                memcpy(buf, z->head + off, n);
                *ret_n = n;
                return 0;
        }
        if (off < z->out_base)
                rewind_stream(z);
        while (got < n) {
                uint64_t end = z->out_base + z->out_len;
                if (off + got >= z->out_base && off + got < end) {
                        size_t at = (size_t)(off + got - z->out_base);
                        size_t k = z->out_len - at;
                        if (k > n - got)
                                k = n - got;
                        memcpy((uint8_t *)buf + got, z->out + at, k);
                        got += k;
                        continue;
                }
                r = refill(z);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
        }
        *ret_n = got;
        return 0;
}
