/* The ingest engine against a real LMDB ledger and real files under a
 * private HOME: discovery finds the roots, a reconcile finds and reads the
 * sources, the one path-event entry point adds a new file, scans a new
 * directory, maps a database's -wal to its database and ignores paths of
 * nobody, each adapter's figures follow what the reads committed (never a
 * second read of the ledger), a source that cannot be read is retried after
 * a backoff, and a file that is gone is dropped from the table while its
 * rows stay. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "ledger/ledger.h"
#include "log.h"
#include "registry.h"
#include "tap.h"
#include "testutil.h"

static struct ledger *L;
static int dirs_seen, rows_seen;

static int on_dir(void *u, const struct root *root, const char *path, int depth)
{
        (void)u;
        (void)root;
        (void)path;
        (void)depth;
        dirs_seen++;
        return 0;
}

static void on_rows(void *u, const struct usage_row *rows, const uint8_t *outcomes, size_t n)
{
        (void)u;
        (void)rows;
        for (size_t i = 0; i < n; i++)
                rows_seen += outcomes[i] == ROW_ADDED;
}

static void session(const char *path, const char *id, int base, int n)
{
        FILE *f = fopen(path, "w");
        if (!f)
                exit(99);
        fprintf(f, "{\"type\":\"session\",\"version\":3,\"id\":\"%s\",\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"cwd\":\"/p\"}\n", id);
        for (int i = 0; i < n; i++)
                fprintf(f,
                        "{\"type\":\"message\",\"id\":\"%08x\",\"timestamp\":\"2026-11-30T10:00:01.000Z\","
                        "\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\","
                        "\"usage\":{\"input\":%d,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,"
                        "\"cost\":{\"total\":0.001}},\"timestamp\":%lld}}\n",
                        base + i, 100 + base + i, 1796000000000LL + base + i);
        fclose(f);
}

static void drain(struct ingest *in)
{
        for (int i = 0; i < 1000 && ingest_run(in, 64u << 20) > 0; i++)
                ;
}

static uint64_t ledger_rows(void)
{
        struct ledger_stats st;
        ledger_get_stats(L, &st);
        return st.rows;
}

/* The sum of the checkpoints' counters of one adapter, read from the ledger. */
struct cp_sum {
        const char *tool;
        uint64_t rows, bytes;
};

static int add_cp(const char *path, const struct checkpoint *cp, void *u)
{
        struct cp_sum *s = u;
        (void)path;
        if (strcmp(cp->tool, s->tool) == 0) {
                s->rows += cp->rows_added;
                s->bytes += cp->bytes_read;
        }
        return 0;
}

