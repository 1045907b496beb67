/* The state directory's lock: flock(LOCK_EX|LOCK_NB) on a lock file, so a
 * second daemon on the same ledger refuses to start, however it is started. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "log.h"
#include "statelock.h"

static pid_t read_pid(int fd)
{
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        long v;
        char *end;

        if (n <= 0)
                return 0;
        buf[n] = 0;
        errno = 0;
        v = strtol(buf, &end, 10);
        return errno || end == buf || v <= 0 || v > INT_MAX ? 0 : (pid_t)v;
}

int statelock_take(const char *dir, int *ret_fd, pid_t *holder)
{
        char path[PATH_MAX], buf[32];
        int fd, n, r;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STATELOCK_FILE) >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return -errno;
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                r = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
                if (holder)
                        *holder = r == -EWOULDBLOCK ? read_pid(fd) : 0;
                close(fd);
                return r;
        }
        /* informative only: the lock, not the pid, decides */
        n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) == 0)
                (void)!pwrite(fd, buf, (size_t)n, 0);
        *ret_fd = fd;
        return 0;
}

int statelock_acquire(const char *dir)
{
        pid_t other = 0;
        int fd, r = statelock_take(dir, &fd, &other);

        if (r == -EWOULDBLOCK) {
                if (other > 0)
                        log_error("another agentmeterd (pid %ld) is already running on the state "
                                  "directory %s (it holds %s/%s); not starting a second one",
                                  (long)other, dir, dir, STATELOCK_FILE);
                else
                        log_error("another agentmeterd is already running on the state directory "
                                  "%s (it holds %s/%s); not starting a second one", dir, dir,
                                  STATELOCK_FILE);
                return r;
        }
        if (r < 0)
                return log_errno(LOG_ERR, r, "cannot take the lock %s/%s", dir, STATELOCK_FILE);
        return 0; /* fd stays open: the lock lives as long as we do */
}
