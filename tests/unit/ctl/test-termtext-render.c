/* Unit tests for ctl/termtext beyond test-termtext.c: bidi and separator
 * characters, the dup/fputs/tmp forms, 20,000 random strings, and the
 * renderers (table, CSV, tail) printing hostile names escaped. */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "termtext.h"
#include "render/status.h"
#include "render/render.h"
#include "table.h"
#include "tap.h"

/* No C0 control, DEL or C1 byte (0x80-0x9f outside a sequence) survives,
 * and the result is valid UTF-8. */
static bool terminal_safe(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                if (*p < 0x20 || *p == 0x7f)
                        return false;
                if (*p < 0x80) {
                        p++;
                        continue;
                }
                size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
                if (n == 0)
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
                        return false; /* a C1 control as UTF-8 */
                p += n;
        }
        return true;
}

static char *render(struct json_object *o, enum render_format fmt)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        render_report(f, o, fmt, false);
        fclose(f);
        return buf;
}

int main(void)
{
        static const struct { const char *in, *out, *name; } cases[] = {
                {"claude-opus-4", "claude-opus-4", "plain ASCII kept"},
                {"/home/u/projét — “x” 🚀", "/home/u/projét — “x” 🚀", "UTF-8 kept"},
                {"C:\\Users\\u", "C:\\Users\\u", "backslashes kept"},
                {"a\x1b]0;pwned\x07z", "a\\x1b]0;pwned\\x07z", "OSC title sequence made visible"},
                {"\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H", "clear-screen made visible"},
                {"t\tn\nr\r", "t\\x09n\\x0ar\\x0d", "tab, newline, CR"},
                {"del\x7f", "del\\x7f", "DEL"},
                {"c1\xc2\x9b" "31m", "c1\\xc2\\x9b31m", "C1 CSI as UTF-8"},
                {"raw\x9b" "31m", "raw\\x9b31m", "a raw 0x9b byte (not UTF-8)"},
                {"x\xe2\x80\xaey", "x\\xe2\\x80\\xaey", "right-to-left override"},
                {"\xe2\x81\xa6i\xe2\x81\xa9", "\\xe2\\x81\\xa6i\\xe2\\x81\\xa9", "bidi isolates"},
                {"l\xe2\x80\xa8", "l\\xe2\\x80\\xa8", "line separator"},
                {"\xc0\xaf", "\\xc0\\xaf", "overlong encoding"},
                {"\xed\xa0\x80", "\\xed\\xa0\\x80", "UTF-16 surrogate"},
                {"end\xe2\x80", "end\\xe2\\x80", "cut sequence at the end"},
                {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80", "beyond U+10FFFF"},
                {"", "", "empty"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *e = termtext_dup(cases[i].in);
                is_str(e, cases[i].out, cases[i].name);
                is_int(termtext_len(cases[i].in), strlen(cases[i].out), "... termtext_len agrees");
                free(e);
        }
        char *empty = termtext_dup(NULL);
        is_str(empty, "", "NULL reads as empty");
        free(empty);
        ok(termtext_tmp(NULL) == NULL, "termtext_tmp(NULL) is NULL");

        /* escape_fputs writes exactly what escape_dup returns */
        {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                termtext_fputs("m\x1b[31m\xc2\x85", f);
                fclose(f);
                is_str(buf, "m\\x1b[31m\\xc2\\x85", "termtext_fputs");
                free(buf);
        }
        /* escape_tmp: bounded, cut on a whole escape, rotating buffers */
        {
                char big[3000];
                memset(big, 0x01, sizeof(big) - 1);
                big[sizeof(big) - 1] = 0;
                const char *a = termtext_tmp(big), *b = termtext_tmp("second");
                ok(strlen(a) < 1024 && strlen(a) % 4 == 0, "a long string is cut at a whole escape (%zu)",
                   strlen(a));
                is_str(b, "second", "a second termtext_tmp does not clobber the first");
                ok(a[0] == '\\' && a[1] == 'x', "... which is still intact");
        }
        /* any bytes at all come out terminal-safe */
        srand(3);
        int safe = 0;
        for (int i = 0; i < 20000; i++) {
                unsigned char in[40];
                size_t n = 1 + (size_t)rand() % (sizeof(in) - 1);
                for (size_t j = 0; j < n - 1; j++)
                        in[j] = (unsigned char)(1 + rand() % 255);
                in[n - 1] = 0;
                char *e = termtext_dup((const char *)in);
                safe += e && terminal_safe(e) && strlen(e) == termtext_len((const char *)in);
                free(e);
        }
        is_int(safe, 20000, "20,000 random byte strings: every result terminal-safe, valid UTF-8");

        /* the renderers: table, CSV, tail line */
        const char *hostile = "model\x1b]0;pwned\x07\x1b[2J";
        struct json_object *rep = json_object_new_object(), *rows = json_object_new_array(),
                           *row = json_object_new_object(), *tot = json_object_new_object();
        json_object_object_add(rep, "report", json_object_new_string("model"));
        json_object_object_add(row, "key", json_object_new_string(hostile));
        json_object_object_add(row, "model", json_object_new_string(hostile));
        json_object_object_add(row, "harness", json_object_new_string("pi\r"));
        json_object_object_add(row, "events", json_object_new_int(1));
        json_object_array_add(rows, row);
        json_object_object_add(rep, "rows", rows);
        json_object_object_add(tot, "events", json_object_new_int(1));
        json_object_object_add(rep, "totals", tot);
        char *table = render(rep, RENDER_TABLE), *csv = render(rep, RENDER_CSV);
        ok(table && !strchr(table, '\x1b') && strstr(table, "model\\x1b]0;pwned\\x07\\x1b[2J"),
           "table: the hostile model name is printed escaped");
        ok(csv && !strchr(csv, '\x1b') && strstr(csv, "model\\x1b]0;pwned\\x07\\x1b[2J"),
           "CSV: the hostile model name is printed escaped");
        {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                struct json_object *tr = json_object_new_object(), *calls = json_object_new_array();
                json_object_object_add(tr, "harness", json_object_new_string("pi"));
                json_object_object_add(tr, "model", json_object_new_string(hostile));
                json_object_array_add(calls, json_object_new_string("bash\x1b[8m"));
                json_object_object_add(tr, "tool_calls", calls);
                render_tail_row(f, tr);
                fclose(f);
                ok(buf && !strchr(buf, '\x1b') && strstr(buf, "bash\\x1b[8m"),
                   "tail: model and tool names escaped");
                free(buf);
                json_object_put(tr);
        }
        free(table);
        free(csv);
        json_object_put(rep);
        return tap_done();
}
