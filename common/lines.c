/* JSON values on one line, parsed with json-c's incremental tokener so that
 * glued objects are all seen. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "lines.h"

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

size_t lines_trim(const char *line, size_t len, const char **ret_start)
{
        while (len > 0 && is_blank(line[0])) {
                line++;
                len--;
        }
        while (len > 0 && is_blank(line[len - 1]))
                len--;
        *ret_start = line;
        return len;
}

/* json-c's default depth (32) would call a line with deeply nested tool
 * arguments malformed and drop its usage; real lines stay far below this. */
#define LINES_JSON_DEPTH 256

int lines_json_foreach(const char *line, size_t len,
                       int (*cb)(struct json_object *obj, void *u), void *u,
                       size_t *ret_count)
{
        json_tokener *tok;
        size_t count = 0;
        int r = 0;

        len = lines_trim(line, len, &line);
        if (len == 0) {
                /* nothing on the line is not malformed: zero values */
                if (ret_count)
                        *ret_count = 0;
                return 0;
        }
        tok = json_tokener_new_ex(LINES_JSON_DEPTH);
        if (!tok)
                return -ENOMEM;
        while (len > 0) {
                json_object *obj;
                size_t used;

                /* json-c takes an int length */
                if (len > (size_t)INT32_MAX) {
                        r = LINES_MALFORMED;
                        break;
                }
                obj = json_tokener_parse_ex(tok, line, (int)len);
                used = json_tokener_get_parse_end(tok);
                if (!obj && json_tokener_get_error(tok) == json_tokener_continue && used == len) {
                        /* the bytes ran out: a top-level number or literal
                         * ("1", "true") only ends at a terminator, so give
                         * it the end of input; anything else stays partial */
                        obj = json_tokener_parse_ex(tok, "", 1);
                        used = len;
                }
                if (!obj) {
                        /* incomplete or an error: either way the line is not whole JSON */
                        r = LINES_MALFORMED;
                        break;
                }
                count++;
                if (cb)
                        r = cb(obj, u);
                json_object_put(obj);
                if (r != 0)
                        break;
                if (used == 0 || used > len) {
                        r = LINES_MALFORMED;
                        break;
                }
                line += used;
                len -= used;
                while (len > 0 && is_blank(line[0])) {
                        line++;
                        len--;
                }
                json_tokener_reset(tok);
        }
        json_tokener_free(tok);
        if (ret_count)
                *ret_count = count;
        return r;
}

bool lines_is_complete_json(const char *line, size_t len)
{
        size_t n = 0;
        return lines_json_foreach(line, len, NULL, NULL, &n) == 0 && n > 0;
}
