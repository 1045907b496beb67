/* Unit tests for the control-socket protocol: framing, request parsing,
 * versions, and bounded, timed line reads over real sockets. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "tap.h"

static void wr(int fd, const char *s)
{
        if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
                printf("# short write\n");
}

static int64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_encode_parse(void)
{
        json_object *o = json_object_new_object(), *req = NULL;
        const char *cmd = NULL, *err = NULL;
        char *buf = NULL;
        size_t len = 0;
        int r;

        json_object_object_add(o, "v", json_object_new_int(1));
        json_object_object_add(o, "cmd", json_object_new_string("status"));
        json_object_object_add(o, "path", json_object_new_string("/a/b\nc"));
        r = proto_encode(o, &buf, &len);
        is_int(r, 0, "encode");
        ok(len > 0 && buf[len - 1] == '\n' && memchr(buf, '\n', len - 1) == NULL,
           "one line, newline-terminated, newline in a string escaped");
        ok(strstr(buf, "\"/a/b\\nc\"") != NULL, "slashes not escaped, newline escaped");
        r = proto_parse_request(buf, len, &req, &cmd, &err);
        ok(r == 0 && cmd && strcmp(cmd, "status") == 0, "parse back: cmd status");
        json_object *p = NULL;
        json_object_object_get_ex(req, "path", &p);
        is_str(json_object_get_string(p), "/a/b\nc", "args survive");
        json_object_put(req);
        json_object_put(o);
        free(buf);

        const char *noversion = "{\"cmd\":\"version\"}";
        r = proto_parse_request(noversion, strlen(noversion), &req, &cmd, &err);
        ok(r == 0 && strcmp(cmd, "version") == 0, "no \"v\" is accepted");
        json_object_put(req);

        req = NULL;
        r = proto_parse_request("{\"cmd\":", 7, &req, &cmd, &err);
        ok(r == -EBADMSG && req == NULL, "truncated JSON: -EBADMSG");
        ok(err && strlen(err) > 0, "with a message: %s", err ? err : "");
        is_int(proto_parse_request("[1,2]", 5, &req, &cmd, &err), -EBADMSG, "array: -EBADMSG");
        is_int(proto_parse_request("{} {}", 5, &req, &cmd, &err), -EBADMSG, "two objects: -EBADMSG");
        is_int(proto_parse_request("{}x", 3, &req, &cmd, &err), -EBADMSG, "trailing garbage");
        is_int(proto_parse_request("", 0, &req, &cmd, &err), -EBADMSG, "empty line");
        is_int(proto_parse_request("{\"v\":1}", 7, &req, &cmd, &err), -EBADMSG, "no cmd");
        is_int(proto_parse_request("{\"v\":1,\"cmd\":3}", 15, &req, &cmd, &err), -EBADMSG,
               "cmd not a string");
        r = proto_parse_request("{\"v\":2,\"cmd\":\"status\"}", 22, &req, &cmd, &err);
        is_int(r, -EPROTONOSUPPORT, "v 2: -EPROTONOSUPPORT");
        ok(err && strstr(err, "version"), "version message: %s", err ? err : "");
        is_int(proto_parse_request("{\"v\":\"1\",\"cmd\":\"s\"}", 19, &req, &cmd, &err),
               -EPROTONOSUPPORT, "v as a string: unsupported");
        const char withnul[] = "{\"cmd\":\"s\"}\0{}";
        is_int(proto_parse_request(withnul, sizeof(withnul) - 1, &req, &cmd, &err), -EBADMSG,
               "embedded NUL rejected");
        r = proto_parse_request("  {\"cmd\":\"s\"} \r\n", 16, &req, &cmd, &err);
        ok(r == 0, "surrounding blanks and CRLF accepted");
        json_object_put(req);
}

static void test_builders(void)
{
        json_object *o = proto_ok(json_object_new_int(5)), *v;
        ok(json_object_object_get_ex(o, "v", &v) && json_object_get_int(v) == PROTO_VERSION,
           "ok: v");
        ok(json_object_object_get_ex(o, "ok", &v) && json_object_get_boolean(v), "ok: true");
        ok(json_object_object_get_ex(o, "result", &v) && json_object_get_int(v) == 5, "ok: result");
        json_object_put(o);
        o = proto_error("bad-request", "nope");
        is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
               "{\"v\":1,\"ok\":false,\"error\":{\"code\":\"bad-request\",\"message\":\"nope\"}}",
               "error shape");
        json_object_put(o);
        o = proto_event("row", json_object_new_object());
        is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
               "{\"v\":1,\"event\":\"row\",\"row\":{}}", "event shape");
        json_object_put(o);
}

static void test_read_line(void)
{
        int sv[2];
        char *line = NULL;
        size_t len = 0;
        int r;

        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
        /* two lines in one write: the first read must not eat the second */
        wr(sv[1], "{\"a\":1}\n{\"b\":2}\npart");
        r = proto_read_line(sv[0], 1024, 1000, &line, &len);
        ok(r == 0 && len == 7 && strcmp(line, "{\"a\":1}") == 0, "first line");
        free(line);
        r = proto_read_line(sv[0], 1024, 1000, &line, &len);
        ok(r == 0 && len == 7 && strcmp(line, "{\"b\":2}") == 0, "second line kept in the socket");
        free(line);

        /* a partial line then silence: timeout */
        int64_t t0 = mono_ms();
        line = NULL;
        r = proto_read_line(sv[0], 1024, 150, &line, &len);
        int64_t dt = mono_ms() - t0;
        ok(r == -ETIMEDOUT && line == NULL, "partial line, no newline: -ETIMEDOUT");
        ok(dt >= 140 && dt < 2000, "timeout honoured (%lld ms)", (long long)dt);

        /* exactly max bytes is fine, max+1 is not */
        char big[70];
        memset(big, 'x', sizeof(big));
        big[64] = '\n';
        r = (int)write(sv[1], big, 65);
        r = proto_read_line(sv[0], 64, 1000, &line, &len);
        ok(r == 0 && len == 64, "line of exactly max bytes accepted");
        free(line);
        big[64] = 'x';
        big[65] = '\n';
        r = (int)write(sv[1], big, 66);
        line = NULL;
        r = proto_read_line(sv[0], 64, 1000, &line, &len);
        ok(r == -EMSGSIZE && line == NULL, "line of max+1 bytes: -EMSGSIZE");

        /* a long line with no newline at all is refused without waiting */
        close(sv[0]);
        close(sv[1]);
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
        char huge[10000];
        memset(huge, 'y', sizeof(huge));
        r = (int)write(sv[1], huge, sizeof(huge));
        t0 = mono_ms();
        r = proto_read_line(sv[0], 4096, 5000, &line, &len);
        ok(r == -EMSGSIZE && mono_ms() - t0 < 2000, "oversize without newline: -EMSGSIZE at once");
        close(sv[0]);
        close(sv[1]);

        /* EOF before newline */
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
        wr(sv[1], "{\"x\"");
        close(sv[1]);
        r = proto_read_line(sv[0], 1024, 1000, &line, &len);
        is_int(r, -ECONNRESET, "EOF before newline: -ECONNRESET");
        close(sv[0]);

        /* a pipe (not a socket) works too */
        int p[2];
        if (pipe(p) == 0) {
                wr(p[1], "abc\ndef\n");
                r = proto_read_line(p[0], 100, 1000, &line, &len);
                ok(r == 0 && strcmp(line, "abc") == 0, "pipe: first line");
                free(line);
                r = proto_read_line(p[0], 100, 1000, &line, &len);
                ok(r == 0 && strcmp(line, "def") == 0, "pipe: second line");
                free(line);
                close(p[0]);
                close(p[1]);
        }
}

