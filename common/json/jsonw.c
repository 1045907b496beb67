/* JSON text writer (see jsonw.h): escaping as json-c's json_escape_str
 * does without slash escapes, so the text is a fixed point of json-c's
 * parse-then-print (tests/unit/common/json/test-jsonw.c checks that). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json/jsonw.h"

static int reserve(struct jsonw *w, size_t n)
{
        if (w->err)
                return w->err;
        if (w->cap - w->len > n)
                return 0; /* room for n bytes and a NUL */
        size_t cap = w->cap ? w->cap : 4096;
        while (cap - w->len <= n) {
                if (cap > SIZE_MAX / 2)
                        return w->err = -ENOMEM;
                cap *= 2;
        }
        char *b = realloc(w->buf, cap);
        if (!b)
                return w->err = -ENOMEM;
        w->buf = b;
        w->cap = cap;
        return 0;
}

static void put(struct jsonw *w, const char *s, size_t n)
{
        if (reserve(w, n) < 0)
                return;
        memcpy(w->buf + w->len, s, n);
        w->len += n;
}

static void put_c(struct jsonw *w, char c)
{
        if (reserve(w, 1) < 0)
                return;
        w->buf[w->len++] = c;
}

/* Before a value or a key: the comma that separates it from the one before. */
static void item(struct jsonw *w)
{
        if (w->after_key) {
                w->after_key = false;
                return;
        }
        if (w->depth == 0)
                return;
        uint32_t bit = 1u << (w->depth - 1);
        if (w->has_items & bit)
                put_c(w, ',');
        w->has_items |= bit;
}

static void open_(struct jsonw *w, char c)
{
        item(w);
        if (w->depth >= JSONW_DEPTH_MAX) {
                if (!w->err)
                        w->err = -EOVERFLOW;
                return;
        }
        w->depth++;
        w->has_items &= ~(1u << (w->depth - 1));
        put_c(w, c);
}

static void close_(struct jsonw *w, char c)
{
        if (w->depth == 0) {
                if (!w->err)
                        w->err = -EINVAL;
                return;
        }
        w->depth--;
        put_c(w, c);
}

void jsonw_object_begin(struct jsonw *w)
{
        open_(w, '{');
}

void jsonw_object_end(struct jsonw *w)
{
        close_(w, '}');
}

void jsonw_array_begin(struct jsonw *w)
{
        open_(w, '[');
}

void jsonw_array_end(struct jsonw *w)
{
        close_(w, ']');
}

/* Bytes that end a plain run: NUL, and those json-c escapes with
 * NOSLASHESCAPE (controls, '"' and '\\'). */
static const bool run_ends[256] = {
        [0x00 ... 0x1f] = true,
        ['"'] = true,
        ['\\'] = true,
};

static void quoted(struct jsonw *w, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        const unsigned char *p = (const unsigned char *)s;

        put_c(w, '"');
        for (;;) {
                const unsigned char *run = p;
                while (!run_ends[*p])
                        p++;
                put(w, (const char *)run, (size_t)(p - run));
                if (!*p)
                        break;
                char u[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 0xf] };
                switch (*p) {
                case '\b': put(w, "\\b", 2); break;
                case '\n': put(w, "\\n", 2); break;
                case '\r': put(w, "\\r", 2); break;
                case '\t': put(w, "\\t", 2); break;
                case '\f': put(w, "\\f", 2); break;
                case '"': put(w, "\\\"", 2); break;
                case '\\': put(w, "\\\\", 2); break;
                default: put(w, u, 6); break;
                }
                p++;
        }
        put_c(w, '"');
}

void jsonw_key(struct jsonw *w, const char *key)
{
        item(w);
        quoted(w, key);
        put_c(w, ':');
        w->after_key = true;
}

void jsonw_string(struct jsonw *w, const char *s)
{
        item(w);
        quoted(w, s);
}

void jsonw_int(struct jsonw *w, int64_t v)
{
        char b[24], *p = b + sizeof(b);
        uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

        do {
                *--p = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        if (v < 0)
                *--p = '-';
        item(w);
        put(w, p, (size_t)(b + sizeof(b) - p));
}

void jsonw_number(struct jsonw *w, const char *text)
{
        item(w);
        put(w, text, strlen(text));
}

void jsonw_bool(struct jsonw *w, bool v)
{
        item(w);
        put(w, v ? "true" : "false", v ? 4 : 5);
}

void jsonw_null(struct jsonw *w)
{
        item(w);
        put(w, "null", 4);
}

void jsonw_value_text(struct jsonw *w, const char *text, size_t len)
{
        item(w);
        put(w, text, len);
}

void jsonw_key_string(struct jsonw *w, const char *key, const char *s)
{
        jsonw_key(w, key);
        jsonw_string(w, s);
}

void jsonw_key_string_or_null(struct jsonw *w, const char *key, const char *s)
{
        jsonw_key(w, key);
        if (s && *s)
                jsonw_string(w, s);
        else
                jsonw_null(w);
}

void jsonw_key_int(struct jsonw *w, const char *key, int64_t v)
{
        jsonw_key(w, key);
        jsonw_int(w, v);
}

void jsonw_key_bool(struct jsonw *w, const char *key, bool v)
{
        jsonw_key(w, key);
        jsonw_bool(w, v);
}

void jsonw_key_null(struct jsonw *w, const char *key)
{
        jsonw_key(w, key);
        jsonw_null(w);
}

int jsonw_finish(struct jsonw *w, char **ret_text, size_t *ret_len)
{
        int r = w->err ? w->err : w->depth || w->after_key ? -EINVAL : reserve(w, 0);

        if (r < 0) {
                jsonw_free(w);
                return r;
        }
        w->buf[w->len] = 0;
        *ret_text = w->buf;
        *ret_len = w->len;
        *w = (struct jsonw){ 0 };
        return 0;
}

void jsonw_free(struct jsonw *w)
{
        free(w->buf);
        *w = (struct jsonw){ 0 };
}
