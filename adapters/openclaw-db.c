/* OpenClaw 2026.8+ keeps transcripts in SQLite (agents/<id>/agent/
 * openclaw-agent.sqlite, table transcript_events): a read-only reader with a
 * rowid watermark, each row fed to the shared pi parser like a JSONL line.
 *
 * Choices:
 * - Only SELECTs on a read-only connection (never a write, an integrity
 *   check or a CHECK evaluation); octet_length() is registered for SQLite
 *   < 3.43 in case a future schema needs it to load. Busy timeout 200 ms;
 *   one read transaction per call, so all queries see one snapshot.
 * - Rows are read in rowid order past the watermark. A session's pi context
 *   (header: id, cwd; the carried model; the last time) is rebuilt from the
 *   database whenever a call meets a session whose header it did not read:
 *   the header row, then its earlier rows that can matter (those with
 *   "usage", "model_change" or "model-snapshot", which is what the line
 *   prefilter parses) backwards until the model and time are known. So the
 *   result never depends on how rows were split across calls, and the keys
 *   equal those of the same entries read from JSONL.
 * - Rewrite detection: the (session_id, seq) of the watermark row is kept;
 *   if that rowid is gone or holds another row (rows deleted, VACUUM
 *   renumbered, database replaced in place), everything is read again from
 *   rowid 0: the content keys make that harmless.
 * - A database file's parse_state holds only its private area (struct
 *   db_state). That also keeps a fingerprint of the database and its -wal as
 *   of the last complete read: opening a WAL database, even read-only,
 *   touches its -wal and -shm, which the daemon watches; an unchanged
 *   fingerprint within RECHECK_MS returns at once, so our own reads do not
 *   wake us forever.
 * - A commit is not visible the moment its frames reach the -wal: the
 *   writer syncs them, then publishes the commit in the -shm wal-index,
 *   through a shared mapping, which raises no inotify event. A read woken
 *   by the frames' write can come before that and see the old snapshot,
 *   and a writer that keeps its connection open (the OpenClaw gateway)
 *   writes nothing more until its next row. So while the database or its
 *   -wal was written less than SETTLE_WINDOW_MS ago, a read to the end
 *   says COLLECT_SETTLING (the daemon looks again shortly) and leaves no
 *   "read it all" mark, so the next call reads however late it comes.
 * - A WAL database with no -wal beside it, in a directory we cannot write
 *   (the unit's ProtectHome=read-only / ProtectSystem=strict, a read-only
 *   mount): a read-only connection must still create the -wal and -shm and
 *   fails with SQLITE_CANTOPEN. No -wal means no connection has the
 *   database open (the last one to close checkpoints everything into the
 *   file and deletes the -wal), so the file alone is the whole database:
 *   it is then opened with immutable=1 (no locks, no -wal, no -shm). A
 *   writer that starts meanwhile may checkpoint into the file under us, so
 *   after such a read the fingerprint must be unchanged, else the rows are
 *   dropped and the database read again.
 * - After transcript_events, the archives the database holds (deleted
 *   sessions, cold windows stored in SQLite): openclaw-db-archives.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "binio.h"
#include "openclaw.h"
#include "timefmt.h"

#define BUSY_TIMEOUT_MS 200
#define EVENT_MAX       (64u << 20) /* decompressed event cap (OpenClaw's own is 4 MiB) */
#define RECHECK_MS      30000
#define SETTLE_WINDOW_MS 1000 /* a write this recent may not be committed yet */

/* What a database source keeps between calls, in parse_state.priv: */
struct db_state {
        bool valid;        /* false: nothing known, read from rowid 0 */
        bool done;         /* the last call read everything there was ... */
        uint64_t fp;       /* ... of the database with this fingerprint ... */
        int64_t at_ms;     /* ... at this time (CLOCK_REALTIME ms) */
        bool have_mark;    /* the watermark row's identity is known: */
        uint64_t mark_sid; /*   hash64(session_id) */
        int64_t mark_seq;  /*   seq */
        struct oc_db_archives arch; /* the archive blobs (openclaw-db-archives.c) */
};

struct sess {
        uint64_t h;
        char *id;
        struct parse_state ps;
};

