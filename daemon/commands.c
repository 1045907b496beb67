/* The control commands (see commands.h): one function per command, and the
 * dispatcher that picks one by name. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget.h"
#include "ingest/ingest.h"
#include "metrics.h"
#include "origins.h"
#include "prices.h"
#include "commands.h"
#include "proto.h"
#include "ratelimits.h"
#include "report/report.h"
#include "status.h"
#include "statusline-answer.h"
#include "team-push/team.h"

static int cmd_status(const struct command_env *e, json_object **ret_result)
{
        struct status_info si = {
                .state_dir = e->state_dir,
                .socket_path = e->socket_path,
                .start_ms = e->start_ms,
                .initial_scan_done = *e->initial_scan_done,
                .ingest = e->ingest,
                .watch = e->watch,
                .warnings = e->warnings,
                .rate_limits = e->statusline->rate_limits,
        };
        int r = status_build(&si, ret_result);
        if (r >= 0)
                json_object_object_add(*ret_result, "budgets", budget_status_json(e->budget));
        if (r >= 0)
                json_object_object_add(*ret_result, "prices", prices_status_json(e->prices, e->ledger));
        if (r >= 0)
                json_object_object_add(*ret_result, "team", team_status_json(e->team));
        return r;
}

static int cmd_version(json_object **ret_result)
{
        json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "version", json_object_new_string(AM_VERSION));
        json_object_object_add(o, "protocol", json_object_new_int(PROTO_VERSION));
        json_object_object_add(o, "schema", json_object_new_int(LEDGER_SCHEMA_VERSION));
        *ret_result = o;
        return 0;
}

static int cmd_rescan(const struct command_env *e, json_object **ret_result)
{
        json_object *o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        /* discovery again too: new agents, profiles, changed configs */
        e->rescan(e->u);
        json_object_object_add(o, "queued", json_object_new_boolean(1));
        *ret_result = o;
        return 0;
}

/* Every root's latest limit windows as the harness wrote them (Codex
 * token_count.rate_limits), for `report blocks`. */
static int add_recorded_limits(const char *scope, const struct rate_limits *rl, void *u)
{
        json_object *arr = u, *o;
        char text[1024];

        if (limits_format(rl, text, sizeof(text)) < 0 || !(o = json_tokener_parse(text)))
                return 0;
        json_object_object_add(o, "root", json_object_new_string(scope));
        json_object_array_add(arr, o);
        return 0;
}

static int cmd_report(const struct command_env *e, json_object *req, json_object **ret_result,
                      const char **ret_code, const char **ret_error)
{
        struct report_query q;
        int r = report_query_from_json(req, &q, ret_error);
        /* a session's origin: the editor of a VS Code extension's task */
        struct origins_ctx oc = { e->ledger, e->ingest ? ingest_roots(e->ingest) : NULL };
        if (r >= 0 && oc.roots) {
                q.annotate = origins_annotate_cb;
                q.annotate_u = &oc;
        }
        if (r >= 0 && q.kind != REPORT_BLOCKS) {
                /* as text: a report of thousands of sessions is one buffer */
                char *text;
                size_t len;
                r = report_run_text(e->ledger, e->report_cache, &q, &text, &len, ret_error);
                if (r >= 0 && !(*ret_result = proto_raw(text)))
                        r = -ENOMEM;
        } else if (r >= 0) {
                r = report_run(e->ledger, &q, ret_result, ret_error);
        }
        /* the real windows the harnesses reported, next to the computed ones */
        if (r >= 0 && q.kind == REPORT_BLOCKS && e->statusline->rate_limits)
                json_object_object_add(*ret_result, "rate_limits",
                                       json_object_get(e->statusline->rate_limits));
        if (r >= 0 && q.kind == REPORT_BLOCKS) {
                json_object *arr = json_object_new_array();
                (void)ledger_foreach_limits(e->ledger, add_recorded_limits, arr);
                json_object_object_add(*ret_result, "recorded_limits", arr);
        }
        if (r < 0)
                *ret_code = r == -EINVAL ? "bad-request" : "internal";
        return r;
}

static int cmd_metrics(const struct command_env *e, json_object **ret_result, const char **ret_code,
                       const char **ret_error)
{
        char *text = NULL;
        int r = e->metrics ? metrics_text(e->metrics, &text) : -ENODATA;
        json_object *o;

        if (r < 0) {
                *ret_code = "internal";
                *ret_error = "cannot build the metrics";
                return r;
        }
        o = json_object_new_object();
        json_object_object_add(o, "text", json_object_new_string(text));
        free(text);
        *ret_result = o;
        return 0;
}

static int cmd_statusline(const struct command_env *e, json_object *req, json_object **ret_result,
                          const char **ret_code, const char **ret_error)
{
        int r = statusline_answer(e->ledger, e->statusline, ingest_roots(e->ingest), req, ret_result, ret_error);
        if (r < 0)
                *ret_code = r == -EINVAL ? "bad-request" : "internal";
        return r;
}

int commands_handle(void *u, const char *cmd, json_object *req, json_object **ret_result,
                    const char **ret_code, const char **ret_error)
{
        const struct command_env *e = u;

        if (strcmp(cmd, "status") == 0)
                return cmd_status(e, ret_result);
        if (strcmp(cmd, "sources") == 0)
                return sources_build(e->ingest, ret_result);
        if (strcmp(cmd, "version") == 0)
                return cmd_version(ret_result);
        if (strcmp(cmd, "rescan") == 0)
                return cmd_rescan(e, ret_result);
        if (strcmp(cmd, "report") == 0)
                return cmd_report(e, req, ret_result, ret_code, ret_error);
        if (strcmp(cmd, "metrics") == 0)
                return cmd_metrics(e, ret_result, ret_code, ret_error);
        if (strcmp(cmd, "statusline") == 0)
                return cmd_statusline(e, req, ret_result, ret_code, ret_error);
        if (strcmp(cmd, "reprice") == 0)
                return prices_reprice_command(e->prices, e->ledger, ret_result, ret_code, ret_error);
        *ret_code = "unknown-command";
        *ret_error = "unknown command (try: status, sources, report, metrics, statusline, rescan, reprice, tail, "
                     "version)";
        return -EINVAL;
}

int commands_stream(void *u, const char *cmd, struct json_object *req,
                    struct control_stream *ret_stream)
{
        struct command_env *e = u;
        int r;

        (void)req;
        if (strcmp(cmd, "sources") != 0)
                return 0;
        r = sources_stream_new(e->ingest, ret_stream);
        return r < 0 ? r : 1;
}
