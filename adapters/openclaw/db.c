/* OpenClaw 2026.8+ keeps transcripts in SQLite (agents/<id>/agent/
 * openclaw-agent.sqlite, table transcript_events): a read-only reader with a
 * rowid watermark, each row fed to the shared pi parser like a JSONL line.
 *
 * Choices:
 * - The connection is adapt-sqlite.h's: read-only, one read transaction per
 *   call, immutable when a WAL database's -wal cannot be made.
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
 * - A read to the end while the database or its -wal was written less than
 *   ADAPT_DB_SETTLE_MS ago (its commit may not be visible yet, and a writer
 *   that keeps its connection open, like the OpenClaw gateway, writes
 *   nothing more until its next row) says COLLECT_SETTLING (the daemon
 *   looks again shortly) and leaves no "read it all" mark, so the next call
 *   reads however late it comes.
 * - After an immutable read the fingerprint must be unchanged (a writer
 *   that started meanwhile may have checkpointed into the file under us),
 *   else the rows are dropped and the database read again.
 * - After transcript_events, the archives the database holds (deleted
 *   sessions, cold windows stored in SQLite): openclaw/db-archives.c. */
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

#include "adapt-sqlite.h"
#include "binio.h"
#include "lines.h"
#include "openclaw/openclaw.h"
#include "timefmt.h"
#include "zstream.h"

#define EVENT_MAX       LINES_MAX_DEFAULT /* decompressed event cap, as a line (OpenClaw caps events at 4 MiB) */
#define RECHECK_MS      30000

/* What a database source keeps between calls, in parse_state.priv: */
struct db_state {
        bool valid;        /* false: nothing known, read from rowid 0 */
        bool done;         /* the last call read everything there was ... */
        uint64_t fp;       /* ... of the database with this fingerprint ... */
        int64_t at_ms;     /* ... at this time (CLOCK_REALTIME ms) */
        bool have_mark;    /* the watermark row's identity is known: */
        uint64_t mark_sid; /*   hash64(session_id) */
        int64_t mark_seq;  /*   seq */
        struct oc_db_archives arch; /* the archive blobs (openclaw/db-archives.c) */
};

struct sess {
        uint64_t h;
        char *id;
        struct parse_state ps;
};

struct reader {
        const struct source_ctx *ctx;
        struct adapt_db conn;
        sqlite3 *db; /* conn.db */
        sqlite3_stmt *q_main, *q_mark, *q_head, *q_back;
        struct zstream *z;
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

/* ---- sqlite ----------------------------------------------------------------- */

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

/* 0; 1 when the database has no tables at all yet (nothing to read);
 * negative errno. */
static int db_open(struct reader *rd)
{
        int rc, r;

        r = adapt_db_open(rd->ctx->path, &rd->conn);
        if (r < 0)
                return r;
        rd->db = rd->conn.db;
        rc = sqlite3_prepare_v2(rd->db, Q_MAIN, -1, &rd->q_main, NULL);
        if ((rc & 0xff) == SQLITE_ERROR)
                /* no transcript_events (or not this shape): an empty new
                 * database is fine, anything else is a schema we don't know */
                return adapt_db_empty(&rd->conn) ? 1 : -EPROTO;
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_MARK, -1, &rd->q_mark, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_HEAD, -1, &rd->q_head, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_prepare_v2(rd->db, Q_BACK, -1, &rd->q_back, NULL);
        return rc == SQLITE_OK ? 0 : adapt_sql_errno(rd->db, rc);
}

static void reader_free(struct reader *rd)
{
        sqlite3_finalize(rd->q_main);
        sqlite3_finalize(rd->q_mark);
        sqlite3_finalize(rd->q_head);
        sqlite3_finalize(rd->q_back);
        adapt_db_close(&rd->conn); /* ends the read transaction */
        rd->db = NULL;
        zstream_free(rd->z);
        free(rd->buf);
        for (size_t i = 0; i < rd->n_sess; i++)
                free(rd->sess[i].id);
        free(rd->sess);
        row_batch_free(&rd->scratch);
}

/* ---- event text --------------------------------------------------------------- */

/* -EBADMSG for a blob that is not zstd, is truncated or is too big. */
static int unzstd(struct reader *rd, const void *src, size_t n, const char **ret, size_t *ret_len)
{
        size_t len;
        int r;

        if (!rd->z && (r = zstream_new_mem(NULL, 0, &rd->z)) < 0)
                return r;
        r = zstream_decode_all(rd->z, src, n, EVENT_MAX, &rd->buf, &rd->cap, &len);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        *ret = rd->buf;
        *ret_len = len;
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
                return rc == SQLITE_DONE ? 0 : adapt_sql_errno(rd->db, rc);
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
                r = adapt_sql_errno(rd->db, rc);
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
                r = adapt_sql_errno(rd->db, rc);
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
                return adapt_sql_errno(rd->db, rc);
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
        uint64_t wm = *io_watermark, fp = adapt_db_fingerprint(ctx->path, &settling), malformed = 0;
        int64_t now = timefmt_now_ms();
        size_t n0 = out->n, n = 0;
        int r;

        if (max_rows == 0)
                max_rows = 1;
        if (!settling && st.valid && st.done && st.fp == fp && now >= st.at_ms &&
            now - st.at_ms < RECHECK_MS)
                return COLLECT_DONE; /* nothing changed since we read it all */
        struct adapt_wal_mark mark;
        adapt_db_wal_mark(ctx->path, &mark); /* before the read's snapshot */

        for (int attempt = 0;; attempt++) {
                bool immutable = false;

                r = db_open(&rd);
                immutable = rd.conn.immutable;
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
                if (r >= 0 && immutable && adapt_db_fingerprint(ctx->path, NULL) != fp) {
                        /* a writer came meanwhile: what we read may mix two states */
                        out->n = n0;
                        if (attempt == 2) {
                                r = -EBUSY;
                        } else {
                                rd = (struct reader){ .ctx = ctx };
                                st = state_get(ps);
                                wm = *io_watermark;
                                fp = adapt_db_fingerprint(ctx->path, &settling);
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
        return adapt_db_read_end(ctx->path, settling, &mark);
}
