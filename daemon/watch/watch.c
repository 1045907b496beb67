/* inotify directory watches for the daemon: wd -> path table, draining the
 * fd completely on each wake-up, overflow reported upward. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "watch/watch.h"

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | \
                    IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_ONLYDIR)

struct watch {
        int fd;
        sd_event_source *src;
        struct watch_callbacks cb;
        char **paths; /* indexed by wd */
        size_t cap;
        size_t count;
};

static void drop_wd(struct watch *w, int wd)
{
        if (wd >= 0 && (size_t)wd < w->cap && w->paths[wd]) {
                free(w->paths[wd]);
                w->paths[wd] = NULL;
                w->count--;
        }
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct watch *w = u;
        /* at least 16 full events per read (dbus-broker's sizing) */
        char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
                __attribute__((aligned(__alignof__(struct inotify_event))));
        (void)s;
        (void)revents;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break; /* EAGAIN: drained */
                }
                if (n == 0)
                        break;
                for (char *p = buf; p < buf + n;) {
                        struct inotify_event *ev = (struct inotify_event *)p;
                        p += sizeof(*ev) + ev->len;
                        if (ev->mask & IN_Q_OVERFLOW) {
                                w->cb.on_lost(w->cb.u, WATCH_LOST_OVERFLOW);
                                continue;
                        }
                        if (ev->wd < 0 || (size_t)ev->wd >= w->cap || !w->paths[ev->wd])
                                continue;
                        if (ev->mask & IN_IGNORED) {
                                drop_wd(w, ev->wd);
                                continue;
                        }
                        char path[PATH_MAX];
                        if (ev->len && ev->name[0])
                                snprintf(path, sizeof(path), "%s/%s", w->paths[ev->wd], ev->name);
                        else
                                snprintf(path, sizeof(path), "%s", w->paths[ev->wd]);
                        w->cb.on_event(w->cb.u, path, (ev->mask & IN_ISDIR) != 0, ev->mask);
                }
        }
        if (w->cb.on_batch_done)
                w->cb.on_batch_done(w->cb.u);
        return 0;
}

int watch_new(sd_event *e, const struct watch_callbacks *cb, struct watch **ret)
{
        struct watch *w = calloc(1, sizeof(*w));
        int r;
        if (!w)
                return -ENOMEM;
        w->cb = *cb;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (w->fd < 0) {
                r = -errno;
                free(w);
                return r;
        }
        r = sd_event_add_io(e, &w->src, w->fd, EPOLLIN, on_inotify, w);
        if (r < 0) {
                close(w->fd);
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

struct watch *watch_free(struct watch *w)
{
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->src);
        for (size_t i = 0; i < w->cap; i++)
                free(w->paths[i]);
        free(w->paths);
        close(w->fd);
        free(w);
        return NULL;
}

bool watch_has(const struct watch *w, const char *path)
{
        for (size_t i = 0; i < w->cap; i++)
                if (w->paths[i] && strcmp(w->paths[i], path) == 0)
                        return true;
        return false;
}

int watch_add(struct watch *w, const char *path)
{
        int wd = inotify_add_watch(w->fd, path, WATCH_MASK);
        if (wd < 0) {
                int r = -errno;
                if (r != -ENOENT && r != -ENOTDIR) {
                        w->cb.on_lost(w->cb.u, r == -ENOSPC ? WATCH_LOST_NO_WATCHES : WATCH_LOST_FAILED);
                }
                return r;
        }
        if ((size_t)wd >= w->cap) {
                size_t ncap = w->cap ? w->cap : 64;
                while (ncap <= (size_t)wd)
                        ncap *= 2;
                char **np = realloc(w->paths, ncap * sizeof(*np));
                if (!np)
                        return -ENOMEM;
                memset(np + w->cap, 0, (ncap - w->cap) * sizeof(*np));
                w->paths = np;
                w->cap = ncap;
        }
        if (w->paths[wd]) {
                if (strcmp(w->paths[wd], path) == 0)
                        return 0;
                /* same inode under a new name (a renamed directory) */
                free(w->paths[wd]);
                w->count--;
        }
        w->paths[wd] = strdup(path);
        if (!w->paths[wd])
                return -ENOMEM;
        w->count++;
        return 0;
}

size_t watch_count(const struct watch *w)
{
        return w->count;
}

const char *watch_loss_text(enum watch_loss why)
{
        switch (why) {
        case WATCH_LOST_OVERFLOW:
                return "inotify queue overflowed";
        case WATCH_LOST_NO_WATCHES:
                return "out of inotify watches (fs.inotify.max_user_watches)";
        case WATCH_LOST_FAILED:
                return "a directory watch failed";
        }
        return "events lost";
}
