/* One copy of the path, root-list and small-file code that the pi, OpenClaw
 * and PicoClaw discovery each need (see adapt-util.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-util.h"
#include "lines.h"

int adapt_resolve_path(const char *value, const char *home, const char *base, char *buf, size_t cap)
{
        int n;

        if (value[0] == '~' && (value[1] == 0 || value[1] == '/')) {
                if (!home || home[0] != '/')
                        return -EINVAL;
                n = snprintf(buf, cap, "%s%s", home, value + 1);
        } else if (value[0] == '/') {
                n = snprintf(buf, cap, "%s", value);
        } else {
                if (!base || base[0] != '/')
                        return -EINVAL;
                n = snprintf(buf, cap, "%s/%s", base, value);
        }
        if (n < 0 || (size_t)n >= cap)
                return -ENAMETOOLONG;
        while (n > 1 && buf[n - 1] == '/')
                buf[--n] = 0;
        return 0;
}

int adapt_add_root(struct root_list *out, const struct adapter *adapter, const char *path,
                   const char *label, uint8_t reason, const char *env_var, const char *detail,
                   uint8_t max_depth)
{
        struct root *rt;
        int r;

        for (size_t i = 0; i < out->n; i++)
                if (out->v[i].adapter == adapter && strcmp(out->v[i].path, path) == 0)
                        return 0;
        r = root_list_push(out, &rt);
        if (r < 0)
                return r;
        snprintf(rt->path, sizeof(rt->path), "%s", path);
        snprintf(rt->label, sizeof(rt->label), "%s", label);
        rt->reason = reason;
        if (env_var)
                snprintf(rt->env_var, sizeof(rt->env_var), "%s", env_var);
        if (detail)
                snprintf(rt->detail, sizeof(rt->detail), "%s", detail);
        rt->max_depth = max_depth;
        rt->adapter = adapter;
        return 1;
}

int adapt_read_file(const char *path, size_t max, char **ret_text, size_t *ret_len)
{
        struct stat st;
        char *buf = NULL;
        size_t len = 0, cap;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
                goto out;
        }
        /* the size is where to start: one byte more shows the end (or that
         * the file grew past max meanwhile) */
        cap = (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
        buf = malloc(cap + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        for (;;) {
                ssize_t k;

                if (len == cap) {
                        size_t ncap = cap <= (max + 1) / 2 ? 2 * cap : max + 1;
                        char *nb = realloc(buf, ncap + 1);
                        if (!nb) {
                                r = -ENOMEM;
                                goto out;
                        }
                        buf = nb;
                        cap = ncap;
                }
                k = read(fd, buf + len, cap - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto out;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
                if (len > max) {
                        r = -EFBIG;
                        goto out;
                }
        }
        buf[len] = 0;
        *ret_text = buf;
        *ret_len = len;
        buf = NULL;
out:
        free(buf);
        close(fd);
        return r;
}

int adapt_json_str(struct json_object *obj, const char *key, char *buf, size_t cap)
{
        struct json_object *v;
        size_t n;

        if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
                return -ENOENT;
        n = (size_t)json_object_get_string_len(v);
        if (n == 0 || n >= cap || memchr(json_object_get_string(v), 0, n))
                return -ENOENT;
        memcpy(buf, json_object_get_string(v), n + 1);
        return 0;
}

void adapt_path_clean(char *p)
{
        size_t n = strlen(p), o = 0;
        char *out = p; /* in place: the output never outruns the input */

        if (n == 0 || p[0] != '/')
                return;
        for (size_t i = 0; i < n;) {
                size_t s, len;

                while (i < n && p[i] == '/')
                        i++;
                s = i;
                while (i < n && p[i] != '/')
                        i++;
                len = i - s;
                if (len == 0 || (len == 1 && p[s] == '.'))
                        continue;
                if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--; /* the '/' before the dropped component */
                        continue;
                }
                out[o++] = '/';
                memmove(out + o, p + s, len);
                o += len;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = 0;
}

void adapt_path_dirname(const char *path, char *out, size_t cap)
{
        const char *slash = strrchr(path, '/');
        size_t n;

        if (!slash) {
                snprintf(out, cap, ".");
                return;
        }
        n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= cap)
                n = cap - 1;
        memcpy(out, path, n);
        out[n] = 0;
}

/* ---- JSON files and members --------------------------------------------- */

int adapt_read_json(const char *path, size_t max, json_object **ret)
{
        json_tokener *tok;
        json_object *obj;
        char *buf;
        size_t len;
        int r = adapt_read_file(path, max, &buf, &len);

        if (r < 0)
                return r;
        tok = json_tokener_new();
        if (!tok) {
                free(buf);
                return -ENOMEM;
        }
        obj = json_tokener_parse_ex(tok, buf, (int)len);
        if (obj) {
                size_t end = json_tokener_get_parse_end(tok);
                for (; end < len; end++)
                        if (!isspace((unsigned char)buf[end]))
                                break;
                if (end < len) {
                        json_object_put(obj);
                        obj = NULL;
                }
        }
        json_tokener_free(tok);
        free(buf);
        if (!obj)
                return -EBADMSG;
        *ret = obj;
        return 0;
}

const char *adapt_get_str(json_object *obj, const char *key, size_t *ret_len)
{
        json_object *v;

        if (!obj || !json_object_object_get_ex(obj, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        if (ret_len)
                *ret_len = (size_t)json_object_get_string_len(v);
        return json_object_get_string(v);
}

json_object *adapt_get_type(json_object *obj, const char *key, int type)
{
        json_object *v;

        if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, (json_type)type))
                return NULL;
        return v;
}

uint64_t adapt_get_count(json_object *obj, const char *key)
{
        json_object *v;

        if (!obj || !json_object_object_get_ex(obj, key, &v))
                return 0;
        if (json_object_is_type(v, json_type_int)) {
                int64_t n = json_object_get_int64(v);
                return n > 0 ? (uint64_t)n : 0;
        }
        if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);
                return d >= 1 && d < 9.2e18 ? (uint64_t)d : 0;
        }
        return 0;
}

