/* `agentmeterd --once`: every source read to its end once, a summary line
 * printed, no loop and no socket. */
#pragma once

#include <time.h>

#include "daemon.h"

/* Reads every queued source to its end and starts the ledger's write-back;
 * ret_start: when the scan began. 0, or negative errno (logged). */
int once_run(struct daemon *d, struct timespec *ret_start);
/* Syncs the ledger and prints the summary. 0, or negative errno (logged). */
int once_finish(struct daemon *d, const struct timespec *start);
