/* tail.c against a real LMDB ledger and real files: offsets only move past
 * newlines, bounded work per call always makes progress, identity changes
 * (shrink, new inode, changed bytes before the offset) re-read from 0
 * without double counting, renames keep the checkpoint, over-long lines are
 * skipped and counted, a complete unterminated last line counts once; a
 * database source's undecodable events are counted malformed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ledger/ledger.h"
#include "registry.h"

extern const struct adapter adapter_pi;
extern const struct adapter adapter_openclaw;
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

static char dir[256];
static struct ledger *L;
static struct tail_counters C;

static const char *HDR =
        "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"cwd\":\"/p\"}\n";

/* one assistant call; n makes it distinct */
static void call_line(char *buf, size_t cap, int n)
{
        snprintf(buf, cap,
                 "{\"type\":\"message\",\"id\":\"%08x\",\"timestamp\":\"2026-11-30T10:00:01.000Z\","
                 "\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\","
                 "\"usage\":{\"input\":%d,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,"
                 "\"cost\":{\"total\":0.001}},\"timestamp\":%lld}}\n",
                 n, 100 + n, 1796000000000LL + n);
}

static void append(const char *path, const char *s)
{
        FILE *f = fopen(path, "a");
        fputs(s, f);
        fclose(f);
}

static void append_calls(const char *path, int from, int to)
{
        char b[1024];
        for (int i = from; i < to; i++) {
                call_line(b, sizeof(b), i);
                append(path, b);
        }
}

static int run(const char *path, uint64_t budget, size_t max_line, struct tail_outcome *out)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT, .counters = &C };
        struct source_ctx ctx = { .adapter = &adapter_pi, .path = path };
        t.limits.budget_bytes = budget;
        if (max_line)
                t.limits.max_line = max_line;
        stat(path, &ctx.st);
        ctx.source_hash = hash64(path, strlen(path));
        return tail_source(&t, &ctx, CLASS_LINES, out);
}

static uint64_t rows(void)
{
        struct ledger_stats st;
        ledger_get_stats(L, &st);
        return st.rows;
}

static uint64_t offset_of(const char *path)
{
        struct checkpoint cp;
        return ledger_get_checkpoint(L, path, &cp) == 0 ? cp.offset : (uint64_t)-1;
}

/* tail_db: events a database reader cannot decode or parse go into the
 * checkpoint's malformed counter and the tail counters, with the rows. */
