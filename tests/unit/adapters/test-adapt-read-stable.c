/* adapt_db_read_stable, the one "read again while a writer changes the
 * file under an immutable read" loop of Crush, Hermes and Goose: a read
 * that is not immutable, or that saw the file as the fingerprint says, is
 * done at once with its result; a file that changed during one read is
 * read again with the new fingerprint (and settling) taken; one that
 * changes during every read gives -EBUSY after three reads; an error of a
 * read is returned as it is, with no second read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "tap.h"
#include "testutil.h"

struct fake_read {
        const char *path;
        int calls;
        int change_on;   /* the file grows during the first change_on reads */
        bool immutable;
        int result;
};

static int fake_read_once(void *u, bool *ret_immutable)
{
        struct fake_read *f = u;
        FILE *fp;

        if (f->calls++ < f->change_on) { /* a writer, meanwhile */
                if (!(fp = fopen(f->path, "a")) || fputs("more", fp) < 0 || fclose(fp) != 0)
                        exit(99);
        }
        *ret_immutable = f->immutable;
        return f->result;
}

static int run(struct fake_read *f, uint64_t *io_fp)
{
        bool settling = false;
        *io_fp = adapt_db_fingerprint(f->path, &settling);
        return adapt_db_read_stable(f->path, io_fp, &settling, fake_read_once, f);
}

int main(void)
{
        char path[PATH_MAX];
        uint64_t fp;
        FILE *fp0;

        xsnprintf(path, sizeof(path), "%s/store.db", tap_tmpdir());
        if (!(fp0 = fopen(path, "w")) || fputs("db", fp0) < 0 || fclose(fp0) != 0)
                exit(99);

        struct fake_read quiet = { .path = path, .immutable = true, .result = 7 };
        is_int(run(&quiet, &fp), 7, "immutable, nothing changed: the read's result");
        is_int(quiet.calls, 1, "  after one read");

        struct fake_read locked = { .path = path, .change_on = 3, .immutable = false, .result = 0 };
        is_int(run(&locked, &fp), 0, "not immutable (locks kept the writer out): done whatever changed");
        is_int(locked.calls, 1, "  after one read");

        struct fake_read once = { .path = path, .change_on = 1, .immutable = true, .result = 0 };
        is_int(run(&once, &fp), 0, "changed during the first read: read again, then done");
        is_int(once.calls, 2, "  after two reads");
        ok(fp == adapt_db_fingerprint(path, NULL), "  with the fingerprint the second read saw");

        struct fake_read busy = { .path = path, .change_on = 100, .immutable = true, .result = 0 };
        is_int(run(&busy, &fp), -EBUSY, "changed during every read: -EBUSY");
        is_int(busy.calls, 3, "  after three reads");

        struct fake_read broken = { .path = path, .change_on = 100, .immutable = true, .result = -EBADMSG };
        is_int(run(&broken, &fp), -EBADMSG, "a read's error: returned as it is");
        is_int(broken.calls, 1, "  with no second read");
        return tap_done();
}
