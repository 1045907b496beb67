/* Escaping of untrusted text before it is drawn on a terminal. */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "termtext.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. C1
 * controls (U+0080..U+009F) count as invalid: terminals obey them. */
static size_t utf8_len(const unsigned char *p)
{
        size_t n;
        unsigned cp;

        if (p[0] < 0x80)
                return 1;
        if ((p[0] & 0xe0) == 0xc0)
                n = 2, cp = p[0] & 0x1f;
        else if ((p[0] & 0xf0) == 0xe0)
                n = 3, cp = p[0] & 0x0f;
        else if ((p[0] & 0xf8) == 0xf0)
                n = 4, cp = p[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                return 0;
        return n;
}

const char *termtext(const char *s, char *buf, size_t cap)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t o = 0;

        if (cap == 0)
                return buf;
        while (*p) {
                size_t n = utf8_len(p);
                bool ctl = n == 1 && (*p < 0x20 || *p == 0x7f);
                if (n == 0 || ctl) {
                        if (o + 5 > cap)
                                break;
                        snprintf(buf + o, cap - o, "\\x%02x", *p);
                        o += 4;
                        p++;
                        continue;
                }
                if (o + n + 1 > cap)
                        break;
                memcpy(buf + o, p, n);
                o += n;
                p += n;
        }
        buf[o] = 0;
        return buf;
}