static void test_db(void)
{
        static const char *const events[] = {
                "{\"type\":\"session\",\"version\":3,\"id\":\"db1\",\"timestamp\":\"2026-11-30T10:00:00.000Z\","
                "\"cwd\":\"/p\"}",
                NULL, /* a bad zstd blob */
                "{\"type\":\"message\",\"timestamp\":\"2026-11-30T10:00:01.000Z\",\"message\":{\"role\":"
                "\"assistant\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":5,\"output\":1}}}",
                "{not json",
        };
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT, .counters = &C };
        struct source_ctx ctx = { .adapter = &adapter_openclaw };
        struct tail_outcome out;
        struct checkpoint cp;
        char path[512];
        sqlite3 *db;
        sqlite3_stmt *st;

        snprintf(path, sizeof(path), "%s/openclaw-agent.sqlite", dir);
        if (sqlite3_open(path, &db) != SQLITE_OK ||
            sqlite3_exec(db, "CREATE TABLE transcript_events(session_id TEXT, seq INTEGER, event_json TEXT, "
                             "event_zstd BLOB)", NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(db, "INSERT INTO transcript_events VALUES ('db1', ?1, ?2, ?3)", -1, &st, NULL) !=
                    SQLITE_OK)
                exit(99);
        for (int i = 0; i < 4; i++) {
                sqlite3_bind_int(st, 1, i);
                if (events[i])
                        sqlite3_bind_text(st, 2, events[i], -1, SQLITE_STATIC);
                else
                        sqlite3_bind_blob(st, 3, "\x28\xb5\x2f\xfd not zstd", 12, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        exit(99);
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
        }
        sqlite3_finalize(st);
        sqlite3_close(db);

        ctx.path = path;
        ctx.source_hash = hash64(path, strlen(path));
        uint64_t r0 = rows(), m0 = C.malformed;
        is_int(tail_source(&t, &ctx, CLASS_TABLE, &out), TAIL_SETTLING, "db: read, just written: look again shortly");
        is_int(rows() - r0, 1, "db: the good event is a row");
        age_db(path); /* the writer long gone */
        is_int(tail_source(&t, &ctx, CLASS_TABLE, &out), TAIL_DONE, "db: read");
        is_int(rows() - r0, 1, "db: the good event is a row");
        ok(ledger_get_checkpoint(L, path, &cp) == 0 && cp.malformed == 2 && cp.offset == 4,
           "db: the bad blob and the non-JSON event in the checkpoint's malformed count");
        is_int(C.malformed - m0, 2, "db: ... and in the tail counters");
        is_int(tail_source(&t, &ctx, CLASS_TABLE, &out), TAIL_DONE, "db: read again");
        ok(ledger_get_checkpoint(L, path, &cp) == 0 && cp.malformed == 2 && C.malformed - m0 == 2,
           "db: nothing counted twice");
}

int main(void)
{
        char a[512], b[512], big[512];
        struct tail_outcome out;
        struct stat st;
        int r;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0)
                return 99;
        snprintf(a, sizeof(a), "%s/a.jsonl", dir);
        snprintf(b, sizeof(b), "%s/b.jsonl", dir);

        append(a, HDR);
        append_calls(a, 0, 5);
        is_int(run(a, UINT64_MAX, 0, &out), TAIL_DONE, "first read: done");
        is_int(rows(), 5, "five calls counted");
        stat(a, &st);
        is_int(offset_of(a), st.st_size, "offset at the end of the last line");
        uint64_t read0 = C.bytes_read;
        is_int(run(a, UINT64_MAX, 0, &out), TAIL_DONE, "second read: done");
        is_int(C.bytes_read, read0, "nothing re-read when nothing changed");

        /* partial line: offset stays before it; completed later: counted once */
        char line[1024];
        call_line(line, sizeof(line), 5);
        size_t half = strlen(line) / 2;
        char part[1024];
        snprintf(part, sizeof(part), "%.*s", (int)half, line);
        append(a, part);
        run(a, UINT64_MAX, 0, &out);
        is_int(rows(), 5, "a partial line is not counted");
        is_int(offset_of(a), st.st_size, "offset does not move into a partial line");
        append(a, line + half);
        run(a, UINT64_MAX, 0, &out);
        is_int(rows(), 6, "completed line counted");

        /* unterminated but complete JSON: counted now, once */
        call_line(line, sizeof(line), 6);
        line[strlen(line) - 1] = 0;
        append(a, line);
        uint64_t before = offset_of(a);
        run(a, UINT64_MAX, 0, &out);
        is_int(rows(), 7, "complete unterminated last line counted");
        is_int(offset_of(a), before, "... without moving the offset");
        append(a, "\n");
        run(a, UINT64_MAX, 0, &out);
        is_int(rows(), 7, "its newline later: not counted again");
        stat(a, &st);
        is_int(offset_of(a), st.st_size, "offset now past it");

        /* bounded work per call still makes progress through a long first line */
        snprintf(big, sizeof(big), "%s/big.jsonl", dir);
        append(big, HDR);
        {
                FILE *f = fopen(big, "a");
                fputs("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"", f);
                for (int i = 0; i < 3 * 1024 * 1024; i++)
                        fputc('x', f);
                fputs("\"}}\n", f);
                fclose(f);
        }
        append_calls(big, 100, 103);
        int calls = 0;
        do {
                r = run(big, 64 * 1024, 0, &out);
                calls++;
        } while (r == TAIL_MORE && calls < 1000);
        is_int(r, TAIL_DONE, "small budget: finishes");
        ok(calls < 1000, "small budget: progress on every call (%d calls)", calls);
        is_int(rows(), 10, "small budget: calls after the long line counted");

        /* an over-long line is skipped to its newline and counted */
        uint64_t over0 = C.oversized;
        {
                FILE *f = fopen(big, "a");
                for (int i = 0; i < 300 * 1024; i++)
                        fputc('y', f);
                fputc('\n', f);
                fclose(f);
        }
        append_calls(big, 103, 104);
        r = run(big, UINT64_MAX, 64 * 1024, &out);
        is_int(r, TAIL_DONE, "over-long line: done");
        is_int(C.oversized - over0, 1, "over-long line counted as skipped");
        is_int(rows(), 11, "the call after it is counted");

        /* rename: checkpoint moves, nothing re-read */
        read0 = C.bytes_read;
        rename(a, b);
        r = run(b, UINT64_MAX, 0, &out);
        is_int(r, TAIL_DONE, "renamed file read");
        ok(out.renamed, "rename recognised");
        is_int(C.bytes_read, read0, "rename re-reads nothing");
        is_int(offset_of(a), (uint64_t)-1, "old path's checkpoint moved");

        /* truncate and rewrite (same inode): re-read from 0, old rows kept */
        uint64_t resets0 = C.resets;
        {
                FILE *f = fopen(b, "w");
                fputs(HDR, f);
                fclose(f);
        }
        append_calls(b, 0, 2);  /* already counted */
        append_calls(b, 50, 51); /* new */
        run(b, UINT64_MAX, 0, &out);
        ok(out.reset, "shrink detected");
        is_int(C.resets - resets0, 1, "one reset");
        is_int(rows(), 12, "rewrite: only the new call added");

        /* same size, different bytes before the offset: marker catches it */
        {
                int fd = open(b, O_RDWR);
                char c;
                fstat(fd, &st);
                /* a digit of the last call's timestamp, changed to another */
                off_t pos = st.st_size - 5;
                (void)!pread(fd, &c, 1, pos);
                c = c == '1' ? '2' : '1';
                (void)!pwrite(fd, &c, 1, pos);
                close(fd);
        }
        resets0 = C.resets;
        run(b, UINT64_MAX, 0, &out);
        is_int(C.resets - resets0, 1, "same-size rewrite detected by the marker");

        /* new inode under the same name */
        {
                char tmp[600];
                snprintf(tmp, sizeof(tmp), "%s.tmp", b);
                FILE *f = fopen(tmp, "w");
                fputs(HDR, f);
                fclose(f);
                append_calls(tmp, 60, 62);
                rename(tmp, b);
        }
        uint64_t r0 = rows();
        run(b, UINT64_MAX, 0, &out);
        ok(out.reset, "new inode detected");
        is_int(rows() - r0, 2, "new inode: its calls counted");

        /* not a pi file: read once, then ignored */
        char np[512];
        snprintf(np, sizeof(np), "%s/np.jsonl", dir);
        append(np, "{\"hello\":1}\n");
        is_int(run(np, UINT64_MAX, 0, &out), TAIL_NOT_SOURCE, "not a transcript");
        append(np, "{\"hello\":2}\n");
        is_int(run(np, UINT64_MAX, 0, &out), TAIL_NOT_SOURCE, "still not, without re-reading");

        /* gone / not regular */
        char gone[512];
        snprintf(gone, sizeof(gone), "%s/gone.jsonl", dir);
        is_int(run(gone, UINT64_MAX, 0, &out), -ENOENT, "missing file: -ENOENT");
        is_int(run(dir, UINT64_MAX, 0, &out), -EISDIR, "directory: -EISDIR");

        test_db();

        ledger_close(L);
        return tap_done();
}
