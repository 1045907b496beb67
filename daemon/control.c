/* Control socket: accept, SO_PEERCRED uid check, bounded line reads,
 * bounded output queues, idle timeouts. A bad request gets an error reply;
 * nothing a client sends can stop the daemon. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "proto.h"

struct client {
        struct control *c;
        int fd;
        sd_event_source *io, *idle;
        char *in;
        size_t in_len;
        char *out;
        size_t out_len, out_cap;
        bool tail;
        bool closing; /* close after the output is flushed */
        struct client *next;
};

struct control {
        sd_event *e;
        int fd;
        char *path;
        sd_event_source *listen;
        struct control_handlers h;
        struct client *clients;
        unsigned n_clients;
};

static void client_free(struct client *cl)
{
        struct control *c = cl->c;
        for (struct client **pp = &c->clients; *pp; pp = &(*pp)->next)
                if (*pp == cl) {
                        *pp = cl->next;
                        break;
                }
        c->n_clients--;
        sd_event_source_disable_unref(cl->io);
        sd_event_source_disable_unref(cl->idle);
        close(cl->fd);
        free(cl->in);
        free(cl->out);
        free(cl);
}

static void update_events(struct client *cl)
{
        uint32_t ev = cl->closing ? 0 : EPOLLIN;
        if (cl->out_len)
                ev |= EPOLLOUT;
        sd_event_source_set_io_events(cl->io, ev);
}

static int queue_out(struct client *cl, struct json_object *obj)
{
        char *buf;
        size_t len;
        int r = proto_encode(obj, &buf, &len);
        if (r < 0)
                return r;
        if (cl->out_len + len > CONTROL_OUTBUF_MAX) {
                free(buf);
                return -ENOBUFS;
        }
        if (cl->out_len + len > cl->out_cap) {
                size_t ncap = (cl->out_len + len) * 2;
                char *n = realloc(cl->out, ncap);
                if (!n) {
                        free(buf);
                        return -ENOMEM;
                }
                cl->out = n;
                cl->out_cap = ncap;
        }
        memcpy(cl->out + cl->out_len, buf, len);
        cl->out_len += len;
        free(buf);
        update_events(cl);
        return 0;
}

static void reply_error(struct client *cl, const char *code, const char *msg)
{
        json_object *o = proto_error(code, msg);
        (void)queue_out(cl, o);
        json_object_put(o);
}

static void reset_idle(struct client *cl)
{
        uint64_t now;
        if (!cl->idle)
                return;
        sd_event_now(cl->c->e, CLOCK_MONOTONIC, &now);
        sd_event_source_set_time(cl->idle, now + CONTROL_IDLE_USEC);
        sd_event_source_set_enabled(cl->idle, cl->tail ? SD_EVENT_OFF : SD_EVENT_ONESHOT);
}

static void handle_line(struct client *cl, const char *line, size_t len)
{
        struct control *c = cl->c;
        json_object *req = NULL, *result = NULL;
        const char *cmd = NULL, *err = NULL, *code = "bad-request";
        int r;

        r = proto_parse_request(line, len, &req, &cmd, &err);
        if (r < 0) {
                reply_error(cl, r == -EPROTONOSUPPORT ? "unsupported-version" : "bad-request",
                            err ? err : "malformed request");
                return;
        }
        if (strcmp(cmd, "tail") == 0) {
                json_object *res = json_object_new_object();
                json_object_object_add(res, "streaming", json_object_new_boolean(1));
                json_object *o = proto_ok(res);
                (void)queue_out(cl, o);
                json_object_put(o);
                cl->tail = true;
                reset_idle(cl);
                json_object_put(req);
                return;
        }
        r = c->h.handle(c->h.u, cmd, req, &result, &code, &err);
        if (r < 0) {
                reply_error(cl, code ? code : "internal", err ? err : strerror(-r));
        } else {
                json_object *o = proto_ok(result);
                if (queue_out(cl, o) < 0)
                        reply_error(cl, "too-large", "response too large");
                json_object_put(o);
        }
        json_object_put(req);
}