static void test_call_connect(void)
{
        int sv[2], r;
        json_object *req = json_object_new_object(), *resp = NULL, *v;
        char *line = NULL;
        size_t len;

        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
        wr(sv[1], "{\"v\":1,\"ok\":true,\"result\":{\"n\":3}}\n");
        json_object_object_add(req, "cmd", json_object_new_string("status"));
        r = proto_call(sv[0], req, 1000, &resp);
        ok(r == 0 && json_object_object_get_ex(resp, "result", &v), "call: response parsed");
        json_object_put(resp);
        r = proto_read_line(sv[1], PROTO_REQUEST_MAX, 1000, &line, &len);
        is_str(r == 0 ? line : NULL, "{\"cmd\":\"status\"}", "call: request on the wire");
        free(line);
        wr(sv[1], "{\"v\":9,\"ok\":true}\n");
        resp = NULL;
        r = proto_call(sv[0], req, 1000, &resp);
        ok(r == -EPROTONOSUPPORT && resp == NULL, "call: response of another version refused");
        json_object_put(req);
        close(sv[0]);
        close(sv[1]);

        /* real socket file */
        char dir[300], path[400];
        int fd = -1, lfd;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        snprintf(path, sizeof(path), "%s/s.sock", dir);
        is_int(proto_connect(path, &fd), -ENOENT, "connect: no socket file: -ENOENT");
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (strlen(path) >= sizeof(sa.sun_path))
                return;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
        close(lfd); /* bound, never listening: a stale socket */
        is_int(proto_connect(path, &fd), -ECONNREFUSED, "connect: stale socket: -ECONNREFUSED");
        unlink(path);
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
        listen(lfd, 1);
        r = proto_connect(path, &fd);
        ok(r == 0 && fd >= 0, "connect to a listening socket");
        int flags = fcntl(fd, F_GETFD);
        ok(flags >= 0 && (flags & FD_CLOEXEC), "client socket is close-on-exec");
        close(fd);
        close(lfd);
        unlink(path);
        rmdir(dir);
        char longp[200];
        memset(longp, 'a', sizeof(longp) - 1);
        longp[sizeof(longp) - 1] = 0;
        is_int(proto_connect(longp, &fd), -ENAMETOOLONG, "connect: path too long");
}

