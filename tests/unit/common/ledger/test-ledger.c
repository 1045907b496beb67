/* Unit tests for the LMDB ledger on a real file in a temporary directory:
 * dedup, monotone upsert, rollups, checkpoints, identity, growth, schema. */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ledger/ledger.h"
#include "tap.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */
#define MIN 60000LL

static struct usage_row *mkrow(const char *id, const char *session, int64_t t, uint64_t out,
                               int64_t cost, uint32_t flags)
{
        static struct usage_row rows[8];
        static int next;
        struct usage_row *r = &rows[next++ % 8];
        struct keyhash h;

        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, "test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->flags = flags | ROW_F_TOKENS_KNOWN;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = t;
        r->input = 100;
        r->output = out;
        r->total = 100 + out;
        r->cost_nano = cost;
        r->cost_source = cost >= 0 ? COST_VENDOR : COST_NONE;
        if (cost < 0)
                r->cost_nano = 0;
        ROW_SET(r->tool, "pi");
        ROW_SET(r->session, session);
        ROW_SET(r->project, "/p");
        ROW_SET(r->provider, "anthropic");
        ROW_SET(r->model, "claude");
        return r;
}

static void add_call(struct usage_row *r, const char *id, const char *name)
{
        ROW_SET(r->calls[r->n_calls].id, id);
        ROW_SET(r->calls[r->n_calls].name, name);
        r->n_calls++;
}

static int commit1(struct ledger *l, struct usage_row *r, struct commit_result *res)
{
        uint8_t out = 0;
        struct commit_batch b = {.rows = r, .n_rows = 1, .ret_outcomes = &out};
        int ret = ledger_commit(l, &b, res);
        return ret < 0 ? ret : out;
}

/* Collected rollups, for comparisons. */
struct rl {
        struct rollup_entry e[64];
        int n;
};

static int collect_rollup(const struct rollup_entry *e, void *u)
{
        struct rl *c = u;
        if (c->n < 64)
                c->e[c->n] = *e;
        c->n++;
        return 0;
}

struct sl {
        struct session_entry e[16];
        int n;
};

static int collect_session(const struct session_entry *e, void *u)
{
        struct sl *c = u;
        if (c->n < 16)
                c->e[c->n] = *e;
        c->n++;
        return 0;
}

static int count_cb(const struct activity_entry *e, void *u)
{
        (void)e;
        (*(int *)u)++;
        return 0;
}

static const struct session_entry *find_session(const struct sl *s, const char *id)
{
        for (int i = 0; i < s->n && i < 16; i++)
                if (strcmp(s->e[i].session, id) == 0)
                        return &s->e[i];
        return NULL;
}

static int dir_entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;
        if (!d)
                return -1;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

static void test_errno(void)
{
        is_int(ledger_errno(0), 0, "errno: 0");
        is_int(ledger_errno(MDB_MAP_FULL), -ENOSPC, "errno: MAP_FULL");
        is_int(ledger_errno(MDB_NOTFOUND), -ENOENT, "errno: NOTFOUND");
        is_int(ledger_errno(MDB_KEYEXIST), -EEXIST, "errno: KEYEXIST");
        is_int(ledger_errno(MDB_CORRUPTED), -EBADMSG, "errno: CORRUPTED");
        is_int(ledger_errno(MDB_INVALID), -EBADMSG, "errno: INVALID");
        is_int(ledger_errno(MDB_VERSION_MISMATCH), -EPROTO, "errno: VERSION_MISMATCH");
        is_int(ledger_errno(MDB_PAGE_NOTFOUND), -EIO, "errno: other MDB code");
        is_int(ledger_errno(ENOMEM), -ENOMEM, "errno: positive errno");
}