struct reader {
        const struct source_ctx *ctx;
        sqlite3 *db;
        int open_rc; /* the SQLite result code when db_open failed */
        sqlite3_stmt *q_main, *q_mark, *q_head, *q_back;
        ZSTD_DCtx *z;
        char *buf; /* decompressed event */
        size_t cap;
        struct sess *sess;
        size_t n_sess, cap_sess;
        struct row_batch scratch;
};

/* ---- state ------------------------------------------------------------------ */

/* parse_state.priv, little-endian:
 *   u8 DB_PRIV_FORMAT | u8 flags (DB_DONE, DB_HAVE_MARK, DB_ARCH_KNOWN) |
 *   u64 fp | i64 at_ms | u64 mark_sid | i64 mark_seq |
 *   u64 arch set_fp | u8 arch phase | u64 arch pass_fp | i64 arch cursor |
 *   u32 bad | u32 bad_lines | u32 pass_bad | u32 pass_bad_lines
 * Format 1 (DB_PRIV_LEN_1 bytes, before archives were read) decodes with no
 * archive known. Any other content: nothing known. */
#define DB_PRIV_FORMAT   2
#define DB_PRIV_FORMAT_1 1
#define DB_PRIV_LEN_1    34
#define DB_PRIV_LEN      (DB_PRIV_LEN_1 + 8 + 1 + 8 + 8 + 4 * 4)
#define DB_DONE          0x1u
#define DB_HAVE_MARK     0x2u
#define DB_ARCH_KNOWN    0x4u
_Static_assert(DB_PRIV_LEN <= PS_PRIV_MAX, "db_state fits parse_state.priv");

/* How parse_state encoding 1 (before the private area) held db_state:
 * version == V1_MAGIC, flags & V1_DONE, fp in fallback_time_ms, at_ms in
 * last_time_ms, "<hash64(session_id) hex>:<seq>" in session. */
#define V1_MAGIC 0x4f434442u /* "OCDB" */
#define V1_DONE  0x100u

static struct db_state state_get_v1(const struct parse_state *ps)
{
        struct db_state s = { 0 };
        unsigned long long h;
        long long seq;
        int used = 0;

        if (ps->version != V1_MAGIC)
                return s;
        s.valid = true;
        s.done = (ps->flags & V1_DONE) != 0;
        s.fp = (uint64_t)ps->fallback_time_ms;
        s.at_ms = ps->last_time_ms;
        if (sscanf(ps->session, "%16llx:%lld%n", &h, &seq, &used) == 2 && ps->session[used] == 0) {
                s.have_mark = true;
                s.mark_sid = h;
                s.mark_seq = seq;
        }
        return s;
}

static struct db_state state_get(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct db_state s = { 0 };
        uint8_t flags, format;

        if (ps->priv_len == 0)
                return state_get_v1(ps);
        format = br_u8(&r);
        if (!((format == DB_PRIV_FORMAT && ps->priv_len == DB_PRIV_LEN) ||
              (format == DB_PRIV_FORMAT_1 && ps->priv_len == DB_PRIV_LEN_1)))
                return s;
        flags = br_u8(&r);
        s.fp = br_u64(&r);
        s.at_ms = (int64_t)br_u64(&r);
        s.mark_sid = br_u64(&r);
        s.mark_seq = (int64_t)br_u64(&r);
        s.done = (flags & DB_DONE) != 0;
        s.have_mark = (flags & DB_HAVE_MARK) != 0;
        if (format == DB_PRIV_FORMAT) {
                s.arch.known = (flags & DB_ARCH_KNOWN) != 0;
                s.arch.set_fp = br_u64(&r);
                s.arch.phase = br_u8(&r);
                s.arch.pass_fp = br_u64(&r);
                s.arch.cursor = (int64_t)br_u64(&r);
                s.arch.bad = br_u32(&r);
                s.arch.bad_lines = br_u32(&r);
                s.arch.pass_bad = br_u32(&r);
                s.arch.pass_bad_lines = br_u32(&r);
                if (s.arch.phase > OC_ARCH_COLD)
                        s.arch = (struct oc_db_archives){ 0 };
        } else {
                s.done = false; /* the archives were never read */
        }
        s.valid = !r.bad;
        return s.valid ? s : (struct db_state){ 0 };
}