/* proto_encode_ok: a proto_raw result's line is byte for byte what
 * proto_encode(proto_ok(...)) prints; any other result goes that way. */
static void test_encode_ok(void)
{
        static const char text[] = "{\"report\":\"daily\",\"rows\":[{\"key\":\"2026-11-30\",\"cost_usd\":0.5}],"
                                   "\"totals\":{\"events\":3}}";
        json_object *o;
        char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        int ra, rb;

        o = proto_ok(proto_raw(strdup(text)));
        ra = proto_encode(o, &a, &na);
        json_object_put(o);
        rb = proto_encode_ok(proto_raw(strdup(text)), &b, &nb);
        ok(ra == 0 && rb == 0 && na == nb && memcmp(a, b, na) == 0 && b[nb] == 0,
           "encode_ok: a raw result, as json-c prints the envelope (%.60s)", b ? b : "(null)");
        free(a);
        free(b);

        o = json_object_new_object();
        json_object_object_add(o, "n", json_object_new_int(7));
        rb = proto_encode_ok(o, &b, &nb);
        is_str(rb == 0 ? b : NULL, "{\"v\":1,\"ok\":true,\"result\":{\"n\":7}}\n", "encode_ok: an object result");
        free(b);
        rb = proto_encode_ok(json_object_new_object(), &b, &nb);
        is_str(rb == 0 ? b : NULL, "{\"v\":1,\"ok\":true,\"result\":{}}\n", "encode_ok: an empty object is no raw text");
        free(b);
}

int main(void)
{
        test_encode_ok();
        test_encode_parse();
        test_builders();
        test_read_line();
        test_call_connect();
        return tap_done();
}
