/* The control commands: what each request on the socket does, answered from
 * the daemon's state (status, sources, version), the ledger (report) or by
 * an action (rescan). The socket server (control.c) only frames them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"
#include "ledger/ledger.h"
#include "watch/watch.h"

struct json_object;
struct budget;
struct prices;
struct metrics;
struct statusline_state;
struct team;

/* What the commands see of the daemon; owned by the daemon, which keeps
 * the pointed-to fields current. */
struct command_env {
        struct ledger *ledger;
        struct ingest *ingest;
        struct watch *watch;
        const char *state_dir;
        const char *socket_path;
        int64_t start_ms;
        const bool *initial_scan_done;
        const char *const *warnings; /* NULL-terminated */
        const struct budget *budget; /* may be NULL: "budgets" in status */
        struct prices *prices;       /* may be NULL: "prices" in status, reprice */
        struct metrics *metrics;     /* may be NULL: `metrics` answers an error */
        struct statusline_state *statusline; /* the latest limit windows received */
        struct report_cache *report_cache;   /* may be NULL: reports read every rollup */
        struct team *team;                   /* may be NULL: "team" in status */
        /* discovery again, watches re-armed, reconcile, reading scheduled */
        void (*rescan)(void *u);
        void *u;
};

struct control_stream;

/* control_handlers.handle with u = struct command_env *. */
int commands_handle(void *u, const char *cmd, struct json_object *req,
                    struct json_object **ret_result, const char **ret_code, const char **ret_error);
/* control_handlers.stream with u = struct command_env *: `sources` is
 * streamed (made as the client reads, never whole in memory). */
int commands_stream(void *u, const char *cmd, struct json_object *req,
                    struct control_stream *ret_stream);
