/* The HTTP side of `agentmeterctl web` (libmicrohttpd, a thread per
 * connection): the Host check against DNS rebinding, the secret, the
 * security headers, and the routes: / (the page), /app.js and /app.css (no
 * data, no secret), /api/state (the state as JSON) and /events (the state
 * pushed as server-sent events). */
#pragma once

#include <stddef.h>

#include "web/secret.h"

struct web_hub;
struct web_server;

/* Serves on the listening socket fd, whose port
 * is port (libmicrohttpd closes it when stopped); host: the address it listens on as a Host header names it
 * ("127.0.0.1", "[::1]", ...). 0 and *ret, or -errno with why in err. */
int web_server_start(int fd, const char *host, unsigned port, const char *secret, struct web_hub *hub,
                     struct web_server **ret, char *err, size_t cap);
/* Stops every connection (the hub must be stopped first) and frees it. */
void web_server_stop(struct web_server *s);
