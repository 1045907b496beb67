/* The control socket server: NDJSON requests (common/proto.h) from local
 * clients of the same uid, answered from the daemon's state and short
 * ledger read transactions; `tail` subscribers get each committed row. */
#pragma once

#include <systemd/sd-event.h>

struct json_object;
struct control;

struct control_handlers {
        /* builds the result for a command; returns 0 and *ret_result, or
         * -EINVAL/-ENOENT with *ret_error for an error reply */
        int (*handle)(void *u, const char *cmd, struct json_object *req,
                      struct json_object **ret_result, const char **ret_code,
                      const char **ret_error);
        void *u;
};

#define CONTROL_MAX_CLIENTS 64
#define CONTROL_IDLE_USEC (60ULL * 1000000ULL)  /* non-tail clients */
#define CONTROL_OUTBUF_MAX (4u << 20)          /* a slow tail client is dropped past this */

/* Refuses with -EADDRINUSE when another daemon answers on path; removes a
 * stale socket; binds with mode 0600. */
int control_new(sd_event *e, const char *path, const struct control_handlers *h,
                struct control **ret);
struct control *control_free(struct control *c);

/* Sends an event object to every tail subscriber (takes no reference). */
void control_broadcast(struct control *c, struct json_object *event);
unsigned control_clients(const struct control *c);
unsigned control_subscribers(const struct control *c);
