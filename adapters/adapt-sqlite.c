/* Reading a harness's SQLite database (adapt-sqlite.h). A commit is not
 * visible the moment its frames reach the -wal: the writer syncs them, then
 * publishes the commit in the -shm wal-index, through a shared mapping,
 * which raises no inotify event; so a read woken by the frames' write can
 * see the old snapshot, and the fingerprint's "settling" tells the caller
 * to look again shortly. A WAL database with no -wal beside it, in a
 * directory we cannot write (the unit's ProtectHome=read-only, a read-only
 * mount): a read-only connection must still create the -wal and -shm and
 * fails with SQLITE_CANTOPEN. No -wal means no connection has the database
 * open (the last one to close checkpoints everything into the file and
 * deletes the -wal), so the file alone is the whole database: it is then
 * opened with immutable=1 (no locks, no -wal, no -shm). Only SELECTs, never
 * a write, an integrity check or a CHECK evaluation; octet_length() is
 * registered for SQLite < 3.43 (OpenClaw's CHECKs use it), in case a
 * schema needs it to load. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-sqlite.h"
#include "binio.h"
#include "row.h"
#include "timefmt.h"

/* Read-only, never blocking on a FIFO, never our terminal. */
static int open_ro(const char *path)
{
        return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

static void fp_file(const char *path, int64_t *v, uint8_t *head, size_t head_len, off_t head_off)
{
        struct stat st;
        int fd;

        if (stat(path, &st) < 0)
                return;
        v[0] = 1;
        v[1] = (int64_t)st.st_ino;
        v[2] = (int64_t)st.st_size;
        v[3] = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        fd = open_ro(path);
        if (fd >= 0) {
                if (pread(fd, head, head_len, head_off) < 0)
                        memset(head, 0, head_len);
                close(fd);
        }
}

/* A file fp_file looked at was modified less than ADAPT_DB_SETTLE_MS before
 * (or after: coarse file clocks) now_ns. A clock far off either way is not
 * "recent", so a file with a future mtime is not looked at forever. */
static bool written_within(const int64_t *v, int64_t now_ns)
{
        int64_t d = now_ns - v[3];
        return v[0] && d < ADAPT_DB_SETTLE_MS * 1000000LL && d > -ADAPT_DB_SETTLE_MS * 1000000LL;
}

/* The database and its -wal as a reader does not change them: sizes,
 * mtimes, the db header's change counter (rollback journal commits) and
 * the WAL header (salts change when the WAL restarts). */
uint64_t adapt_db_fingerprint(const char *path, bool *ret_settling)
{
        struct {
                int64_t db[4], wal[4];
                uint8_t counter[4], walhdr[32];
        } f;
        char wal[PATH_MAX];

        memset(&f, 0, sizeof(f));
        fp_file(path, f.db, f.counter, sizeof(f.counter), 24);
        if (snprintf(wal, sizeof(wal), "%s-wal", path) < (int)sizeof(wal))
                fp_file(wal, f.wal, f.walhdr, sizeof(f.walhdr), 0);
        if (ret_settling) {
                int64_t now_ns = timefmt_now_ms() * 1000000LL;
                *ret_settling = written_within(f.db, now_ns) || written_within(f.wal, now_ns);
        }
        return hash64(&f, sizeof(f));
}

int adapt_db_read_stable(const char *path, uint64_t *io_fp, bool *io_settling, adapt_db_read_fn read_once,
                         void *ctx)
{
        for (int attempt = 0;; attempt++) {
                bool immutable = false;
                int r = read_once(ctx, &immutable);

                if (r < 0 || !immutable || adapt_db_fingerprint(path, NULL) == *io_fp)
                        return r;
                if (attempt == 2)
                        return -EBUSY;
                *io_fp = adapt_db_fingerprint(path, io_settling); /* a writer came meanwhile */
        }
}

static bool read_exact(int fd, void *buf, size_t n, uint64_t off)
{
        return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* The wal-index header: two copies of 48 bytes in the writer's byte order;
 * isInit at 12, iChange at 8, mxFrame at 16 (SQLite's WAL format). */
void adapt_db_wal_mark(const char *path, struct adapt_wal_mark *ret_mark)
{
        char shm[PATH_MAX];
        uint8_t h[96];

        int fd;
        bool got;

        *ret_mark = (struct adapt_wal_mark){.state = ADAPT_WAL_NONE};
        if (snprintf(shm, sizeof(shm), "%s-shm", path) >= (int)sizeof(shm) || (fd = open_ro(shm)) < 0)
                return;
        got = read_exact(fd, h, sizeof(h), 0);
        close(fd);
        if (!got || !h[12])
                return;
        if (memcmp(h, h + 48, 48) != 0) {
                ret_mark->state = ADAPT_WAL_BUSY;
                return;
        }
        ret_mark->state = ADAPT_WAL_OK;
        memcpy(&ret_mark->change, h + 8, sizeof(ret_mark->change));
        memcpy(&ret_mark->mx, h + 16, sizeof(ret_mark->mx));
}

#define WAL_SCAN_FRAMES 64 /* frames past the published one looked at for a commit */

/* A commit frame (a non-zero database size after it, at 4) with the WAL
 * header's salts (at 16; frame salts at 8) after frame mx: the frames of
 * one transaction lead to it; a frame with other salts is of an earlier
 * generation of a -wal written from its start again. */
static bool commit_frame_after(const char *path, uint32_t mx)
{
        char wal[PATH_MAX];
        uint8_t h[32], f[24];
        bool commit = false;
        int fd;

        if (snprintf(wal, sizeof(wal), "%s-wal", path) >= (int)sizeof(wal) || (fd = open_ro(wal)) < 0)
                return false;
        if (read_exact(fd, h, sizeof(h), 0) && (be32_get(h) & 0xfffffffeu) == 0x377f0682u) {
                uint64_t frame = 24 + (uint64_t)be32_get(h + 8);
                for (uint64_t i = mx; i < (uint64_t)mx + WAL_SCAN_FRAMES && !commit; i++) {
                        if (!read_exact(fd, f, sizeof(f), 32 + i * frame) || memcmp(f + 8, h + 16, 8) != 0)
                                break;
                        commit = be32_get(f + 4) != 0;
                }
        }
        close(fd);
        return commit;
}

bool adapt_db_commit_pending(const char *path, const struct adapt_wal_mark *before)
{
        struct adapt_wal_mark now;

        adapt_db_wal_mark(path, &now);
        if (now.state == ADAPT_WAL_BUSY || before->state == ADAPT_WAL_BUSY)
                return true;
        if (now.state != ADAPT_WAL_OK)
                return false;
        /* no -shm before: no writer had the database open (the read's own
         * connection made the -shm); else one published since the mark */
        if (before->state == ADAPT_WAL_OK && (before->change != now.change || before->mx != now.mx))
                return true;
        return commit_frame_after(path, now.mx);
}

enum collect_result adapt_db_read_end(const char *path, bool settling, const struct adapt_wal_mark *mark)
{
        if (!settling)
                return COLLECT_DONE;
        return adapt_db_commit_pending(path, mark) ? COLLECT_PUBLISHING : COLLECT_SETTLING;
}

int adapt_sql_errno(sqlite3 *db, int rc)
{
        int e = db ? sqlite3_system_errno(db) : 0;

        switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
                return -EBADMSG;
        case SQLITE_CANTOPEN:
                return e == ENOENT || e == ENOTDIR ? -ENOENT : -EACCES;
        case SQLITE_READONLY: /* e.g. no -shm we may use in a read-only dir */
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_IOERR:
                return e > 0 ? -e : -EIO;
        case SQLITE_ERROR: /* no such table / column */
        case SQLITE_SCHEMA:
        case SQLITE_MISMATCH:
        case SQLITE_FORMAT:
                return -EPROTO;
        }
        return -EIO;
}

const char *adapt_db_strerror(int err)
{
        switch (err) {
        case -EBADMSG:
                return "the database is corrupt (or not a SQLite database); what was counted from it "
                       "stays";
        case -EPROTO:
                return "the database's tables are not in a shape this version knows";
        case -EBUSY:
                return "the database is locked by a writer (read again shortly)";
        }
        return strerror(err < 0 ? -err : err);
}

/* octet_length() arrived in SQLite 3.43; OpenClaw's CHECKs use it. */
static void octet_length_fn(sqlite3_context *c, int argc, sqlite3_value **v)
{
        (void)argc;
        if (sqlite3_value_type(v[0]) == SQLITE_NULL) {
                sqlite3_result_null(c);
                return;
        }
        if (sqlite3_value_type(v[0]) != SQLITE_BLOB)
                (void)sqlite3_value_text(v[0]);
        sqlite3_result_int(c, sqlite3_value_bytes(v[0]));
}

/* "file:<path>?mode=ro&immutable=1", the path percent-encoded. */
static char *immutable_uri(const char *path)
{
        static const char tail[] = "?mode=ro&immutable=1";
        size_t n = strlen(path);
        char *u = malloc(5 + 3 * n + sizeof(tail)), *p;

        if (!u)
                return NULL;
        p = stpcpy(u, "file:");
        for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                    strchr("/-._~", *c))
                        *p++ = (char)*c;
                else
                        p += sprintf(p, "%%%02X", *c);
        }
        strcpy(p, tail);
        return u;
}