/* The whole parse_state is the private area: the named fields stay zero. */
static void state_put(struct parse_state *ps, const struct db_state *s)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

        memset(ps, 0, sizeof(*ps));
        bw_u8(&w, DB_PRIV_FORMAT);
        bw_u8(&w, (uint8_t)((s->done ? DB_DONE : 0) | (s->have_mark ? DB_HAVE_MARK : 0) |
                            (s->arch.known ? DB_ARCH_KNOWN : 0)));
        bw_u64(&w, s->fp);
        bw_u64(&w, (uint64_t)s->at_ms);
        bw_u64(&w, s->have_mark ? s->mark_sid : 0);
        bw_u64(&w, s->have_mark ? (uint64_t)s->mark_seq : 0);
        bw_u64(&w, s->arch.set_fp);
        bw_u8(&w, s->arch.phase);
        bw_u64(&w, s->arch.pass_fp);
        bw_u64(&w, (uint64_t)s->arch.cursor);
        bw_u32(&w, s->arch.bad);
        bw_u32(&w, s->arch.bad_lines);
        bw_u32(&w, s->arch.pass_bad);
        bw_u32(&w, s->arch.pass_bad_lines);
        ps->priv_len = (uint32_t)w.len;
}

int openclaw_db_faults(const struct parse_state *ps, uint32_t *ret_bad_blobs)
{
        struct db_state s = state_get(ps);

        if (!s.valid)
                return -EINVAL;
        *ret_bad_blobs = s.arch.bad;
        return 0;
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
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
                if (pread(fd, head, head_len, head_off) < 0)
                        memset(head, 0, head_len);
                close(fd);
        }
}

/* A file fp_file looked at was modified less than SETTLE_WINDOW_MS before
 * (or after: coarse file clocks) now_ns. A clock far off either way is not
 * "recent", so a file with a future mtime is not looked at forever. */
static bool written_within(const int64_t *v, int64_t now_ns)
{
        int64_t d = now_ns - v[3];
        return v[0] && d < SETTLE_WINDOW_MS * 1000000LL && d > -SETTLE_WINDOW_MS * 1000000LL;
}

/* The database and its -wal as a reader does not change them: sizes,
 * mtimes, the db header's change counter (rollback journal commits) and
 * the WAL header (salts change when the WAL restarts). */
static uint64_t fingerprint(const char *path, bool *ret_settling)
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

/* ---- sqlite ----------------------------------------------------------------- */

static int sql_errno(sqlite3 *db, int rc)
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

static const char Q_MAIN[] =
        "SELECT rowid, session_id, seq, event_json, event_zstd FROM transcript_events "
        "WHERE rowid > ?1 ORDER BY rowid LIMIT ?2";
static const char Q_MARK[] = "SELECT session_id, seq FROM transcript_events WHERE rowid = ?1";
static const char Q_HEAD[] =
        "SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ?1 "
        "ORDER BY seq LIMIT 1";
static const char Q_BACK[] =
        "SELECT event_json, event_zstd FROM transcript_events "
        "WHERE session_id = ?1 AND seq > ?2 AND seq < ?3 AND (event_json IS NULL "
        "OR instr(event_json, '\"usage\"') > 0 OR instr(event_json, '\"model_change\"') > 0 "
        "OR instr(event_json, '\"model-snapshot\"') > 0) ORDER BY seq DESC";

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
 * WAL database that no connection has open (see the top of the file). */
