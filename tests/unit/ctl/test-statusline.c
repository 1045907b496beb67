/* Unit tests for the status line: the bounded stdin read (JSON, garbage,
 * an open pipe, too much), the request it builds, named fields, money and
 * limits formatting, text from the input escaped as every terminal output
 * is (C0 and C1 controls, bidi overrides, invalid UTF-8), the fallback. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statusline.h"
#include "tap.h"

static int read_from(const char *data, size_t len, bool close_it, int timeout, json_object **o)
{
        int p[2];
        if (pipe(p) < 0)
                exit(99);
        if (len && write(p[1], data, len) != (ssize_t)len)
                exit(99);
        if (close_it)
                close(p[1]);
        int r = statusline_read_input(p[0], timeout, o);
        close(p[0]);
        if (!close_it)
                close(p[1]);
        return r;
}

static char *line(const char *fmt, json_object *in, json_object *ans, const char *why)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        statusline_print(f, fmt, in, ans, why);
        fclose(f);
        return buf;
}

int main(void)
{
        json_object *o = NULL;
        const char *in_text = "{\"session_id\":\"s1\",\"model\":{\"display_name\":\"Op\\u001bus\"},"
                              "\"cwd\":\"/w\\nx\",\"rate_limits\":{\"five_hour\":{\"used_percentage\":12.4}}}";

        is_int(read_from(in_text, strlen(in_text), true, 1000, &o), 0, "read: a JSON object");
        json_object *req = statusline_request(o, "Europe/Berlin");
        json_object *v;
        ok(json_object_object_get_ex(req, "session", &v) && strcmp(json_object_get_string(v), "s1") == 0,
           "request: the session id");
        ok(json_object_object_get_ex(req, "rate_limits", &v) && v, "request: the rate limits handed on");
        ok(json_object_object_get_ex(req, "tz", &v) && strcmp(json_object_get_string(v), "Europe/Berlin") == 0,
           "request: the zone");
        json_object_put(req);
        json_object *x = NULL;
        is_int(read_from("nope", 4, true, 1000, &x), -EBADMSG, "read: garbage is -EBADMSG");
        is_int(read_from("[1,2]", 5, true, 1000, &x), -EBADMSG, "read: JSON but not an object");
        is_int(read_from("", 0, true, 1000, &x), -ENODATA, "read: empty input");
        is_int(read_from("{", 1, false, 30, &x), -ETIMEDOUT, "read: a pipe left open times out");
        char *big = malloc(STATUSLINE_INPUT_MAX + 10);
        memset(big, ' ', STATUSLINE_INPUT_MAX + 10);
        int p[2];
        if (pipe(p) < 0)
                return 99;
        if (fork() == 0) {
                close(p[0]);
                ssize_t w = write(p[1], big, STATUSLINE_INPUT_MAX + 10);
                _exit(w < 0);
        }
        close(p[1]);
        is_int(statusline_read_input(p[0], 2000, &x), -E2BIG, "read: more than the bound: -E2BIG");
        close(p[0]);
        free(big);

        json_object *ans = json_tokener_parse(
                "{\"session\":{\"cost_usd\":1.234567,\"cost_source\":\"vendor-reported\"},"
                "\"today\":{\"cost_usd\":12.5,\"cost_source\":\"mixed\"},"
                "\"block\":{\"active\":true,\"cost_usd\":3.0,\"burn_usd_per_hour\":1.5,\"remaining_s\":7260}}");
        char *s = line(NULL, o, ans, NULL);
        is_str(s, "Op\\x1bus | session $1.23 | today ~$12.50 | block $3.00 ($1.50/h, 2h 01m left) | 5h 12%\n",
               "default line: money to the cent, ~ for computed, time left, the 5h limit");
        free(s);
        s = line("{cwd} {limit_7d} {x}", o, ans, NULL);
        is_str(s, "/w\\x0ax \xe2\x80\x94 {x}\n", "cwd escaped, an unknown limit is a dash, unknown field kept");
        free(s);
        s = line(NULL, o, NULL, "agentmeterd is not running");
        is_str(s, "Op\\x1bus | agentmeter: agentmeterd is not running\n", "fallback with the model");
        free(s);
        s = line(NULL, NULL, NULL, "status input is not JSON");
        is_str(s, "agentmeter: status input is not JSON\n", "fallback without input");
        free(s);
        json_object *inactive = json_tokener_parse("{\"block\":{\"active\":false,\"cost_usd\":3.0}}");
        s = line("{block} {session}", o, inactive, NULL);
        is_str(s, "\xe2\x80\x94 \xe2\x80\x94\n", "an ended block and an unknown session are dashes");
        free(s);
        json_object_put(inactive);

        /* what Claude Code hands on from a project's name or a model's: a CSI
         * (C1, U+009B), a right-to-left override (U+202E), invalid UTF-8 */
        const char *hostile = "{\"model\":{\"display_name\":\"A\\u009b2JB\\u202eC\xff\"},"
                              "\"cwd\":\"/w/\\u202egpj.exe\",\"workspace\":{\"project_dir\":\"/p\xc3(\\u2066\"}}";
        json_object *h = json_tokener_parse(hostile);
        ok(h != NULL, "hostile input parses");
        s = line("{model}|{cwd}|{project}", h, ans, NULL);
        is_str(s, "A\\xc2\\x9b2JB\\xe2\\x80\\xaeC\\xff|/w/\\xe2\\x80\\xaegpj.exe|/p\\xc3(\\xe2\\x81\\xa6\n",
               "C1, bidi overrides and isolates, invalid UTF-8: escaped in model, cwd and project");
        free(s);
        s = line(NULL, h, NULL, "agentmeterd is busy");
        is_str(s, "A\\xc2\\x9b2JB\\xe2\\x80\\xaeC\\xff | agentmeter: agentmeterd is busy\n",
               "... and in the fallback line");
        free(s);
        json_object_put(h);
        /* the model is cut at 40 bytes of output: on a character boundary, never in an escape */
        h = json_tokener_parse("{\"model\":{\"display_name\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
                               "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9x\\u009b\"}}");
        s = line("{model}", h, ans, NULL);
        is_str(s, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x\n",
               "a long model is cut at 40 bytes, whole characters, no half escape");
        free(s);
        json_object_put(h);
        json_object_put(ans);
        json_object_put(o);
        return tap_done();
}