static int flush_out(struct client *cl)
{
        while (cl->out_len) {
                ssize_t n = send(cl->fd, cl->out, cl->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                memmove(cl->out, cl->out + n, cl->out_len - (size_t)n);
                cl->out_len -= (size_t)n;
        }
        update_events(cl);
        return 0;
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct client *cl = u;
        (void)s;

        if (revents & EPOLLOUT) {
                if (flush_out(cl) < 0) {
                        client_free(cl);
                        return 0;
                }
                if (cl->closing && cl->out_len == 0) {
                        client_free(cl);
                        return 0;
                }
        }
        if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) || cl->closing)
                return 0;
        char buf[8192];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                /* EOF: a half-sent request without newline is dropped */
                client_free(cl);
                return 0;
        }
        reset_idle(cl);
        if (cl->tail)
                return 0; /* a subscriber has nothing more to say */
        if (cl->in_len + (size_t)n > PROTO_REQUEST_MAX) {
                reply_error(cl, "too-large", "request exceeds 65536 bytes");
                cl->closing = true;
                update_events(cl);
                return 0;
        }
        char *nb = realloc(cl->in, cl->in_len + (size_t)n);
        if (!nb) {
                client_free(cl);
                return 0;
        }
        cl->in = nb;
        memcpy(cl->in + cl->in_len, buf, (size_t)n);
        cl->in_len += (size_t)n;
        char *nl;
        while (!cl->tail && (nl = memchr(cl->in, '\n', cl->in_len))) {
                size_t l = (size_t)(nl - cl->in);
                handle_line(cl, cl->in, l);
                memmove(cl->in, nl + 1, cl->in_len - l - 1);
                cl->in_len -= l + 1;
        }
        if (cl->out_len)
                (void)flush_out(cl);
        return 0;
}

static int on_client_idle(sd_event_source *s, uint64_t usec, void *u)
{
        struct client *cl = u;
        (void)s;
        (void)usec;
        client_free(cl);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct control *c = u;
        (void)s;
        (void)revents;
        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (cfd < 0)
                        return 0;
                struct ucred cred;
                socklen_t cl_len = sizeof(cred);
                if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &cl_len) < 0 ||
                    cred.uid != getuid()) {
                        const char *msg = "{\"v\":1,\"ok\":false,\"error\":{\"code\":\"permission-denied\","
                                          "\"message\":\"this agentmeterd serves its own user only\"}}\n";
                        (void)!send(cfd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
                        log_warning("refused a control client of uid %d", (int)cred.uid);
                        close(cfd);
                        continue;
                }
                if (c->n_clients >= CONTROL_MAX_CLIENTS) {
                        const char *msg = "{\"v\":1,\"ok\":false,\"error\":{\"code\":\"busy\","
                                          "\"message\":\"too many clients\"}}\n";
                        (void)!send(cfd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
                        close(cfd);
                        continue;
                }
                struct client *cl = calloc(1, sizeof(*cl));
                if (!cl) {
                        close(cfd);
                        continue;
                }
                cl->c = c;
                cl->fd = cfd;
                if (sd_event_add_io(c->e, &cl->io, cfd, EPOLLIN, on_client_io, cl) < 0 ||
                    sd_event_add_time_relative(c->e, &cl->idle, CLOCK_MONOTONIC, CONTROL_IDLE_USEC,
                                               0, on_client_idle, cl) < 0) {
                        sd_event_source_disable_unref(cl->io);
                        close(cfd);
                        free(cl);
                        continue;
                }
                cl->next = c->clients;
                c->clients = cl;
                c->n_clients++;
        }
}

/* Another daemon answering on path? */
static bool socket_alive(const char *path)
{
        int fd;
        if (proto_connect(path, &fd) < 0)
                return false;
        close(fd);
        return true;
}

int control_new(sd_event *e, const char *path, const struct control_handlers *h,
                struct control **ret)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct control *c;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        if (socket_alive(path))
                return -EADDRINUSE;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->e = e;
        c->h = *h;
        c->path = strdup(path);
        c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (!c->path || c->fd < 0) {
                r = c->fd < 0 ? -errno : -ENOMEM;
                goto fail;
        }
        strcpy(sa.sun_path, path);
        mode_t old = umask(0177);
        r = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0 || chmod(path, 0600) < 0 || listen(c->fd, 16) < 0) {
                r = -errno;
                goto fail;
        }
        r = sd_event_add_io(e, &c->listen, c->fd, EPOLLIN, on_accept, c);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        if (c->fd >= 0)
                close(c->fd);
        free(c->path);
        free(c);
        return r;
}

struct control *control_free(struct control *c)
{
        if (!c)
                return NULL;
        while (c->clients)
                client_free(c->clients);
        sd_event_source_disable_unref(c->listen);
        close(c->fd);
        unlink(c->path);
        free(c->path);
        free(c);
        return NULL;
}

void control_broadcast(struct control *c, struct json_object *event)
{
        struct client *cl = c->clients, *next;
        for (; cl; cl = next) {
                next = cl->next;
                if (!cl->tail)
                        continue;
                if (queue_out(cl, event) < 0) {
                        log_warning("dropping a tail client that does not keep up");
                        client_free(cl);
                        continue;
                }
                if (flush_out(cl) < 0)
                        client_free(cl);
        }
}

unsigned control_clients(const struct control *c)
{
        return c->n_clients;
}

unsigned control_subscribers(const struct control *c)
{
        unsigned n = 0;
        for (const struct client *cl = c->clients; cl; cl = cl->next)
                n += cl->tail;
        return n;
}
