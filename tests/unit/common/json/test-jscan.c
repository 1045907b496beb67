/* The validating JSON scanner (common/json/jscan.c) on its own: strings and their
 * escapes, the strict number grammar, literals, nesting limits, truncated
 * input (read from exact-size heap copies, so ASan sees any over-read),
 * skipping, member callbacks, and span decoding into small buffers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/jscan.h"
#include "tap.h"

/* An exact-size heap copy of text (no NUL after it) for the scanner. */
struct doc {
        char *buf;
        struct jscan s;
};

static void doc_init(struct doc *d, const char *text, size_t n)
{
        d->buf = malloc(n ? n : 1);
        if (!d->buf)
                exit(99);
        memcpy(d->buf, text, n);
        d->s = (struct jscan){ d->buf, d->buf + n };
}

static void doc_free(struct doc *d)
{
        free(d->buf);
}

/* Whether text is exactly one JSON value (surrounding white space allowed). */
static bool valid_n(const char *text, size_t n)
{
        struct doc d;
        bool good;

        doc_init(&d, text, n);
        jscan_ws(&d.s);
        good = jscan_skip(&d.s, 0);
        if (good) {
                jscan_ws(&d.s);
                good = d.s.p == d.s.end;
        }
        doc_free(&d);
        return good;
}

static bool valid(const char *text)
{
        return valid_n(text, strlen(text));
}

/* Decodes the JSON string literal text (quotes included) into a field of cap
 * bytes with jscan_span_decode; returns the length, -1 when not a string. */
static long decode(const char *text, char *out, size_t cap)
{
        struct doc d;
        struct jscan_span sp;
        long n = -1;

        doc_init(&d, text, strlen(text));
        if (jscan_at(&d.s, '"') && jscan_string(&d.s, &sp) && d.s.p == d.s.end)
                n = (long)jscan_span_decode(&sp, out, cap);
        doc_free(&d);
        return n;
}

static bool decodes_to(const char *text, size_t cap, const char *want, size_t want_n)
{
        char buf[256];
        long n;

        if (cap > sizeof(buf))
                return false;
        memset(buf, 0x55, sizeof(buf));
        n = decode(text, buf, cap);
        return n == (long)want_n && memcmp(buf, want, want_n) == 0 &&
               (cap == sizeof(buf) || (unsigned char)buf[cap] == 0x55); /* nothing past cap */
}

/* jscan_span_set of a string literal into a field of cap bytes. */
static bool sets_to(const char *text, size_t cap, const char *want)
{
        char field[1024];
        struct doc d;
        struct jscan_span sp;
        bool good = false;

        if (cap > sizeof(field))
                return false;
        memset(field, 0x55, sizeof(field));
        doc_init(&d, text, strlen(text));
        if (jscan_string(&d.s, &sp)) {
                jscan_span_set(field, cap, &sp);
                /* the field, its NUL, and nothing written after it */
                good = strcmp(field, want) == 0 && (unsigned char)field[strlen(want) + 1] == 0x55;
        }
        doc_free(&d);
        return good;
}

/* text for a test name: control bytes shown as '.', so TAP lines stay lines */
static const char *show(const char *text)
{
        static char buf[128];
        size_t n = 0;

        for (; *text && n < sizeof(buf) - 1; text++)
                buf[n++] = (unsigned char)*text < 0x20 ? '.' : *text;
        buf[n] = 0;
        return buf;
}

/* ---- strings ------------------------------------------------------------------------ */