/* The open failed only because SQLite could not create the -wal/-shm of a
 * WAL database that no connection has open. */
static bool wal_unavailable(const char *path, int open_rc)
{
        char wal[PATH_MAX];
        unsigned char hdr[20];
        struct stat st;
        int fd, prc = open_rc & 0xff;
        bool is_wal = false;

        if (prc != SQLITE_CANTOPEN && prc != SQLITE_READONLY)
                return false;
        if (snprintf(wal, sizeof(wal), "%s-wal", path) >= (int)sizeof(wal) || lstat(wal, &st) == 0 ||
            errno != ENOENT)
                return false;
        fd = open_ro(path);
        if (fd < 0)
                return false;
        /* header: "SQLite format 3\0", then write and read versions 2 = WAL */
        is_wal = pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
                 memcmp(hdr, "SQLite format 3", 16) == 0 && hdr[18] == 2 && hdr[19] == 2;
        close(fd);
        return is_wal;
}

/* One attempt: 0, or negative errno with *ret_rc the SQLite code. */
static int open_once(const char *path, bool immutable, sqlite3 **ret_db, int *ret_rc)
{
        sqlite3 *db = NULL;
        int rc, e;

        if (immutable) {
                char *uri = immutable_uri(path);
                if (!uri)
                        return -ENOMEM;
                rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                                     NULL);
                free(uri);
        } else {
                rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
        }
        if (rc == SQLITE_OK) {
                sqlite3_extended_result_codes(db, 1);
                sqlite3_busy_timeout(db, ADAPT_DB_BUSY_MS);
                if (sqlite3_libversion_number() < 3043000) /* before the schema is read */
                        sqlite3_create_function_v2(db, "octet_length", 1,
                                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                                   NULL, octet_length_fn, NULL, NULL, NULL);
                rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
                /* the snapshot starts with the first read: take it now */
                if (rc == SQLITE_OK)
                        rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
        }
        if (rc == SQLITE_OK) {
                *ret_db = db;
                return 0;
        }
        *ret_rc = rc;
        if (!db)
                return -ENOMEM;
        e = adapt_sql_errno(db, rc);
        sqlite3_close_v2(db);
        /* SQLITE_CANTOPEN with ENOENT may be about the -wal, not the file */
        if (e == -ENOENT && access(path, F_OK) == 0)
                e = -EACCES;
        return e;
}

