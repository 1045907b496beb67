/* `agentmeterctl web`: the live dashboard. Prints the URL to open (with the
 * access secret) as its first line, then serves until SIGINT/SIGTERM, or,
 * socket-activated, until it has been idle a while. */
#pragma once

#include <stdbool.h>

struct web_options {
        const char *listen;     /* NULL: WEB_DEFAULT_LISTEN */
        const char *socket_path;
        const char *state_dir;
        const char *tz;
        bool team;
        const char *team_url;
        bool print_url;         /* --url: print the URL and exit */
};

/* An exit status (cli.h): 0, 1 (error, said on stderr), 2 (usage). */
int web_run(const struct web_options *o);