static void test_strings(void)
{
        struct doc d;
        struct jscan_span sp = { NULL, 0 };

        doc_init(&d, "\"ab\\\"c\" x", 9);
        ok(jscan_string(&d.s, &sp) && sp.p == d.buf + 1 && sp.n == 5 && memcmp(sp.p, "ab\\\"c", 5) == 0,
           "escaped quote inside: raw span up to the closing quote");
        ok(d.s.p == d.buf + 7, "left after the closing quote");
        doc_free(&d);

        doc_init(&d, "\"a\\\\\"b", 6);
        ok(jscan_string(&d.s, &sp) && sp.n == 3 && d.s.p == d.buf + 5,
           "an even run of backslashes does not escape the quote");
        doc_free(&d);
        doc_init(&d, "\"a\\\\\\\"\"", 7);
        ok(jscan_string(&d.s, &sp) && sp.n == 5 && d.s.p == d.s.end, "an odd run escapes it");
        doc_free(&d);

        ok(!valid("\"abc"), "unterminated string: refused");
        ok(!valid("\"abc\\\""), "string ending in an escaped quote: refused");
        ok(valid("\"\""), "empty string");
        ok(valid("\"\\u12\""), "escapes are not validated by the scanner");

        doc_init(&d, "\"x\"", 3);
        ok(jscan_string(&d.s, NULL) && d.s.p == d.s.end, "a string can be skipped without a span");
        doc_free(&d);

        /* decoding */
        ok(decodes_to("\"plain\"", 64, "plain", 5), "no escapes: copied");
        ok(decodes_to("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 64, "\"\\/\b\f\n\r\t", 8), "simple escapes");
        ok(decodes_to("\"\\u00e9\\u20AC\"", 64, "\xc3\xa9\xe2\x82\xac", 5), "\\u to 2- and 3-byte UTF-8");
        ok(decodes_to("\"\\u0041\\u007a\"", 64, "Az", 2), "\\u to ASCII");
        ok(decodes_to("\"\\ud83d\\ude00\"", 64, "\xf0\x9f\x98\x80", 4), "surrogate pair: one 4-byte sequence");
        ok(decodes_to("\"\\uD83D\\uDE00!\"", 64, "\xf0\x9f\x98\x80!", 5), "surrogate pair, upper-case hex");
        ok(decodes_to("\"\\ud83dx\"", 64, "\xed\xa0\xbdx", 4), "lone high surrogate: encoded as it is");
        ok(decodes_to("\"\\ud83d\\u0041\"", 64, "\xed\xa0\xbd" "A", 4), "high surrogate before a non-low \\u");
        ok(decodes_to("\"\\ude00\"", 64, "\xed\xb8\x80", 3), "lone low surrogate: encoded as it is");
        ok(decodes_to("\"\\uzz12\"", 64, "zz12", 4), "\\u without four hex digits: dropped, the rest kept");
        ok(decodes_to("\"\\q\"", 64, "q", 1), "an unknown escape stands for its byte");
        ok(decodes_to("\"a\\u0000b\"", 64, "a\0b", 3), "\\u0000 decodes to a NUL byte");
        struct jscan_span none = { NULL, 0 };
        char buf[8] = "zzzz";
        ok(jscan_span_decode(&none, buf, sizeof(buf)) == 0 && buf[0] == 'z', "absent span: nothing");
}

