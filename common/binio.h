/* Little-endian binary values, a bounded writer and a reader that fails
 * sticky: the ledger's rows, checkpoints and sums, and the parse state (and
 * its adapter-private part) that a checkpoint carries. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bw {
        uint8_t *p;
        size_t len, cap;
        bool overflow;
};

static inline void bw_bytes(struct bw *w, const void *src, size_t n)
{
        if (w->overflow || n > w->cap - w->len) {
                w->overflow = true;
                return;
        }
        if (n)
                memcpy(w->p + w->len, src, n);
        w->len += n;
}

static inline void bw_u64(struct bw *w, uint64_t v)
{
        uint8_t b[8];
        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        bw_bytes(w, b, 8);
}

static inline void bw_u32(struct bw *w, uint32_t v)
{
        uint8_t b[4];
        for (int i = 0; i < 4; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        bw_bytes(w, b, 4);
}

static inline void bw_u16(struct bw *w, uint16_t v)
{
        uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        bw_bytes(w, b, 2);
}

static inline void bw_u8(struct bw *w, uint8_t v)
{
        bw_bytes(w, &v, 1);
}

/* A NUL-terminated field of at most cap-1 bytes, as u16 length + bytes. */
static inline void bw_str(struct bw *w, const char *s, size_t cap)
{
        size_t n = strnlen(s, cap - 1);
        uint8_t b[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
        bw_bytes(w, b, 2);
        bw_bytes(w, s, n);
}

/* An unsigned LEB128 varint: 7 bits a byte, low first, high bit "more". */
static inline void bw_var(struct bw *w, uint64_t v)
{
        do {
                bw_u8(w, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
                v >>= 7;
        } while (v);
}

/* A NUL-terminated field of at most cap-1 bytes, as varint length + bytes. */
static inline void bw_strv(struct bw *w, const char *s, size_t cap)
{
        size_t n = strnlen(s, cap - 1);
        bw_var(w, n);
        bw_bytes(w, s, n);
}

struct br {
        const uint8_t *p;
        size_t len, pos;
        bool bad;
};

static inline const uint8_t *br_take(struct br *r, size_t n)
{
        if (r->bad || n > r->len - r->pos) {
                r->bad = true;
                return NULL;
        }
        const uint8_t *q = r->p + r->pos;
        r->pos += n;
        return q;
}

static inline uint64_t br_u64(struct br *r)
{
        const uint8_t *q = br_take(r, 8);
        uint64_t v = 0;
        for (int i = 0; q && i < 8; i++)
                v |= (uint64_t)q[i] << (8 * i);
        return v;
}

static inline uint32_t br_u32(struct br *r)
{
        const uint8_t *q = br_take(r, 4);
        uint32_t v = 0;
        for (int i = 0; q && i < 4; i++)
                v |= (uint32_t)q[i] << (8 * i);
        return v;
}

static inline uint16_t br_u16(struct br *r)
{
        const uint8_t *q = br_take(r, 2);
        return q ? (uint16_t)(q[0] | q[1] << 8) : 0;
}

static inline uint8_t br_u8(struct br *r)
{
        const uint8_t *q = br_take(r, 1);
        return q ? q[0] : 0;
}

/* A varint as bw_var writes it; more than ten bytes marks the reader bad. */
static inline uint64_t br_var(struct br *r)
{
        uint64_t v = 0;

        for (int shift = 0; shift < 64 && !r->bad; shift += 7) {
                uint8_t b = br_u8(r);
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80))
                        return r->bad ? 0 : v;
        }
        r->bad = true;
        return 0;
}

/* The n bytes of a string whose length was read, into dst (capacity cap,
 * NUL-terminated); a length that does not fit, or an embedded NUL, marks the
 * reader bad. */
static inline void br_str_body(struct br *r, uint64_t n, char *dst, size_t cap)
{
        const uint8_t *q = n < cap ? br_take(r, (size_t)n) : NULL;
        if (!q || memchr(q, 0, (size_t)n)) {
                r->bad = true;
                dst[0] = 0;
                return;
        }
        memcpy(dst, q, (size_t)n);
        dst[n] = 0;
}

/* Reads a u16-length string into dst (capacity cap, NUL-terminated), as
 * br_str_body checks it. */
static inline void br_str(struct br *r, char *dst, size_t cap)
{
        br_str_body(r, br_u16(r), dst, cap);
}

/* Reads a varint-length string as bw_strv writes it, checked as br_str. */
static inline void br_strv(struct br *r, char *dst, size_t cap)
{
        br_str_body(r, br_var(r), dst, cap);
}

/* Big-endian, for keys that must sort numerically. */
static inline void be64_put(uint8_t *b, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint64_t be64_get(const uint8_t *b)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = v << 8 | b[i];
        return v;
}

static inline uint32_t be32_get(const uint8_t *b)
{
        return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
