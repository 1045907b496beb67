/* A zstd-compressed file read as its decoded byte stream, with pread-like
 * access at decoded offsets (forward by decoding and discarding, backward by
 * starting over), in bounded memory, so tail.c can read a .zst like a file. */
#pragma once

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

/* Up to n decoded bytes at decoded offset off into buf; *ret_n < n only at
 * the end of the stream. A read before the current position (outside the
 * kept head) decodes again from the start. -EBADMSG: not a zstd stream, or
 * a corrupt or truncated frame where data was expected (a stream that ends
 * cleanly between frames is just the end); -errno from read. */
int zstream_pread(struct zstream *z, void *buf, size_t n, uint64_t off, size_t *ret_n);