int main(void)
{
        char *tmp = tap_tmpdir(), home[PATH_MAX], ldir[PATH_MAX], sdir[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];
        char sub[PATH_MAX], p3[PATH_MAX], oc[PATH_MAX], db[PATH_MAX], wal[PATH_MAX], bad[PATH_MAX];
        struct fenv fe = { 0 };
        struct discover_env env = fenv_env(&fe);
        struct ingest_hooks hooks = { .on_dir = on_dir, .on_rows = on_rows };
        struct ingest *in;
        struct adapter_stats st;
        struct stat sb;

        log_setup(LOG_TARGET_CONSOLE, LOG_CRIT); /* the engine's notes are not this test's output */
        pj(home, tmp, "home");
        pj(ldir, tmp, "ledger");
        mkdir_p(ldir);
        xsnprintf(sdir, sizeof(sdir), "%s/.pi/agent/sessions/--p--", home);
        mkdir_p(sdir);
        xsnprintf(oc, sizeof(oc), "%s/.openclaw/agents/main/agent", home);
        mkdir_p(oc);
        fenv_set(&fe, "HOME", home);
        pj(p1, sdir, "a.jsonl");
        session(p1, "s-a", 0, 3);
        if (ledger_open(ldir, 0, &L) < 0 || ingest_new(L, &env, &hooks, &in) < 0)
                return 99;

        is_int(ingest_discover(in), 0, "discovery");
        char pi_root[PATH_MAX];
        xsnprintf(pi_root, sizeof(pi_root), "%s/.pi/agent/sessions", home);
        ok(find_root(ingest_roots(in), pi_root) != NULL, "pi's default root under the HOME it was given");

        is_int(ingest_reconcile(in), 0, "reconcile");
        ok(ingest_pending(in), "  the session is queued");
        ok(dirs_seen >= 2, "  directories handed to the watch hook (%d)", dirs_seen);
        drain(in);
        is_int((int)ledger_rows(), 3, "read: three rows");
        is_int(rows_seen, 3, "  the rows hook saw them");
        ingest_adapter_stats(in, &adapter_pi, &st);
        stat(p1, &sb);
        ok(st.files == 1 && st.rows == 3 && st.bytes_read == (uint64_t)sb.st_size,
           "  pi's figures: 1 file, 3 rows, every byte (%llu)", (unsigned long long)st.bytes_read);

        /* a new file, named by an event */
        pj(p2, sdir, "b.jsonl");
        session(p2, "s-b", 100, 2);
        is_int(ingest_path_event(in, p2, false, true), 1, "a new file's event: queued");
        ok(ingest_find(in, p2) != NULL, "  and known");
        drain(in);
        is_int((int)ledger_rows(), 5, "  read: two rows more");

        /* appended to: its event queues it again */
        {
                FILE *f = fopen(p2, "a");
                fprintf(f, "{\"type\":\"message\",\"id\":\"00000fff\",\"timestamp\":\"2026-11-30T10:00:02.000Z\","
                           "\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\",\"model\":\"m\","
                           "\"usage\":{\"input\":7,\"output\":1},\"timestamp\":1796000009999}}\n");
                fclose(f);
        }
        is_int(ingest_path_event(in, p2, false, true), 1, "an append's event: queued");
        drain(in);
        is_int((int)ledger_rows(), 6, "  the appended call read");

        /* a path of nobody */
        is_int(ingest_path_event(in, "/nonexistent/elsewhere/x.jsonl", false, true), 0, "a path under no root: nothing");

        /* a directory that appeared under a root, a session already in it */
        xsnprintf(sub, sizeof(sub), "%s/.pi/agent/sessions/--q--", home);
        mkdir_p(sub);
        pj(p3, sub, "c.jsonl");
        session(p3, "s-c", 200, 4);
        int dirs_before = dirs_seen;
        is_int(ingest_path_event(in, sub, true, true), 1, "a new directory's event: scanned");
        ok(dirs_seen == dirs_before + 1 && ingest_find(in, p3) != NULL, "  watched, and its file known");
        drain(in);
        is_int((int)ledger_rows(), 10, "  read");

        /* the figures are what the reads committed, as the ledger has them */
        {
                struct cp_sum cs = { .tool = "pi" };
                ledger_foreach_checkpoint(L, add_cp, &cs);
                ingest_adapter_stats(in, &adapter_pi, &st);
                ok(st.rows == cs.rows && st.bytes_read == cs.bytes && st.files == 3,
                   "pi's figures equal its checkpoints' (%llu rows, %llu bytes)", (unsigned long long)cs.rows,
                   (unsigned long long)cs.bytes);
        }

        /* a database's -wal names the database: the database is the source */
        ok(ingest_discover(in) == 0, "discovery again (the OpenClaw state dir exists now)");
        pj(db, oc, "openclaw-agent.sqlite");
        {
                sqlite3 *d;
                if (sqlite3_open(db, &d) != SQLITE_OK)
                        return 99;
                sqlite3_exec(d, "PRAGMA journal_mode=WAL; CREATE TABLE x(a)", NULL, NULL, NULL);
                sqlite3_close(d);
        }
        xsnprintf(wal, sizeof(wal), "%s-wal", db);
        is_int(ingest_path_event(in, wal, false, true), 1, "a -wal's event: its database queued");
        ok(ingest_find(in, db) != NULL && ingest_find(in, wal) == NULL, "  the database is the source, not the -wal");
        drain(in);

        /* a source that cannot be read: counted, retried after a backoff */
        pj(bad, sdir, "d.jsonl");
        session(bad, "s-d", 300, 1);
        ingest_path_event(in, bad, false, true);
        drain(in);
        unlink(bad);
        mkdir_p(bad); /* a directory where the file was */
        ingest_path_event(in, bad, false, true);
        drain(in);
        struct source_rec *s = ingest_find(in, bad);
        ok(s && s->last_error == -EISDIR, "not a file any more: the error is noted (%d)", s ? s->last_error : 0);
        ingest_path_event(in, bad, false, true);
        drain(in);
        ok(ingest_retry_due(in) > 0, "  another event during the backoff: a retry is due later");
        rmdir(bad);

        /* gone: dropped from the table at the next reconcile; its rows stay */
        unlink(p1);
        ingest_reconcile(in);
        drain(in);
        ok(ingest_find(in, p1) == NULL, "a deleted file is dropped from the table");
        is_int((int)ledger_rows(), 11, "  its rows stay in the ledger");

        ingest_free(in);
        L = ledger_close(L);
        return tap_done();
}
