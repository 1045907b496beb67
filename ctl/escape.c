/* Makes controls in text from users' files visible before a terminal sees
 * them (escape.h lists what is escaped and how). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

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

static bool escaped_cp(uint32_t cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* The next unit of s: its escape in esc (returns its length, > 0) or, when
 * kept, 0 with *ret_n bytes of s to copy as they are. */
static size_t next_unit(const unsigned char *s, char esc[12], size_t *ret_n)
{
        static const char hex[] = "0123456789abcdef";
        uint32_t cp;
        size_t n = utf8_seq(s, &cp);

        if (n == 0 || cp < 0x20 || cp == 0x7f) {
                esc[0] = '\\', esc[1] = 'x', esc[2] = hex[s[0] >> 4], esc[3] = hex[s[0] & 15];
                *ret_n = 1;
                return 4;
        }
        *ret_n = n;
        if (!escaped_cp(cp))
                return 0;
        memcpy(esc, "\\u{", 3);
        for (int i = 0; i < 4; i++)
                esc[3 + i] = hex[(cp >> (12 - 4 * i)) & 15];
        esc[7] = '}';
        return 8;
}

size_t escape_len(const char *s)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t len = 0, n;
        char esc[12];

        while (*p) {
                size_t e = next_unit(p, esc, &n);
                len += e ? e : n;
                p += n;
        }
        return len;
}

/* Writes the escaped s into buf (cap > 0), whole units only; returns buf. */
static char *escape_into(const char *s, char *buf, size_t cap)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t len = 0, n;
        char esc[12];

        while (*p) {
                size_t e = next_unit(p, esc, &n);
                size_t w = e ? e : n;
                if (len + w >= cap)
                        break;
                memcpy(buf + len, e ? esc : (const char *)p, w);
                len += w;
                p += n;
        }
        buf[len] = 0;
        return buf;
}

char *escape_dup(const char *s)
{
        size_t n = escape_len(s) + 1;
        char *buf = malloc(n);
        return buf ? escape_into(s, buf, n) : NULL;
}

int escape_fputs(const char *s, FILE *f)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t n;
        char esc[12];

        while (*p) {
                size_t e = next_unit(p, esc, &n);
                if (fwrite(e ? esc : (const char *)p, 1, e ? e : n, f) != (e ? e : n))
                        return EOF;
                p += n;
        }
        return 0;
}

const char *escape_tmp(const char *s)
{
        static _Thread_local char ring[8][1024];
        static _Thread_local unsigned next;

        if (!s)
                return NULL;
        return escape_into(s, ring[next++ % 8], sizeof(ring[0]));
}
