/* `agentmeterd --once`: every source read to its end once, a summary line
 * printed, no loop and no socket. */
#pragma once

#include "daemon.h"

int once_run(struct daemon *d);
