/* Table sources through tail_source, against a real LMDB ledger and a real
 * SQLite database in WAL mode whose writer keeps its connection open (as
 * OpenCode's does), with a table adapter of this test's own built on
 * adapt-sqlite.h: rows found past a watermark of (update time, id), so
 * rows of one update time split across reads are neither lost nor read
 * twice, and a row inserted with zero tokens and updated in place
 * twice ends in the ledger once with its final tokens, and a read costs the
 * rows changed since the watermark, not the table. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-sqlite.h"
#include "ledger/ledger.h"
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

static struct ledger *L;
static int seen; /* rows the adapter's query returned (this test's counter) */

/* priv: the id of the last row read at the watermark's time (ties) */
static int msg_collect(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_wm,
                       size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        struct adapt_db d = { 0 };
        sqlite3_stmt *q = NULL;
        char last[64] = "";
        size_t n0 = out->n, n = 0;
        uint64_t wm = *io_wm;
        bool settling = false;
        int r, rc;

        (void)io_malformed;
        (void)adapt_db_fingerprint(ctx->path, &settling);
        struct adapt_wal_mark mark;
        adapt_db_wal_mark(ctx->path, &mark); /* as the real adapters: before the read */
        if (ps->priv_len && ps->priv_len < sizeof(last)) {
                memcpy(last, ps->priv, ps->priv_len);
                last[ps->priv_len] = 0;
        }
        r = adapt_db_open(ctx->path, &d);
        if (r < 0)
                return r;
        /* past (wm, last) in (updated, id) order: the index serves it */
        rc = sqlite3_prepare_v2(d.db, "SELECT id, tokens, updated FROM msg WHERE (updated, id) > (?1, ?3) "
                                      "ORDER BY updated, id LIMIT ?2", -1, &q, NULL);
        if (rc != SQLITE_OK) {
                r = adapt_db_empty(&d) ? 0 : adapt_sql_errno(d.db, rc);
                goto out;
        }
        sqlite3_bind_int64(q, 1, (int64_t)wm);
        sqlite3_bind_int64(q, 2, (int64_t)max_rows + 1);
        sqlite3_bind_text(q, 3, last, -1, SQLITE_TRANSIENT);
        while ((rc = sqlite3_step(q)) == SQLITE_ROW && n < max_rows) {
                const char *id = (const char *)sqlite3_column_text(q, 0);
                int64_t tokens = sqlite3_column_int64(q, 1), at = sqlite3_column_int64(q, 2);
                if (!id || strlen(id) >= sizeof(last))
                        continue;
                seen++;
                n++;
                wm = (uint64_t)at;
                snprintf(last, sizeof(last), "%s", id);
                if (tokens <= 0)
                        continue; /* inserted, not done yet: its update brings it back */
                struct usage_row *row;
                struct keyhash h;
                if ((r = row_batch_push(out, &row)) < 0)
                        goto out;
                memset(row, 0, sizeof(*row));
                keyhash_begin(&h, "test-table");
                keyhash_str(&h, id);
                keyhash_end(&h, &row->key);
                row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT;
                row->kind = ROW_KIND_MESSAGE;
                row->time_ms = 1796000000000LL;
                row->input = row->total = (uint64_t)tokens;
                ROW_SET(row->tool, "testtable");
                ROW_SET(row->session, "t1");
                ROW_SET(row->model, "m");
        }
        r = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : adapt_sql_errno(d.db, rc);
out:
        sqlite3_finalize(q);
        adapt_db_close(&d);
        if (r < 0) {
                out->n = n0;
                return r;
        }
        *io_wm = wm;
        ps->priv_len = (uint32_t)strlen(last);
        memcpy(ps->priv, last, ps->priv_len);
        if (n >= max_rows)
                return COLLECT_MORE;
        if (settling && adapt_db_commit_pending(ctx->path, &mark))
                return COLLECT_PUBLISHING;
        return settling ? COLLECT_SETTLING : COLLECT_DONE;
}

static const struct adapter table_adapter = { .id = "testtable", .collect_rows = msg_collect };

static int run(const char *path, size_t commit_rows)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT };
        struct source_ctx ctx = { .adapter = &table_adapter, .path = path };
        struct tail_outcome out;
        int r;

        if (commit_rows)
                t.limits.commit_rows = commit_rows;
        ctx.source_hash = hash64(path, strlen(path));
        do {
                stat(path, &ctx.st);
                r = tail_source(&t, &ctx, CLASS_TABLE, &out);
        } while (r == TAIL_MORE);
        return r;
}

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

/* A wal-index header (48 bytes, native order) with mxFrame and iChange set
 * and its checksum made again (SQLite's: over its first 40 bytes as pairs
 * of words, s1 += a + s2, s2 += b + s1), in both copies. */
static void shm_header_set(uint8_t *h, uint32_t mx, uint32_t change)
{
        uint32_t w[10], s1 = 0, s2 = 0;

        memcpy(h + 16, &mx, 4);
        memcpy(h + 8, &change, 4);
        memcpy(w, h, sizeof(w));
        for (int i = 0; i < 10; i += 2) {
                s1 += w[i] + s2;
                s2 += w[i + 1] + s1;
        }
        memcpy(h + 40, &s1, 4);
        memcpy(h + 44, &s2, 4);
        memcpy(h + 48, h, 48);
}

