/* What the commands of agentmeterctl share: the parsed command line, the
 * exit statuses, and the calls to the daemon that turn a failure into a
 * message on stderr and a status. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct json_object;

enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2, EXIT_NODAEMON = 3 };

enum opt {
        O_JSON = 1 << 0, O_CSV = 1 << 1, O_SINCE = 1 << 2, O_UNTIL = 1 << 3, O_TZ = 1 << 4,
        O_HARNESS = 1 << 5, O_NOSTART = 1 << 6, O_FORCE = 1 << 7, O_CHART = 1 << 8, O_COST = 1 << 9,
        O_METRICS_DIR = 1 << 10, O_BREAKDOWN = 1 << 11, O_WEEK_START = 1 << 12, O_MERGE_WT = 1 << 13,
        O_FORMAT = 1 << 14, O_HTML = 1 << 15, O_SESSION = 1 << 16, O_PROJECT = 1 << 17,
        O_TEAM = 1 << 18, O_BY = 1 << 19, O_MACHINE = 1 << 20, O_USER = 1 << 21, O_URL = 1 << 22,
        O_LISTEN = 1 << 23, O_PRINT_URL = 1 << 24, O_WEB = 1 << 25, O_LIMIT = 1 << 26, O_ALL = 1 << 27,
};

/* `report session` lists the newest this many sessions unless --limit or
 * --all says otherwise (its totals are always every session's). */
#define CLI_SESSION_LIMIT 50

struct args {
        unsigned seen;
        const char *socket, *state_dir, *since, *until, *tz, *cost, *metrics_dir, *breakdown,
                *week_start, *format, *session, *project, *by, *url;
        const char *limit; /* report session --limit N */
        const char *listen; /* web --listen */
        char harness[256], machines[1024], users[1024]; /* comma lists */
        const char *pos[4];
        int n_pos;
        char **words; /* __complete: the line being completed */
        int n_words;
        char sock_buf[PATH_MAX];
};


/* Prints "agentmeterctl: " and fmt with arg to stderr, a hint; EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);
/* --socket, else the user's default socket path (kept in a->sock_buf). */
const char *cli_socket_path(struct args *a);
/* The message for no daemon answering on path, with how to start one. */
void cli_no_daemon_message(const char *path);
/* Maps a failed call to a message and an exit status. */
int cli_call_failed(struct args *a, int r, const char *detail);
/* One request to the daemon: 0 and *ret_result, or minus an exit status. */
int cli_call(struct args *a, const char *cmd, struct json_object *args, int timeout_ms,
         struct json_object **ret_result);
/* The object as JSON on stdout (pretty on a terminal); EXIT_OK. */
int cli_print_json(struct json_object *o);
/* A discover_env getter over the process environment (render_env_mismatch). */
const char *cli_process_get(void *u, const char *name);
/* The zone the user's days are in: $TZ, else the name /etc/localtime links
 * to, else NULL (the daemon's local time: the same machine). */
const char *cli_local_zone(char *buf, size_t cap);

/* `report KIND`: from the daemon, the ledger itself, or the team ledger. */
int cli_cmd_report(struct args *a);
