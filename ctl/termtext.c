/* Escaping of untrusted text before it is drawn on a terminal (termtext.h
 * says what is escaped and how). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "termtext.h"

/* Length of the valid UTF-8 sequence at p (1-4) and its code point, or 0. */
static size_t utf8_seq(const unsigned char *p, uint32_t *ret_cp)
{
        uint32_t cp;
        size_t n;

        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2, cp = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                n = 3, cp = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                n = 4, cp = p[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0; /* overlong, out of range, or a surrogate */
        *ret_cp = cp;
        return n;
}

/* Characters a terminal obeys or that reorder or break what is shown. */
static bool dangerous(uint32_t cp)
{
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
               cp == 0x2029;
}

/* The next unit of s: *ret_n bytes of s, kept as they are (returns 0) or
 * escaped into esc (returns the escape's length). */
static size_t next_unit(const unsigned char *s, char esc[16], size_t *ret_n)
{
        static const char hex[] = "0123456789abcdef";
        uint32_t cp = 0;
        size_t n = utf8_seq(s, &cp);

        if (n && !dangerous(cp)) {
                *ret_n = n;
                return 0;
        }
        if (n == 0)
                n = 1; /* an invalid byte on its own */
        for (size_t i = 0; i < n; i++) {
                esc[4 * i] = '\\', esc[4 * i + 1] = 'x';
                esc[4 * i + 2] = hex[s[i] >> 4], esc[4 * i + 3] = hex[s[i] & 15];
        }
        *ret_n = n;
        return 4 * n;
}

const char *termtext(const char *s, char *buf, size_t cap)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t len = 0, n;
        char esc[16];

        if (cap == 0)
                return buf;
        while (*p) {
                size_t e = next_unit(p, esc, &n), w = e ? e : n;
                if (len + w >= cap)
                        break;
                memcpy(buf + len, e ? esc : (const char *)p, w);
                len += w;
                p += n;
        }
        buf[len] = 0;
        return buf;
}

size_t termtext_len(const char *s)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t len = 0, n;
        char esc[16];

        while (*p) {
                size_t e = next_unit(p, esc, &n);
                len += e ? e : n;
                p += n;
        }
        return len;
}

char *termtext_dup(const char *s)
{
        size_t n = termtext_len(s) + 1;
        char *buf = malloc(n);
        return buf ? (char *)termtext(s, buf, n) : NULL;
}

int termtext_fputs(const char *s, FILE *f)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t n;
        char esc[16];

        while (*p) {
                size_t e = next_unit(p, esc, &n), w = e ? e : n;
                if (fwrite(e ? esc : (const char *)p, 1, w, f) != w)
                        return EOF;
                p += n;
        }
        return 0;
}

const char *termtext_tmp(const char *s)
{
        static _Thread_local char ring[8][1024];
        static _Thread_local unsigned next;

        if (!s)
                return NULL;
        return termtext(s, ring[next++ % 8], sizeof(ring[0]));
}
