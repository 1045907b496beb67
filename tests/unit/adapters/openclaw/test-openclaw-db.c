/* OpenClaw adapter, SQLite era: databases built here from fixtures/openclaw/
 * schema.sql and the fixture rows (plain and zstd), read through collect_rows:
 * totals, resuming at any split, new rows, rewrites, locks, corrupt files,
 * bad blobs, a WAL database in a read-only directory (as the sandboxed
 * unit sees it), the JSONL+SQLite upgrade counted once, and the real
 * realgen/openclaw-2026.9.6 databases against their JSONL dump. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "adapter.h"
#include "lines.h"
#include "registry.h"
#include "row.h"
#include "ingest/scan.h"
#include "tap.h"
#include "testutil.h"

#include "openclaw-db-test.h"

static void test_fixture_dbs(char *main_db, char *ops_db)
{
        struct row_batch b = { 0 }, bo = { 0 };
        struct totals t = { 0 };
        struct src s, so;
        const struct usage_row *r;

        xsnprintf(main_db, PATH_MAX, "%s/sq/agents/main/agent/openclaw-agent.sqlite", tmp);
        xsnprintf(ops_db, PATH_MAX, "%s/sq/agents/ops/agent/openclaw-agent.sqlite", tmp);
        db_build(main_db, true, "sqlite/main.tsv");
        db_build(ops_db, true, "sqlite/ops.tsv");
        src_init(&s, main_db);
        src_init(&so, ops_db);
        is_int(collect(&s, 4096, &b), 0, "main db: read to the end in one call");
        is_int(collect(&so, 4096, &bo), 0, "ops db: read");
        is_int((int64_t)s.wm, max_rowid(main_db), "watermark = last rowid");
        ok(s.malformed == 0 && so.malformed == 0, "nothing malformed in the fixture databases");
        add_rows(&t, &b);
        add_rows(&t, &bo);
        check_case("sqlite", &t);

        r = find_kind(&b, ROW_KIND_COMPACTION, S1);
        ok(r && strcmp(r->provider, "openai") == 0 && strcmp(r->model, "gpt-5.1") == 0,
           "compaction after the other session's rows: its own session's model");
        ok(r && strcmp(r->project, "/home/u/.openclaw/workspace") == 0 && strcmp(r->tool, "openclaw") == 0,
           "project from the header, tool openclaw");
        r = find_kind(&b, ROW_KIND_MESSAGE, S2);
        ok(r && strcmp(r->model, "claude-sonnet-4-5") == 0 && r->input == 3772, "a zstd row counted");
        ok(r && r->source_hash == hash64(main_db, strlen(main_db)), "source hash = the database path");
        ok(bo.n == 1 && bo.rows[0].n_calls == 2 && strcmp(bo.rows[0].calls[1].name, "exec") == 0,
           "tool calls in the same record");

        /* nothing changed: no rows (our own first read created the -wal,
         * so the second looks again; the third sees the same files and
         * returns at once with the state as it was) */
        uint64_t wm = s.wm;
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), 0, "again: done");
        ok(b.n == 0 && s.wm == wm, "again: nothing");
        struct parse_state before = s.ps;
        is_int(collect(&s, 4096, &b), 0, "a third time: done");
        ok(b.n == 0 && s.wm == wm && memcmp(&before, &s.ps, sizeof(before)) == 0, "a third time: state kept");
        row_batch_free(&b);
        row_batch_free(&bo);
        free(t.keys);
}

/* Any split across calls gives the same rows, with the same keys, models,
 * sessions and times (each call rebuilds what it did not read). */
static void test_resume(const char *main_db)
{
        struct row_batch one = { 0 };
        struct src s;
        int64_t rows = max_rowid(main_db);

        src_init(&s, main_db);
        collect(&s, 4096, &one);
        for (size_t m = 1; m <= 8; m++) {
                struct row_batch b = { 0 };
                int calls;
                bool same;
                src_init(&s, main_db);
                is_int(collect_all(&s, m, &b, &calls), 0, "split read done");
                ok(calls >= rows / (int64_t)m, "max_rows %zu: %d calls", m, calls);
                same = b.n == one.n;
                for (size_t i = 0; same && i < b.n; i++)
                        same = memcmp(&b.rows[i].key, &one.rows[i].key, sizeof(struct row_key)) == 0 &&
                               strcmp(b.rows[i].model, one.rows[i].model) == 0 &&
                               strcmp(b.rows[i].session, one.rows[i].session) == 0 &&
                               strcmp(b.rows[i].project, one.rows[i].project) == 0 &&
                               b.rows[i].time_ms == one.rows[i].time_ms;
                ok(same, "max_rows %zu: same rows as one read", m);
                row_batch_free(&b);
        }
        row_batch_free(&one);
}

