/* The control socket server: NDJSON requests (common/proto.h) from local
 * clients of the same uid, answered from the daemon's state and short
 * ledger read transactions; `tail` subscribers get each committed row. */
#pragma once

#include <systemd/sd-event.h>

struct json_object;
struct control;

/* A streamed answer, {"v":1,"ok":true,"result":{"<key>":[item, ...]}}:
 * items are made and sent a chunk per loop iteration, only as the client
 * reads, so neither the loop nor memory holds a large answer whole.
 * next: 1 and a new item (the stream takes it), 0 at the end, or negative
 * errno (the answer is cut and the connection closed). */
struct control_stream {
        const char *key;
        int (*next)(void *u, struct json_object **ret_item);
        void (*free)(void *u);
        void *u;
};

struct control_handlers {
        /* builds the result for a command; returns 0 and *ret_result, or
         * -EINVAL/-ENOENT with *ret_error for an error reply */
        int (*handle)(void *u, const char *cmd, struct json_object *req,
                      struct json_object **ret_result, const char **ret_code,
                      const char **ret_error);
        /* optional: 1 and *ret_stream to stream the answer to cmd, 0 when
         * cmd is answered by handle, or negative errno */
        int (*stream)(void *u, const char *cmd, struct json_object *req,
                      struct control_stream *ret_stream);
        void *u;
};

#define CONTROL_MAX_CLIENTS 64
/* Connections the kernel queues before the daemon accepts them: a burst of
 * as many clients as it serves waits in the queue, not in a retry (a
 * client's connect() past a full queue blocks or fails with EAGAIN). */
#define CONTROL_LISTEN_BACKLOG CONTROL_MAX_CLIENTS
/* a request must arrive whole and its answer be read within this, counted
 * from the connection or the previous answer (tail clients: none) */
#define CONTROL_REQUEST_USEC (10ULL * 1000000ULL)
#define CONTROL_OUTBUF_MAX (4u << 20)    /* a slow tail client is dropped past this */
#define CONTROL_RESPONSE_MAX (64u << 20) /* one answer made whole (streamed ones: no limit) */
#define CONTROL_STREAM_CHUNK (256u << 10) /* streamed: made ahead of the client's reading */

/* Refuses with -EADDRINUSE when another daemon answers on path; removes a
 * stale socket; binds with mode 0600. */
int control_new(sd_event *e, const char *path, const struct control_handlers *h,
                struct control **ret);
struct control *control_free(struct control *c);

/* Sends an event object to every tail subscriber (takes no reference). */
void control_broadcast(struct control *c, struct json_object *event);
unsigned control_subscribers(const struct control *c);
