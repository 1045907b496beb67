/* The transcripts an OpenClaw database keeps outside transcript_events:
 * session_transcript_archives blobs (deleted sessions) and the cold windows
 * stored in session_transcript_cold_archives, read inside collect_rows's
 * snapshot. The set of archives is fingerprinted; when it changes, every
 * archive is read again (the content keys make known calls duplicates) in
 * passes that resume by rowid when a call's row budget runs out. */
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "openclaw/openclaw.h"

/* The set of archives, from the columns SQLite finds without reading the
 * blob (those before it, and its length from the record header): the
 * fingerprint is taken at every read of the database. Only while a blob is
 * bad is archive_sha256 (stored after the blob) included, so that a repair
 * in place is noticed. */
static const char Q_SET_ARCH[] =
        "SELECT rowid, session_id, generation, '', encoding, length(archive_blob) "
        "FROM session_transcript_archives ORDER BY rowid";
static const char Q_SET_ARCH_SHA[] =
        "SELECT rowid, session_id, generation, archive_sha256, encoding, length(archive_blob) "
        "FROM session_transcript_archives ORDER BY rowid";
static const char Q_SET_COLD[] =
        "SELECT rowid, session_id, generation, archive_sha256, storage, length(archive_blob) "
        "FROM session_transcript_cold_archives WHERE storage = 'sqlite' ORDER BY rowid";
static const char Q_ARCH[] =
        "SELECT rowid, encoding, archive_blob, archive_sha256 FROM session_transcript_archives "
        "WHERE rowid > ?1 ORDER BY rowid";
static const char Q_COLD[] =
        "SELECT rowid, 'auto', archive_blob, archive_sha256 FROM session_transcript_cold_archives "
        "WHERE storage = 'sqlite' AND archive_blob IS NOT NULL AND rowid > ?1 ORDER BY rowid";

uint64_t openclaw_origin_hash(const char *db_path, enum oc_archive_format format)
{
        char buf[PATH_MAX + 16];
        int n = snprintf(buf, sizeof(buf), "%s#%s", db_path, format == OC_ARCHIVE_COLD ? "cold" : "archives");
        return hash64(buf, n > 0 && (size_t)n < sizeof(buf) ? (size_t)n : 0);
}

/* -EPROTO when the table is not there (a database from before archives). */
static int prepare(sqlite3 *db, const char *q, sqlite3_stmt **ret)
{
        int rc = sqlite3_prepare_v2(db, q, -1, ret, NULL);
        if (rc == SQLITE_OK)
                return 0;
        *ret = NULL;
        if ((rc & 0xff) == SQLITE_ERROR)
                return -EPROTO;
        return (rc & 0xff) == SQLITE_NOMEM ? -ENOMEM : (rc & 0xff) == SQLITE_BUSY ? -EBUSY : -EIO;
}

static uint64_t text_hash(sqlite3_stmt *st, int col)
{
        const void *p = sqlite3_column_blob(st, col);
        return p ? hash64(p, (size_t)sqlite3_column_bytes(st, col)) : 0;
}

static int fold_set(sqlite3 *db, const char *q, uint64_t *io_fp)
{
        sqlite3_stmt *st;
        int rc, r = prepare(db, q, &st);

        if (r == -EPROTO)
                return 0; /* no such table: nothing archived there */
        if (r < 0)
                return r;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                uint64_t v[7] = { *io_fp, (uint64_t)sqlite3_column_int64(st, 0), text_hash(st, 1),
                                  text_hash(st, 2), text_hash(st, 3), text_hash(st, 4),
                                  (uint64_t)sqlite3_column_int64(st, 5) };
                *io_fp = hash64(v, sizeof(v));
        }
        sqlite3_finalize(st);
        return rc == SQLITE_DONE ? 0 : (rc & 0xff) == SQLITE_BUSY ? -EBUSY : -EIO;
}

static int set_fingerprint(sqlite3 *db, bool with_sha, uint64_t *ret_fp)
{
        uint64_t fp = 0x6f63617263680001ull;
        int r = fold_set(db, with_sha ? Q_SET_ARCH_SHA : Q_SET_ARCH, &fp);

        if (r == 0)
                r = fold_set(db, Q_SET_COLD, &fp);
        if (r == 0)
                *ret_fp = fp;
        return r;
}

/* Whether a digest (hex, from the database) names these bytes. */
static bool digest_is(struct sha256 *s, const char *hex)
{
        uint8_t d[SHA256_SIZE];
        char h[2 * SHA256_SIZE + 1];

        sha256_final(s, d);
        sha256_hex(d, h);
        return hex && strcasecmp(h, hex) == 0;
}

/* One blob: its rows appended, or none (and counted bad) when it does not
 * decode or its sha256 (of the stored or of the decoded bytes: either is
 * accepted) is not the one recorded. */
static int read_blob(const struct source_ctx *ctx, enum oc_archive_format format, sqlite3_stmt *st,
                     struct oc_db_archives *ar, struct row_batch *out)
{
        const char *enc = (const char *)sqlite3_column_text(st, 1);
        const void *blob = sqlite3_column_blob(st, 2);
        size_t n = (size_t)sqlite3_column_bytes(st, 2), n0 = out->n;
        const char *want = (const char *)sqlite3_column_text(st, 3);
        struct source_ctx c = *ctx;
        struct parse_state ps = { 0 };
        struct sha256 din, dout;
        struct oc_archive_read a = {
                .ctx = &c, .ps = &ps, .format = format, .out = out, .digest_in = &din, .digest_out = &dout,
        };
        bool zstd;
        int r;

