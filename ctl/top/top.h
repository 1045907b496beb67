/* `agentmeterctl top`: a full-screen live view (ncurses) that redraws as
 * the daemon commits rows, or a plain line stream when stdout is not a
 * terminal. */
#pragma once

struct top_options {
        const char *socket_path;
        const char *state_dir; /* for the block's history; NULL = default */
        const char *tz;        /* NULL = the daemon's local zone */
};

/* Runs until q, SIGINT/SIGTERM (0) or, in the plain stream, until the
 * daemon closes (0). -ENOENT/-ECONNREFUSED when no daemon answers, other
 * -errno; the terminal is restored on every path. */
int top_run(const struct top_options *o);
