/* The JSON text writer against json-c itself: for the same values its text
 * is what json-c prints (PLAIN | NOSLASHESCAPE), every byte of a string
 * escaped as json-c escapes it, and its text survives json-c's parse and
 * print unchanged, which is what lets a client print a report as it came.
 * Also nesting, commas, errors, and the report money and time texts. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/jsonw.h"
#include "report/json.h"
#include "tap.h"
#include "timefmt.h"

#define PLAIN (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static char *finish(struct jsonw *w)
{
        char *t = NULL;
        size_t n;
        return jsonw_finish(w, &t, &n) == 0 && strlen(t) == n ? t : NULL;
}

/* text is json-c's print of its own parse */
static bool fixed_point(const char *text)
{
        json_object *o = json_tokener_parse(text);
        bool same = o && strcmp(json_object_to_json_string_ext(o, PLAIN), text) == 0;
        if (!same)
                printf("#   jsonw: %s\n#   json-c: %s\n", text, o ? json_object_to_json_string_ext(o, PLAIN) : "(no parse)");
        json_object_put(o);
        return same;
}

static void test_every_byte(void)
{
        int bad = 0, bad_fp = 0;

        for (int c = 1; c < 256; c++) {
                char s[4] = { 'a', (char)c, 'z', 0 };
                struct jsonw w = { 0 };
                json_object *o = json_object_new_object();
                jsonw_object_begin(&w);
                jsonw_key_string(&w, s, s); /* a key is escaped as a value is */
                jsonw_object_end(&w);
                json_object_object_add(o, s, json_object_new_string(s));
                char *t = finish(&w);
                if (!t || strcmp(t, json_object_to_json_string_ext(o, PLAIN)) != 0) {
                        bad++;
                        printf("#   byte 0x%02x: %s against %s\n", c, t ? t : "(null)",
                               json_object_to_json_string_ext(o, PLAIN));
                }
                /* a lone byte >= 0x80 is not UTF-8: json-c's parser refuses
                 * it, so the round trip is checked for ASCII only */
                if (t && c < 0x80 && !fixed_point(t))
                        bad_fp++;
                free(t);
                json_object_put(o);
        }
        is_int(bad, 0, "every byte 0x01-0xff in a key and a value: escaped as json-c escapes it");
        is_int(bad_fp, 0, "... and each ASCII text is a fixed point of json-c's parse and print");
}

static void test_values(void)
{
        struct jsonw w = { 0 };
        json_object *o = json_object_new_object(), *a = json_object_new_array(), *in = json_object_new_object();
        const int64_t ints[] = { 0, 1, -1, 9, 10, -10, 1234567890123LL, INT64_MAX, INT64_MIN };
        char *t;

        jsonw_object_begin(&w);
        jsonw_key(&w, "ints");
        jsonw_array_begin(&w);
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
                jsonw_int(&w, ints[i]);
                json_object_array_add(a, json_object_new_int64(ints[i]));
        }
        jsonw_array_end(&w);
        json_object_object_add(o, "ints", a);
        jsonw_key_string(&w, "utf8", "caf\xc3\xa9 \xe2\x82\xac / \xf0\x9f\x98\x80");
        json_object_object_add(o, "utf8", json_object_new_string("caf\xc3\xa9 \xe2\x82\xac / \xf0\x9f\x98\x80"));
        jsonw_key_bool(&w, "t", true);
        jsonw_key_bool(&w, "f", false);
        jsonw_key_null(&w, "n");
        jsonw_key_string_or_null(&w, "empty", "");
        jsonw_key_string_or_null(&w, "none", NULL);
        jsonw_key_string_or_null(&w, "some", "x");
        json_object_object_add(o, "t", json_object_new_boolean(1));
        json_object_object_add(o, "f", json_object_new_boolean(0));
        json_object_object_add(o, "n", NULL);
        json_object_object_add(o, "empty", NULL);
        json_object_object_add(o, "none", NULL);
        json_object_object_add(o, "some", json_object_new_string("x"));
        jsonw_key(&w, "money");
        jsonw_number(&w, "-0.000001");
        json_object_object_add(o, "money", json_object_new_double_s(-0.000001, "-0.000001"));
        jsonw_key(&w, "in");
        jsonw_object_begin(&w);
        jsonw_key(&w, "ea");
        jsonw_array_begin(&w);
        jsonw_array_end(&w);
        jsonw_key(&w, "eo");
        jsonw_object_begin(&w);
        jsonw_object_end(&w);
        jsonw_key(&w, "aa");
        jsonw_array_begin(&w);
        jsonw_array_begin(&w);
        jsonw_int(&w, 1);
        jsonw_array_end(&w);
        jsonw_array_begin(&w);
        jsonw_array_end(&w);
        jsonw_array_end(&w);
        jsonw_object_end(&w);
        jsonw_object_end(&w);
        json_object *aa = json_object_new_array(), *a1 = json_object_new_array();
        json_object_array_add(a1, json_object_new_int(1));
        json_object_array_add(aa, a1);
        json_object_array_add(aa, json_object_new_array());
        json_object_object_add(in, "ea", json_object_new_array());
        json_object_object_add(in, "eo", json_object_new_object());
        json_object_object_add(in, "aa", aa);
        json_object_object_add(o, "in", in);
        t = finish(&w);
        is_str(t, json_object_to_json_string_ext(o, PLAIN), "ints, UTF-8, booleans, nulls, a number's text, nesting: as json-c prints them");
        ok(t && fixed_point(t), "... a fixed point of json-c's parse and print");
        free(t);
        json_object_put(o);
}