static void test_sums(void)
{
        struct usage_sums s = {0};
        struct usage_row *r = mkrow("s", "x", T0, 10, 5, 0);
        r->n_calls = 2;
        usage_sums_add_row(&s, r, +1);
        r->flags &= ~ROW_F_TOKENS_KNOWN;
        r->cost_source = COST_NONE;
        usage_sums_add_row(&s, r, +1);
        ok(s.events == 2 && s.token_events == 1 && s.priced_events == 1, "sums: counters");
        ok(s.output == 10 && s.cost_nano == 5 && s.calls == 4, "sums: unknown tokens/cost not added");
        usage_sums_add_row(&s, r, -1);
        ok(s.events == 1 && s.calls == 2 && s.output == 10, "sums: sign -1 removes");
        r->cost_source = COST_COMPUTED;
        usage_sums_add_row(&s, r, +1);
        is_int(s.computed_events, 1, "sums: computed events counted");
}

static void test_basic(const char *dir)
{
        struct ledger *l = NULL;
        struct commit_result res;
        struct rl rl = {0};
        struct sl sl = {0};
        char val[32], path[512];
        struct stat st;
        int r, n;

        r = ledger_open(dir, 0, &l);
        is_int(r, 0, "open creates the ledger");
        snprintf(path, sizeof(path), "%s/ledger.mdb", dir);
        ok(stat(path, &st) == 0 && S_ISREG(st.st_mode), "ledger.mdb is a file (MDB_NOSUBDIR)");
        snprintf(path, sizeof(path), "%s/ledger.mdb-lock", dir);
        ok(stat(path, &st) == 0, "ledger.mdb-lock exists");
        ok(strstr(ledger_path(l), "/ledger.mdb") != NULL, "ledger_path names the data file");
        r = ledger_meta_get(l, "schema_version", val, sizeof(val));
        ok(r == 0 && strcmp(val, "4") == 0, "schema_version 4 written at creation");
        is_int(ledger_meta_get(l, "nope", val, sizeof(val)), -ENOENT, "missing meta: -ENOENT");
        is_int(ledger_meta_set(l, "k", "some value"), 0, "meta set");
        is_int(ledger_meta_get(l, "k", val, 4), -ENOBUFS, "meta get into a small buffer");

        /* insert-if-absent */
        struct usage_row *a = mkrow("a", "s1", T0 + 5 * MIN, 50, 1000, 0);
        add_call(a, "c1", "bash");
        r = commit1(l, a, &res);
        ok(r == ROW_ADDED && res.added == 1 && res.calls_added == 1, "new row: ROW_ADDED, call added");
        a->output = 999; /* a re-read must not change anything */
        r = commit1(l, a, &res);
        ok(r == ROW_DUP && res.dup == 1 && res.added == 0, "same key again: ROW_DUP");
        ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, collect_rollup, &rl);
        ok(rl.n == 1 && rl.e[0].sums.events == 1 && rl.e[0].sums.output == 50,
           "dup left the rollup alone (events 1, output 50)");
        ok(rl.e[0].bucket_ms == T0 && strcmp(rl.e[0].tool, "pi") == 0 &&
           strcmp(rl.e[0].provider, "anthropic") == 0 && strcmp(rl.e[0].model, "claude") == 0,
           "rollup key decodes: bucket, tool, provider, model");

        /* monotone upsert: output 25 -> 173, time moves earlier into another bucket */
        struct usage_row *u1 = mkrow("msg_1", "s1", T0 + 20 * MIN, 25, 300, ROW_F_UPSERT);
        add_call(u1, "toolu_A", "Read");
        struct row_key k1 = u1->key;
        r = commit1(l, u1, &res);
        is_int(r, ROW_ADDED, "first upsert line: ROW_ADDED");
        struct usage_row *u2 = mkrow("msg_1", "s1", T0 + 10 * MIN, 173, 900, ROW_F_UPSERT);
        add_call(u2, "toolu_B", "Edit");
        add_call(u2, "toolu_A", "Read");
        r = commit1(l, u2, &res);
        ok(r == ROW_MERGED && res.merged == 1 && res.calls_added == 1,
           "growing line: ROW_MERGED, one new call");
        r = commit1(l, u2, &res);
        is_int(r, ROW_DUP, "same line again: ROW_DUP");
        struct usage_row *u3 = mkrow("msg_1", "s1", T0 + 25 * MIN, 100, 200, ROW_F_UPSERT);
        r = commit1(l, u3, &res);
        is_int(r, ROW_DUP, "a smaller, later line changes nothing: ROW_DUP");

        struct usage_row got;
        r = ledger_get_row(l, &k1, &got);
        is_int(r, 0, "get merged row");
        is_int(got.output, 173, "merged output is the maximum");
        is_int(got.time_ms, T0 + 10 * MIN, "merged time is the earliest");
        is_int(got.cost_nano, 900, "merged cost is the maximum");
        is_int(got.n_calls, 2, "calls are the union (2)");
        ok(memcmp(&got.key, &k1, sizeof(got.key)) == 0, "get_row fills the key");

        n = 0;
        ledger_foreach_activity(l, count_cb, &n);
        is_int(n, 3, "activity: 1 + 2 calls, no duplicate for toolu_A");

        memset(&rl, 0, sizeof(rl));
        ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, collect_rollup, &rl);
        is_int(rl.n, 1, "rollup: the old bucket (T0+15min) was emptied and removed");
        ok(rl.e[0].bucket_ms == T0 && rl.e[0].sums.events == 2 &&
           rl.e[0].sums.output == 50 + 173 && rl.e[0].sums.cost_nano == 1900 &&
           rl.e[0].sums.calls == 3,
           "rollup moved by the difference: events 2, output 223, cost 1900, calls 3");

        ledger_foreach_session(l, collect_session, &sl);
        ok(sl.n == 1 && sl.e[0].sums.output == 223 && sl.e[0].sums.events == 2,
           "session sums moved by the difference");
        ok(sl.e[0].first_ms == T0 + 5 * MIN && strcmp(sl.e[0].project, "/p") == 0 &&
           strcmp(sl.e[0].model, "claude") == 0, "session first time, project, model");

        /* sidechain copy, then the main-chain line: the main session wins */
        struct usage_row *s1 = mkrow("msg_2", "side", T0 + 40 * MIN, 10, 10,
                                     ROW_F_UPSERT | ROW_F_SIDECHAIN);
        commit1(l, s1, &res);
        struct usage_row *s2 = mkrow("msg_2", "main", T0 + 41 * MIN, 10, 10, ROW_F_UPSERT);
        r = commit1(l, s2, &res);
        is_int(r, ROW_MERGED, "non-sidechain line of a sidechain row: merged");
        ledger_get_row(l, &s1->key, &got);
        ok(strcmp(got.session, "main") == 0 && !(got.flags & ROW_F_SIDECHAIN),
           "row moved to the main session, sidechain flag cleared");
        memset(&sl, 0, sizeof(sl));
        ledger_foreach_session(l, collect_session, &sl);
        ok(find_session(&sl, "side") == NULL && find_session(&sl, "main") &&
           find_session(&sl, "main")->sums.events == 1, "session sums moved side -> main");
        struct usage_row *s3 = mkrow("msg_2", "side2", T0 + 42 * MIN, 10, 10,
                                     ROW_F_UPSERT | ROW_F_SIDECHAIN);
        is_int(commit1(l, s3, &res), ROW_DUP, "a later sidechain copy does not take it back");

        /* an unpriced, token-less upsert never lowers anything */
        struct usage_row *s4 = mkrow("msg_2", "main", T0 + 41 * MIN, 0, -1, ROW_F_UPSERT);
        s4->flags &= ~ROW_F_TOKENS_KNOWN;
        is_int(commit1(l, s4, &res), ROW_DUP, "unknown tokens/cost do not lower a row");

        /* a batch with outcomes, and a rollup range scan */
        struct usage_row batch[3];
        uint8_t outc[3];
        batch[0] = *mkrow("b1", "s2", T0 + 24 * 60 * MIN, 1, 1, 0);
        batch[1] = *mkrow("b1", "s2", T0 + 24 * 60 * MIN, 1, 1, 0);
        batch[2] = *mkrow("b2", "s2", -1, 1, 1, 0);
        struct commit_batch cb = {.rows = batch, .n_rows = 3, .ret_outcomes = outc};
        r = ledger_commit(l, &cb, &res);
        ok(r == 0 && outc[0] == ROW_ADDED && outc[1] == ROW_DUP && outc[2] == ROW_REFUSED &&
           res.added == 1 && res.dup == 1 && res.refused == 1,
           "batch: in-batch duplicate seen as ROW_DUP, a pre-1970 row refused");
        struct ledger_refused ref;
        ok(ledger_get_refused(l, &ref) == 0 && ref.n[0] == 1 && ref.n[3] == 1 && ref.n[1] == 0,
           "the refusal is counted, as a time refusal");
        batch[2].time_ms = 0; /* the epoch itself is in bounds */
        cb.n_rows = 1;
        cb.rows = &batch[2];
        r = ledger_commit(l, &cb, &res);
        ok(r == 0 && outc[0] == ROW_ADDED, "a row at the epoch is stored");
        memset(&rl, 0, sizeof(rl));
        ledger_foreach_rollup(l, T0, T0 + 24 * 60 * MIN, collect_rollup, &rl);
        ok(rl.n == 2 && rl.e[0].bucket_ms == T0 && rl.e[1].bucket_ms == T0 + 30 * MIN,
           "rollup range is [from, until): the next day's bucket is not in it");
        memset(&rl, 0, sizeof(rl));
        ledger_foreach_rollup(l, INT64_MIN, 1, collect_rollup, &rl);
        ok(rl.n == 1 && rl.e[0].bucket_ms == 0, "epoch row: bucket 0, sorted first");

        struct ledger_stats stats;
        r = ledger_get_stats(l, &stats);
        ok(r == 0 && stats.rows == 5 && stats.calls == 3 && stats.sessions == 3 &&
           stats.sources == 0 && stats.rollups == 4, "stats: 5 rows, 3 calls, 3 sessions, 4 rollups");
        ok(stats.file_bytes > 0 && stats.map_bytes == 256ull << 20, "stats: file and map size");
        is_int(ledger_sync_start(l), 0, "sync start: the write-back begins (sync_file_range on the data file)");
        is_int(ledger_sync(l), 0, "sync");

        /* rebuild equals incremental */
        struct rl before = {0}, after = {0};
        struct sl sb = {0}, sa = {0};
        ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, collect_rollup, &before);
        ledger_foreach_session(l, collect_session, &sb);
        is_int(ledger_rebuild_rollups(l), 0, "rebuild rollups");
        ledger_foreach_rollup(l, INT64_MIN, INT64_MAX, collect_rollup, &after);
        ledger_foreach_session(l, collect_session, &sa);
        ok(before.n == after.n && before.n > 2 &&
           memcmp(before.e, after.e, sizeof(before.e[0]) * (size_t)before.n) == 0,
           "rebuilt rollups equal the incremental ones (%d entries)", after.n);
        int same = sb.n == sa.n;
        for (int i = 0; same && i < sa.n; i++)
                same = memcmp(&sb.e[i].sums, &sa.e[i].sums, sizeof(sa.e[i].sums)) == 0 &&
                       sb.e[i].first_ms == sa.e[i].first_ms &&
                       strcmp(sb.e[i].project, sa.e[i].project) == 0;
        ok(same, "rebuilt session sums equal the incremental ones");

        ledger_close(l);

        /* read-only open of an existing ledger: reads work, writes refused */
        r = ledger_open(dir, LEDGER_RDONLY, &l);
        is_int(r, 0, "read-only open");
        r = ledger_get_row(l, &k1, &got);
        ok(r == 0 && got.output == 173, "read-only: rows readable");
        is_int(commit1(l, mkrow("ro", "s", T0, 1, 1, 0), &res), -EROFS,
               "read-only: commit refused with -EROFS");
        is_int(ledger_meta_set(l, "x", "y"), -EROFS, "read-only: meta_set refused");
        is_int(ledger_sync_start(l), 0, "read-only: sync start has nothing to do");
        ledger_close(l);
}

