/* libFuzzer target: a compressed source (.jsonl.zst: a Codex rollout, an
 * OpenClaw archive file) read through common/zstream.h as the line reader does:
 * forward in chunks, a look back into the kept head, a jump back past it
 * (decoding again from the start). Every byte zstream hands out must be
 * the byte libzstd's own streaming decoder gives at that offset, and a
 * read of the same range twice must give the same bytes. Decoding stops at
 * DECODE_MAX bytes: bigger outputs are the torture suite's and the system
 * tests' (a 64 KiB input can expand to gigabytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "zstream.h"

#define DECODE_MAX (4u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reference: data decoded by ZSTD_decompressStream up to the first
 * error or DECODE_MAX bytes (frames one after another, as zstream reads). */
static size_t reference(const uint8_t *data, size_t size, uint8_t *out)
{
        ZSTD_DCtx *d = ZSTD_createDCtx();
        ZSTD_inBuffer in = {data, size, 0};
        ZSTD_outBuffer o = {out, DECODE_MAX, 0};

        if (!d)
                abort();
        ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 24);
        while (in.pos < in.size && o.pos < o.size) {
                size_t before_in = in.pos, before_out = o.pos;
                if (ZSTD_isError(ZSTD_decompressStream(d, &o, &in)))
                        break;
                if (in.pos == before_in && o.pos == before_out)
                        break;
        }
        ZSTD_freeDCtx(d);
        return o.pos;
}

/* Reads [off, off+n) through z and checks it against ref (ref_len bytes
 * known). Returns the bytes read (0 at the end or on an error). */
static size_t check_read(struct zstream *z, uint64_t off, size_t n, const uint8_t *ref, size_t ref_len,
                         uint8_t *buf)
{
        size_t got = 0;

        if (zstream_pread(z, buf, n, off, &got) < 0)
                return 0;
        size_t known = off >= ref_len ? 0 : got < ref_len - off ? got : (size_t)(ref_len - off);
        if (got > n || (known && memcmp(buf, ref + off, known) != 0))
                __builtin_trap(); /* not the decoder's bytes */
        if (got > known && ref_len < DECODE_MAX)
                __builtin_trap(); /* bytes past the decoder's end (or past its error) */
        return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *ref = malloc(DECODE_MAX), *buf = malloc(1 << 17);
        struct zstream *z = NULL;
        size_t ref_len, chunk;
        uint64_t off = 0;
        int fd;

        if (!ref || !buf)
                abort();
        ref_len = reference(data, size, ref);
        fd = memfd_create("fuzz-zstream", MFD_CLOEXEC);
        if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
                abort();
        if (zstream_new(fd, &z) < 0)
                abort();
        /* forward, in chunks of a size taken from the input, as slices read */
        chunk = 1 + (size ? data[size - 1] : 0) * 509u % (1u << 17);
        while (off < DECODE_MAX) {
                size_t got = check_read(z, off, chunk, ref, ref_len, buf);
                if (got == 0)
                        break;
                off += got;
        }
        /* the head again (kept aside), then the same range once more from
         * the start: same bytes */
        (void)check_read(z, 0, ZSTREAM_HEAD_KEEP < chunk ? ZSTREAM_HEAD_KEEP : chunk, ref, ref_len, buf);
        if (off > ZSTREAM_HEAD_KEEP)
                (void)check_read(z, off / 2, chunk, ref, ref_len, buf);
        (void)check_read(z, off, chunk, ref, ref_len, buf);
        zstream_free(z);
        close(fd);
        free(ref);
        free(buf);
        return 0;
}
