/* The listening socket (listen.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "web/listen.h"

#define LISTEN_FDS_START 3

union addr {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
        struct sockaddr_storage ss;
};

static int parse(const char *spec, union addr *a, socklen_t *len, char *err, size_t cap)
{
        char host[256], *end;
        const char *colon, *p;
        unsigned long port;

        memset(a, 0, sizeof(*a));
        if (spec[0] == '[') {
                const char *rb = strchr(spec, ']');
                if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof(host))
                        goto bad;
                memcpy(host, spec + 1, (size_t)(rb - spec - 1));
                host[rb - spec - 1] = 0;
                p = rb + 2;
        } else {
                colon = strrchr(spec, ':');
                if (!colon || (size_t)(colon - spec) >= sizeof(host))
                        goto bad;
                memcpy(host, spec, (size_t)(colon - spec));
                host[colon - spec] = 0;
                if (strchr(host, ':')) /* IPv6 wants its brackets: [::1]:80 */
                        goto bad;
                p = colon + 1;
        }
        errno = 0;
        port = strtoul(p, &end, 10);
        if (!*p || *end || errno || port > 65535)
                goto bad;
        if (strcmp(host, "localhost") == 0)
                snprintf(host, sizeof(host), "127.0.0.1");
        if (inet_pton(AF_INET, host, &a->in.sin_addr) == 1) {
                a->in.sin_family = AF_INET;
                a->in.sin_port = htons((uint16_t)port);
                *len = sizeof(a->in);
                return 0;
        }
        if (inet_pton(AF_INET6, host, &a->in6.sin6_addr) == 1) {
                a->in6.sin6_family = AF_INET6;
                a->in6.sin6_port = htons((uint16_t)port);
                *len = sizeof(a->in6);
                return 0;
        }
bad:
        snprintf(err, cap, "--listen wants HOST:PORT or [IPV6]:PORT with a numeric address (or localhost), not '%s'",
                 spec);
        return -EINVAL;
}

/* host, url_host, port and loopback from a bound address. */
static void describe(const union addr *a, struct web_listen *l)
{
        char buf[INET6_ADDRSTRLEN];

        if (a->sa.sa_family == AF_INET) {
                inet_ntop(AF_INET, &a->in.sin_addr, buf, sizeof(buf));
                snprintf(l->host, sizeof(l->host), "%s", buf);
                l->port = ntohs(a->in.sin_port);
                l->loopback = (ntohl(a->in.sin_addr.s_addr) >> 24) == 127;
                snprintf(l->url_host, sizeof(l->url_host), "%s",
                         a->in.sin_addr.s_addr == htonl(INADDR_ANY) ? "127.0.0.1" : buf);
        } else {
                inet_ntop(AF_INET6, &a->in6.sin6_addr, buf, sizeof(buf));
                snprintf(l->host, sizeof(l->host), "[%s]", buf);
                l->port = ntohs(a->in6.sin6_port);
                l->loopback = IN6_IS_ADDR_LOOPBACK(&a->in6.sin6_addr);
                snprintf(l->url_host, sizeof(l->url_host), "%s",
                         IN6_IS_ADDR_UNSPECIFIED(&a->in6.sin6_addr) ? "[::1]" : l->host);
        }
}

int web_listen_parse(const char *spec, struct web_listen *ret, char *err, size_t cap)
{
        union addr a;
        socklen_t len;
        int r = parse(spec, &a, &len, err, cap);

        if (r < 0)
                return r;
        memset(ret, 0, sizeof(*ret));
        ret->fd = -1;
        describe(&a, ret);
        return 0;
}

/* The sd_listen_fds(3) protocol, for one socket: fd 3 when $LISTEN_PID is
 * this process. The variables are removed (no child inherits them). */
static int passed_fd(void)
{
        const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
        int n;

        if (!pid || !fds || strtol(pid, NULL, 10) != (long)getpid())
                return -1;
        n = (int)strtol(fds, NULL, 10);
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_FDNAMES");
        if (n < 1)
                return -1;
        (void)fcntl(LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
        return LISTEN_FDS_START;
}

int web_listen_open(const char *spec, struct web_listen *ret, char *err, size_t cap)
{
        union addr a;
        socklen_t len = sizeof(a);
        int fd = passed_fd(), one = 1, r;

        memset(ret, 0, sizeof(*ret));
        if (fd >= 0) {
                if (getsockname(fd, &a.sa, &len) < 0 ||
                    (a.sa.sa_family != AF_INET && a.sa.sa_family != AF_INET6)) {
                        snprintf(err, cap, "the socket systemd passed is not a TCP socket");
                        return -ENOTSOCK;
                }
                ret->fd = fd;
                ret->activated = true;
                describe(&a, ret);
                return 1;
        }
        r = parse(spec, &a, &len, err, cap);
        if (r < 0)
                return r;
        fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                snprintf(err, cap, "socket: %s", strerror(errno));
                return -errno;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (a.sa.sa_family == AF_INET6)
                (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, &a.sa, len) < 0 || listen(fd, 64) < 0) {
                r = -errno;
                snprintf(err, cap, "cannot listen on %s: %s%s", spec, strerror(errno),
                         errno == EADDRINUSE ? " (the socket of `agentmeterctl install --web`? Then its page is "
                                               "at `agentmeterctl web --url`; or --listen another port)"
                                             : "");
                close(fd);
                return r;
        }
        len = sizeof(a);
        if (getsockname(fd, &a.sa, &len) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        ret->fd = fd;
        describe(&a, ret);
        return 0;
}