static bool wal_unavailable(const struct reader *rd)
{
        char wal[PATH_MAX];
        unsigned char hdr[20];
        struct stat st;
        int fd, prc = rd->open_rc & 0xff;
        bool is_wal = false;

        if (prc != SQLITE_CANTOPEN && prc != SQLITE_READONLY)
                return false;
        if (snprintf(wal, sizeof(wal), "%s-wal", rd->ctx->path) >= (int)sizeof(wal) ||
            lstat(wal, &st) == 0 || errno != ENOENT)
                return false;
        fd = open(rd->ctx->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return false;
        /* header: "SQLite format 3\0", then write and read versions 2 = WAL */
        is_wal = pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
                 memcmp(hdr, "SQLite format 3", 16) == 0 && hdr[18] == 2 && hdr[19] == 2;
        close(fd);
        return is_wal;
}

/* 0; 1 when the database has no tables at all yet (nothing to read);
 * negative errno (rd->open_rc the SQLite code). */
static int db_open(struct reader *rd, bool immutable)
{
        int rc, e;

        if (immutable) {
                char *uri = immutable_uri(rd->ctx->path);
                if (!uri)
                        return -ENOMEM;
                rc = sqlite3_open_v2(uri, &rd->db,
                                     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
                free(uri);
        } else {
                rc = sqlite3_open_v2(rd->ctx->path, &rd->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                     NULL);
        }
        if (rc != SQLITE_OK)
                goto fail;
        sqlite3_extended_result_codes(rd->db, 1);
        sqlite3_busy_timeout(rd->db, BUSY_TIMEOUT_MS);
        if (sqlite3_libversion_number() < 3043000)
                sqlite3_create_function_v2(rd->db, "octet_length", 1,
                                           SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
                                           octet_length_fn, NULL, NULL, NULL);
        rc = sqlite3_exec(rd->db, "BEGIN", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                goto fail;
        rc = sqlite3_prepare_v2(rd->db, Q_MAIN, -1, &rd->q_main, NULL);
        if ((rc & 0xff) == SQLITE_ERROR) {
                /* no transcript_events (or not this shape): an empty new
                 * database is fine, anything else is a schema we don't know */
                sqlite3_stmt *st = NULL;
                int r = -EPROTO;
                if (sqlite3_prepare_v2(rd->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
                            SQLITE_OK &&
                    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0)
                        r = 1;
                sqlite3_finalize(st);
                return r;
        }
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_MARK, -1, &rd->q_mark, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_HEAD, -1, &rd->q_head, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_BACK, -1, &rd->q_back, NULL);
        if (rc == SQLITE_OK)
                return 0;
fail:
        rd->open_rc = rc;
        if (!rd->db)
                return -ENOMEM;
        e = sql_errno(rd->db, rc);
        /* SQLITE_CANTOPEN with ENOENT may be about the -wal, not the file */
        if (e == -ENOENT && access(rd->ctx->path, F_OK) == 0)
                e = -EACCES;
        return e;
}

static void reader_free(struct reader *rd)
{
        sqlite3_finalize(rd->q_main);
        sqlite3_finalize(rd->q_mark);
        sqlite3_finalize(rd->q_head);
        sqlite3_finalize(rd->q_back);
        if (rd->db)
                sqlite3_close_v2(rd->db); /* ends the read transaction */
        ZSTD_freeDCtx(rd->z);
        free(rd->buf);
        for (size_t i = 0; i < rd->n_sess; i++)
                free(rd->sess[i].id);
        free(rd->sess);
        row_batch_free(&rd->scratch);
}

/* ---- event text --------------------------------------------------------------- */

static int reserve(struct reader *rd, size_t need)
{
        char *nb;
        if (need <= rd->cap)
                return 0;
        nb = realloc(rd->buf, need);
        if (!nb)
                return -ENOMEM;
        rd->buf = nb;
        rd->cap = need;
        return 0;
}

/* -EBADMSG for a blob that is not zstd, is truncated or is too big. */
static int unzstd(struct reader *rd, const void *src, size_t n, const char **ret, size_t *ret_len)
{
        unsigned long long size = ZSTD_getFrameContentSize(src, n);
        ZSTD_inBuffer in = { src, n, 0 };
        size_t used = 0;
        int r;

        if (size == ZSTD_CONTENTSIZE_ERROR)
                return -EBADMSG;
        if (!rd->z && !(rd->z = ZSTD_createDCtx()))
                return -ENOMEM;
        if (size != ZSTD_CONTENTSIZE_UNKNOWN) {
                if (size > EVENT_MAX)
                        return -EBADMSG;
                r = reserve(rd, (size_t)size + 1);
                if (r < 0)
                        return r;
                size_t k = ZSTD_decompressDCtx(rd->z, rd->buf, (size_t)size, src, n);
                if (!ZSTD_isError(k) && k == size) {
                        *ret = rd->buf;
                        *ret_len = k;
                        return 0;
                }
                /* several frames, or a size that lies: stream it */
        }
        ZSTD_DCtx_reset(rd->z, ZSTD_reset_session_only);
        for (;;) {
                if (used == rd->cap) {
                        size_t ncap = rd->cap < 65536 ? 65536 : rd->cap * 2;
                        if (rd->cap >= EVENT_MAX)
                                return -EBADMSG;
                        r = reserve(rd, ncap < EVENT_MAX ? ncap : EVENT_MAX);
                        if (r < 0)
                                return r;
                }
                ZSTD_outBuffer out = { rd->buf, rd->cap, used };
                size_t k = ZSTD_decompressStream(rd->z, &out, &in);
                if (ZSTD_isError(k))
                        return -EBADMSG;
                used = out.pos;
                if (in.pos == in.size && (k == 0 || out.pos < out.size)) {
                        if (k != 0)
                                return -EBADMSG; /* truncated frame */
                        break;
                }
        }
        *ret = rd->buf;
        *ret_len = used;
        return 0;
}

/* The event text of a row: event_json, else event_zstd decompressed. */
static int event_text(struct reader *rd, sqlite3_stmt *st, int jcol, const char **ret,
                      size_t *ret_len)
{
        int t = sqlite3_column_type(st, jcol);

        if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
                const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, jcol)
                                                 : sqlite3_column_blob(st, jcol);
                int n = sqlite3_column_bytes(st, jcol);
                if (!p)
                        return n ? -ENOMEM : -EBADMSG;
                *ret = p;
                *ret_len = (size_t)n;
                return 0;
        }
        if (sqlite3_column_type(st, jcol + 1) == SQLITE_BLOB) {
                const void *b = sqlite3_column_blob(st, jcol + 1);
                int n = sqlite3_column_bytes(st, jcol + 1);
                if (!b || n <= 0)
                        return -EBADMSG;
                return unzstd(rd, b, (size_t)n, ret, ret_len);
        }
        return -EBADMSG;
}

/* ---- sessions ------------------------------------------------------------------ */

/* Fills the parse state of a session whose rows before seq were read in
 * earlier calls (see the top of the file). */
static int rebuild(struct reader *rd, struct sess *s, int64_t seq)
{
        static const char sentinel[] = "\x01";
        bool need_p = true, need_m = true, need_t = true;
        int64_t head_seq;
        const char *text;
        size_t len;
        int rc, r = 0;

        sqlite3_bind_text(rd->q_head, 1, s->id, -1, SQLITE_STATIC);
        rc = sqlite3_step(rd->q_head);
        if (rc != SQLITE_ROW) {
                sqlite3_reset(rd->q_head);
                return rc == SQLITE_DONE ? 0 : sql_errno(rd->db, rc);
        }
        head_seq = sqlite3_column_int64(rd->q_head, 0);
        if (head_seq >= seq) {
                sqlite3_reset(rd->q_head); /* this row is the session's first */
                return 0;
        }
        r = event_text(rd, rd->q_head, 1, &text, &len);
        if (r == 0)
                r = pi_parse_line(&openclaw_flavor, rd->ctx, &s->ps, text, len, &rd->scratch);
        sqlite3_reset(rd->q_head);
        row_batch_clear(&rd->scratch);
        if (r == -EBADMSG) /* unreadable header: the session is not readable either */
                r = 0;
        if (r < 0 || !(s->ps.flags & PS_HEADER_SEEN) || (s->ps.flags & PS_NOT_SOURCE))
                return r < 0 ? r : 0;
        r = 0;

        sqlite3_bind_text(rd->q_back, 1, s->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(rd->q_back, 2, head_seq);
        sqlite3_bind_int64(rd->q_back, 3, seq);
        while ((need_p || need_m || need_t) && (rc = sqlite3_step(rd->q_back)) == SQLITE_ROW) {
                struct parse_state t = { .flags = PS_HEADER_SEEN, .last_time_ms = INT64_MIN };

                if (event_text(rd, rd->q_back, 0, &text, &len) < 0)
                        continue;
                memcpy(t.provider, sentinel, sizeof(sentinel));
                memcpy(t.model, sentinel, sizeof(sentinel));
                r = pi_parse_line(&openclaw_flavor, rd->ctx, &t, text, len, &rd->scratch);
                row_batch_clear(&rd->scratch);
                if (r < 0)
                        break;
                r = 0;
                /* the latest entry that set each of them is what a forward
                 * read would have carried to here */
                if (need_p && strcmp(t.provider, sentinel) != 0) {
                        memcpy(s->ps.provider, t.provider, sizeof(t.provider));
                        need_p = false;
                }
                if (need_m && strcmp(t.model, sentinel) != 0) {
                        memcpy(s->ps.model, t.model, sizeof(t.model));
                        need_m = false;
                }
                if (need_t && t.last_time_ms != INT64_MIN) {
                        s->ps.last_time_ms = t.last_time_ms;
                        need_t = false;
                }
        }
        if (r == 0 && (need_p || need_m || need_t) && rc != SQLITE_DONE)
                r = sql_errno(rd->db, rc);
        sqlite3_reset(rd->q_back);
        return r;
}

/* The session's state for this call, rebuilt when first met. */
static int session_get(struct reader *rd, const char *id, size_t id_len, int64_t seq,
                       struct sess **ret)
{
        uint64_t h = hash64(id, id_len);
        struct sess *s;
        int r;

        for (size_t i = 0; i < rd->n_sess; i++)
                if (rd->sess[i].h == h && strcmp(rd->sess[i].id, id) == 0) {
                        *ret = &rd->sess[i];
                        return 0;
                }
        if (rd->n_sess == rd->cap_sess) {
                size_t ncap = rd->cap_sess ? rd->cap_sess * 2 : 16;
                struct sess *v = reallocarray(rd->sess, ncap, sizeof(*v));
                if (!v)
                        return -ENOMEM;
                rd->sess = v;
                rd->cap_sess = ncap;
        }
        s = &rd->sess[rd->n_sess];
        memset(s, 0, sizeof(*s));
        s->h = h;
        s->id = strndup(id, id_len);
        if (!s->id)
                return -ENOMEM;
        rd->n_sess++;
        r = rebuild(rd, s, seq);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

/* ---- collect ---------------------------------------------------------------- */

/* The watermark row still being the one we stopped at. */
static int mark_holds(struct reader *rd, uint64_t wm, const struct db_state *st)
{
        int rc, r = 0;

        if (!st->have_mark)
                return 0;
        sqlite3_bind_int64(rd->q_mark, 1, (int64_t)wm);
        rc = sqlite3_step(rd->q_mark);
        if (rc == SQLITE_ROW) {
                const char *sid = (const char *)sqlite3_column_text(rd->q_mark, 0);
                int n = sqlite3_column_bytes(rd->q_mark, 0);
                r = sid && hash64(sid, (size_t)n) == st->mark_sid &&
                    sqlite3_column_int64(rd->q_mark, 1) == st->mark_seq;
        } else if (rc != SQLITE_DONE) {
                r = sql_errno(rd->db, rc);
        }
        sqlite3_reset(rd->q_mark);
        return r;
}

static int read_rows(struct reader *rd, uint64_t *io_wm, size_t max_rows, struct db_state *st,
                     size_t *ret_n, uint64_t *ret_malformed, struct row_batch *out)
{
        uint64_t malformed = 0;
        size_t n = 0;
        int rc, r;

        sqlite3_bind_int64(rd->q_main, 1, (int64_t)*io_wm);
        sqlite3_bind_int64(rd->q_main, 2, (int64_t)max_rows);
        while ((rc = sqlite3_step(rd->q_main)) == SQLITE_ROW) {
                int64_t rowid = sqlite3_column_int64(rd->q_main, 0);
                const char *sid = (const char *)sqlite3_column_text(rd->q_main, 1);
                size_t sid_len = (size_t)sqlite3_column_bytes(rd->q_main, 1);
                int64_t seq = sqlite3_column_int64(rd->q_main, 2);
                const char *text;
                size_t len;
                struct sess *s;

                n++;
                *io_wm = (uint64_t)rowid;
                st->have_mark = sid != NULL;
                st->mark_sid = sid ? hash64(sid, sid_len) : 0;
                st->mark_seq = seq;
                if (!sid || sid_len == 0 || memchr(sid, 0, sid_len))
                        continue; /* not a row OpenClaw writes */
                r = session_get(rd, sid, sid_len, seq, &s);
                if (r < 0)
                        return r;
                if (s->ps.flags & PS_NOT_SOURCE)
                        continue;
                r = event_text(rd, rd->q_main, 3, &text, &len);
                if (r == -EBADMSG) {
                        malformed++; /* a bad blob: skipped, the watermark moves on */
                        continue;
                }
                if (r < 0)
                        return r;
                r = pi_parse_line(&openclaw_flavor, rd->ctx, &s->ps, text, len, out);
                if (r < 0)
                        return r;
                if (r == PARSE_MALFORMED)
                        malformed++;
        }
        sqlite3_reset(rd->q_main);
        if (rc != SQLITE_DONE)
                return sql_errno(rd->db, rc);
        *ret_n = n;
        *ret_malformed = malformed;
        return 0;
}

int openclaw_collect_db(const struct source_ctx *ctx, struct parse_state *ps,
                        uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                        uint64_t *io_malformed)
{
        struct reader rd = { .ctx = ctx };
        struct db_state st = state_get(ps);
        bool settling = false;
        uint64_t wm = *io_watermark, fp = fingerprint(ctx->path, &settling), malformed = 0;
        int64_t now = timefmt_now_ms();
        size_t n0 = out->n, n = 0;
        int r;

        if (max_rows == 0)
                max_rows = 1;
        if (!settling && st.valid && st.done && st.fp == fp && now >= st.at_ms &&
            now - st.at_ms < RECHECK_MS)
                return COLLECT_DONE; /* nothing changed since we read it all */

        for (int attempt = 0;; attempt++) {
                bool immutable = false;

                r = db_open(&rd, false);
                if (r < 0 && wal_unavailable(&rd)) {
                        reader_free(&rd);
                        rd = (struct reader){ .ctx = ctx };
                        immutable = true;
                        r = db_open(&rd, true);
                }
                if (r == 1) {
                        r = 0; /* no tables yet */
                } else if (r == 0) {
                        if (wm > 0) {
                                r = mark_holds(&rd, wm, &st);
                                if (r == 0) {
                                        wm = 0; /* rewritten or replaced: read it again */
                                        st.have_mark = false;
                                }
                        }
                        if (r >= 0)
                                r = read_rows(&rd, &wm, max_rows, &st, &n, &malformed, out);
                        if (r >= 0 && n < max_rows) {
                                /* transcript_events read to the end: now the archives */
                                r = openclaw_db_archives(rd.db, ctx, &st.arch, max_rows - n, out,
                                                         &malformed);
                                if (r == 1) {
                                        n = max_rows; /* more archives to read: not done */
                                        r = 0;
                                }
                        }
                }
                reader_free(&rd);
                if (r >= 0 && immutable && fingerprint(ctx->path, NULL) != fp) {
                        /* a writer came meanwhile: what we read may mix two states */
                        out->n = n0;
                        if (attempt == 2) {
                                r = -EBUSY;
                        } else {
                                rd = (struct reader){ .ctx = ctx };
                                st = state_get(ps);
                                wm = *io_watermark;
                                fp = fingerprint(ctx->path, &settling);
                                n = 0;
                                malformed = 0;
                                continue;
                        }
                }
                break;
        }
        if (r < 0) {
                out->n = n0; /* no partial count */
                return r;
        }
        /* settling: no "read it all" mark, so the next call reads */
        st.done = n < max_rows && !settling;
        st.fp = fp;
        st.at_ms = now;
        state_put(ps, &st);
        *io_watermark = wm;
        *io_malformed += malformed;
        if (n >= max_rows)
                return COLLECT_MORE;
        return settling ? COLLECT_SETTLING : COLLECT_DONE;
}
