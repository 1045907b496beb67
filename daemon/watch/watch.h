/* inotify, one watch per directory. inotify is a hint, never the record:
 * an overflowed queue or a failed watch is reported so the caller can
 * reconcile (re-stat everything, rescan the roots). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct watch;

/* Why events may have been missed (watch_callbacks.on_lost). */
enum watch_loss {
        WATCH_LOST_OVERFLOW = 1,   /* the kernel's event queue overflowed */
        WATCH_LOST_NO_WATCHES = 2, /* out of watches (fs.inotify.max_user_watches) */
        WATCH_LOST_FAILED = 3,     /* another directory watch failed (e.g. permission) */
};
/* What it means, for the log. */
const char *watch_loss_text(enum watch_loss why);

struct watch_callbacks {
        /* something happened to dir/name (mask: IN_* bits) */
        void (*on_event)(void *u, const char *path, bool is_dir, uint32_t mask);
        /* events were lost (IN_Q_OVERFLOW) or a watch could not be added */
        void (*on_lost)(void *u, enum watch_loss why);
        /* one read of the inotify fd has been handled completely */
        void (*on_batch_done)(void *u);
        void *u;
};

int watch_new(sd_event *e, const struct watch_callbacks *cb, struct watch **ret);
struct watch *watch_free(struct watch *w);

/* Watches directory path (idempotent). -ENOSPC (out of watches), -ENOENT... */
int watch_add(struct watch *w, const char *path);
bool watch_has(const struct watch *w, const char *path);
size_t watch_count(const struct watch *w);