static void test_errors(void)
{
        struct jsonw w = { 0 };
        char *t = (char *)"unset";
        size_t n;

        jsonw_object_begin(&w);
        jsonw_key(&w, "a");
        is_int(jsonw_finish(&w, &t, &n), -EINVAL, "an open object: -EINVAL");
        ok(t && strcmp(t, "unset") == 0 && w.buf == NULL, "... nothing returned, the writer emptied");
        jsonw_array_end(&w);
        is_int(jsonw_finish(&w, &t, &n), -EINVAL, "closing what was never opened: -EINVAL");
        for (int i = 0; i < JSONW_DEPTH_MAX + 1; i++)
                jsonw_array_begin(&w);
        for (int i = 0; i < JSONW_DEPTH_MAX + 1; i++)
                jsonw_array_end(&w);
        is_int(jsonw_finish(&w, &t, &n), -EOVERFLOW, "nesting deeper than JSONW_DEPTH_MAX: -EOVERFLOW");
        jsonw_int(&w, 7);
        ok(jsonw_finish(&w, &t, &n) == 0 && strcmp(t, "7") == 0 && n == 1, "a bare value: \"7\"");
        free(t);
        struct jsonw big = { 0 };
        jsonw_array_begin(&big);
        for (int i = 0; i < 100000; i++)
                jsonw_string(&big, "0123456789");
        jsonw_array_end(&big);
        int r = jsonw_finish(&big, &t, &n);
        ok(r == 0 && n == 2 + 100000 * 13 - 1 && t[n - 1] == ']',
           "100,000 strings: one buffer grown as needed (%zu bytes)", r == 0 ? n : 0);
        free(t);
}

static void test_money_and_time(void)
{
        const int64_t v[] = { 0, 1, 499, 500, 999, 1000, -1, -499, -500, -1500, 1234567890, 999999500,
                              -999999500, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
        int bad = 0;

        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                char got[REPORT_MONEY_TEXT_MAX], want[64];
                uint64_t a = v[i] < 0 ? -(uint64_t)v[i] : (uint64_t)v[i];
                uint64_t micro = (a + 500) / 1000;
                snprintf(want, sizeof(want), "%s%llu.%06llu", v[i] < 0 ? "-" : "",
                         (unsigned long long)(micro / 1000000), (unsigned long long)(micro % 1000000));
                report_money_text(v[i], got);
                if (strcmp(got, want) != 0) {
                        bad++;
                        printf("#   %lld nano: %s, want %s\n", (long long)v[i], got, want);
                }
        }
        is_int(bad, 0, "money text: the micro-dollar, half away from zero, as printf would write it");
        char t[32];
        timefmt_format_utc(1796040000123LL, t);
        is_str(t, "2026-11-30T12:00:00.123Z", "time text: RFC 3339 UTC with milliseconds");
        timefmt_format_utc(-1, t);
        is_str(t, "1969-12-31T23:59:59.999Z", "time text: before the epoch");
        timefmt_format_utc(INT64_MAX, t);
        ok(strlen(t) == 24 && t[23] == 'Z', "time text: out of range stays 24 characters (%s)", t);
}

int main(void)
{
        test_every_byte();
        test_values();
        test_errors();
        test_money_and_time();
        return tap_done();
}
