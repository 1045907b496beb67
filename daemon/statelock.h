/* One agentmeterd per state directory: an exclusive flock on a lock file
 * there, held for the process's life (two daemons, or a daemon and --once,
 * on one ledger would double the work and race on checkpoints). */
#pragma once

#include <sys/types.h>

#define STATELOCK_FILE "agentmeterd.lock"

/* Takes the lock on dir/STATELOCK_FILE without waiting and writes our pid
 * into it: 0 and the open fd (keep it open), -EWOULDBLOCK when another
 * process holds it (*holder: its pid as written there, or 0 if unknown),
 * other negative errno. */
int statelock_take(const char *dir, int *ret_fd, pid_t *holder);

/* statelock_take for the daemon's start: logs why it cannot (naming the
 * other process and the lock file) and returns negative errno; 0 holds the
 * lock until the process exits. */
int statelock_acquire(const char *dir);
