/* The validating JSON scanner (see jscan.h): grammar checks without building
 * values, and the decoding of the few strings a caller keeps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json/jscan.h"
#include "row.h" /* row_set_str: the UTF-8-safe cut into a fixed field */
#include "timefmt.h"

void jscan_ws(struct jscan *s)
{
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
                s->p++;
}

bool jscan_string(struct jscan *s, struct jscan_span *ret_span)
{
        const char *start = s->p + 1, *q = start;

        for (;;) {
                size_t bs = 0;
                q = q < s->end ? memchr(q, '"', (size_t)(s->end - q)) : NULL;
                if (!q)
                        return false;
                while (q - bs > start && q[-1 - (ptrdiff_t)bs] == '\\')
                        bs++;
                if (!(bs & 1))
                        break;
                q++;
        }
        if (ret_span) {
                ret_span->p = start;
                ret_span->n = (size_t)(q - start);
        }
        s->p = q + 1;
        return true;
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* One or more digits at p: past them, or NULL when there is none. */
static const char *digits(const char *p, const char *e)
{
        if (p >= e || !is_digit(*p))
                return NULL;
        while (p < e && is_digit(*p))
                p++;
        return p;
}

/* A number written as digits, a point and digits (no exponent), with at
 * most 15 digits in all: its digits as an integer m (exact in a double)
 * divided by 10^k (k <= 15, exact too), which IEEE division rounds
 * correctly, so *ret is what strtod gives, without its cost (cost fields:
 * "total":0.02264). false for anything else (strtod then). */
static bool decimal_fast(const char *b, const char *e, double *ret)
{
        static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
                                        1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
        const char *p = b;
        bool neg = p < e && *p == '-';
        uint64_t m = 0;
        int digits = 0, frac = -1;

        for (p += neg; p < e; p++) {
                if (*p == '.') {
                        if (frac >= 0)
                                return false;
                        frac = 0;
                        continue;
                }
                if (!is_digit(*p) || ++digits > 15)
                        return false;
                m = m * 10 + (uint64_t)(*p - '0');
                if (frac >= 0)
                        frac++;
        }
        if (frac <= 0)
                return false;
        double d = (double)m / pow10[frac];
        *ret = neg ? -d : d;
        return true;
}

bool jscan_number(struct jscan *s, struct jscan_num *ret_num)
{
        const char *b = s->p, *p = b, *e = s->end;
        struct jscan_num v = { .present = true };
        bool is_int = true;

        if (p < e && *p == '-')
                p++;
        if (p >= e || !is_digit(*p))
                return false;
        p = *p == '0' ? p + 1 : digits(p, e); /* no leading zeros */
        if (p < e && *p == '.') {
                p = digits(p + 1, e);
                if (!p)
                        return false;
                is_int = false;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < e && (*p == '+' || *p == '-'))
                        p++;
                p = digits(p, e);
                if (!p)
                        return false;
                is_int = false;
        }
        s->p = p;
        if (!ret_num)
                return true;
        if (is_int && p - b <= 18) {
                const char *q = b;
                int64_t i = 0;
                bool neg = *q == '-';
                for (q += neg; q < p; q++)
                        i = i * 10 + (*q - '0');
                v.is_int = true;
                v.i = neg ? -i : i;
                v.d = (double)v.i;
        } else if (!decimal_fast(b, p, &v.d)) {
                char buf[64];
                size_t n = (size_t)(p - b);
                if (n >= sizeof(buf)) {
                        v.present = false; /* absurd precision: not a usable number */
                } else {
                        memcpy(buf, b, n);
                        buf[n] = 0;
                        v.d = strtod(buf, NULL);
                }
        }
        *ret_num = v;
        return true;
}

bool jscan_literal(struct jscan *s)
{
        static const char *const lits[] = { "true", "false", "null" };

        for (size_t i = 0; i < 3; i++) {
                size_t n = strlen(lits[i]);
                if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lits[i], n) == 0) {
                        s->p += n;
                        return true;
                }
        }
        return false;
}

/* At open: into the container. 1 when it is empty (then consumed), 0 when
 * an item follows, -1 when s is not at open or depth is over the limit. */
static int container_open(struct jscan *s, char open, char close, int depth)
{
        if (depth > JSCAN_MAX_DEPTH || !jscan_at(s, open))
                return -1;
        s->p++;
        jscan_ws(s);
        if (!jscan_at(s, close))
                return 0;
        s->p++;
        return 1;
}

/* After an item: 1 at the closing bracket (consumed), 0 past a comma (an
 * item follows), -1 at anything else. */
static int container_next(struct jscan *s, char close)
{
        jscan_ws(s);
        if (jscan_at(s, close)) {
                s->p++;
                return 1;
        }
        if (!jscan_at(s, ','))
                return -1;
        s->p++;
        jscan_ws(s);
        return 0;
}

bool jscan_object(struct jscan *s, jscan_key_fn fn, void *u, int depth)
{
        int r = container_open(s, '{', '}', depth);

        while (r == 0) {
                struct jscan_span key;
                if (!jscan_at(s, '"') || !jscan_string(s, &key))
                        return false;
                jscan_ws(s);
                if (!jscan_at(s, ':'))
                        return false;
                s->p++;
                jscan_ws(s);
                if (!(fn ? fn(s, &key, u, depth) : jscan_skip(s, depth)))
                        return false;
                r = container_next(s, '}');
        }
        return r > 0;
}

bool jscan_array(struct jscan *s, jscan_elem_fn fn, void *u, int depth)
{
        int r = container_open(s, '[', ']', depth);

        while (r == 0) {
                if (!(fn ? fn(s, u, depth) : jscan_skip(s, depth)))
                        return false;
                r = container_next(s, ']');
        }
        return r > 0;
}