/* Decoding into buffers too small for the whole string. */
static void test_small_buffers(void)
{
        ok(decodes_to("\"abcdef\"", 3, "abc", 3), "raw: cut at cap");
        ok(decodes_to("\"a\\nbcdef\"", 3, "a\nb", 3), "escaped: cut at cap");
        ok(decodes_to("\"a\\u20ac\"", 3, "a", 1), "a 3-byte character that does not fit is left out");
        ok(decodes_to("\"a\\u20ac\"", 4, "a\xe2\x82\xac", 4), "... and kept when it fits exactly");
        ok(decodes_to("\"\\ud83d\\ude00\"", 3, "", 0), "a 4-byte character never half written");
        ok(decodes_to("\"a\\u20acb\"", 3, "ab", 2), "decoding goes on after a left-out character");
        ok(decodes_to("\"xyz\"", 0, "", 0), "cap 0: nothing written");

        /* into fixed fields: NUL-terminated, cut on a UTF-8 boundary */
        ok(sets_to("\"hello\"", 6, "hello"), "field: fits exactly");
        ok(sets_to("\"hello\"", 5, "hell"), "field: cut to cap - 1");
        ok(sets_to("\"ab\\u00e9c\"", 4, "ab"), "field: an escaped 2-byte character is not split");
        ok(sets_to("\"ab\xc3\xa9" "c\"", 4, "ab"), "field: a raw 2-byte character is not split");
        ok(sets_to("\"ab\xc3\xa9" "c\"", 5, "ab\xc3\xa9"), "field: ... and kept when it fits");
        ok(sets_to("\"\\ud83d\\ude00\\ud83d\\ude00\"", 8, "\xf0\x9f\x98\x80"), "field: 4-byte sequences whole");
        ok(sets_to("\"a\\u0000b\"", 8, "a"), "field: ends at a \\u0000");
        ok(sets_to("\"\"", 8, ""), "field: empty string");

        char field[8];
        struct jscan_span none = { NULL, 0 };
        memset(field, 'z', sizeof(field));
        jscan_span_set(field, sizeof(field), &none);
        ok(field[0] == 0, "field: absent span gives \"\"");
        memset(field, 'z', sizeof(field));
        jscan_span_set(field, 1, &none);
        ok(field[0] == 0 && field[1] == 'z', "field: cap 1 holds only the NUL");

        /* a field larger than JSCAN_SET_MAX gets at most JSCAN_SET_MAX - 1 bytes */
        char text[700], big[1024];
        struct doc d;
        struct jscan_span sp;
        text[0] = '"';
        memset(text + 1, 'x', 600);
        text[601] = '"';
        doc_init(&d, text, 602);
        ok(jscan_string(&d.s, &sp) && sp.n == 600, "600-byte string scanned");
        jscan_span_set(big, sizeof(big), &sp);
        is_int(strlen(big), JSCAN_SET_MAX - 1, "field: at most JSCAN_SET_MAX - 1 bytes");
        doc_free(&d);

        /* a field holds a prefix of the decoded string: an escaped character
         * that does not fit ends it, nothing after it slips in */
        ok(sets_to("\"ab\\u20acc\"", 4, "ab"), "field: the cut is a prefix (small field)");
        text[0] = '"';
        memset(text + 1, 'x', 510);
        memcpy(text + 511, "\\u20acy\"", 8);
        char want[600];
        memset(want, 'x', 510);
        want[510] = 0;
        ok(sets_to(text, JSCAN_SET_MAX, want), "field: the cut is a prefix (JSCAN_SET_MAX field)");

        /* span_eq */
        struct jscan_span sp2;
        doc_init(&d, "\"\\u0074oolCall\"", 15);
        ok(jscan_string(&d.s, &sp2) && jscan_span_eq(&sp2, "toolCall"), "span_eq decodes escapes");
        ok(!jscan_span_eq(&sp2, "toolCal"), "span_eq: a shorter literal differs");
        ok(!jscan_span_eq(&sp2, "toolCalls"), "span_eq: a longer literal differs");
        doc_free(&d);
        doc_init(&d, "\"message\"", 9);
        ok(jscan_string(&d.s, &sp2) && jscan_span_eq(&sp2, "message") && !jscan_span_eq(&sp2, "messagE"),
           "span_eq: plain bytes compared exactly");
        doc_free(&d);
        ok(!jscan_span_eq(&none, ""), "span_eq: an absent span equals nothing, not even \"\"");
}

/* ---- numbers ------------------------------------------------------------------------ */

/* Scans text as a number that must use all of it. */
static bool num(const char *text, struct jscan_num *ret)
{
        struct doc d;
        bool good;

        doc_init(&d, text, strlen(text));
        good = jscan_number(&d.s, ret) && d.s.p == d.s.end;
        doc_free(&d);
        return good;
}