static uint64_t input_of(void)
{
        struct session_entry se;
        return ledger_get_session(L, "testtable", "t1", &se) == 0 ? se.sums.input : 0;
}

static uint64_t rows(void)
{
        struct ledger_stats st;
        ledger_get_stats(L, &st);
        return st.rows;
}

int main(void)
{
        char *dir = tap_tmpdir(), ldir[PATH_MAX], db[PATH_MAX], wal[PATH_MAX];
        sqlite3 *w;
        struct stat st;

        pj(ldir, dir, "ledger");
        mkdir_p(ldir);
        if (ledger_open(ldir, 0, &L) < 0)
                return 99;
        pj(db, dir, "app.db");
        if (sqlite3_open(db, &w) != SQLITE_OK)
                return 99;
        sql(w, "PRAGMA journal_mode=WAL");
        sql(w, "PRAGMA wal_autocheckpoint=0"); /* every row stays in the -wal */
        sql(w, "CREATE TABLE msg(id TEXT PRIMARY KEY, tokens INTEGER, updated INTEGER)");
        sql(w, "CREATE INDEX msg_updated ON msg(updated, id)");

        /* a step starts: inserted with zero tokens */
        sql(w, "INSERT INTO msg VALUES('a', 0, 1000)");
        ok(run(db, 0) >= 0, "inserted with zero tokens: read");
        is_int((int)rows(), 0, "  nothing to count yet");
        xsnprintf(wal, sizeof(wal), "%s-wal", db);
        ok(stat(wal, &st) == 0 && st.st_size > 0, "  the row lives only in the -wal (the writer is open)");

        /* the step ends: its tokens */
        sql(w, "UPDATE msg SET tokens = 100, updated = 1010 WHERE id = 'a'");
        seen = 0;
        ok(run(db, 0) >= 0, "updated in place with its tokens: read");
        is_int((int)rows(), 1, "  one row");
        is_int((int)input_of(), 100, "  its tokens");
        is_int(seen, 1, "  only the changed row was read");

        /* updated again (completed, final tokens) */
        sql(w, "UPDATE msg SET tokens = 120, updated = 1020 WHERE id = 'a'");
        seen = 0;
        ok(run(db, 0) >= 0, "updated again: read");
        is_int((int)rows(), 1, "  still one row");
        is_int((int)input_of(), 120, "  with the final tokens (the monotone upsert)");
        is_int(seen, 1, "  only the changed row was read");

        /* nothing changed: nothing read */
        seen = 0;
        ok(run(db, 0) >= 0, "unchanged: read");
        is_int(seen, 0, "  no row returned");

        /* many rows at one update time: ties re-read, none lost, in small batches */
        sql(w, "BEGIN");
        for (int i = 0; i < 50; i++) {
                char s[128];
                snprintf(s, sizeof(s), "INSERT INTO msg VALUES('b%02d', 10, 2000)", i);
                sql(w, s);
        }
        sql(w, "COMMIT");
        ok(run(db, 7) >= 0, "fifty rows of one update time, read 7 at a time");
        is_int((int)rows(), 51, "  every one counted");
        is_int((int)input_of(), 120 + 500, "  exactly once");

        /* a commit written to the -wal and not yet published in the -shm
         * (the writer between its sync and its publishing): the header set
         * back one transaction, as a reader then sees it */
        char shm[PATH_MAX];
        uint8_t saved[96], back[96];
        xsnprintf(shm, sizeof(shm), "%s-shm", db);
        struct adapt_wal_mark before;
        adapt_db_wal_mark(db, &before);
        sql(w, "UPDATE msg SET tokens = 130, updated = 3000 WHERE id = 'a'");
        int fd = open(shm, O_RDWR);
        ok(fd >= 0 && pread(fd, saved, sizeof(saved), 0) == (ssize_t)sizeof(saved), "the -shm's header read");
        memcpy(back, saved, sizeof(back));
        shm_header_set(back, before.mx, before.change);
        uint8_t same[96];
        uint32_t mx_now, change_now;
        memcpy(&mx_now, saved + 16, 4);
        memcpy(&change_now, saved + 8, 4);
        memcpy(same, saved, sizeof(same));
        shm_header_set(same, 0, 0);
        shm_header_set(same, mx_now, change_now);
        ok(memcmp(same, saved, 96) == 0, "  (the header's checksum made as SQLite makes it)");
        ok(pwrite(fd, back, sizeof(back), 0) == (ssize_t)sizeof(back), "  set back one transaction");
        seen = 0;
        is_int(run(db, 0), TAIL_PUBLISHING, "a commit not yet published: look again very soon");
        is_int(seen, 0, "  the read saw the snapshot before it");
        ok(pwrite(fd, saved, sizeof(saved), 0) == (ssize_t)sizeof(saved), "published");
        close(fd);
        is_int(run(db, 0), TAIL_SETTLING, "read again: nothing pending (the writer was at work: settling)");
        is_int((int)input_of(), 130 + 500, "  the update counted");

        sqlite3_close(w);
        L = ledger_close(L);
        return tap_done();
}