bool jscan_skip(struct jscan *s, int depth)
{
        if (s->p >= s->end)
                return false;
        switch (*s->p) {
        case '"':
                return jscan_string(s, NULL);
        case '{':
                return jscan_object(s, NULL, NULL, depth + 1);
        case '[':
                return jscan_array(s, NULL, NULL, depth + 1);
        case 't':
        case 'f':
        case 'n':
                return jscan_literal(s);
        default:
                return jscan_number(s, NULL);
        }
}

bool jscan_read_str(struct jscan *s, struct jscan_span *ret_span, int depth)
{
        if (jscan_at(s, '"'))
                return jscan_string(s, ret_span);
        if (!jscan_skip(s, depth))
                return false;
        *ret_span = (struct jscan_span){ NULL, 0 };
        return true;
}

bool jscan_read_num(struct jscan *s, struct jscan_num *ret_num, int depth)
{
        if (s->p < s->end && (*s->p == '-' || is_digit(*s->p)))
                return jscan_number(s, ret_num);
        if (!jscan_skip(s, depth))
                return false;
        *ret_num = (struct jscan_num){ .present = false };
        return true;
}

bool jscan_num_i64(const struct jscan_num *n, int64_t *ret_value)
{
        if (!n->present)
                return false;
        if (n->is_int) {
                *ret_value = n->i;
                return true;
        }
        if (!isfinite(n->d) || n->d > 9.2e18 || n->d < -9.2e18)
                return false;
        *ret_value = llround(n->d);
        return true;
}

bool jscan_read_time(struct jscan *s, struct jscan_time *ret_time, int depth)
{
        struct jscan_time t = { .present = false };

        if (jscan_at(s, '"')) {
                struct jscan_span sp;
                if (!jscan_string(s, &sp))
                        return false;
                t.present = timefmt_parse_rfc3339(sp.p, sp.n, &t.ms) == 0;
        } else {
                struct jscan_num n;
                if (!jscan_read_num(s, &n, depth))
                        return false;
                t.present = jscan_num_i64(&n, &t.ms);
        }
        *ret_time = t;
        return true;
}

/* ---- strings out of spans -------------------------------------------------- */

/* Appends c as UTF-8 when it fits whole. */
static void put_utf8(char *o, size_t *n, size_t cap, uint32_t c)
{
        char b[4];
        size_t k;

        if (c < 0x80) {
                b[0] = (char)c;
                k = 1;
        } else if (c < 0x800) {
                b[0] = (char)(0xC0 | (c >> 6));
                b[1] = (char)(0x80 | (c & 0x3F));
                k = 2;
        } else if (c < 0x10000) {
                b[0] = (char)(0xE0 | (c >> 12));
                b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
                b[2] = (char)(0x80 | (c & 0x3F));
                k = 3;
        } else {
                b[0] = (char)(0xF0 | (c >> 18));
                b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
                b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
                b[3] = (char)(0x80 | (c & 0x3F));
                k = 4;
        }
        if (*n + k <= cap) {
                memcpy(o + *n, b, k);
                *n += k;
        }
}

static int hex4(const char *p, const char *end, uint32_t *ret)
{
        uint32_t v = 0;

        if (end - p < 4)
                return -1;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t)(c - 'A' + 10);
                else
                        return -1;
        }
        *ret = v;
        return 0;
}

size_t jscan_span_decode(const struct jscan_span *sp, char *buf, size_t cap)
{
        const char *p = sp->p, *end;
        size_t n = 0;

        if (!p)
                return 0;
        end = p + sp->n;
        if (!memchr(p, '\\', sp->n)) {
                n = sp->n < cap ? sp->n : cap;
                memcpy(buf, p, n);
                return n;
        }
        while (p < end && n < cap) {
                if (*p != '\\') {
                        buf[n++] = *p++;
                        continue;
                }
                if (++p >= end)
                        break;
                char c = *p++;
                switch (c) {
                case 'b': buf[n++] = '\b'; break;
                case 'f': buf[n++] = '\f'; break;
                case 'n': buf[n++] = '\n'; break;
                case 'r': buf[n++] = '\r'; break;
                case 't': buf[n++] = '\t'; break;
                case 'u': {
                        uint32_t cp, lo;
                        if (hex4(p, end, &cp) < 0)
                                break;
                        p += 4;
                        if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                            hex4(p + 2, end, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                p += 6;
                        }
                        put_utf8(buf, &n, cap, cp);
                        break;
                }
                default: buf[n++] = c; break; /* \" \\ \/ */
                }
        }
        return n;
}

void jscan_span_set(char *dst, size_t cap, const struct jscan_span *sp)
{
        /* decoded a little past the field, so the cut sees whether the first
         * byte dropped continues a sequence */
        char buf[JSCAN_SET_MAX + 8];
        size_t n = jscan_span_decode(sp, buf, sizeof(buf));

        row_set_str(dst, cap < JSCAN_SET_MAX ? cap : JSCAN_SET_MAX, buf, n);
}

bool jscan_span_eq(const struct jscan_span *sp, const char *lit)
{
        size_t n = strlen(lit);
        char buf[64];

        if (!sp->p)
                return false;
        if (sp->n == n && memcmp(sp->p, lit, n) == 0)
                return true;
        if (sp->n < n || !memchr(sp->p, '\\', sp->n) || n > sizeof(buf))
                return false;
        return jscan_span_decode(sp, buf, sizeof(buf)) == n && memcmp(buf, lit, n) == 0;
}
