/* adapt_db_commit_pending against a real SQLite database in WAL mode whose
 * writer keeps its connection open: a read begun before a commit was
 * published learns it may have missed it; a read with nothing past it does
 * not; a commit frame in the -wal past the frame the -shm publishes (the
 * moment between the writer's sync and its publishing, made here by
 * setting the -shm's header back one transaction) counts as pending, as
 * does a header being written (its two copies differ); frames of an earlier
 * -wal generation (other salts) do not; a database without -shm has none. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adapt-sqlite.h"
#include "tap.h"
#include "testutil.h"

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                fprintf(stderr, "sql %s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

static void rw(const char *path, void *buf, size_t n, off_t off, bool write)
{
        int fd = open(path, write ? O_WRONLY : O_RDONLY);
        ssize_t k = fd < 0 ? -1 : write ? pwrite(fd, buf, n, off) : pread(fd, buf, n, off);
        if (k != (ssize_t)n)
                exit(99);
        close(fd);
}

/* Both copies of the -shm's header with mxFrame set to mx (iChange kept). */
static void shm_set_mx(const char *shm, uint32_t mx)
{
        uint8_t h[96];
        rw(shm, h, sizeof(h), 0, false);
        memcpy(h + 16, &mx, 4);
        memcpy(h + 48 + 16, &mx, 4);
        rw(shm, h, sizeof(h), 0, true);
}

int main(void)
{
        char *dir = tap_tmpdir(), db[PATH_MAX], shm[PATH_MAX], wal[PATH_MAX], plain[PATH_MAX];
        uint8_t saved[96], walhdr[32];
        struct adapt_wal_mark m0, m1, m2;
        sqlite3 *w;

        pj(db, dir, "app.db");
        xsnprintf(shm, sizeof(shm), "%s-shm", db);
        xsnprintf(wal, sizeof(wal), "%s-wal", db);
        if (sqlite3_open(db, &w) != SQLITE_OK)
                return 99;
        sql(w, "PRAGMA journal_mode=WAL");
        sql(w, "PRAGMA wal_autocheckpoint=0");
        sql(w, "CREATE TABLE t(x INTEGER)");
        sql(w, "INSERT INTO t VALUES(1)");

        adapt_db_wal_mark(db, &m0);
        ok(m0.state == ADAPT_WAL_OK && m0.mx > 0, "the -shm's header: published up to frame %u", m0.mx);
        ok(!adapt_db_commit_pending(db, &m0), "nothing written since the mark: no commit pending");

        sql(w, "INSERT INTO t VALUES(2)");
        ok(adapt_db_commit_pending(db, &m0),
           "a commit published after the mark (a read begun at the mark may have missed it): pending");
        adapt_db_wal_mark(db, &m1);
        ok(m1.mx > m0.mx && m1.change != m0.change, "  the header moved on (frame %u)", m1.mx);
        ok(!adapt_db_commit_pending(db, &m1), "  a mark after it: nothing pending");

        /* the writer's commit frames are in the -wal, its -shm not yet
         * updated: the header one transaction back */
        rw(shm, saved, sizeof(saved), 0, false);
        shm_set_mx(shm, m0.mx);
        adapt_db_wal_mark(db, &m2);
        ok(m2.state == ADAPT_WAL_OK && m2.mx == m0.mx, "the -shm set back to frame %u", m0.mx);
        ok(adapt_db_commit_pending(db, &m2),
           "a commit frame in the -wal past the published one: pending (its writer publishes next)");

        /* the same frames from an earlier generation: the -wal's salts
         * changed (restarted from its start), the frames past kept theirs */
        rw(wal, walhdr, sizeof(walhdr), 0, false);
        uint8_t other[32];
        memcpy(other, walhdr, sizeof(other));
        other[16] ^= 0xff;
        rw(wal, other, sizeof(other), 0, true);
        ok(!adapt_db_commit_pending(db, &m2), "frames of an earlier -wal generation (other salts): none");
        rw(wal, walhdr, sizeof(walhdr), 0, true);

        /* the header being written: its two copies differ */
        uint8_t h[96];
        memcpy(h, saved, sizeof(h));
        uint32_t mx = m0.mx;
        memcpy(h + 16, &mx, 4); /* the first copy still old, the second new */
        rw(shm, h, sizeof(h), 0, true);
        adapt_db_wal_mark(db, &m2);
        ok(m2.state == ADAPT_WAL_BUSY, "copies that differ: the header is being written");
        ok(adapt_db_commit_pending(db, &m1), "  pending");

        rw(shm, saved, sizeof(saved), 0, true); /* as the writer left it */
        ok(!adapt_db_commit_pending(db, &m1), "the header restored: nothing pending");
        sql(w, "INSERT INTO t VALUES(3)");
        sqlite3_close(w);

        pj(plain, dir, "none.db");
        FILE *f = fopen(plain, "w");
        if (f)
                fclose(f);
        adapt_db_wal_mark(plain, &m2);
        ok(m2.state == ADAPT_WAL_NONE, "a database without -shm: no mark");
        ok(!adapt_db_commit_pending(plain, &m2), "  and nothing pending");
        return tap_done();
}