static void test_numbers(void)
{
        static const char *const good[] = { "0", "-0", "7", "123", "-123", "1.5", "-0.25", "1e10", "1E+2",
                                            "1e-2", "-0.5e3", "10.01E-007", NULL };
        static const char *const bad[] = { "+1", ".5", "1.", "1e", "1e+", "-", "--1", "1.e3", "0x1", "- 1",
                                           "-.5", "Infinity", "NaN", NULL };
        struct jscan_num n;
        int64_t v;

        for (size_t i = 0; good[i]; i++)
                ok(valid(good[i]), "number %s: valid", good[i]);
        for (size_t i = 0; bad[i]; i++)
                ok(!valid(bad[i]), "number %s: refused", bad[i]);
        ok(!valid("01") && !valid("-01") && !valid("00"), "leading zeros refused");

        struct doc d;
        doc_init(&d, "01", 2);
        ok(jscan_number(&d.s, NULL) && d.s.p == d.buf + 1, "\"01\": the number is the 0 (the 1 follows it)");
        doc_free(&d);

        ok(num("123456789012345678", &n) && n.present && n.is_int && n.i == 123456789012345678LL,
           "18 digits: an exact integer");
        ok(num("-12345678901234567", &n) && n.is_int && n.i == -12345678901234567LL,
           "18 characters with the sign: exact");
        ok(num("1234567890123456789", &n) && n.present && !n.is_int && n.d > 1.2345678e18 && n.d < 1.2345679e18,
           "19 digits: a double");
        ok(num("2.5", &n) && n.present && !n.is_int && n.d == 2.5, "fraction: a double");
        ok(num("1e3", &n) && !n.is_int && n.d == 1000.0, "exponent: a double even when integral");
        ok(num("42", &n) && n.is_int && n.i == 42 && n.d == 42.0, "an int also fills d");

        char longnum[80];
        memset(longnum, '1', 70);
        longnum[70] = 0;
        ok(num(longnum, &n) && !n.present, "70 digits: valid JSON, not a usable number");
        ok(valid(longnum), "70 digits: still valid JSON");
        memcpy(longnum, "0.", 2);
        longnum[63] = 0;
        ok(num(longnum, &n) && n.present && n.d > 0.11 && n.d < 0.12, "63 characters: still a number");

        ok(num("2.5", &n) && jscan_num_i64(&n, &v) && v == 3, "i64: 2.5 rounds to 3");
        ok(num("-2.5", &n) && jscan_num_i64(&n, &v) && v == -3, "i64: -2.5 rounds to -3");
        ok(num("1e3", &n) && jscan_num_i64(&n, &v) && v == 1000, "i64: 1e3 is 1000");
        ok(num("-9", &n) && jscan_num_i64(&n, &v) && v == -9, "i64: an int as it is");
        ok(num("1e19", &n) && !jscan_num_i64(&n, &v), "i64: 1e19 out of range");
        ok(num("-1e19", &n) && !jscan_num_i64(&n, &v), "i64: -1e19 out of range");
        ok(num("1e999", &n) && !jscan_num_i64(&n, &v), "i64: an infinite double refused");
        /* decimals without an exponent (a cost: 0.02264) take a fast path
         * for up to 15 digits: every one equal to strtod's, bit for bit, and
         * so are the longer ones strtod still reads */
        int differ = 0, cases = 0;
        uint64_t x = 12345;
        for (int i = 0; i < 20000; i++) {
                char text[40];
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                int ndig = 1 + (int)((x >> 33) % 18), point = 1 + (int)((x >> 40) % (uint64_t)ndig);
                size_t k = 0;
                if ((x >> 20) & 1)
                        text[k++] = '-';
                for (int j = 0; j < ndig; j++) {
                        if (j == point)
                                text[k++] = '.';
                        uint64_t y = x >> (j % 50);
                        text[k++] = (char)('0' + (j == 0 && point > 1 ? 1 + y % 9 : y % 10));
                }
                if (point == ndig) { /* no point among the digits: one after them */
                        text[k++] = '.';
                        text[k++] = '7';
                }
                text[k] = 0;
                double want = strtod(text, NULL);
                cases++;
                if (!num(text, &n) || !n.present || memcmp(&n.d, &want, sizeof(want)) != 0) {
                        if (differ++ < 3)
                                printf("# decimal %s: %.17g, strtod %.17g\n", text, n.d, want);
                }
        }
        ok(differ == 0, "%d random decimals of 1-19 digits: the same double as strtod (%d differ)", cases,
           differ);
        ok(num("0.02264", &n) && n.d == strtod("0.02264", NULL) && num("-0.0", &n) && signbit(n.d),
           "a cost as pi writes it, and -0.0 keeps its sign");

        struct jscan_num absent = { .present = false };
        v = 77;
        ok(!jscan_num_i64(&absent, &v) && v == 77, "i64: absent refused, value untouched");
}