/* ---- tool-call blocks of a content array --------------------------------- */

struct calls_scan {
        const char *type;
        struct adapt_calls_f *calls;
};

struct block_f {
        struct jscan_span type;
        struct adapt_call_f c;
};

static bool block_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct block_f *b = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &b->type, depth);
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &b->c.id, depth);
        if (JSCAN_KEY_IS(k, "name"))
                return jscan_read_str(s, &b->c.name, depth);
        if (JSCAN_KEY_IS(k, "namespace"))
                return jscan_read_str(s, &b->c.ns, depth);
        return jscan_skip(s, depth);
}

static bool content_elem(struct jscan *s, void *u, int depth)
{
        struct calls_scan *cs = u;
        struct block_f b = { 0 };

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        if (!jscan_object(s, block_key, &b, depth + 1))
                return false;
        if (jscan_span_eq(&b.type, cs->type)) {
                if (cs->calls->n < ROW_CALLS_MAX)
                        cs->calls->v[cs->calls->n] = b.c;
                cs->calls->n++;
        }
        return true;
}

bool adapt_read_calls(struct jscan *s, const char *type, struct adapt_calls_f *calls, int depth)
{
        struct calls_scan cs = { type, calls };

        calls->n = 0;
        if (jscan_at(s, '['))
                return jscan_array(s, content_elem, &cs, depth + 1);
        return jscan_skip(s, depth);
}

bool adapt_line_begin(struct parse_state *ps, const char **io_line, size_t *io_len, adapt_line_filter may_matter,
                      const void *u, int *ret_result)
{
        const char *line = *io_line;
        size_t len;

        if (ps->flags & PS_NOT_SOURCE) {
                *ret_result = PARSE_NOT_SOURCE;
                return false;
        }
        len = lines_trim(line, *io_len, &line);
        if (len == 0) {
                *ret_result = PARSE_OK;
                return false;
        }
        if ((ps->flags & PS_HEADER_SEEN) && !may_matter(line, len, u)) {
                *ret_result = line[0] == '{' && line[len - 1] == '}' ? PARSE_OK : PARSE_MALFORMED;
                return false;
        }
        *io_line = line;
        *io_len = len;
        return true;
}

int adapt_zst_sibling(const char *path, char *ret, size_t cap)
{
        size_t n = strlen(path);

        if (n > 4 && strcmp(path + n - 4, ".zst") == 0) {
                if (n - 4 >= cap)
                        return 0;
                memcpy(ret, path, n - 4);
                ret[n - 4] = 0;
                return 1;
        }
        return snprintf(ret, cap, "%s.zst", path) < (int)cap ? 1 : 0;
}

bool adapt_ends_with(const char *name, const char *suffix)
{
        size_t n = strlen(name), k = strlen(suffix);
        return n > k && strcmp(name + n - k, suffix) == 0;
}

bool adapt_component_is(const char *rel, int idx, const char *want)
{
        const char *p = rel;
        size_t n;

        for (int i = 0; i < idx; i++) {
                p = strchr(p, '/');
                if (!p)
                        return false;
                p++;
        }
        n = strcspn(p, "/");
        return n == strlen(want) && memcmp(p, want, n) == 0;
}

bool adapt_is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
