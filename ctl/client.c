/* Control-socket client: request/response via common/proto, and the `tail`
 * stream with its own line reader that also watches for SIGINT/SIGTERM. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "cleanup.h"
#include "jfield.h"
#include "proto.h"
#include "timefmt.h"

#define TAIL_LINE_MAX (4u * 1024u * 1024u)


bool client_no_daemon(int r)
{
        return r == -ENOENT || r == -ECONNREFUSED;
}

__attribute__((format(printf, 2, 3)))
static int untrusted(char **ret_error, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        if (ret_error && vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return -EPERM;
}

/* Milliseconds left until deadline (-1: none, returned as -1). */
static int left_ms(int64_t deadline)
{
        if (deadline < 0)
                return -1;
        int64_t left = deadline - timefmt_mono_ms();
        return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Bounds the blocking socket calls that follow (connect, send) to what is
 * left until deadline: on a Unix socket connect(2) waits while the
 * listener's queue is full (a stalled daemon) and send(2) while the peer
 * reads nothing; both give up with EAGAIN after SO_SNDTIMEO. */
static int send_timeout(int fd, int64_t deadline)
{
        int ms = left_ms(deadline);
        struct timeval tv = {0};

        if (ms == 0)
                return -ETIMEDOUT;
        if (ms > 0) /* 0 would mean forever */
                tv = (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 + 1};
        return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ? -errno : 0;
}

/* proto_connect within deadline (-1: none): -ETIMEDOUT when the daemon
 * does not take the connection in time, else proto_connect's errors. */
static int connect_within(const char *path, int64_t deadline, int *ret_fd)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t n = strlen(path);
        int fd, r;

        if (n == 0 || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        for (;;) {
                r = send_timeout(fd, deadline);
                if (r == 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                        r = -errno;
                if (r != -EINTR)
                        break;
        }
        if (r == -EAGAIN || r == -EINPROGRESS)
                r = -ETIMEDOUT;
        if (r < 0) {
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* Connects only to a daemon of our own user, as the daemon only serves its
 * own (without XDG_RUNTIME_DIR the socket is under /tmp, where anyone could
 * be first): the socket's directory ours and writable by nobody else, the
 * socket ours, and the peer (SO_PEERCRED) of our uid. -EPERM and
 * *ret_error when not; the connect errors of connect_within otherwise. */
static int trusted_connect(const char *path, int64_t deadline, int *ret_fd, char **ret_error)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct stat st;
        uid_t me = getuid();
        int fd = -1, r;

        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else if ((size_t)(slash - path) < sizeof(dir))
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        else
                return -ENAMETOOLONG;
        if (lstat(path, &st) < 0)
                return -errno; /* ENOENT: no daemon */
        if (!S_ISSOCK(st.st_mode) || st.st_uid != me)
                return untrusted(ret_error, "%s is not a socket of yours (owner uid %u, you are "
                                 "uid %u); refusing to talk to it", path, (unsigned)st.st_uid,
                                 (unsigned)me);
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != me || (st.st_mode & 0022))
                return untrusted(ret_error, "the socket's directory %s is not a private directory "
                                 "of yours (owner uid %u, mode %04o); refusing to talk to a "
                                 "socket there", dir, (unsigned)st.st_uid,
                                 (unsigned)(st.st_mode & 07777));
        r = connect_within(path, deadline, &fd);
        if (r < 0)
                return r;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != me) {
                r = untrusted(ret_error, "the server on %s runs as uid %u, not as you (uid %u); "
                              "refusing to trust its answers", path, (unsigned)cred.uid,
                              (unsigned)me);
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

static struct json_object *build_request(const char *cmd, struct json_object *args)
{
        struct json_object *req = json_object_new_object();

        if (!req)
                return NULL;
        json_object_object_add(req, "v", json_object_new_int(PROTO_VERSION));
        json_object_object_add(req, "cmd", json_object_new_string(cmd));
        if (args) {
                json_object_object_foreach(args, k, v)
                        json_object_object_add(req, k, v ? json_object_get(v) : NULL);
        }
        return req;
}

/* Checks a response: 0 and the result (new reference), or -EREMOTEIO with
 * the daemon's error, or -EBADMSG. */
static int take_result(struct json_object *resp, struct json_object **ret_result, char **ret_error)
{
        struct json_object *ok = jfield(resp, "ok");

        if (!ok || !json_object_is_type(ok, json_type_boolean))
                return -EBADMSG;
        if (!json_object_get_boolean(ok)) {
                struct json_object *err = jfield(resp, "error");
                const char *code = jstr(err, "code"), *msg = jstr(err, "message");
                if (ret_error && asprintf(ret_error, "%s: %s", code ? code : "error",
                                          msg ? msg : "(no message)") < 0)
                        *ret_error = NULL;
                return -EREMOTEIO;
        }
        struct json_object *res = jfield(resp, "result");
        *ret_result = res ? json_object_get(res) : json_object_new_object();
        return 0;
}

/* send(2) of all of buf before deadline: -ETIMEDOUT past it. */
static int send_within(int fd, const char *buf, size_t len, int64_t deadline)
{
        while (len > 0) {
                int r = send_timeout(fd, deadline);
                if (r < 0)
                        return r;
                ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

int client_call_line(const char *socket_path, const char *cmd, struct json_object *args, int timeout_ms,
                     char **ret_line, size_t *ret_len, char **ret_error)
{
        _cleanup_close_ int fd = -1;
        _cleanup_json_ struct json_object *req = NULL;
        int64_t deadline = timeout_ms < 0 ? -1 : timefmt_mono_ms() + timeout_ms;
        char *buf = NULL;
        size_t len;
        int r, rw;

        /* every step within the one bound: the connection, the request, the answer */
        r = trusted_connect(socket_path, deadline, &fd, ret_error);
        if (r < 0)
                return r;
        req = build_request(cmd, args);
        if (!req)
                return -ENOMEM;
        r = proto_encode(req, &buf, &len);
        if (r < 0)
                return r;
        rw = send_within(fd, buf, len, deadline);
        free(buf);
        if (rw < 0 && rw != -EPIPE && rw != -ECONNRESET)
                return rw;
        /* a daemon that refuses us (another uid, too many clients) says why
         * and closes: its reply may be waiting even though our send failed */
        r = proto_read_line(fd, PROTO_RESPONSE_MAX, left_ms(deadline), ret_line, ret_len);
        if (r < 0)
                return rw < 0 ? rw : r;
        return 0;
}

int client_take(const char *line, size_t len, struct json_object **ret_result, char **ret_error)
{
        _cleanup_json_ struct json_object *resp = NULL;
        int r = proto_parse_response(line, len, &resp);

        if (r < 0)
                return r;
        return take_result(resp, ret_result, ret_error);
}

int client_call(const char *socket_path, const char *cmd, struct json_object *args,
                int timeout_ms, struct json_object **ret_result, char **ret_error)
{
        char *line = NULL;
        size_t len;
        int r = client_call_line(socket_path, cmd, args, timeout_ms, &line, &len, ret_error);

        if (r < 0)
                return r;
        r = client_take(line, len, ret_result, ret_error);
        free(line);
        return r;
}

static int write_all(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, buf, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        struct pollfd p = { .fd = fd, .events = POLLOUT };
                        if (poll(&p, 1, 5000) <= 0)
                                return -ETIMEDOUT;
                        continue;
                }
                if (n < 0)
                        return -errno;
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

struct stream {
        char *buf;
        size_t len, cap;
};

/* Reads more bytes into s. 1 = got data, 0 = EOF, 2 = a signal, -errno. */
static int fill(int fd, int sigfd, struct stream *s)
{
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };

        if (s->len == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64 * 1024;
                if (cap > TAIL_LINE_MAX + 1)
                        return -E2BIG;
                char *b = realloc(s->buf, cap);
                if (!b)
                        return -ENOMEM;
                s->buf = b;
                s->cap = cap;
        }
        for (;;) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        /* consume it, so it is not delivered when unblocked */
                        while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                                ;
                        return 2;
                }
                ssize_t n = read(fd, s->buf + s->len, s->cap - s->len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return errno == ECONNRESET ? 0 : -errno;
                if (n == 0)
                        return 0;
                s->len += (size_t)n;
                return 1;
        }
}

/* Takes one complete line out of s: 1 and the parsed object, 0 when no
 * complete line is buffered, -EBADMSG. */
static int next_line(struct stream *s, struct json_object **ret_obj)
{
        char *nl = s->len > 0 ? memchr(s->buf, '\n', s->len) : NULL;

        if (!nl)
                return 0;
        *nl = 0;
        *ret_obj = json_tokener_parse(s->buf);
        size_t used = (size_t)(nl - s->buf) + 1;
        memmove(s->buf, s->buf + used, s->len - used);
        s->len -= used;
        return *ret_obj ? 1 : -EBADMSG;
}

static int tail_loop(int fd, int sigfd, int (*on_event)(struct json_object *, void *), void *u,
                     char **ret_error)
{
        struct stream s = { 0 };
        bool answered = false;
        int r;

        for (;;) {
                struct json_object *obj = NULL;

                r = next_line(&s, &obj);
                if (r == 0) {
                        r = fill(fd, sigfd, &s);
                        if (r == 1)
                                continue;
                        if (r == 0 && !answered)
                                r = -ECONNRESET; /* closed before answering */
                        else if (r >= 0)
                                r = 0; /* daemon closed, or a signal: a clean end */
                        break;
                }
                if (r < 0)
                        break;
                if (!answered) {
                        struct json_object *res = NULL;
                        r = take_result(obj, &res, ret_error);
                        json_object_put(obj);
                        json_object_put(res);
                        if (r < 0)
                                break;
                        answered = true;
                        continue;
                }
                r = on_event(obj, u);
                json_object_put(obj);
                if (r < 0)
                        break;
        }
        free(s.buf);
        return r;
}

int client_tail(const char *socket_path, int (*on_event)(struct json_object *ev, void *u),
                void *u, char **ret_error)
{
        _cleanup_close_ int fd = -1, sigfd = -1;
        _cleanup_json_ struct json_object *req = NULL;
        char *line = NULL;
        size_t len = 0;
        sigset_t mask, old;
        int r;

        r = trusted_connect(socket_path, -1, &fd, ret_error);
        if (r < 0)
                return r;
        req = build_request("tail", NULL);
        if (!req)
                return -ENOMEM;
        r = proto_encode(req, &line, &len);
        if (r < 0)
                return r;
        r = write_all(fd, line, len);
        free(line);
        if (r < 0)
                return r;

        /* Signals become readable events, so the stream ends cleanly. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, &old) < 0)
                return -errno;
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0)
                r = -errno;
        else
                r = tail_loop(fd, sigfd, on_event, u, ret_error);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}
