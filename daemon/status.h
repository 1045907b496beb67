/* The JSON the daemon answers `status` and `sources` with (field names are
 * documented in agentmeterctl(1) and stable). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct json_object;
struct ingest;
struct watch;
struct control;
struct ledger;

struct status_info {
        const char *state_dir;
        const char *socket_path;
        int64_t start_ms;
        bool initial_scan_done;
        const struct ingest *ingest_c;
        struct ingest *ingest;
        const struct watch *watch;
        const char *const *warnings; /* NULL-terminated, may be NULL */
        struct json_object *rate_limits; /* latest per harness from `statusline`, or NULL */
};

int status_build(const struct status_info *si, struct json_object **ret);
int sources_build(struct ingest *in, struct json_object **ret);
/* `sources` as a stream (control.h): the paths known now, each made into
 * its JSON object as the client reads (a source gone meanwhile is left
 * out). -ENOMEM. */
struct control_stream;
int sources_stream_new(struct ingest *in, struct control_stream *ret_stream);

/* Records the install-time environment (AGENTMETER_INSTALL_VARS/TIME, set
 * by `agentmeterctl install` in the unit's drop-in) in the ledger meta. */
int status_record_install_env(struct ledger *l);
/* Whether var is listed in this process's AGENTMETER_INSTALL_VARS. */
bool status_var_from_install(const char *var);