/* ---- literals, structure, nesting ----------------------------------------------------- */

static void test_structure(void)
{
        static const char *const good[] = {
                "true", "false", "null", "{}", "[]", " { } ", "[1,\"a\",true,null,{},[]]",
                "{\"a\":1,\"b\":[{\"c\":\"d\"}],\"e\":{}}", "{ \"a\" : 1 , \"b\" : [ 1 , 2 ] }",
                "\t\r\n[\n1\n]\r\n", "{\"a\":1,\"a\":2}", NULL,
        };
        static const char *const bad[] = {
                "tru", "nul", "True", "nulll", "fals", "{\"a\" 1}", "{\"a\":1,}", "[1,]", "{,}", "[,]",
                "{a:1}", "['a']", "[1 2]", "{\"a\":1 \"b\":2}", "{\"a\":}", "{\"a\"}", "[", "]", "{",
                "}", "", " ", "{\"a\":1}}", "[1]]", "[\"a\":1]", "{1:2}", "\"a\" \"b\"", "1 2", "/* c */ 1",
                "[1,,2]", NULL,
        };

        for (size_t i = 0; good[i]; i++)
                ok(valid(good[i]), "valid: %s", show(good[i]));
        for (size_t i = 0; bad[i]; i++)
                ok(!valid(bad[i]), "refused: '%s'", show(bad[i]));

        struct doc d;
        doc_init(&d, "nullx", 5);
        ok(jscan_literal(&d.s) && d.s.p == d.buf + 4, "literal: consumes exactly its letters");
        doc_free(&d);
        doc_init(&d, "fal", 3);
        ok(!jscan_literal(&d.s), "literal cut short: refused");
        doc_free(&d);
        doc_init(&d, "  \t\r\nx", 6);
        jscan_ws(&d.s);
        ok(d.s.p == d.buf + 5 && jscan_at(&d.s, 'x') && !jscan_at(&d.s, 'y'), "ws skips space, tab, CR, LF");
        d.s.p = d.s.end;
        ok(!jscan_at(&d.s, 'x'), "jscan_at at the end: false");
        doc_free(&d);
        doc_init(&d, "\f1", 2);
        jscan_ws(&d.s);
        ok(d.s.p == d.buf, "form feed is not JSON white space");
        doc_free(&d);
}

/* n nested arrays ([[...]]) or objects ({"a":{"a":...{}}}), skipped from
 * depth 0: the k-th level is at depth k. */
static bool nested(int n, bool objects)
{
        char *t = malloc(6 * (size_t)n + 2);
        size_t k = 0;
        bool good;

        if (!t)
                exit(99);
        for (int i = 0; i < n - 1; i++) {
                memcpy(t + k, objects ? "{\"a\":" : "[", objects ? 5 : 1);
                k += objects ? 5 : 1;
        }
        t[k++] = objects ? '{' : '[';
        for (int i = 0; i < n; i++)
                t[k++] = objects ? '}' : ']';
        good = valid_n(t, k);
        free(t);
        return good;
}