static const char COMP[] = "{\"type\":\"compaction\",\"id\":\"c2-comp\",\"parentId\":null,"
                           "\"timestamp\":\"2026-11-02T10:00:00.000Z\",\"summary\":\"s\",\"firstKeptEntryId\":\"x\","
                           "\"tokensBefore\":1,\"usage\":{\"input\":777,\"output\":7,\"cacheRead\":0,\"cacheWrite\":0,"
                           "\"totalTokens\":784,\"cost\":{\"total\":0.0021}}}";

/* New rows after a complete read, by another connection in WAL mode. */
static void test_new_rows(const char *main_db)
{
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *w;

        src_init(&s, main_db);
        collect_all(&s, 4096, &b, NULL);
        row_batch_clear(&b);
        ok(sqlite3_open(main_db, &w) == SQLITE_OK, "writer opens");
        insert(w, S2, 6, COMP, true, Z_UNSIZED, NULL, 0);
        sql(w, "INSERT INTO trajectory_runtime_events VALUES ('" S2 "', 9, 'r', "
               "'{\"usage\":{\"input\":5000000,\"output\":1}}', 1)");
        is_int(collect(&s, 4096, &b), 0, "new row read");
        ok(b.n == 1 && b.rows[0].kind == ROW_KIND_COMPACTION && b.rows[0].input == 777,
           "only the new row (an unsized zstd frame; trajectory ignored)");
        ok(b.n == 1 && strcmp(b.rows[0].model, "claude-sonnet-4-5") == 0 &&
                   strcmp(b.rows[0].provider, "anthropic") == 0 && strcmp(b.rows[0].session, S2) == 0,
           "its model and session rebuilt from earlier calls' rows");
        is_int((int64_t)s.wm, max_rowid(main_db), "watermark moved");
        row_batch_clear(&b);
        /* a second frame appended to nothing: the multi-frame path */
        insert(w, S2, 7, "{\"type\":\"usage\",\"kind\":\"cache_warm\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\","
                         "\"timestamp\":\"2026-11-02T10:01:00.000Z\",\"usage\":{\"input\":11,\"output\":0,\"cacheRead\":0,"
                         "\"cacheWrite\":900}}", true, Z_TWO_FRAMES, NULL, 0);
        is_int(collect(&s, 4096, &b), 0, "two-frame row read");
        ok(b.n == 1 && b.rows[0].cache_write == 900, "two zstd frames in one blob");
        sqlite3_close(w);
        row_batch_free(&b);
}

/* A writer that keeps its connection open (the OpenClaw gateway) publishes
 * a commit in the -shm after its frames reach the -wal, which raises no
 * event: while the files were written less than a second ago, every call
 * reads (no "nothing changed" shortcut) and says COLLECT_SETTLING, so the
 * daemon looks again; once they are older, the shortcut is back. */
static void test_settling(const char *main_db)
{
        struct row_batch b = { 0 };
        struct parse_state before;
        struct src s;
        sqlite3 *w;

        src_init(&s, main_db);
        collect_all(&s, 4096, &b, NULL);
        row_batch_clear(&b);
        ok(sqlite3_open(main_db, &w) == SQLITE_OK, "settling: a writer opens and stays");
        insert(w, S2, 8, COMP, true, Z_SIZED, NULL, 0);
        is_int(A->collect_rows(&s.ctx, &s.ps, &s.wm, 4096, &b, &s.malformed), COLLECT_SETTLING,
               "settling: just written: read, and look again shortly");
        is_int(b.n, 1, "settling: the new row read");
        row_batch_clear(&b);
        is_int(A->collect_rows(&s.ctx, &s.ps, &s.wm, 4096, &b, &s.malformed), COLLECT_SETTLING,
               "settling: files unchanged but still recent: read again, not the shortcut");
        is_int(b.n, 0, "settling: ... and no row twice");
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "settling: a minute later: done");
        before = s.ps;
        is_int(collect(&s, 4096, &b), COLLECT_DONE, "settling: again: done");
        ok(b.n == 0 && memcmp(&before, &s.ps, sizeof(before)) == 0, "settling: ... at once, state kept");
        sqlite3_close(w);
        row_batch_free(&b);
}

