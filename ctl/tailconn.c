/* Non-blocking tail stream reader over the control socket. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfield.h"
#include "proto.h"
#include "tailconn.h"

#define LINE_MAX_BYTES (4u << 20)

struct tailconn {
        int fd;
        char *buf;
        size_t len, cap;
};

struct tailconn *tailconn_free(struct tailconn *t)
{
        if (!t)
                return NULL;
        if (t->fd >= 0)
                close(t->fd);
        free(t->buf);
        free(t);
        return NULL;
}

int tailconn_fd(const struct tailconn *t)
{
        return t->fd;
}

int tailconn_open(const char *socket_path, int timeout_ms, struct tailconn **ret)
{
        struct tailconn *t = calloc(1, sizeof(*t));
        json_object *req = NULL, *resp = NULL;
        int r;

        if (!t)
                return -ENOMEM;
        t->fd = -1;
        r = proto_connect(socket_path, &t->fd);
        if (r >= 0) {
                req = json_object_new_object();
                json_object_object_add(req, "v", json_object_new_int(PROTO_VERSION));
                json_object_object_add(req, "cmd", json_object_new_string("tail"));
                r = proto_call(t->fd, req, timeout_ms, &resp);
        }
        if (r >= 0) {
                json_object *okv = jfield(resp, "ok");
                if (!okv || !json_object_is_type(okv, json_type_boolean))
                        r = -EBADMSG;
                else if (!json_object_get_boolean(okv))
                        r = -EREMOTEIO;
        }
        json_object_put(req);
        json_object_put(resp);
        if (r >= 0 && fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK) < 0)
                r = -errno;
        if (r < 0) {
                tailconn_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

int tailconn_read(struct tailconn *t, int (*on_event)(json_object *ev, void *u), void *u)
{
        for (;;) {
                if (t->len == t->cap) {
                        size_t cap = t->cap ? t->cap * 2 : 64 * 1024;
                        if (cap > LINE_MAX_BYTES)
                                return -E2BIG;
                        char *b = realloc(t->buf, cap);
                        if (!b)
                                return -ENOMEM;
                        t->buf = b;
                        t->cap = cap;
                }
                ssize_t n = read(t->fd, t->buf + t->len, t->cap - t->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0)
                        return errno == ECONNRESET ? -ECONNRESET : -errno;
                if (n == 0)
                        return -ECONNRESET;
                t->len += (size_t)n;
                char *nl;
                while ((nl = memchr(t->buf, '\n', t->len))) {
                        size_t used = (size_t)(nl - t->buf) + 1;
                        *nl = 0;
                        json_object *ev = json_tokener_parse(t->buf);
                        memmove(t->buf, t->buf + used, t->len - used);
                        t->len -= used;
                        if (!ev)
                                return -EBADMSG;
                        int r = on_event(ev, u);
                        json_object_put(ev);
                        if (r < 0)
                                return r;
                }
        }
}
