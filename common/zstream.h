/* A zstd stream (a file, or bytes in memory) read as its decoded bytes, with
 * pread-like access at decoded offsets (forward by decoding and discarding,
 * backward by starting over), in bounded memory: the one zstd decoding path,
 * for compressed line sources and for compressed blobs in databases. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first decoded bytes are kept aside (the head fingerprint is re-read
 * at every commit and must not restart the stream). */
#define ZSTREAM_HEAD_KEEP 1024u

struct zstream;

/* Reads through fd (not owned: the caller closes it after zstream_free).
 * -ENOMEM. */
int zstream_new(int fd, struct zstream **ret_z);
struct zstream *zstream_free(struct zstream *z); /* NULL-safe, returns NULL */
/* Reads the n bytes at p (not copied: they must outlive the reads). */
int zstream_new_mem(const void *p, size_t n, struct zstream **ret_z);
/* Points z at other bytes in memory, from their start (the decoder's
 * buffers are kept: one zstream serves many blobs). */
void zstream_set_mem(struct zstream *z, const void *p, size_t n);
/* Decodes all of [p, p + n) into *io_buf (grown with realloc; *io_cap its
 * size), at most max bytes: 0 and *ret_len; -EBADMSG not zstd, a cut frame
 * or nothing at all; -EFBIG more than max decoded bytes; -ENOMEM. */
int zstream_decode_all(struct zstream *z, const void *p, size_t n, size_t max, char **io_buf,
                       size_t *io_cap, size_t *ret_len);
/* Decoded bytes the decoder has produced since it was made (every restart
 * and every byte decoded only to be passed over included): its work. */
uint64_t zstream_produced(const struct zstream *z);
/* Decodes forward until decoded offset off is at hand (the next read there
 * costs no decoding) or the stream ends (*ret_reached true), or until max
 * more bytes have been decoded (*ret_reached false: call again). -EBADMSG
 * as zstream_pread. */
int zstream_skip(struct zstream *z, uint64_t off, uint64_t max, bool *ret_reached);
/* Whether a file's first bytes are a zstd frame (a data or skippable one). */
bool zstream_magic(const void *p, size_t n);

/* Up to n decoded bytes at decoded offset off into buf; *ret_n < n only at
 * the end of the stream. A read before the current position (outside the
 * kept head) decodes again from the start. -EBADMSG: not a zstd stream, or
 * a corrupt or truncated frame where data was expected (a stream that ends
 * cleanly between frames is just the end); -errno from read. */
int zstream_pread(struct zstream *z, void *buf, size_t n, uint64_t off, size_t *ret_n);