/* Rows deleted, renumbered or the table rebuilt: read again from rowid 0. */
static void test_rewrite(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct totals t = { 0 };
        struct src s;
        sqlite3 *w;

        xsnprintf(path, sizeof(path), "%s/rw/openclaw-agent.sqlite", tmp);
        db_build(path, true, "sqlite/main.tsv");
        src_init(&s, path);
        collect(&s, 4096, &b);
        add_rows(&t, &b);
        size_t all = b.n;
        row_batch_clear(&b);

        /* the last rows deleted, a new one written: its rowid may be the old watermark's */
        sqlite3_open(path, &w);
        sql(w, "DELETE FROM transcript_events WHERE session_id = '" S1 "' AND seq >= 9");
        insert(w, S1, 9, COMP, false, Z_SIZED, NULL, 0);
        is_int(collect(&s, 4096, &b), 0, "after a rewrite: read");
        ok(b.n == all, "the watermark row changed: everything read again (%zu rows)", b.n);
        size_t before = t.rows;
        add_rows(&t, &b);
        is_int(t.rows, before + 1, "... only the rewritten row is a new call: the rest dedup");
        row_batch_clear(&b);

        /* VACUUM renumbers rowids of a table without INTEGER PRIMARY KEY */
        sql(w, "DELETE FROM transcript_events WHERE session_id = '" S2 "'");
        sqlite3_close(w);
        sqlite3_open(path, &w);
        sql(w, "PRAGMA journal_mode=DELETE; VACUUM; PRAGMA journal_mode=WAL");
        sqlite3_close(w);
        before = t.rows;
        is_int(collect(&s, 4096, &b), 0, "after VACUUM: read");
        add_rows(&t, &b);
        printf("# VACUUM: %zu rows re-read\n", b.n);
        ok((int64_t)s.wm == max_rowid(path) && t.rows == before, "watermark valid, nothing new counted");
        row_batch_clear(&b);

        /* the table rebuilt smaller: max(rowid) below the watermark */
        sqlite3_open(path, &w);
        sql(w, "DELETE FROM transcript_events");
        load_tsv(w, "sqlite/ops.tsv");
        sqlite3_close(w);
        is_int(collect(&s, 4096, &b), 0, "after a rebuild: read");
        ok(b.n == 1 && strcmp(b.rows[0].model, "gpt-5.1-mini") == 0, "the new content read from rowid 0");
        row_batch_free(&b);
        free(t.keys);
}

/* A state written before parse_state had a private area (encoding 1: the
 * db state in the named fields) resumes at its watermark after an upgrade. */
static void test_legacy_state(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *db;
        sqlite3_stmt *st;
        char sid[128] = "";
        int64_t seq = -1;

        xsnprintf(path, sizeof(path), "%s/legacy/openclaw-agent.sqlite", tmp);
        db_build(path, true, "sqlite/main.tsv");
        src_init(&s, path);
        is_int(collect_all(&s, 4096, &b, NULL), 0, "legacy: first read");
        size_t all = b.n;
        uint64_t wm = s.wm;
        ok(all > 0 && s.ps.priv_len > 0 && s.ps.version == 0 && !s.ps.session[0],
           "the db state lives in the private area only");
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT session_id, seq FROM transcript_events WHERE rowid = ?1", -1, &st,
                               NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, (int64_t)wm);
                if (sqlite3_step(st) == SQLITE_ROW) {
                        xsnprintf(sid, sizeof(sid), "%s", (const char *)sqlite3_column_text(st, 0));
                        seq = sqlite3_column_int64(st, 1);
                }
                sqlite3_finalize(st);
        }
        sqlite3_close(db);
        ok(sid[0] && seq >= 0, "the watermark row");

        /* encoding 1: version "OCDB", the mark as "<hash hex>:<seq>" */
        for (int wrong = 0; wrong < 2; wrong++) {
                memset(&s.ps, 0, sizeof(s.ps));
                s.ps.version = 0x4f434442u;
                s.ps.last_time_ms = 1;
                snprintf(s.ps.session, sizeof(s.ps.session), "%016llx:%lld",
                         (unsigned long long)hash64(sid, strlen(sid)), (long long)(seq + wrong));
                s.wm = wm;
                row_batch_clear(&b);
                is_int(collect(&s, 4096, &b), 0, wrong ? "legacy state, another mark: read" : "legacy state: read");
                if (wrong)
                        ok(b.n == all, "legacy state, another mark: read again from rowid 0 (%zu rows)", b.n);
                else
                        ok(b.n == 0 && s.wm == wm, "legacy state: resumes at its watermark, nothing re-read");
                ok(s.ps.priv_len > 0 && s.ps.version == 0 && !s.ps.session[0], "  rewritten in the private area");
        }
        row_batch_free(&b);
}

