/* Control-socket framing: one JSON object per line, versioned by "v", with
 * bounded, timed line reads that never consume bytes past the newline. */
#include <errno.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "timefmt.h"

/* Largest response proto_call accepts (reports can be long). */

int proto_encode(json_object *obj, char **ret_buf, size_t *ret_len)
{
        const char *s;
        size_t n;
        char *buf;

        s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        n = strlen(s);
        buf = malloc(n + 2);
        if (!buf)
                return -ENOMEM;
        memcpy(buf, s, n);
        buf[n] = '\n';
        buf[n + 1] = 0;
        *ret_buf = buf;
        *ret_len = n + 1;
        return 0;
}

/* Parses exactly one JSON object filling line[0..len) (blanks around allowed). */
static int parse_object(const char *line, size_t len, json_object **ret_obj)
{
        json_tokener *tok;
        json_object *obj;
        size_t end;

        while (len > 0 && strchr(" \t\r\n", line[len - 1]) && line[len - 1])
                len--;
        if (len == 0 || len > (size_t)INT32_MAX || memchr(line, 0, len))
                return -EBADMSG;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        obj = json_tokener_parse_ex(tok, line, (int)len);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!obj)
                return -EBADMSG;
        if (end != len || !json_object_is_type(obj, json_type_object)) {
                json_object_put(obj);
                return -EBADMSG;
        }
        *ret_obj = obj;
        return 0;
}

/* -EPROTONOSUPPORT when "v" is present and is not PROTO_VERSION. */
static int check_version(json_object *obj)
{
        json_object *v;
        if (!json_object_object_get_ex(obj, "v", &v))
                return 0;
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) != PROTO_VERSION)
                return -EPROTONOSUPPORT;
        return 0;
}

int proto_parse_request(const char *line, size_t len, json_object **ret_req,
                        const char **ret_cmd, const char **ret_error)
{
        json_object *req, *cmd;
        int r;

        if (len > PROTO_REQUEST_MAX) {
                if (ret_error)
                        *ret_error = "request too large";
                return -EMSGSIZE;
        }
        r = parse_object(line, len, &req);
        if (r < 0) {
                if (ret_error)
                        *ret_error = r == -ENOMEM ? "out of memory" : "request is not a JSON object";
                return r;
        }
        if (check_version(req) < 0) {
                json_object_put(req);
                if (ret_error)
                        *ret_error = "unsupported protocol version (this agentmeterd speaks v1)";
                return -EPROTONOSUPPORT;
        }
        if (!json_object_object_get_ex(req, "cmd", &cmd) ||
            !json_object_is_type(cmd, json_type_string)) {
                json_object_put(req);
                if (ret_error)
                        *ret_error = "request has no \"cmd\" string";
                return -EBADMSG;
        }
        *ret_req = req;
        *ret_cmd = json_object_get_string(cmd);
        return 0;
}

static json_object *envelope(void)
{
        json_object *o = json_object_new_object();
        if (o)
                json_object_object_add(o, "v", json_object_new_int(PROTO_VERSION));
        return o;
}

json_object *proto_ok(json_object *result)
{
        json_object *o = envelope();
        if (!o) {
                json_object_put(result);
                return NULL;
        }
        json_object_object_add(o, "ok", json_object_new_boolean(1));
        json_object_object_add(o, "result", result ? result : json_object_new_object());
        return o;
}

json_object *proto_error(const char *code, const char *message)
{
        json_object *o = envelope(), *e = json_object_new_object();
        if (!o || !e) {
                json_object_put(o);
                json_object_put(e);
                return NULL;
        }
        json_object_object_add(e, "code", json_object_new_string(code));
        json_object_object_add(e, "message", json_object_new_string(message ? message : ""));
        json_object_object_add(o, "ok", json_object_new_boolean(0));
        json_object_object_add(o, "error", e);
        return o;
}

json_object *proto_event(const char *event, json_object *payload)
{
        json_object *o = envelope();
        if (!o) {
                json_object_put(payload);
                return NULL;
        }
        json_object_object_add(o, "event", json_object_new_string(event));
        json_object_object_add(o, event, payload);
        return o;
}

int proto_connect(const char *path, int *ret_fd)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t n = strlen(path);
        int fd;

        if (n == 0 || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int e = errno;
                if (e == EINTR)
                        continue;
                close(fd);
                return -e;
        }
        *ret_fd = fd;
        return 0;
}

/* Waits until fd is readable: 0, -ETIMEDOUT, -errno. */
static int wait_readable(int fd, int64_t deadline)
{
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int t = -1, n;
                if (deadline >= 0) {
                        int64_t left = deadline - timefmt_mono_ms();
                        if (left <= 0)
                                return -ETIMEDOUT;
                        t = left > INT32_MAX ? INT32_MAX : (int)left;
                }
                n = poll(&p, 1, t);
                if (n > 0)
                        return 0;
                if (n == 0)
                        return -ETIMEDOUT;
                if (errno != EINTR)
                        return -errno;
        }
}

/* Reads some bytes, at most up to and including the first newline: sockets
 * are peeked first so a following line stays in the socket for the next
 * call; other fds are read a byte at a time. */
static ssize_t read_some(int fd, char *buf, size_t cap, bool *is_sock)
{
        ssize_t n;
        if (*is_sock) {
                n = recv(fd, buf, cap, MSG_PEEK | MSG_DONTWAIT);
                if (n < 0 && errno == ENOTSOCK) {
                        *is_sock = false;
                } else {
                        char *nl;
                        if (n <= 0)
                                return n;
                        nl = memchr(buf, '\n', (size_t)n);
                        if (nl)
                                n = nl - buf + 1;
                        return recv(fd, buf, (size_t)n, MSG_DONTWAIT);
                }
        }
        return read(fd, buf, 1);
}

