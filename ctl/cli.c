/* The calls every agentmeterctl command makes (cli.h): the socket path, a
 * request to the daemon and the message for each way it can fail. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "paths.h"

int cli_usage_error(const char *fmt, const char *arg)
{
        fputs("agentmeterctl: ", stderr);
        fprintf(stderr, fmt, arg);
        fputs("\nTry 'agentmeterctl help'.\n", stderr);
        return EXIT_USAGE;
}

const char *cli_socket_path(struct args *a)
{
        if (a->socket)
                return a->socket;
        if (paths_socket(a->sock_buf, sizeof(a->sock_buf)) < 0)
                snprintf(a->sock_buf, sizeof(a->sock_buf), "agentmeterd/" PATHS_SOCKET_NAME);
        return a->sock_buf;
}

void cli_no_daemon_message(const char *path)
{
        fprintf(stderr, "agentmeterctl: no agentmeterd is answering on %s; start it with: "
                        "systemctl --user start agentmeterd (or: agentmeterd &)\n", path);
}

/* Maps a failed call to a message and an exit status. */
int cli_call_failed(struct args *a, int r, const char *detail)
{
        if (client_no_daemon(r)) {
                cli_no_daemon_message(cli_socket_path(a));
                return EXIT_NODAEMON;
        }
        if (r == -EREMOTEIO)
                fprintf(stderr, "agentmeterctl: agentmeterd answered: %s\n",
                        detail ? detail : "an error");
        else if (r == -EPERM && detail)
                fprintf(stderr, "agentmeterctl: %s\n", detail);
        else if (r == -ETIMEDOUT)
                fprintf(stderr, "agentmeterctl: agentmeterd on %s did not answer in time\n",
                        cli_socket_path(a));
        else if (r == -EBADMSG)
                fprintf(stderr, "agentmeterctl: agentmeterd on %s sent something that is not a "
                                "response\n", cli_socket_path(a));
        else
                fprintf(stderr, "agentmeterctl: %s: %s\n", cli_socket_path(a), strerror(-r));
        return EXIT_ERR;
}

int cli_call(struct args *a, const char *cmd, struct json_object *args, int timeout_ms,
                struct json_object **ret_result)
{
        char *detail = NULL;
        int r = client_call(cli_socket_path(a), cmd, args, timeout_ms, ret_result, &detail);

        if (r < 0)
                r = -cli_call_failed(a, r, detail);
        free(detail);
        return r; /* 0, or minus an exit status */
}

int cli_print_json(struct json_object *o)
{
        int fl = JSON_C_TO_STRING_NOSLASHESCAPE |
                 (isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                        : JSON_C_TO_STRING_PLAIN);
        printf("%s\n", json_object_to_json_string_ext(o, fl));
        return EXIT_OK;
}

const char *cli_process_get(void *u, const char *name)
{
        (void)u;
        return getenv(name);
}