/* ---- locks, corruption, schema -------------------------------------------------------- */

struct holder {
        pid_t pid;
        int go[2], ready[2];
};

/* Another process holds a lock: runs sql and waits until released. */
static bool hold(struct holder *h, const char *path, const char *q)
{
        char c = 0;
        if (pipe(h->go) < 0 || pipe(h->ready) < 0)
                exit(99);
        h->pid = fork();
        if (h->pid == 0) {
                sqlite3 *db;
                c = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, q, NULL, NULL, NULL) == SQLITE_OK
                            ? 'y' : 'n';
                (void)!write(h->ready[1], &c, 1);
                (void)!read(h->go[0], &c, 1);
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
                sqlite3_close(db);
                _exit(0);
        }
        return read(h->ready[0], &c, 1) == 1 && c == 'y';
}

static void release(struct holder *h)
{
        int st;
        (void)!write(h->go[1], "x", 1);
        waitpid(h->pid, &st, 0);
        close(h->go[0]);
        close(h->go[1]);
        close(h->ready[0]);
        close(h->ready[1]);
}

static void locked_case(const char *what, bool wal, const char *q)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct usage_row *dummy;
        struct holder h;
        struct src s;

        xsnprintf(path, sizeof(path), "%s/lock-%d/openclaw-agent.sqlite", tmp, wal);
        db_build(path, wal, "sqlite/ops.tsv");
        src_init(&s, path);
        row_batch_push(&b, &dummy);
        ok(hold(&h, path, q), "%s: lock taken by another process", what);
        is_int(collect(&s, 4096, &b), -EBUSY, "locked: -EBUSY");
        ok(b.n == 1 && s.wm == 0 && s.ps.version == 0 && s.ps.priv_len == 0,
           "locked: no rows, watermark and state untouched");
        release(&h);
        is_int(collect(&s, 4096, &b), 0, "released: read");
        is_int(b.n, 2, "released: the row");
        row_batch_free(&b);
}

static void test_locked(void)
{
        locked_case("rollback journal, BEGIN EXCLUSIVE", false,
                    "BEGIN EXCLUSIVE; INSERT INTO session_windows VALUES ('zz', 'k', NULL, 1, 1);");
        locked_case("WAL, exclusive locking mode", true,
                    "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; "
                    "INSERT INTO session_windows VALUES ('zz', 'k', NULL, 1, 1);");

        /* WAL readers are not blocked by a writer: committed rows are read */
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct holder h;
        struct src s;
        xsnprintf(path, sizeof(path), "%s/lock-wal/openclaw-agent.sqlite", tmp);
        db_build(path, true, "sqlite/ops.tsv");
        src_init(&s, path);
        ok(hold(&h, path, "BEGIN EXCLUSIVE; DELETE FROM transcript_events;"), "WAL: a writer mid-transaction");
        is_int(collect(&s, 4096, &b), 0, "WAL: the reader goes on");
        is_int(b.n, 1, "WAL: committed rows only (the writer's delete is not visible)");
        release(&h);
        row_batch_free(&b);
}

/* ---- a read-only directory --------------------------------------------------------- */

static int write_proc(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));
        if (fd >= 0)
                close(fd);
        return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* This process in a mount namespace of its own where dir is a read-only
 * bind mount (a user namespace too when not root): what the unit's
 * ProtectHome=read-only makes of the harnesses' directories. */
