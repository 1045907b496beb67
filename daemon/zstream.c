/* Decoded-offset reads of a zstd file (ZSTD_decompressStream): one input and
 * one output buffer, the head kept aside, a window limit so a hostile frame
 * cannot make us allocate more than ZSTREAM_WINDOW_LOG_MAX allows. */
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
        int fd;
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
        ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
        z->in_pos = z->in_len = z->out_len = 0;
        z->file_off = z->out_base = 0;
        z->file_eof = z->mid_frame = z->stream_end = false;
}

static int read_input(struct zstream *z)
{
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