struct cp_count {
        const char *longp;
        int count, longseen;
};

static int cp_count_cb(const char *p, const struct checkpoint *c, void *u)
{
        struct cp_count *cc = u;
        (void)c;
        cc->count++;
        cc->longseen += strcmp(p, cc->longp) == 0;
        return 0;
}

static int cp_stop(const char *p, const struct checkpoint *c, void *u)
{
        (void)p, (void)c, (void)u;
        return 42;
}

static void test_checkpoints(const char *dir)
{
        struct ledger *l = NULL;
        struct checkpoint cp = {0}, got;
        char path[256];
        int r;

        ledger_open(dir, 0, &l);
        cp.kind = SOURCE_LINES;
        ROW_SET(cp.tool, "pi");
        cp.dev = 2049;
        cp.ino = 777;
        cp.size = 4096;
        cp.mtime_ns = 1234567890123456789LL;
        cp.offset = 4000;
        cp.head_hash = 0xdeadbeef;
        cp.head_len = 120;
        cp.marker_hash = 0xfeedface;
        cp.marker_len = 64;
        cp.lines = 33;
        cp.malformed = 2;
        cp.last_commit_ms = T0;
        cp.state_len = CHECKPOINT_STATE_MAX;
        for (int i = 0; i < CHECKPOINT_STATE_MAX; i++)
                cp.state[i] = (uint8_t)(i * 7);

        struct usage_row *row = mkrow("cp-row", "s", T0, 1, 1, 0);
        struct commit_batch b = {.source_path = "/h/a.jsonl", .cp = &cp, .rows = row, .n_rows = 1};
        is_int(ledger_commit(l, &b, NULL), 0, "commit rows + checkpoint");
        r = ledger_get_checkpoint(l, "/h/a.jsonl", &got);
        is_int(r, 0, "checkpoint read back");
        is_int(got.rows_added, 1, "stored rows_added includes the batch's new row");
        got.rows_added = cp.rows_added;
        ok(memcmp(&got, &cp, sizeof(cp)) == 0, "checkpoint round trip, state blob included");
        is_int(ledger_get_checkpoint(l, "/h/none", &got), -ENOENT, "no checkpoint: -ENOENT");

        r = ledger_find_identity(l, 2049, 777, path, sizeof(path));
        ok(r == 0 && strcmp(path, "/h/a.jsonl") == 0, "identity (dev,ino) -> path");
        is_int(ledger_find_identity(l, 2049, 778, path, sizeof(path)), -ENOENT,
               "unknown identity: -ENOENT");
        is_int(ledger_find_identity(l, 2049, 777, path, 4), -ENAMETOOLONG,
               "identity into a small buffer");

        is_int(ledger_move_checkpoint(l, "/h/a.jsonl", "/h/a.jsonl.reset.1"), 0, "move checkpoint");
        is_int(ledger_get_checkpoint(l, "/h/a.jsonl", &got), -ENOENT, "old path gone after move");
        r = ledger_get_checkpoint(l, "/h/a.jsonl.reset.1", &got);
        ok(r == 0 && got.offset == 4000 && got.state[100] == (uint8_t)700, "new path has it");
        r = ledger_find_identity(l, 2049, 777, path, sizeof(path));
        ok(r == 0 && strcmp(path, "/h/a.jsonl.reset.1") == 0, "identity follows the move");
        is_int(ledger_move_checkpoint(l, "/h/none", "/h/x"), -ENOENT, "move of nothing: -ENOENT");

        /* a new file at the old name; then the name gets yet another inode */
        struct checkpoint cp2 = cp;
        cp2.ino = 888;
        cp2.state_len = 3;
        b = (struct commit_batch){.source_path = "/h/a.jsonl", .cp = &cp2};
        ledger_commit(l, &b, NULL);
        r = ledger_find_identity(l, 2049, 777, path, sizeof(path));
        ok(r == 0 && strcmp(path, "/h/a.jsonl.reset.1") == 0,
           "another path's checkpoint and identity left alone");
        cp2.ino = 999;
        ledger_commit(l, &b, NULL);
        is_int(ledger_find_identity(l, 2049, 888, path, sizeof(path)), -ENOENT,
               "the path's previous identity is dropped when it changes");
        r = ledger_find_identity(l, 2049, 999, path, sizeof(path));
        ok(r == 0 && strcmp(path, "/h/a.jsonl") == 0, "the new identity points at the path");

        /* a path longer than LMDB's key limit */
        char longp[1200];
        memset(longp, 'x', sizeof(longp) - 1);
        longp[0] = '/';
        longp[sizeof(longp) - 1] = 0;
        cp2.ino = 1000;
        b = (struct commit_batch){.source_path = longp, .cp = &cp2};
        is_int(ledger_commit(l, &b, NULL), 0, "checkpoint for a 1199-byte path");
        r = ledger_get_checkpoint(l, longp, &got);
        ok(r == 0 && got.ino == 1000, "long path checkpoint read back");

        struct cp_count cc = {.longp = longp};
        r = ledger_foreach_checkpoint(l, cp_count_cb, &cc);
        ok(r == 0 && cc.count == 3 && cc.longseen == 1, "foreach_checkpoint sees 3, full long path");
        is_int(ledger_foreach_checkpoint(l, cp_stop, NULL), 42, "foreach stops with cb's value");
        ledger_close(l);
}