static int enter_read_only(const char *dir)
{
        unsigned long keep = 0;
        struct statvfs sv;
        char map[64];

        if (statvfs(dir, &sv) < 0)
                return -1;
        if (geteuid() != 0) {
                uid_t u = geteuid();
                gid_t g = getegid();
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || write_proc("/proc/self/setgroups", "deny") < 0)
                        return -1;
                snprintf(map, sizeof(map), "%u %u 1", (unsigned)u, (unsigned)u);
                if (write_proc("/proc/self/uid_map", map) < 0)
                        return -1;
                snprintf(map, sizeof(map), "%u %u 1", (unsigned)g, (unsigned)g);
                if (write_proc("/proc/self/gid_map", map) < 0)
                        return -1;
        } else if (unshare(CLONE_NEWNS) < 0) {
                return -1;
        }
        /* a remount may not clear the flags the mount below already has */
        keep |= sv.f_flag & ST_NOSUID ? MS_NOSUID : 0;
        keep |= sv.f_flag & ST_NODEV ? MS_NODEV : 0;
        keep |= sv.f_flag & ST_NOEXEC ? MS_NOEXEC : 0;
        keep |= sv.f_flag & ST_NOATIME ? MS_NOATIME : 0;
        keep |= sv.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0;
        keep |= sv.f_flag & ST_RELATIME ? MS_RELATIME : 0;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
            mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) < 0)
                return -1;
        return access(dir, W_OK) < 0 && errno == EROFS ? 0 : -1;
}

/* A WAL database that no connection has open (no -wal, no -shm) in a
 * directory the reader cannot write: SQLite cannot create the -wal and
 * -shm a WAL reader needs, so collect_rows reads the file as immutable; then
 * a row written (and closed) by another process outside, read again. A
 * child reads inside the namespace and reports through a pipe. */
static void test_read_only_dir(void)
{
        char dir[PATH_MAX], path[PATH_MAX], wal[PATH_MAX], shm[PATH_MAX];
        struct row_batch ref = { 0 };
        struct src s;
        int res[2], go[2], st;
        long long got[6] = { 0 };
        pid_t pid;
        sqlite3 *w;

        xsnprintf(dir, sizeof(dir), "%s/ro/agents/main/agent", tmp);
        xsnprintf(path, sizeof(path), "%s/openclaw-agent.sqlite", dir);
        xsnprintf(wal, sizeof(wal), "%s-wal", path);
        xsnprintf(shm, sizeof(shm), "%s-shm", path);
        db_build(path, true, "sqlite/main.tsv");
        ok(access(wal, F_OK) < 0 && access(shm, F_OK) < 0, "read-only dir: a closed WAL database, no -wal or -shm");
        src_init(&s, path);
        collect_all(&s, 4096, &ref, NULL);
        unlink(wal); /* our own reference read left them: closed again */
        unlink(shm);
        if (pipe(res) < 0 || pipe(go) < 0)
                exit(99);
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                struct row_batch b = { 0 };
                char c;
                close(res[0]);
                close(go[1]);
                if (enter_read_only(dir) < 0)
                        _exit(77);
                src_init(&s, path);
                got[0] = collect(&s, 4096, &b);
                got[1] = (long long)b.n;
                got[2] = access(wal, F_OK) == 0 || access(shm, F_OK) == 0;
                row_batch_clear(&b);
                (void)!write(res[1], got, 3 * sizeof(got[0]));
                if (read(go[0], &c, 1) != 1) /* the parent wrote a row */
                        _exit(99);
                got[3] = collect(&s, 4096, &b);
                got[4] = (long long)b.n;
                got[5] = b.n == 1 ? (long long)b.rows[0].input : -1;
                (void)!write(res[1], got + 3, 3 * sizeof(got[0]));
                row_batch_free(&b);
                _exit(0);
        }
        close(res[1]);
        close(go[0]);
        if (read(res[0], got, 3 * sizeof(got[0])) == 3 * (ssize_t)sizeof(got[0])) {
                is_int(got[0], 0, "read-only dir: read");
                is_int(got[1], (long long)ref.n, "read-only dir: every row, as in a writable dir");
                is_int(got[2], 0, "read-only dir: no -wal or -shm appeared");
                ok(sqlite3_open(path, &w) == SQLITE_OK, "read-only dir: a writer outside opens it");
                insert(w, S2, 6, COMP, true, Z_SIZED, NULL, 0);
                sqlite3_close(w);
                ok(access(wal, F_OK) < 0, "read-only dir: the writer closed, its -wal gone");
                age_db(path); /* the reader's mount cannot */
                (void)!write(go[1], "x", 1);
                if (read(res[0], got + 3, 3 * sizeof(got[0])) != 3 * (ssize_t)sizeof(got[0]))
                        got[3] = 99;
                is_int(got[3], 0, "read-only dir: read again");
                is_int(got[4], 1, "read-only dir: the new row only");
                is_int(got[5], 777, "read-only dir: it is the row written");
        } else {
                tap_ok(1, "# SKIP a read-only bind mount is not permitted here");
        }
        close(go[1]);
        close(res[0]);
        waitpid(pid, &st, 0);
        ok(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 77), "read-only dir: the reader exited");
        row_batch_free(&ref);
}