        c.source_hash = openclaw_origin_hash(ctx->path, format);
        if (!blob && n == 0) {
                ar->pass_bad++;
                return 0;
        }
        if (!blob)
                return -ENOMEM;
        if (enc && strcmp(enc, "auto") == 0) /* cold blobs: no encoding column */
                zstd = n >= 4 && memcmp(blob, "\x28\xb5\x2f\xfd", 4) == 0;
        else if (enc && strcmp(enc, "zstd") == 0)
                zstd = true;
        else if (enc && strcmp(enc, "identity") == 0)
                zstd = false;
        else {
                ar->pass_bad++; /* an encoding we do not know */
                return 0;
        }
        sha256_init(&din);
        sha256_init(&dout);
        r = openclaw_archive_read_mem(&a, zstd, blob, n);
        if (r == -EBADMSG) {
                ar->pass_bad++;
                return 0;
        }
        if (r < 0)
                return r;
        if (want && !digest_is(&din, want) && !digest_is(&dout, want)) {
                out->n = n0;
                ar->pass_bad++;
                return 0;
        }
        ar->pass_bad_lines += (uint32_t)(a.malformed > UINT32_MAX - ar->pass_bad_lines
                                                 ? UINT32_MAX - ar->pass_bad_lines
                                                 : a.malformed);
        return 0;
}

/* Archives of one table past the cursor; 1 when the row budget ran out. */
static int read_table(sqlite3 *db, const struct source_ctx *ctx, enum oc_archive_format format,
                      struct oc_db_archives *ar, size_t max_rows, size_t n0, struct row_batch *out)
{
        sqlite3_stmt *st;
        int rc, r = prepare(db, format == OC_ARCHIVE_COLD ? Q_COLD : Q_ARCH, &st);

        if (r == -EPROTO)
                return 0;
        if (r < 0)
                return r;
        sqlite3_bind_int64(st, 1, ar->cursor);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                r = read_blob(ctx, format, st, ar, out);
                if (r < 0)
                        break;
                ar->cursor = sqlite3_column_int64(st, 0);
                if (out->n - n0 >= max_rows) {
                        r = 1;
                        break;
                }
        }
        if (r == 0 && rc != SQLITE_DONE)
                r = (rc & 0xff) == SQLITE_BUSY ? -EBUSY : (rc & 0xff) == SQLITE_NOMEM ? -ENOMEM : -EIO;
        sqlite3_finalize(st);
        return r;
}

int openclaw_db_archives(struct sqlite3 *db, const struct source_ctx *ctx, struct oc_db_archives *ar,
                         size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        struct oc_db_archives s = *ar;
        uint64_t fp = 0, was, now;
        size_t n0 = out->n;
        int r;

        r = set_fingerprint(db, s.bad != 0, &fp);
        if (r < 0)
                return r;
        if (s.phase == OC_ARCH_IDLE) {
                if (s.known && s.set_fp == fp)
                        return 0; /* the same archives as last time */
                s.phase = OC_ARCH_DELETED;
                s.pass_fp = fp;
                s.cursor = 0;
                s.pass_bad = s.pass_bad_lines = 0;
        }
        if (s.phase != OC_ARCH_IDLE && s.pass_fp != fp) {
                /* (re)start the pass over the set as it is now */
                s.phase = OC_ARCH_DELETED;
                s.pass_fp = fp;
                s.cursor = 0;
                s.pass_bad = s.pass_bad_lines = 0;
        }
        if (max_rows == 0)
                max_rows = 1;
        if (s.phase == OC_ARCH_DELETED) {
                r = read_table(db, ctx, OC_ARCHIVE_JSONL, &s, max_rows, n0, out);
                if (r == 0) {
                        s.phase = OC_ARCH_COLD;
                        s.cursor = 0;
                }
        }
        if (r == 0 && s.phase == OC_ARCH_COLD)
                r = read_table(db, ctx, OC_ARCHIVE_COLD, &s, max_rows, n0, out);
        if (r < 0) {
                out->n = n0;
                return r;
        }
        if (r == 0) {
                /* the pass is complete: faults are counted once, as their
                 * number grows from one complete pass to the next */
                was = (uint64_t)s.bad + s.bad_lines;
                now = (uint64_t)s.pass_bad + s.pass_bad_lines;
                if (now > was)
                        *io_malformed += now - was;
                s.known = true;
                s.set_fp = s.pass_fp;
                if ((s.pass_bad != 0) != (s.bad != 0)) {
                        /* the fingerprint's form changes with it: the same
                         * set (this snapshot) in the new form */
                        r = set_fingerprint(db, s.pass_bad != 0, &s.set_fp);
                        if (r < 0) {
                                out->n = n0;
                                return r;
                        }
                }
                s.bad = s.pass_bad;
                s.bad_lines = s.pass_bad_lines;
                s.phase = OC_ARCH_IDLE;
                s.cursor = 0;
        }
        *ar = s;
        return r;
}
