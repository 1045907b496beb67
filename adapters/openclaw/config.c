/* OpenClaw's config file (openclaw.json, JSON5 as people edit it): the one
 * setting discovery needs from it, session.store. */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "openclaw/openclaw.h"

#define CONFIG_MAX (1u << 20)

/* JSON5-ish made JSON for json-c: comments and trailing commas dropped,
 * bare identifier keys and 'single-quoted' strings double-quoted. */
static char *dejson5(const char *s, size_t n)
{
        char *o = malloc(2 * n + 16);
        size_t k = 0, last = SIZE_MAX; /* index of the last significant output byte */

        if (!o)
                return NULL;
        for (size_t i = 0; i < n;) {
                char c = s[i];
                if (c == '"' || c == '\'') {
                        o[k++] = '"';
                        for (i++; i < n && s[i] != c; i++) {
                                if (s[i] == '\\' && i + 1 < n) {
                                        if (!(c == '\'' && s[i + 1] == '\''))
                                                o[k++] = '\\';
                                        o[k++] = s[++i];
                                } else {
                                        if (c == '\'' && s[i] == '"')
                                                o[k++] = '\\';
                                        o[k++] = s[i];
                                }
                        }
                        i++;
                        o[k++] = '"';
                        last = k - 1;
                } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
                        while (i < n && s[i] != '\n')
                                i++;
                } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
                        for (i += 2; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
                                ;
                        i = i + 2 < n ? i + 2 : n;
                } else if ((isalpha((unsigned char)c) || c == '_' || c == '$') && last != SIZE_MAX &&
                           (o[last] == '{' || o[last] == ',')) {
                        size_t j = i, m;
                        while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '$'))
                                j++;
                        for (m = j; m < n && isspace((unsigned char)s[m]); m++)
                                ;
                        if (m < n && s[m] == ':')
                                o[k++] = '"';
                        memcpy(o + k, s + i, j - i);
                        k += j - i;
                        if (m < n && s[m] == ':')
                                o[k++] = '"';
                        last = k - 1;
                        i = j;
                } else {
                        if ((c == '}' || c == ']') && last != SIZE_MAX && o[last] == ',')
                                o[last] = ' ';
                        o[k++] = c;
                        if (!isspace((unsigned char)c))
                                last = k - 1;
                        i++;
                }
        }
        o[k] = 0;
        return o;
}

/* session.store from the config: 0 and the string, -ENOENT when none can
 * be read (a broken config is the user's business, not an error here). */
int openclaw_config_store(const char *path, char *buf, size_t cap)
{
        struct json_object *root, *sess = NULL;
        char *text, *fixed = NULL;
        size_t len;
        int r = adapt_read_file(path, CONFIG_MAX, &text, &len);

        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        root = json_tokener_parse(text);
        if (!root && (fixed = dejson5(text, len)))
                root = json_tokener_parse(fixed);
        if (root)
                json_object_object_get_ex(root, "session", &sess);
        r = adapt_json_str(sess, "store", buf, cap);
        json_object_put(root);
        free(fixed);
        free(text);
        return r;
}