static void bad_file(const char *what, const char *name, const void *bytes, size_t n, int want)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s;
        xsnprintf(path, sizeof(path), "%s/bad/%s", tmp, name);
        if (bytes) {
                FILE *f = fopen(path, "w");
                fwrite(bytes, 1, n, f);
                fclose(f);
        }
        src_init(&s, path);
        is_int(collect(&s, 4096, &b), want, what);
        is_int(b.n, 0, "  no rows");
}

static void test_corrupt(const char *main_db)
{
        char path[PATH_MAX], cmd[PATH_MAX * 2];
        unsigned char junk[8192];
        size_t n;
        sqlite3 *db;

        xsnprintf(cmd, sizeof(cmd), "mkdir -p '%s/bad'", tmp);
        (void)!system(cmd);
        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (unsigned char)(i * 7919 + 13);
        bad_file("random bytes: -EBADMSG", "junk.sqlite", junk, sizeof(junk), -EBADMSG);
        bad_file("missing: -ENOENT", "missing.sqlite", NULL, 0, -ENOENT);
        bad_file("empty file: an empty database, nothing to read", "empty.sqlite", "", 0, 0);

        /* a real database cut short */
        char *whole = slurp(main_db, &n);
        ok(whole && n > 8192, "main db has several pages");
        xsnprintf(path, sizeof(path), "%s/bad/cut.sqlite", tmp);
        {
                sqlite3 *src_db, *dst;
                sqlite3_open(main_db, &src_db);
                sqlite3_open(path, &dst);
                sqlite3_backup *bk = sqlite3_backup_init(dst, "main", src_db, "main");
                sqlite3_backup_step(bk, -1);
                sqlite3_backup_finish(bk);
                sqlite3_close(src_db);
                sql(dst, "PRAGMA journal_mode=DELETE");
                sqlite3_close(dst);
                if (truncate(path, 4096 * 3) < 0)
                        exit(99);
        }
        struct row_batch b = { 0 };
        struct src s;
        src_init(&s, path);
        int r = collect(&s, 4096, &b);
        ok(r == -EBADMSG, "truncated database: -EBADMSG (got %d)", r);
        is_int(b.n, 0, "  no rows");
        free(whole);

        /* schemas we do not know */
        xsnprintf(path, sizeof(path), "%s/bad/other.sqlite", tmp);
        sqlite3_open(path, &db);
        sql(db, "CREATE TABLE memory_index(a, b)");
        sqlite3_close(db);
        bad_file("no transcript_events: -EPROTO", "other.sqlite", NULL, 0, -EPROTO);
        xsnprintf(path, sizeof(path), "%s/bad/shape.sqlite", tmp);
        sqlite3_open(path, &db);
        sql(db, "CREATE TABLE transcript_events(session_id TEXT, seq INTEGER, body TEXT)");
        sqlite3_close(db);
        bad_file("transcript_events of another shape: -EPROTO", "shape.sqlite", NULL, 0, -EPROTO);
        xsnprintf(path, sizeof(path), "%s/bad/norowid.sqlite", tmp);
        sqlite3_open(path, &db);
        sql(db, "CREATE TABLE transcript_events(session_id TEXT, seq INTEGER, event_json TEXT, event_zstd BLOB, "
                "PRIMARY KEY (session_id, seq)) WITHOUT ROWID");
        sqlite3_close(db);
        bad_file("WITHOUT ROWID: -EPROTO", "norowid.sqlite", NULL, 0, -EPROTO);
        xsnprintf(path, sizeof(path), "%s/bad", tmp);
        src_init(&s, path);
        row_batch_clear(&b);
        r = collect(&s, 4096, &b);
        ok(r < 0 && b.n == 0, "a directory: an error (%d), no rows, no crash", r);
        row_batch_free(&b);
}

/* Undecodable blobs are skipped; the rows around them count; the
 * watermark moves past them. */