static void test_growth(const char *dir)
{
        struct ledger *l = NULL;
        struct ledger_stats st;
        enum { N = 3000 };
        static struct usage_row rows[N];
        struct commit_result res;
        int r, missing = 0;

        setenv("AGENTMETER_TEST_MAPSIZE", "65536", 1);
        r = ledger_open(dir, 0, &l);
        unsetenv("AGENTMETER_TEST_MAPSIZE");
        is_int(r, 0, "open with a 64 KiB map (AGENTMETER_TEST_MAPSIZE)");
        ledger_get_stats(l, &st);
        is_int(st.map_bytes, 65536, "map starts at 64 KiB");
        for (int i = 0; i < N; i++) {
                char id[32], s[32];
                snprintf(id, sizeof(id), "grow-%d", i);
                snprintf(s, sizeof(s), "sess-%d", i % 50);
                rows[i] = *mkrow(id, s, T0 + i * MIN, (uint64_t)i, i, 0);
                add_call(&rows[i], id, "bash");
        }
        struct commit_batch b = {.rows = rows, .n_rows = N};
        r = ledger_commit(l, &b, &res);
        ok(r == 0 && res.added == N && res.calls_added == N, "3000 rows committed through MAP_FULL");
        ledger_get_stats(l, &st);
        ok(st.map_bytes > 65536 && st.rows == N && st.calls == N,
           "map grew to %llu, all rows and calls there", (unsigned long long)st.map_bytes);
        for (int i = 0; i < N; i++) {
                struct usage_row got;
                if (ledger_get_row(l, &rows[i].key, &got) < 0 || got.output != (uint64_t)i)
                        missing++;
        }
        is_int(missing, 0, "every row readable after growth");
        ledger_close(l);
        r = ledger_open(dir, 0, &l);
        ledger_get_stats(l, &st);
        ok(r == 0 && st.rows == N, "reopen after growth keeps everything");
        ledger_close(l);
}

