/* The inotify watches through a real sd-event loop and the real kernel: a
 * file written, created, moved in or deleted in a watched directory is
 * reported with its full path and kind; a created subdirectory is reported
 * as a directory; a missing directory cannot be watched (and is not a
 * loss); adding twice is one watch; a directory removed takes its watch
 * along; and more events than the kernel queues at once is reported as a
 * loss (overflow), so the daemon reconciles. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"
#include "watch/watch.h"

struct seen {
        char path[64][PATH_MAX];
        uint32_t mask[64];
        bool is_dir[64];
        size_t n;
        int lost[4];
        int batches;
};

static void on_event(void *u, const char *path, bool is_dir, uint32_t mask)
{
        struct seen *s = u;
        if (s->n < 64) {
                snprintf(s->path[s->n], sizeof(s->path[0]), "%s", path);
                s->mask[s->n] = mask;
                s->is_dir[s->n++] = is_dir;
        }
}

static void on_lost(void *u, enum watch_loss why)
{
        struct seen *s = u;
        if (why >= 1 && why <= 3)
                s->lost[why]++;
}

static void on_batch(void *u)
{
        ((struct seen *)u)->batches++;
}

/* Runs the loop until it has nothing to do for 50 ms. */
static void spin(sd_event *e)
{
        for (int i = 0; i < 200; i++)
                if (sd_event_run(e, 50000) == 0)
                        break;
}

/* Whether an event for path with any of the mask bits was seen. */
static bool saw(const struct seen *s, const char *path, uint32_t bits, bool is_dir)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->path[i], path) == 0 && (s->mask[i] & bits) && s->is_dir[i] == is_dir)
                        return true;
        return false;
}

int main(void)
{
        char *tmp = tap_tmpdir(), d[PATH_MAX], f[PATH_MAX], g[PATH_MAX], sub[PATH_MAX], out[PATH_MAX], many[PATH_MAX];
        struct seen s = { 0 };
        struct watch_callbacks cb = { .on_event = on_event, .on_lost = on_lost, .on_batch_done = on_batch, .u = &s };
        struct watch *w;
        sd_event *e;

        if (sd_event_new(&e) < 0 || watch_new(e, &cb, &w) < 0)
                return 99;
        pj(d, tmp, "dir");
        mkdir_p(d);
        is_int(watch_add(w, d), 0, "a directory is watched");
        is_int(watch_add(w, d), 0, "  adding it again is fine");
        is_int((int)watch_count(w), 1, "  one watch");
        ok(watch_has(w, d), "  watch_has says so");
        pj(f, tmp, "missing");
        is_int(watch_add(w, f), -ENOENT, "a missing directory: -ENOENT");
        spin(e);
        ok(s.lost[WATCH_LOST_FAILED] == 0 && s.lost[WATCH_LOST_NO_WATCHES] == 0, "  which is not a loss");

        pj(f, d, "a.jsonl");
        write_file(f, "x\n");
        spin(e);
        ok(saw(&s, f, IN_CREATE, false), "a created file: its full path, as a file");
        ok(saw(&s, f, IN_MODIFY | IN_CLOSE_WRITE, false), "  and its write");
        ok(s.batches > 0, "  a batch was handed over whole");

        s.n = 0;
        pj(out, tmp, "outside.jsonl");
        write_file(out, "y\n");
        pj(g, d, "b.jsonl");
        rename(out, g);
        spin(e);
        ok(saw(&s, g, IN_MOVED_TO, false), "a file moved in");
        ok(!saw(&s, out, ~0u, false), "  the unwatched place it came from is not reported");

        s.n = 0;
        unlink(f);
        spin(e);
        ok(saw(&s, f, IN_DELETE, false), "a delete");

        s.n = 0;
        pj(sub, d, "sub");
        mkdir_p(sub);
        spin(e);
        ok(saw(&s, sub, IN_CREATE, true), "a created directory: reported as a directory");
        is_int(watch_add(w, sub), 0, "  and watched");
        is_int((int)watch_count(w), 2, "  two watches");
        rmdir(sub);
        spin(e);
        is_int((int)watch_count(w), 1, "a removed directory takes its watch along");

        /* more events than the kernel queues: a loss, not silence */
        {
                FILE *q = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
                long max = 16384;
                if (q) {
                        if (fscanf(q, "%ld", &max) != 1)
                                max = 16384;
                        fclose(q);
                }
                if (max > 100000) {
                        tap_ok(1, "# SKIP max_queued_events is %ld: too many files to make", max);
                } else {
                        pj(many, d, "many");
                        int fd = open(d, O_RDONLY | O_DIRECTORY);
                        for (long i = 0; i < max / 2 + 64; i++) {
                                char name[32];
                                snprintf(name, sizeof(name), "f%ld", i);
                                int k = openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                                if (k >= 0)
                                        close(k); /* create + close-write: two events each */
                        }
                        close(fd);
                        spin(e);
                        ok(s.lost[WATCH_LOST_OVERFLOW] >= 1, "a flood of %ld events: an overflow reported", max / 2 + 64);
                }
        }

        watch_free(w);
        sd_event_unref(e);
        return tap_done();
}
