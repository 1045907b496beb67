/* Control socket: accept, SO_PEERCRED uid check, one request at a time per
 * client with bounded input and output, a deadline per request. A bad
 * request gets an error reply; nothing a client sends can stop the daemon
 * or hold its loop. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
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
#include "testhook.h"

struct client {
        struct control *c;
        int fd;
        sd_event_source *io, *deadline;
        char *in;
        size_t in_len;
        char *out;
        size_t out_len, out_cap;
        bool tail;
        bool answered; /* a reply was queued since the deadline was last set */
        bool eof;      /* the client shut down its side: answer what it sent, then close */
        bool closing;  /* close after the output is flushed */
        bool streaming; /* stream holds an answer still being made */
        size_t stream_items;
        struct control_stream stream;
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
        uint64_t request_usec; /* CONTROL_REQUEST_USEC, or the test hook's */
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
        sd_event_source_disable_unref(cl->deadline);
        if (cl->streaming && cl->stream.free)
                cl->stream.free(cl->stream.u);
        close(cl->fd);
        free(cl->in);
        free(cl->out);
        free(cl);
}

static bool line_pending(const struct client *cl)
{
        return !cl->tail && cl->in_len && memchr(cl->in, '\n', cl->in_len);
}

/* Busy with a request: one waiting, or an answer still being made. */
static bool busy(const struct client *cl)
{
        return cl->streaming || line_pending(cl);
}

/* One request at a time: no reading while an answer is being sent or a
 * complete request waits (so what a client can make us buffer is one
 * request and one answer); a waiting request asks for EPOLLOUT, which
 * brings us back on the next loop iteration (or when the client reads, if
 * its socket is full) to answer it. */
static void update_events(struct client *cl)
{
        uint32_t ev = 0;
        bool pending = busy(cl);

        if (!cl->closing && !cl->eof && !pending && (cl->tail || cl->out_len == 0))
                ev |= EPOLLIN;
        if (cl->out_len || (pending && !cl->closing))
                ev |= EPOLLOUT;
        sd_event_source_set_io_events(cl->io, ev);
}

/* A request must arrive whole and its answer be taken within
 * CONTROL_REQUEST_USEC, counted from the connection or the previous
 * answer, however the client trickles its bytes. Tail clients have none. */
static void set_deadline(struct client *cl)
{
        uint64_t now;

        cl->answered = false;
        if (cl->tail) {
                sd_event_source_set_enabled(cl->deadline, SD_EVENT_OFF);
                return;
        }
        sd_event_now(cl->c->e, CLOCK_MONOTONIC, &now);
        sd_event_source_set_time(cl->deadline, now + cl->c->request_usec);
        sd_event_source_set_enabled(cl->deadline, SD_EVENT_ONESHOT);
}

static int queue_raw(struct client *cl, const char *buf, size_t len)
{
        size_t cap = cl->tail ? CONTROL_OUTBUF_MAX : CONTROL_RESPONSE_MAX;

        if (cl->out_len + len > cap)
                return -ENOBUFS;
        if (cl->out_len + len > cl->out_cap) {
                size_t ncap = (cl->out_len + len) * 2;
                char *n = realloc(cl->out, ncap);
                if (!n)
                        return -ENOMEM;
                cl->out = n;
                cl->out_cap = ncap;
        }
        memcpy(cl->out + cl->out_len, buf, len);
        cl->out_len += len;
        update_events(cl);
        return 0;
}

/* queue_raw of a malloc'd buffer it takes: with nothing queued, the
 * buffer itself becomes the output (a large answer is not copied again). */
static int queue_taken(struct client *cl, char *buf, size_t len)
{
        int r;

        if (cl->out_len == 0 && len <= (cl->tail ? CONTROL_OUTBUF_MAX : CONTROL_RESPONSE_MAX)) {
                free(cl->out);
                cl->out = buf;
                cl->out_len = len;
                cl->out_cap = len;
                update_events(cl);
                return 0;
        }
        r = queue_raw(cl, buf, len);
        free(buf);
        return r;
}