int proto_read_line(int fd, size_t max, int timeout_ms, char **ret_line, size_t *ret_len)
{
        int64_t deadline = timeout_ms < 0 ? -1 : timefmt_mono_ms() + timeout_ms;
        size_t len = 0, cap = 0;
        char *buf = NULL;
        bool is_sock = true;
        int r;

        for (;;) {
                ssize_t n;
                if (cap - len < 4096 + 1) {
                        /* room for the line, its newline and a NUL */
                        size_t ncap = cap ? cap * 2 : 4096 + 2;
                        char *nb;
                        if (ncap > max + 2)
                                ncap = max + 2;
                        if (ncap <= len + 1) {
                                r = -EMSGSIZE;
                                goto fail;
                        }
                        nb = realloc(buf, ncap);
                        if (!nb) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        buf = nb;
                        cap = ncap;
                }
                r = wait_readable(fd, deadline);
                if (r < 0)
                        goto fail;
                n = read_some(fd, buf + len, cap - len - 1, &is_sock);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        r = -errno;
                        goto fail;
                }
                if (n == 0) {
                        r = -ECONNRESET; /* EOF before a newline */
                        goto fail;
                }
                len += (size_t)n;
                if (buf[len - 1] == '\n') {
                        len--;
                        break;
                }
                if (len > max) {
                        r = -EMSGSIZE;
                        goto fail;
                }
        }
        if (len > max) {
                r = -EMSGSIZE;
                goto fail;
        }
        buf[len] = 0;
        *ret_line = buf;
        *ret_len = len;
        return 0;
fail:
        free(buf);
        return r;
}

static int write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w < 0 && errno == ENOTSOCK)
                        w = write(fd, p, n);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

int proto_call_line(int fd, json_object *req, int timeout_ms, char **ret_line, size_t *ret_len)
{
        char *buf = NULL;
        size_t len;
        int r;

        r = proto_encode(req, &buf, &len);
        if (r < 0)
                return r;
        r = write_all(fd, buf, len);
        free(buf);
        if (r < 0 && r != -EPIPE && r != -ECONNRESET)
                return r;
        /* a daemon that refuses us (another uid, too many clients) says why
         * and closes: its reply may be waiting even though our write failed */
        int rw = r;
        r = proto_read_line(fd, PROTO_RESPONSE_MAX, timeout_ms, ret_line, ret_len);
        if (r < 0)
                return rw < 0 ? rw : r;
        return 0;
}

int proto_parse_response(const char *line, size_t len, json_object **ret_resp)
{
        json_object *resp;
        int r = parse_object(line, len, &resp);

        if (r < 0)
                return r;
        r = check_version(resp);
        if (r < 0) {
                json_object_put(resp);
                return r;
        }
        *ret_resp = resp;
        return 0;
}

int proto_call(int fd, json_object *req, int timeout_ms, json_object **ret_resp)
{
        char *line = NULL;
        size_t len;
        int r = proto_call_line(fd, req, timeout_ms, &line, &len);

        if (r < 0)
                return r;
        r = proto_parse_response(line, len, ret_resp);
        free(line);
        return r;
}

#define OK_PREFIX "{\"v\":1,\"ok\":true,\"result\":"

int proto_ok_result_text(const char *line, size_t len, const char **ret_text, size_t *ret_len)
{
        size_t k = sizeof(OK_PREFIX) - 1;

        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' '))
                len--;
        if (len < k + 2 || memcmp(line, OK_PREFIX, k) != 0 || line[len - 1] != '}' ||
            (line[k] != '{' && line[k] != '['))
                return -EBADMSG;
        *ret_text = line + k;
        *ret_len = len - k - 1;
        return 0;
}

int proto_encode_ok(json_object *result, char **ret_buf, size_t *ret_len)
{
        /* only proto_raw gives an empty object text of its own */
        const char *text = result && json_object_is_type(result, json_type_object) &&
                                           json_object_object_length(result) == 0
                                   ? json_object_get_userdata(result)
                                   : NULL;
        size_t k = sizeof(OK_PREFIX) - 1, n;
        json_object *o;
        char *buf;
        int r;

        if (!text) {
                o = proto_ok(result);
                r = o ? proto_encode(o, ret_buf, ret_len) : -ENOMEM;
                json_object_put(o);
                return r;
        }
        n = strlen(text);
        buf = malloc(k + n + 3);
        if (buf) { /* as json-c prints proto_ok's envelope around it */
                memcpy(buf, OK_PREFIX, k);
                memcpy(buf + k, text, n);
                memcpy(buf + k + n, "}\n", 3);
        }
        json_object_put(result);
        if (!buf)
                return -ENOMEM;
        *ret_buf = buf;
        *ret_len = k + n + 2;
        return 0;
}

/* A value whose JSON text was written already prints as that text. */
static int raw_print(json_object *jso, struct printbuf *pb, int level, int flags)
{
        const char *text = json_object_get_userdata(jso);
        size_t n = strlen(text);

        (void)level;
        (void)flags;
        if (n > INT_MAX)
                return -1;
        return printbuf_memappend(pb, text, (int)n);
}

static void raw_free(json_object *jso, void *text)
{
        (void)jso;
        free(text);
}

json_object *proto_raw(char *text)
{
        json_object *o = json_object_new_object();

        if (!o) {
                free(text);
                return NULL;
        }
        json_object_set_serializer(o, raw_print, text, raw_free);
        return o;
}