static void test_nesting(void)
{
        ok(nested(JSCAN_MAX_DEPTH, false), "%d nested arrays: accepted", JSCAN_MAX_DEPTH);
        ok(!nested(JSCAN_MAX_DEPTH + 1, false), "%d nested arrays: refused", JSCAN_MAX_DEPTH + 1);
        ok(nested(JSCAN_MAX_DEPTH, true), "%d nested objects: accepted", JSCAN_MAX_DEPTH);
        ok(!nested(JSCAN_MAX_DEPTH + 1, true), "%d nested objects: refused", JSCAN_MAX_DEPTH + 1);
        ok(!nested(100000, false), "100000 nested arrays: refused without running out of stack");

        /* an object at depth 0 may hold JSCAN_MAX_DEPTH levels below it */
        struct doc d;
        char t[2 * (JSCAN_MAX_DEPTH + 1) + 2];
        size_t k = 0;
        t[k++] = '[';
        for (int i = 0; i < JSCAN_MAX_DEPTH; i++)
                t[k++] = '[';
        for (int i = 0; i < JSCAN_MAX_DEPTH; i++)
                t[k++] = ']';
        t[k++] = ']';
        doc_init(&d, t, k);
        ok(jscan_array(&d.s, NULL, NULL, 0) && d.s.p == d.s.end, "array at depth 0: %d levels below it",
           JSCAN_MAX_DEPTH);
        d.s.p = d.buf;
        ok(!jscan_array(&d.s, NULL, NULL, 1), "the same from depth 1: one level too many");
        doc_free(&d);
}

/* Every proper prefix of a document is refused (from an exact-size copy). */
static void test_truncated(void)
{
        static const char *const docs[] = {
                "{\"type\":\"message\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\\\"b\\u00e9\"},"
                "{\"type\":\"toolCall\",\"id\":\"c1\",\"arguments\":{\"x\":[1,2.5e-3,-7,true,false,null]}}],"
                "\"usage\":{\"input\":10,\"cost\":{\"total\":0.001}}},\"timestamp\":\"2026-01-01T00:00:00Z\"}",
                "[\"\\\\\",\"\\\"\",{\"\":[]},[[]],-0.0e+0]",
                NULL,
        };

        for (size_t i = 0; docs[i]; i++) {
                size_t n = strlen(docs[i]), accepted = 0;
                ok(valid(docs[i]), "document %zu: valid whole", i);
                for (size_t cut = 0; cut < n; cut++)
                        if (valid_n(docs[i], cut))
                                accepted++;
                is_int(accepted, 0, "document: no proper prefix accepted");
        }
        /* a number cut short is still a (shorter) number: only the grammar can tell */
        ok(valid_n("123", 2) && !valid_n("1.5", 2) && !valid_n("1e5", 2), "cut numbers: 12 yes, 1. and 1e no");
}

/* ---- member callbacks and reading ------------------------------------------------------- */

struct seen {
        int n_keys;
        int depth;
        char keys[8][16];
        struct jscan_span name, other;
        struct jscan_num count, size;
        struct jscan_time when, at;
        bool kept_raw_key;
};

static bool seen_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct seen *v = u;

        if (v->n_keys < 8) {
                size_t n = k->n < 15 ? k->n : 15;
                memcpy(v->keys[v->n_keys], k->p, n);
                v->keys[v->n_keys][n] = 0;
        }
        v->n_keys++;
        v->depth = depth;
        if (JSCAN_KEY_IS(k, "name"))
                return jscan_read_str(s, &v->name, depth);
        if (JSCAN_KEY_IS(k, "other"))
                return jscan_read_str(s, &v->other, depth);
        if (JSCAN_KEY_IS(k, "count"))
                return jscan_read_num(s, &v->count, depth);
        if (JSCAN_KEY_IS(k, "size"))
                return jscan_read_num(s, &v->size, depth);
        if (JSCAN_KEY_IS(k, "when"))
                return jscan_read_time(s, &v->when, depth);
        if (JSCAN_KEY_IS(k, "at"))
                return jscan_read_time(s, &v->at, depth);
        if (JSCAN_KEY_IS(k, "n\\u0061me"))
                v->kept_raw_key = true;
        return jscan_skip(s, depth);
}

