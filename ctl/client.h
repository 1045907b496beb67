/* The client's side of the control socket: one request and its answer, or
 * a streamed `tail` that ends cleanly on SIGINT/SIGTERM or when the daemon
 * closes. */
#pragma once

#include <stdbool.h>

struct json_object;

/* true for the connect errors that mean "no daemon answers here". */
bool client_no_daemon(int r);

/* Sends {"v":1,"cmd":cmd, ...args} (args: an object whose members are
 * copied, or NULL) and reads the answer, all within timeout_ms (-1: no
 * bound): connecting (a stalled daemon's full queue), sending, waiting.
 * 0 and the result (a new reference); -EREMOTEIO when the daemon answered
 * ok:false (*ret_error: "code: message", malloc'd); -ENOENT/-ECONNREFUSED
 * (no daemon), -ETIMEDOUT (past the bound), -EBADMSG (not a response), other -errno. */
int client_call(const char *socket_path, const char *cmd, struct json_object *args,
                int timeout_ms, struct json_object **ret_result, char **ret_error);

/* client_call in two steps, for a caller that may use the answer's text
 * as it came (proto_ok_result_text): the answer line (malloc'd), then its
 * result as client_call gives it. */
int client_call_line(const char *socket_path, const char *cmd, struct json_object *args, int timeout_ms,
                     char **ret_line, size_t *ret_len, char **ret_error);
int client_take(const char *line, size_t len, struct json_object **ret_result, char **ret_error);

/* Sends {"v":1,"cmd":"tail"}, checks the ok answer, then calls on_event for
 * every event object that follows until the daemon closes the connection
 * (0), SIGINT/SIGTERM arrive (0), or on_event returns < 0 (that value). */
int client_tail(const char *socket_path, int (*on_event)(struct json_object *ev, void *u),
                void *u, char **ret_error);