static void test_bad_blobs(void)
{
        char path[PATH_MAX];
        struct row_batch b = { 0 };
        struct src s;
        sqlite3 *w;
        size_t n;

        xsnprintf(path, sizeof(path), "%s/blobs/openclaw-agent.sqlite", tmp);
        db_build(path, true, "sqlite/ops.tsv");
        sqlite3_open(path, &w);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 4, NULL, true, Z_SIZED, "not zstd at all", 15);
        char *z = compress(COMP, strlen(COMP), Z_SIZED, &n);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 5, NULL, true, Z_SIZED, z, n / 2);
        free(z);
        size_t big = (size_t)65 << 20;
        char *zeros = calloc(1, big);
        z = compress(zeros, big, Z_SIZED, &n);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 6, NULL, true, Z_SIZED, z, n);
        free(z);
        free(zeros);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 7, "{not json", false, Z_SIZED, NULL, 0);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 8, COMP, true, Z_SIZED, NULL, 0);
        sqlite3_close(w);
        src_init(&s, path);
        is_int(collect(&s, 4096, &b), 0, "bad blobs: read on");
        ok(b.n == 2 && b.rows[1].input == 777, "the good rows around them count (%zu)", b.n);
        is_int((int64_t)s.wm, max_rowid(path), "watermark past the bad rows");
        is_int(s.malformed, 4, "the three undecodable blobs and the non-JSON event counted malformed");

        /* one more bad zstd blob (a zstd magic, then garbage): counted once */
        static const char bad[] = "\x28\xb5\x2f\xfd garbage";
        sqlite3_open(path, &w);
        insert(w, "d5c4b3e2-1a0f-4c9b-8e8d-7a6f5c4b3d03", 9, NULL, true, Z_SIZED, bad, sizeof(bad) - 1);
        sqlite3_close(w);
        row_batch_clear(&b);
        is_int(collect(&s, 4096, &b), 0, "a new bad zstd blob: read");
        ok(b.n == 0 && (int64_t)s.wm == max_rowid(path), "  no row, the watermark past it");
        is_int(s.malformed, 5, "  malformed counted + 1");
        is_int(collect(&s, 4096, &b), 0, "read again");
        is_int(s.malformed, 5, "  not counted twice");
        row_batch_free(&b);
}

/* ---- upgrade: JSONL archives and SQLite with the same entries ---------------------- */

struct walk {
        struct totals *t, jsonl;
        int lines, dbs;
};

static int on_source(void *u, const struct root *root, const char *path, int kind,
                     const struct stat *st)
{
        struct walk *w = u;
        struct row_batch b = { 0 };
        struct src s;
        (void)root;
        (void)st;
        if (kind == CLASS_LINES) {
                w->lines++;
                ok(read_lines(A, path, &b) == 0, "read %s", strrchr(path, '/') + 1);
                add_rows(&w->jsonl, &b);
        } else {
                w->dbs++;
                src_init(&s, path);
                ok(collect_all(&s, 3, &b, NULL) == 0, "collect %s", path + strlen(tmp));
        }
        add_rows(w->t, &b);
        row_batch_free(&b);
        return 0;
}

/* Discovers the state dir, walks only its root (not the agent roots, which
 * repeat it) with the real scanner. */
static void walk_state(const char *state, struct walk *w)
{
        struct fenv f = { .k = { "HOME", "OPENCLAW_STATE_DIR" }, .v = { tmp, state }, .n = 2 };
        struct discover_env env = fenv_env(&f);
        struct scan_visitor v = { .on_source = on_source, .u = w };
        struct root_list l = { 0 };
        A->discover(&env, &l);
        ok(l.n > 0 && strcmp(l.v[0].path, state) == 0, "state dir discovered");
        if (l.n)
                scan_root(&l.v[0], &v);
        root_list_free(&l);
}

static void test_upgrade(void)
{
        char state[PATH_MAX], db[PATH_MAX], cmd[PATH_MAX * 3];
        struct totals t = { 0 }, sq = { 0 };
        struct walk w = { .t = &t };
        struct row_batch b = { 0 };
        struct src s;

        xsnprintf(state, sizeof(state), "%s/upgrade", tmp);
        xsnprintf(cmd, sizeof(cmd), "cp -r '%s/upgrade' '%s'", fx, tmp);
        ok(system(cmd) == 0, "upgrade state copied");
        xsnprintf(db, sizeof(db), "%s/agents/main/agent/openclaw-agent.sqlite", state);
        db_build(db, true, "upgrade/main.tsv");
        walk_state(state, &w);
        is_int(w.lines, 2, "two JSONL archives (import archive, .deleted)");
        is_int(w.dbs, 1, "one database");
        check_case("upgrade", &t);

        /* every JSONL call has the same key in SQLite */
        src_init(&s, db);
        collect_all(&s, 4096, &b, NULL);
        add_rows(&sq, &b);
        bool all = w.jsonl.nkeys == 4;
        for (size_t i = 0; i < w.jsonl.nkeys; i++)
                all = all && totals_has_key(&sq, &w.jsonl.keys[i]);
        ok(all, "the 4 archived calls have the same keys in SQLite (imported with new ids)");
        is_int(sq.rows, 5, "SQLite alone: 5 calls");
        row_batch_free(&b);
        free(t.keys);
        free(sq.keys);
        free(w.jsonl.keys);
}