static bool scan_obj(const char *text, struct seen *v, int depth)
{
        struct doc d;
        bool good;

        memset(v, 0, sizeof(*v));
        v->name.p = v->other.p = (const char *)1; /* must be overwritten */
        v->count.present = v->size.present = v->when.present = v->at.present = true;
        doc_init(&d, text, strlen(text));
        good = jscan_object(&d.s, seen_key, v, depth) && d.s.p == d.s.end;
        /* the spans point into the copy: keep only what the checks need */
        if (v->name.p && v->name.p != (const char *)1)
                v->name.p = v->name.n == 2 && memcmp(v->name.p, "ok", 2) == 0 ? "ok" : "??";
        doc_free(&d);
        return good;
}

static void test_members(void)
{
        struct seen v;

        ok(scan_obj("{\"skip\":{\"deep\":[1,{\"x\":\"}\"}]},\"name\":\"ok\",\"count\":12,"
                    "\"when\":\"2026-01-02T03:04:05.678Z\",\"at\":1767225600123.4,\"size\":\"big\","
                    "\"other\":[\"s\"]}",
                    &v, 3),
           "object with wanted and unwanted members");
        is_int(v.n_keys, 7, "every member passed to the callback");
        ok(strcmp(v.keys[0], "skip") == 0 && strcmp(v.keys[6], "other") == 0, "in order");
        is_int(v.depth, 3, "the callback gets the object's depth");
        ok(v.name.p && strcmp(v.name.p, "ok") == 0, "string read");
        ok(v.count.present && v.count.is_int && v.count.i == 12, "number read");
        ok(v.when.present && v.when.ms == 1767323045678LL, "RFC 3339 time read");
        ok(v.at.present && v.at.ms == 1767225600123LL, "epoch-ms time read (rounded)");
        ok(!v.size.present, "a string where a number is wanted: absent");
        ok(v.other.p == NULL, "an array where a string is wanted: absent");

        ok(scan_obj("{\"when\":\"yesterday\",\"at\":true,\"name\":null,\"count\":\"1\"}", &v, 0),
           "unusable values are still valid JSON");
        ok(!v.when.present && !v.at.present && v.name.p == NULL && !v.count.present, "... and read as absent");

        ok(scan_obj("{\"n\\u0061me\":\"x\"}", &v, 0) && v.kept_raw_key && v.name.p == (const char *)1,
           "keys are passed raw (an escaped key is not the plain one)");
        ok(scan_obj("{\"count\":1,\"count\":2}", &v, 0) && v.n_keys == 2 && v.count.i == 2,
           "duplicate keys: each passed, the last read wins");
        ok(!scan_obj("{\"name\":\"ok\",\"count\":01}", &v, 0), "a bad value fails the object");
        ok(!scan_obj("{\"name\":{\"a\":}}", &v, 0), "a bad skipped value fails the object");
        ok(!scan_obj("{\"at\":[}", &v, 0), "a bad value where a time is wanted fails the object");
        ok(!scan_obj("[]", &v, 0), "jscan_object on an array: refused");
}

static bool count_elem(struct jscan *s, void *u, int depth)
{
        int *n = u;
        (*n)++;
        return jscan_skip(s, depth);
}

static void test_arrays(void)
{
        static const char text[] = "[1, [2, 3], {\"a\": [4]}, \"5\"] tail";
        struct doc d;
        int n = 0;

        doc_init(&d, text, strlen(text));
        ok(jscan_array(&d.s, count_elem, &n, 0), "array with a callback");
        is_int(n, 4, "one call per top-level element");
        ok(d.s.p == d.s.end - strlen(" tail"), "left after the closing bracket");
        doc_free(&d);
        n = 0;
        doc_init(&d, "[]", 2);
        ok(jscan_array(&d.s, count_elem, &n, 0) && n == 0, "empty array: no calls");
        doc_free(&d);
        doc_init(&d, "{}", 2);
        ok(!jscan_array(&d.s, count_elem, &n, 0), "jscan_array on an object: refused");
        doc_free(&d);
}

int main(void)
{
        test_strings();
        test_small_buffers();
        test_numbers();
        test_structure();
        test_nesting();
        test_truncated();
        test_members();
        test_arrays();
        return tap_done();
}