int adapt_db_open(const char *path, struct adapt_db *ret_db)
{
        sqlite3 *db = NULL;
        int rc = 0, r = open_once(path, false, &db, &rc);
        bool immutable = false;

        if (r < 0 && wal_unavailable(path, rc)) {
                immutable = true;
                r = open_once(path, true, &db, &rc);
        }
        if (r < 0)
                return r;
        ret_db->db = db;
        ret_db->immutable = immutable;
        return 0;
}

void adapt_db_close(struct adapt_db *d)
{
        if (d && d->db) {
                sqlite3_close_v2(d->db); /* ends the read transaction */
                d->db = NULL;
        }
}

bool adapt_db_empty(struct adapt_db *d)
{
        sqlite3_stmt *st = NULL;
        bool empty = sqlite3_prepare_v2(d->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK &&
                     sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
        sqlite3_finalize(st);
        return empty;
}

bool adapt_sql_key(sqlite3_stmt *st, int col, char *buf, size_t cap)
{
        const unsigned char *text = sqlite3_column_text(st, col);
        size_t n = text ? (size_t)sqlite3_column_bytes(st, col) : 0;

        if (!text || n == 0 || n >= cap)
                return false;
        memcpy(buf, text, n + 1);
        return true;
}

enum adapt_sql_num adapt_sql_count(sqlite3_stmt *st, int col, uint64_t *ret)
{
        *ret = 0;
        switch (sqlite3_column_type(st, col)) {
        case SQLITE_NULL:
                return ADAPT_NUM_NULL;
        case SQLITE_INTEGER: {
                sqlite3_int64 v = sqlite3_column_int64(st, col);
                if (v < 0 || (uint64_t)v > ADAPT_COUNT_MAX)
                        return ADAPT_NUM_BAD;
                *ret = (uint64_t)v;
                return ADAPT_NUM_OK;
        }
        case SQLITE_FLOAT: {
                double v = sqlite3_column_double(st, col);
                /* NaN and the infinities fail both tests */
                if (!(v >= 0) || !(v <= (double)ADAPT_COUNT_MAX))
                        return ADAPT_NUM_BAD;
                *ret = (uint64_t)v;
                return ADAPT_NUM_OK;
        }
        }
        return ADAPT_NUM_BAD; /* text (a number or not), a blob */
}

enum adapt_sql_num adapt_sql_usd(sqlite3_stmt *st, int col, double *ret)
{
        int type = sqlite3_column_type(st, col);
        double v;

        *ret = 0;
        if (type == SQLITE_NULL)
                return ADAPT_NUM_NULL;
        if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
                return ADAPT_NUM_BAD;
        v = sqlite3_column_double(st, col);
        if (!(v >= 0) || !(v <= ADAPT_USD_MAX) || !isfinite(v))
                return ADAPT_NUM_BAD;
        *ret = v;
        return ADAPT_NUM_OK;
}

uint32_t adapt_sql_digest(sqlite3_stmt *st, const int *cols, int n)
{
        uint64_t h = 0;

        for (int i = 0; i < n; i++) {
                int type = sqlite3_column_type(st, cols[i]);
                /* text, and the other classes as text: what was written */
                const unsigned char *t = type == SQLITE_BLOB ? sqlite3_column_blob(st, cols[i])
                                                             : sqlite3_column_text(st, cols[i]);
                size_t len = t ? (size_t)sqlite3_column_bytes(st, cols[i]) : 0;
                uint64_t part[2] = { h, (uint64_t)type << 56 | (uint64_t)i };

                h = hash64(part, sizeof(part)) ^ (t ? hash64(t, len) : 0);
        }
        return (uint32_t)(h ^ (h >> 32));
}