/* Pages of file `path` in the page cache (mincore over a map of our own),
 * or -1. */
static long resident_pages(const char *path, long *ret_total)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        long n = -1, pages;
        void *m = MAP_FAILED;
        unsigned char *v = NULL;

        if (fd < 0)
                return -1;
        if (fstat(fd, &st) < 0 || st.st_size == 0)
                goto out;
        pages = (st.st_size + 4095) / 4096;
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        v = malloc((size_t)pages);
        if (m == MAP_FAILED || !v || mincore(m, (size_t)st.st_size, v) < 0)
                goto out;
        n = 0;
        for (long i = 0; i < pages; i++)
                n += v[i] & 1;
        *ret_total = pages;
out:
        if (m != MAP_FAILED)
                munmap(m, (size_t)st.st_size);
        free(v);
        close(fd);
        return n;
}

/* Of test_growth's rows "grow-0" .. "grow-(n-1)", how many do not read back
 * with their output (i). */
static int grown_rows_missing(struct ledger *l, uint64_t n)
{
        int missing = 0;
        for (uint64_t i = 0; i < n; i++) {
                char id[32];
                struct usage_row got, *want;
                snprintf(id, sizeof(id), "grow-%llu", (unsigned long long)i);
                want = mkrow(id, "x", 0, 0, 0, 0);
                if (ledger_get_row(l, &want->key, &got) < 0 || got.output != i)
                        missing++;
        }
        return missing;
}