static int queue_out(struct client *cl, struct json_object *obj)
{
        char *buf;
        size_t len;
        int r = proto_encode(obj, &buf, &len);
        if (r < 0)
                return r;
        r = queue_raw(cl, buf, len);
        free(buf);
        return r;
}

/* Makes the next chunk of a streamed answer (up to CONTROL_STREAM_CHUNK
 * ahead of what the client has read): 0, or negative errno to drop it. */
static int stream_step(struct client *cl)
{
        while (cl->streaming && cl->out_len < CONTROL_STREAM_CHUNK) {
                json_object *item = NULL;
                int r = cl->stream.next(cl->stream.u, &item);
                if (r < 0)
                        return r;
                if (r == 0) {
                        cl->streaming = false;
                        if (cl->stream.free)
                                cl->stream.free(cl->stream.u);
                        return queue_raw(cl, "]}}\n", 4);
                }
                const char *js = json_object_to_json_string_ext(
                        item, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                r = js ? 0 : -ENOMEM;
                if (r == 0 && cl->stream_items++ > 0)
                        r = queue_raw(cl, ",", 1);
                if (r == 0)
                        r = queue_raw(cl, js, strlen(js));
                json_object_put(item);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void reply_error(struct client *cl, const char *code, const char *msg)
{
        json_object *o = proto_error(code, msg);
        (void)queue_out(cl, o);
        json_object_put(o);
}

static void handle_line(struct client *cl, const char *line, size_t len)
{
        struct control *c = cl->c;
        json_object *req = NULL, *result = NULL;
        const char *cmd = NULL, *err = NULL, *code = "bad-request";
        int r;

        cl->answered = true;
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
                set_deadline(cl);
                json_object_put(req);
                return;
        }
        if (c->h.stream) {
                struct control_stream st = {0};
                r = c->h.stream(c->h.u, cmd, req, &st);
                if (r > 0) {
                        char head[128];
                        int n = snprintf(head, sizeof(head), "{\"v\":%d,\"ok\":true,\"result\":{\"%s\":[",
                                         PROTO_VERSION, st.key);
                        cl->stream = st;
                        cl->streaming = true;
                        cl->stream_items = 0;
                        (void)queue_raw(cl, head, (size_t)n);
                        json_object_put(req);
                        return;
                }
                if (r < 0) {
                        reply_error(cl, "internal", strerror(-r));
                        json_object_put(req);
                        return;
                }
        }
        r = c->h.handle(c->h.u, cmd, req, &result, &code, &err);
        if (r < 0) {
                reply_error(cl, code ? code : "internal", err ? err : strerror(-r));
        } else {
                char *answer;
                size_t answer_len;
                r = proto_encode_ok(result, &answer, &answer_len);
                if (r == 0)
                        r = queue_taken(cl, answer, answer_len);
                if (r < 0)
                        reply_error(cl, "too-large", "response too large");
        }
        json_object_put(req);
}

static int flush_out(struct client *cl)
{
        size_t sent = 0;

        while (sent < cl->out_len) {
                ssize_t n = send(cl->fd, cl->out + sent, cl->out_len - sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        return -errno;
                }
                sent += (size_t)n;
        }
        memmove(cl->out, cl->out + sent, cl->out_len - sent);
        cl->out_len -= sent;
        update_events(cl);
        return 0;
}

/* Reads what the client sent: 0, or -1 when the client is to be freed. */
static int read_in(struct client *cl)
{
        char buf[8192];
        ssize_t n = recv(cl->fd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (n == 0) {
                /* the client shut down its side: what it sent whole is still
                 * answered in full; a half-sent request without newline is dropped */
                cl->eof = true;
                return 0;
        }
        if (cl->tail)
                return 0; /* a subscriber has nothing more to say */
        char *nb = realloc(cl->in, cl->in_len + (size_t)n);
        if (!nb)
                return -1;
        cl->in = nb;
        memcpy(cl->in + cl->in_len, buf, (size_t)n);
        cl->in_len += (size_t)n;
        char *nl = memchr(cl->in, '\n', cl->in_len);
        if ((nl ? (size_t)(nl - cl->in) : cl->in_len) > PROTO_REQUEST_MAX) {
                reply_error(cl, "too-large", "request exceeds 65536 bytes");
                cl->closing = true;
                cl->in_len = 0;
        }
        return 0;
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct client *cl = u;
        (void)s;
        (void)fd;

        if ((revents & EPOLLOUT) && cl->out_len && flush_out(cl) < 0) {
                client_free(cl);
                return 0;
        }
        if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !cl->closing && !cl->eof &&
            (cl->tail || (cl->out_len == 0 && !busy(cl)))) {
                if (read_in(cl) < 0) {
                        client_free(cl);
                        return 0;
                }
        }
        /* a streamed answer: the next chunk once the client took the last */
        if (cl->streaming && !cl->closing) {
                bool drained = cl->out_len == 0 && cl->stream_items > 0;
                if (stream_step(cl) < 0 || flush_out(cl) < 0) {
                        client_free(cl);
                        return 0;
                }
                if (drained && cl->streaming) {
                        set_deadline(cl); /* it keeps reading: a fresh deadline */
                        cl->answered = true;
                }
        }
        /* at most one request per wakeup, and only with nothing left to send */
        if (!cl->closing && !cl->streaming && cl->out_len == 0 && line_pending(cl)) {
                char *nl = memchr(cl->in, '\n', cl->in_len);
                size_t l = (size_t)(nl - cl->in);
                handle_line(cl, cl->in, l);
                memmove(cl->in, nl + 1, cl->in_len - l - 1);
                cl->in_len -= l + 1;
                if (stream_step(cl) < 0 || flush_out(cl) < 0) {
                        client_free(cl);
                        return 0;
                }
        }
        if (cl->out_len == 0 && (cl->closing || (cl->eof && !busy(cl)) ||
                                 ((revents & (EPOLLHUP | EPOLLERR)) && !busy(cl)))) {
                client_free(cl);
                return 0;
        }
        if (cl->out_len == 0 && cl->answered && !cl->streaming)
                set_deadline(cl); /* answered in full: a fresh deadline for the next one */
        update_events(cl);
        return 0;
}

static int on_client_deadline(sd_event_source *s, uint64_t usec, void *u)
{
        struct client *cl = u;
        (void)s;
        (void)usec;
        client_free(cl);
        return 0;
}

/* A client that owes nothing and is owed nothing (no request begun, no
 * answer unsent, not a tail subscriber) whose peer has closed: recv peeks
 * at the end of its stream. A half-closed one can send no more requests
 * either. */
static bool client_gone(const struct client *cl)
{
        char b;

        if (cl->tail || cl->streaming || cl->in_len || cl->out_len)
                return false;
        ssize_t n = recv(cl->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* The loop sees a client's hang-up when its turn comes, and a new
 * connection can come first (a busy daemon: 50 clients of 4 reports each
 * were refused 11 times): at the limit, the clients already gone give up
 * their slots before a new one is refused. */
static void drop_gone_clients(struct control *c)
{
        for (struct client *cl = c->clients, *next; cl; cl = next) {
                next = cl->next;
                if (client_gone(cl))
                        client_free(cl);
        }
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
                if (c->n_clients >= CONTROL_MAX_CLIENTS)
                        drop_gone_clients(c);
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
                    sd_event_add_time_relative(c->e, &cl->deadline, CLOCK_MONOTONIC,
                                               c->request_usec, 0, on_client_deadline, cl) < 0) {
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

/* Test hook: AGENTMETER_TEST_REQUEST_MS=<ms> (1..600000) replaces the
 * request deadline, so tests of slow clients need not wait 10 s. */
static uint64_t request_usec(void)
{
        unsigned long long ms = test_hook_number("AGENTMETER_TEST_REQUEST_MS", 1, 600000, 0);
        return ms ? ms * 1000ULL : CONTROL_REQUEST_USEC;
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
        c->request_usec = request_usec();
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
        if (r < 0 || chmod(path, 0600) < 0 || listen(c->fd, CONTROL_LISTEN_BACKLOG) < 0) {
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

unsigned control_subscribers(const struct control *c)
{
        unsigned n = 0;
        for (const struct client *cl = c->clients; cl; cl = cl->next)
                n += cl->tail;
        return n;
}