/* ---- realgen/openclaw-2026.9.6 ---------------------------------------------------------- */

static void dump_totals(struct json_object *r, void *ut)
{
        struct totals *t = ut;
        struct json_object *e, *m, *u, *v, *c;

        if (r && json_object_object_get_ex(r, "event", &e) && json_object_object_get_ex(e, "message", &m) &&
            json_object_object_get_ex(m, "usage", &u)) {
                t->rows++;
#define G(field, key) if (json_object_object_get_ex(u, key, &v)) t->field += (uint64_t)json_object_get_int64(v)
                G(input, "input");
                G(output, "output");
                G(cache_read, "cacheRead");
                G(cache_write, "cacheWrite");
                G(total, "totalTokens");
                G(reasoning, "reasoningTokens");
#undef G
                if (json_object_object_get_ex(u, "cost", &c) && json_object_object_get_ex(c, "total", &v))
                        t->cost_nano += llround(json_object_get_double(v) * 1e9);
        }
}

static void test_realgen(void)
{
        const char *env = getenv("AM_SAMPLES");
        char dir[PATH_MAX], copy[PATH_MAX], p[PATH_MAX * 2], cmd[PATH_MAX * 3];
        struct totals t = { 0 }, ref = { 0 };
        struct walk w = { .t = &t };

        if (env && *env)
                xsnprintf(dir, sizeof(dir), "%s/realgen/openclaw-2026.9.6", env);
        else
                xsnprintf(dir, sizeof(dir), "%s/../shared/samples/realgen/openclaw-2026.9.6", srcdir);
        xsnprintf(p, sizeof(p), "%s/state/agents", dir);
        if (access(p, R_OK) != 0) {
                printf("# %s not found: realgen skipped\n", dir);
                return;
        }
        /* a writable copy: WAL readers need the -shm */
        xsnprintf(copy, sizeof(copy), "%s/realgen", tmp);
        xsnprintf(cmd, sizeof(cmd), "cp -r '%s/state' '%s' && chmod -R u+w '%s'", dir, copy, copy);
        ok(system(cmd) == 0, "realgen state copied");
        walk_state(copy, &w);
        is_int(w.dbs, 2, "two agent databases (no memory-reindex, lock or generation files)");
        is_int(w.lines, 0, "no JSONL");
        xsnprintf(p, sizeof(p), "%s/transcript_events.main.jsonl", dir);
        json_lines(p, dump_totals, &ref);
        xsnprintf(p, sizeof(p), "%s/transcript_events.ops.jsonl", dir);
        json_lines(p, dump_totals, &ref);
        printf("# realgen: %llu usage records in the dump\n", (unsigned long long)ref.rows);
        ok(ref.rows == 10, "the dump has 10 usage records");
        is_int(t.rows, ref.rows, "realgen: rows");
        is_int(t.input, ref.input, "realgen: input");
        is_int(t.output, ref.output, "realgen: output");
        is_int(t.cache_read, ref.cache_read, "realgen: cache read");
        is_int(t.cache_write, ref.cache_write, "realgen: cache write");
        is_int(t.total, ref.total, "realgen: total");
        is_int(t.reasoning, ref.reasoning, "realgen: reasoning");
        is_int(t.cost_nano, ref.cost_nano, "realgen: cost");
        free(t.keys);
        free(w.jsonl.keys);
}

int main(void)
{
        char main_db[PATH_MAX], ops_db[PATH_MAX], cmd[PATH_MAX + 16];

        if (!realpath(am_srcdir(), srcdir))
                return 99;
        xsnprintf(fx, sizeof(fx), "%s/fixtures/openclaw", srcdir);
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        test_fixture_dbs(main_db, ops_db);
        test_resume(main_db);
        test_new_rows(main_db);
        test_settling(main_db);
        test_rewrite();
        test_legacy_state();
        test_locked();
        test_read_only_dir();
        test_corrupt(main_db);
        test_bad_blobs();
        test_upgrade();
        test_realgen();
        xsnprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        if (!getenv("KEEP"))
                (void)!system(cmd);
        return tap_done();
}