/* After a bulk write the daemon drops the ledger's page cache (ledger.c says
 * why): the pages must really leave the cache, our own map's included, and
 * everything must read back and take new writes after it. */
static void test_drop_cache(const char *dir)
{
        struct ledger *l = NULL;
        struct ledger_stats st;
        struct statfs fs;
        long total = 0, before, after;
        uint64_t used = 0;
        int missing;

        is_int(ledger_open(dir, 0, &l), 0, "open the grown ledger");
        ledger_get_stats(l, &st);
        missing = grown_rows_missing(l, st.rows); /* faults every row's pages into our map */
        is_int(ledger_used_bytes(l, &used), 0, "ledger_used_bytes");
        ok(used > 100 * 4096 && used % 4096 == 0, "in use: %llu bytes, whole pages",
           (unsigned long long)used);
        before = resident_pages(ledger_path(l), &total);
        is_int(ledger_drop_cache(l), 0, "ledger_drop_cache");
        after = resident_pages(ledger_path(l), &total);
        if (statfs(dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
                ok(1, "# SKIP %s is on tmpfs: its pages cannot leave memory", dir);
        } else {
                ok(before > total / 2 && after < total / 10,
                   "pages in the cache: %ld of %ld before, %ld after", before, total, after);
        }
        missing += grown_rows_missing(l, st.rows);
        is_int(missing, 0, "every row reads the same before and after");
        is_int(commit1(l, mkrow("after-drop", "s", T0, 7, 1, 0), NULL), ROW_ADDED,
               "a commit after the drop");
        ledger_close(l);
        l = NULL;
        ledger_open(dir, 0, &l);
        ledger_get_stats(l, &st);
        is_int((long long)st.rows, 3001, "reopened: the rows and the new one");
        ledger_close(l);
}

static void test_schema(const char *dir)
{
        struct ledger *l = NULL;
        int r;

        ledger_open(dir, 0, &l);
        ledger_meta_set(l, "schema_version", "7");
        ledger_close(l);
        l = NULL;
        r = ledger_open(dir, 0, &l);
        ok(r == -EPROTO && l == NULL, "newer schema refused: -EPROTO");
        ok(strstr(ledger_open_error(), "has schema version 7") &&
           strstr(ledger_open_error(), "understands up to 4") &&
           strstr(ledger_open_error(), "upgrade agentmeterd"),
           "message: %s", ledger_open_error());
        is_str(ledger_error(NULL), ledger_open_error(), "ledger_error(NULL) is the open error");
        r = ledger_open(dir, LEDGER_RDONLY, &l);
        is_int(r, -EPROTO, "read-only open refuses a newer schema too");
}

static void test_rdonly_missing(const char *dir)
{
        struct ledger *l = NULL;
        int r = ledger_open(dir, LEDGER_RDONLY, &l);
        ok(r == -ENOENT && l == NULL, "read-only open of a missing ledger: -ENOENT");
        is_int(dir_entries(dir), 0, "read-only open created nothing");
        ok(strstr(ledger_open_error(), "ledger.mdb") != NULL, "open error names the file");
}

int main(void)
{
        char base[256], d[300];
        snprintf(base, sizeof(base), "%s", tap_tmpdir());

        test_errno();
        test_sums();
        snprintf(d, sizeof(d), "%s/basic", base);
        test_basic(d);
        snprintf(d, sizeof(d), "%s/cp", base);
        test_checkpoints(d);
        snprintf(d, sizeof(d), "%s/grow", base);
        test_growth(d);
        test_drop_cache(d);
        snprintf(d, sizeof(d), "%s/schema", base);
        test_schema(d);
        snprintf(d, sizeof(d), "%s/empty", base);
        mkdir(d, 0700);
        test_rdonly_missing(d);

        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", base);
        return tap_done();
}
