/* agentmeterd's command line: what each option means, its defaults, and
 * the checks that refuse a bad value before anything starts. */
#pragma once

#include <stdbool.h>

#include "log.h"

struct options {
        bool once;
        bool rebuild_rollups;
        int level;
        enum log_target target;
        unsigned reconcile_sec;
        const char *state_dir;
        const char *socket;
        const char *metrics_file; /* "" = none */
        const char *metrics_user;
        int read_threads; /* -1: one per online CPU (none on a single CPU) */
};

/* Fills o (which holds the defaults) from argv: 0, or the exit code for a
 * bad command line (said on stderr). --help, --version and
 * --list-variables print and exit. */
int options_parse(int argc, char **argv, struct options *o);
