/* Unit tests for common/lines.c: glued objects on one line, trailing
 * garbage, blank lines, and the complete-JSON check for a last line. */
#include <json-c/json.h>
#include <string.h>

#include "lines.h"
#include "tap.h"

struct seen {
        int n;
        char keys[8][16];
        int stop_at;
};

static int cb(struct json_object *obj, void *u)
{
        struct seen *s = u;
        json_object_iter it;
        const char *k = "";

        if (json_object_is_type(obj, json_type_object))
                json_object_object_foreachC(obj, it)
                {
                        k = it.key;
                        break;
                }
        if (s->n < 8)
                snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", k);
        s->n++;
        return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static int run(const char *line, size_t len, struct seen *s, size_t *count)
{
        memset(s, 0, sizeof(*s));
        *count = 99;
        return lines_json_foreach(line, len, cb, s, count);
}

#define RUN(str) run((str), strlen(str), &s, &count)

int main(void)
{
        struct seen s;
        size_t count;
        int r;

        r = RUN("{\"a\":1}");
        ok(r == 0 && count == 1 && s.n == 1 && !strcmp(s.keys[0], "a"), "one object");
        r = RUN("{\"a\":1}{\"b\":2}");
        ok(r == 0 && count == 2 && !strcmp(s.keys[0], "a") && !strcmp(s.keys[1], "b"),
           "two glued objects: both seen, in order");
        r = RUN("  {\"a\":1} \t {\"b\":{\"x\":[1,2]}}  {\"c\":3}\r");
        ok(r == 0 && count == 3 && !strcmp(s.keys[2], "c"), "three objects with blanks and CR");
        r = RUN("{\"a\":1} xyz");
        ok(r == LINES_MALFORMED && count == 1 && s.n == 1,
           "trailing garbage: malformed, object before it still seen");
        r = RUN("{\"a\":1}{\"b\":");
        ok(r == LINES_MALFORMED && count == 1, "torn second object: malformed after the first");
        r = RUN("{\"a\":1}}");
        ok(r == LINES_MALFORMED && count == 1, "stray brace: malformed");
        r = RUN("garbage");
        ok(r == LINES_MALFORMED && count == 0 && s.n == 0, "garbage only: malformed, nothing seen");
        r = RUN("");
        ok(r == 0 && count == 0 && s.n == 0, "empty line: no values, not malformed");
        r = RUN(" \t\r");
        ok(r == 0 && count == 0, "blank line: no values, not malformed");
        r = RUN("1 2");
        ok(r == 0 && count == 2, "scalars: the last one ends at the end of the line");
        r = RUN("true");
        ok(r == 0 && count == 1, "a literal at the end of the line completes");
        r = RUN("tru");
        is_int(r, LINES_MALFORMED, "a partial literal is malformed");

        const char glued_nul[] = "{\"a\":1}\0{\"b\":2}";
        r = run(glued_nul, sizeof(glued_nul) - 1, &s, &count);
        ok(r == LINES_MALFORMED && count == 1, "an embedded NUL is not JSON");

        /* the line length bounds the parse */
        r = run("{\"a\":1}{\"b\":2}", 7, &s, &count);
        ok(r == 0 && count == 1, "only len bytes are parsed");

        /* nesting deeper than json-c's default limit of 32 */
        char deep[256 + 64];
        size_t d = 0;
        d += (size_t)snprintf(deep, sizeof(deep), "{\"k\":");
        for (int i = 0; i < 100; i++)
                deep[d++] = '[';
        for (int i = 0; i < 100; i++)
                deep[d++] = ']';
        deep[d++] = '}';
        r = run(deep, d, &s, &count);
        ok(r == 0 && count == 1, "100-deep nesting still parses");

        /* the callback stops the walk */
        memset(&s, 0, sizeof(s));
        s.stop_at = 1;
        r = lines_json_foreach("{\"a\":1}{\"b\":2}", 14, cb, &s, &count);
        ok(r == 7 && s.n == 1 && count == 1, "callback's non-zero stops and is returned");
        r = lines_json_foreach("{\"a\":1}{\"b\":2}", 14, NULL, NULL, NULL);
        is_int(r, 0, "no callback, no count pointer");

        ok(lines_is_complete_json("{\"a\":1}", 7), "complete object");
        ok(lines_is_complete_json("{\"a\":1}{\"b\":2}", 14), "two complete objects");
        ok(!lines_is_complete_json("{\"a\":1", 6), "unterminated object is not complete");
        ok(!lines_is_complete_json("{\"a\":\"x", 7), "unterminated string is not complete");
        ok(!lines_is_complete_json("{\"a\":1}{", 8), "complete then partial is not complete");
        ok(!lines_is_complete_json("", 0), "empty is not complete JSON");
        ok(!lines_is_complete_json("   ", 3), "blank is not complete JSON");

        const char *start;
        size_t n = lines_trim("  abc \r", 7, &start);
        ok(n == 3 && !strncmp(start, "abc", 3), "trim blanks and CR");
        n = lines_trim(" \r\n", 3, &start);
        is_int(n, 0, "trim to nothing");
        return tap_done();
}
