/* Where `agentmeterctl web` listens: a socket systemd passed (socket
 * activation, the sd_listen_fds(3) protocol: $LISTEN_PID and $LISTEN_FDS),
 * else one bound to --listen HOST:PORT (port 0: a free one). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define WEB_DEFAULT_LISTEN "127.0.0.1:8791"

struct web_listen {
        int fd;
        bool activated;     /* passed by systemd */
        bool loopback;
        char host[300];     /* as a URL and a Host header write it: "127.0.0.1", "[::1]" */
        char url_host[300]; /* the host to print in the URL (a wildcard: the loopback one) */
        unsigned port;
};

/* Parses "HOST:PORT" or "[V6]:PORT" (HOST numeric or localhost); -EINVAL
 * with why in err. Fills host and port only. */
int web_listen_parse(const char *spec, struct web_listen *ret, char *err, size_t cap);
/* The socket systemd passed, if any (1), else binds spec (0); -errno with
 * why in err. */
int web_listen_open(const char *spec, struct web_listen *ret, char *err, size_t cap);
