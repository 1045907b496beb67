/* A non-blocking `tail` subscription for clients with their own loop
 * (`top`): connect, ask, check the answer, then hand over each event as
 * its line arrives, without ever blocking on the daemon. */
#pragma once

struct json_object;
struct tailconn;

/* Connects and subscribes (waits up to timeout_ms for the ok answer).
 * -ENOENT/-ECONNREFUSED (no daemon), -EREMOTEIO (refused), -errno. */
int tailconn_open(const char *socket_path, int timeout_ms, struct tailconn **ret);
struct tailconn *tailconn_free(struct tailconn *t);
int tailconn_fd(const struct tailconn *t);

/* Reads what is there and calls on_event per complete line. 0 (more may
 * come), -ECONNRESET (the daemon closed), -EBADMSG, -E2BIG (a line past
 * 4 MiB), or on_event's negative return. */
int tailconn_read(struct tailconn *t, int (*on_event)(struct json_object *ev, void *u), void *u);
