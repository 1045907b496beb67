/* Unit tests of the ledger's new row keys (ledger/newkeys.c: the keys of
 * rows not yet in the index, the Bloom filter of every key) and of the
 * ledger through them, on a real LMDB file: a key is found again in the txn
 * that added it, in a later group, after a reopen (the filter built from
 * rowkeys), after the filter outgrew its size; an aborted group's keys can
 * be added again; an upsert merges into a row of its own group. The index's
 * backlog (ledger/backlog.c): rowkeys and its watermark move only when the
 * backlog is large, a key is found in either, by a reopened writer and by a
 * read-only handle as the writer moves on, an aborted group's keys leave
 * it; its write in pieces after the rows' commit: a writer killed between
 * two pieces loses nothing and counts nothing twice, and a key found in the
 * index under another row is kept as it was and said. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>

#include "binio.h"
#include "ledger/ledger.h"
#include "ledger/newkeys.h"
#include "tap.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static void key_of(struct row_key *k, const char *ns, unsigned i)
{
        struct keyhash h;
        char id[32];

        snprintf(id, sizeof(id), "%u", i);
        keyhash_begin(&h, ns);
        keyhash_str(&h, id);
        keyhash_end(&h, k);
}

/* nk's order holds each index once, and the keys along it increase */
static bool sorted_once(const struct newkeys *nk)
{
        char *seen = calloc(nk->n ? nk->n : 1, 1);
        bool good = seen != NULL;
        for (size_t i = 0; good && i < nk->n; i++) {
                uint32_t x = nk->order[i];
                good = x < nk->n && !seen[x];
                if (good)
                        seen[x] = 1;
                if (good && i > 0)
                        good = memcmp(nk->v[nk->order[i - 1]].key.b, nk->v[x].key.b, ROW_KEY_SIZE) < 0;
        }
        free(seen);
        return good;
}

static void mkrow(struct usage_row *r, const char *ns, unsigned i, uint32_t flags)
{
        memset(r, 0, sizeof(*r));
        key_of(&r->key, ns, i);
        r->flags = ROW_F_TOKENS_KNOWN | flags;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = T0 + (int64_t)i * 1000;
        r->input = 100 + i;
        r->output = 7;
        r->total = r->input + r->output;
        ROW_SET(r->tool, "pi");
        ROW_SET(r->session, "s");
        ROW_SET(r->project, "/p");
        ROW_SET(r->provider, "prov");
        ROW_SET(r->model, "m");
}

/* rows ns-from .. ns-(from+n-1) of source path in one batch */
static int commit_rows(struct ledger *l, const char *path, const char *ns, unsigned from, unsigned n,
                       uint32_t flags, struct commit_result *ret)
{
        struct usage_row *rows = calloc(n, sizeof(*rows));
        struct checkpoint cp = {.kind = SOURCE_LINES, .offset = from + n, .ino = 1};
        int r;

        for (unsigned i = 0; i < n; i++)
                mkrow(&rows[i], ns, from + i, flags);
        ROW_SET(cp.tool, "pi");
        struct commit_batch b = {.source_path = path, .cp = &cp, .rows = rows, .n_rows = n};
        r = ledger_commit(l, &b, ret);
        free(rows);
        return r;
}

/* row ns-i again as an upsert with output 99, alone in a batch of source path */
static int commit_upsert(struct ledger *l, const char *path, const char *ns, unsigned i,
                         struct commit_result *ret)
{
        struct usage_row row;
        struct checkpoint cp = {.kind = SOURCE_LINES, .offset = 1, .ino = 1};

        mkrow(&row, ns, i, ROW_F_UPSERT);
        row.output = 99;
        row.total = row.input + row.output;
        ROW_SET(cp.tool, "pi");
        struct commit_batch b = {.source_path = path, .cp = &cp, .rows = &row, .n_rows = 1};
        return ledger_commit(l, &b, ret);
}

static uint64_t rows_in(struct ledger *l)
{
        struct ledger_stats st;
        return ledger_get_stats(l, &st) == 0 ? st.rows : UINT64_MAX;
}

static void module_tests(void)
{
        struct newkeys nk = {0};
        struct row_key k;
        uint64_t id = 0;
        unsigned misses = 0, maybe = 0;
        bool all = true;

        ok(newkeys_maybe_known(&nk, &(struct row_key){{0}}), "no filter: every key may be known");
        for (unsigned i = 0; i < 5000; i++) {
                key_of(&k, "a", i);
                if (newkeys_add(&nk, &k, 1000 + i) < 0)
                        all = false;
        }
        ok(all && nk.n == 5000, "5000 keys kept");
        for (unsigned i = 0; i < 5000; i++) {
                key_of(&k, "a", i);
                misses += !newkeys_find(&nk, &k, &id) || id != 1000 + i;
        }
        key_of(&k, "b", 1);
        ok(misses == 0 && !newkeys_find(&nk, &k, &id), "each found with its id, another key not");
        ok(newkeys_sort(&nk) == 0 && sorted_once(&nk), "the order is by key, each key once");
        key_of(&k, "a", 4321);
        ok(newkeys_find(&nk, &k, &id) && id == 1000 + 4321, "... and a key is still found");
        newkeys_clear(&nk);
        /* keys that are not hashes: all in one bucket of the top bits (the
         * sort's qsort path), then a few in small ones (its insertion path) */
        all = true;
        for (unsigned i = 0; i < 3000; i++) {
                memset(&k, 0, sizeof(k));
                k.b[15] = (uint8_t)(i * 7919);
                k.b[14] = (uint8_t)((i * 7919) >> 8);
                all &= newkeys_add(&nk, &k, i) == 0;
        }
        ok(all && newkeys_sort(&nk) == 0 && sorted_once(&nk), "3000 keys sharing their first 14 bytes: in order");
        newkeys_clear(&nk);
        for (unsigned i = 0; i < 5; i++) {
                memset(&k, 0, sizeof(k));
                k.b[0] = (uint8_t)(0xf0 - i * 0x30);
                newkeys_add(&nk, &k, i);
        }
        ok(newkeys_sort(&nk) == 0 && sorted_once(&nk), "5 keys: in order");
        newkeys_clear(&nk);
        ok(nk.n == 0 && !newkeys_find(&nk, &k, &id), "cleared: none");
        ok(newkeys_add(&nk, &k, 7) == 0 && newkeys_find(&nk, &k, &id) && id == 7 && nk.n == 1,
           "added again after the clear");
        newkeys_clear(&nk);

        ok(newkeys_filter_reset(&nk, 100000) == 0, "a filter for 100000 keys");
        for (unsigned i = 0; i < 100000; i++) {
                key_of(&k, "f", i);
                newkeys_filter_add(&nk, &k);
        }
        nk.complete = true;
        misses = 0;
        for (unsigned i = 0; i < 100000; i++) {
                key_of(&k, "f", i);
                misses += !newkeys_maybe_known(&nk, &k);
                key_of(&k, "g", i);
                maybe += newkeys_maybe_known(&nk, &k);
        }
        ok(misses == 0, "no key added is ever 'not known'");
        ok(maybe < 3000, "other keys: %u of 100000 'maybe known' (a lookup each)", maybe);
        ok(!newkeys_filter_full(&nk), "not full at its size");
        key_of(&k, "f", 0);
        for (unsigned i = 0; i < nk.cap_keys; i++)
                newkeys_filter_add(&nk, &k);
        ok(newkeys_filter_full(&nk), "full beyond it");
        ok(newkeys_filter_reset(&nk, NEWKEYS_FILTER_MAX_KEYS + 1) == -E2BIG && !nk.complete &&
           newkeys_maybe_known(&nk, &k), "too many keys: no filter, every key may be known");
        newkeys_free(&nk);
}


/* rowkeys' entries and the watermark, read from the file by plain LMDB (a
 * second reader beside the handle) */
static bool index_state(const char *dir, uint64_t *ret_indexed, uint64_t *ret_through)
{
        char path[4096];
        MDB_env *env = NULL;
        MDB_txn *txn = NULL;
        MDB_dbi meta, keys;
        MDB_stat st;
        MDB_val k = {.mv_size = 15, .mv_data = "rowkeys_through"}, v;
        bool good;

        snprintf(path, sizeof(path), "%s/ledger.mdb", dir);
        good = mdb_env_create(&env) == 0 && mdb_env_set_maxdbs(env, 16) == 0 &&
               mdb_env_open(env, path, MDB_RDONLY | MDB_NOSUBDIR | MDB_NOLOCK, 0) == 0 &&
               mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0 &&
               mdb_dbi_open(txn, "meta", 0, &meta) == 0 && mdb_dbi_open(txn, "rowkeys", 0, &keys) == 0 &&
               mdb_stat(txn, keys, &st) == 0 && mdb_get(txn, meta, &k, &v) == 0 && v.mv_size == 8;
        if (good) {
                *ret_indexed = st.ms_entries;
                *ret_through = be64_get(v.mv_data);
        }
        if (txn)
                mdb_txn_abort(txn);
        mdb_env_close(env);
        return good;
}

static bool index_is(const char *dir, uint64_t indexed, uint64_t through)
{
        uint64_t i = 0, t = 0;
        bool good = index_state(dir, &i, &t);
        if (!good || i != indexed || t != through)
                printf("# rowkeys %llu entries (want %llu), watermark %llu (want %llu)\n", (unsigned long long)i,
                     (unsigned long long)indexed, (unsigned long long)t, (unsigned long long)through);
        return good && i == indexed && t == through;
}

static bool row_has(struct ledger *l, const char *ns, unsigned i, uint64_t output)
{
        struct usage_row want, got;
        mkrow(&want, ns, i, 0);
        return ledger_get_row(l, &want.key, &got) == 0 && got.input == want.input && got.output == output;
}

static void backlog_tests(void)
{
        char dir[256];
        struct ledger *l = NULL, *ro = NULL;
        struct commit_result res;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        setenv("AGENTMETER_TEST_BACKLOG_KEYS", "50", 1);
        ok(ledger_open(dir, 0, &l) == 0, "backlog: open a new ledger (the index written at 50 keys)");
        ok(index_is(dir, 0, 0), "  a new ledger: an empty index, watermark 0");
        ok(commit_rows(l, "/b/1", "a", 0, 30, 0, &res) == 0 && res.added == 30 && index_is(dir, 0, 0),
           "  30 rows: all in the backlog, the index not written");
        ok(commit_rows(l, "/b/2", "a", 30, 30, 0, &res) == 0 && res.added == 30 && index_is(dir, 60, 60),
           "  30 more: 60 keys, written into the index, watermark 60");
        ok(commit_rows(l, "/b/3", "a", 60, 20, 0, &res) == 0 && res.added == 20 && index_is(dir, 60, 60) &&
           rows_in(l) == 80, "  20 more: in the backlog, 80 rows");
        ok(commit_rows(l, "/b/4", "a", 0, 80, 0, &res) == 0 && res.dup == 80 && res.added == 0,
           "  all 80 again: each found, in the index or in the backlog");

        ok(ledger_open(dir, LEDGER_RDONLY, &ro) == 0, "  a read-only handle beside the writer");
        ok(row_has(ro, "a", 70, 7) && row_has(ro, "a", 10, 7), "  it reads a backlog row and an indexed one");
        ok(commit_rows(l, "/b/5", "a", 80, 5, 0, &res) == 0 && res.added == 5 && row_has(ro, "a", 82, 7),
           "  and a row the writer added after its first read");

        l = ledger_close(l);
        ok(ledger_open(dir, 0, &l) == 0, "  the writer reopened (its backlog is read back from the rows)");
        ok(commit_rows(l, "/b/6", "a", 0, 85, 0, &res) == 0 && res.dup == 85 && res.added == 0 &&
           index_is(dir, 60, 60), "  all 85 again: counted once, the index not moved");

        ok(commit_upsert(l, "/b/7", "a", 84, &res) == 0 && res.merged == 1 && row_has(ro, "a", 84, 99),
           "  an upsert merges into a backlog row of an earlier txn");

        ledger_group_begin(l);
        ok(commit_rows(l, "/b/8", "c", 0, 40, 0, &res) == 0 && res.added == 40, "  40 rows in a group");
        ledger_group_abort(l);
        ok(rows_in(l) == 85 && !row_has(ro, "c", 5, 7), "  aborted: 85 rows, none of them");
        ok(commit_rows(l, "/b/8", "c", 0, 40, 0, &res) == 0 && res.added == 40 && index_is(dir, 125, 165),
           "  the 40 written again: added, and the backlog (65) into the index, watermark at row id 165 "
           "(the aborted group's ids 86-125 are a gap)");
        ok(commit_rows(l, "/b/9", "c", 0, 40, 0, &res) == 0 && res.dup == 40 && row_has(ro, "c", 5, 7),
           "  and then counted once");

        /* ledger_release_memory: the env opened again, nothing lost */
        ok(ledger_release_memory(l, false) == 1, "  release: due after a commit wrote the backlog (1)");
        ok(ledger_release_memory(l, false) == 0, "  and not again until another one does (0)");
        ok(row_has(l, "c", 5, 7) && row_has(l, "a", 84, 99) && rows_in(l) == 125,
           "  after it: the rows read as before (125, the merged one too)");
        ok(commit_rows(l, "/b/10", "c", 0, 40, 0, &res) == 0 && res.dup == 40 && res.added == 0,
           "  the group's 40 again: counted once (the backlog kept)");
        ok(commit_rows(l, "/b/11", "d", 0, 30, 0, &res) == 0 && res.added == 30 && index_is(dir, 125, 165) &&
           row_has(ro, "d", 29, 7), "  30 new rows: added, in the backlog, seen by the read-only handle");
        ok(ledger_group_begin(l) == 0 && ledger_release_memory(l, true) == 0 && ledger_group_end(l) == 0,
           "  inside a group: nothing done, even forced");
        ok(ledger_release_memory(l, true) == 1 && commit_rows(l, "/b/12", "d", 0, 30, 0, &res) == 0 &&
           res.dup == 30 && commit_rows(l, "/b/13", "e", 0, 30, 0, &res) == 0 && res.added == 30 &&
           index_is(dir, 185, 225), "  forced: then the 30 counted once, 30 more written into the index");
        struct checkpoint cp;
        ok(ledger_get_checkpoint(l, "/b/13", &cp) == 0 && cp.offset == 30, "  and the checkpoints are there");
        ro = ledger_close(ro);
        l = ledger_close(l);
        ok(ledger_open(dir, LEDGER_RDONLY, &ro) == 0 && ledger_release_memory(ro, true) == 0 &&
           row_has(ro, "e", 29, 7), "  a read-only handle: nothing to release");
        ro = ledger_close(ro);
        unsetenv("AGENTMETER_TEST_BACKLOG_KEYS");
}

/* rowkeys' entry for key ns-i: set to row id set first unless set is 0 (as a
 * damaged ledger or a writer that went unseen could leave it); true and
 * its row id */
static bool index_entry(const char *dir, const char *ns, unsigned i, uint64_t set, uint64_t *ret_id)
{
        char path[4096];
        MDB_env *env = NULL;
        MDB_txn *txn = NULL;
        MDB_dbi keys;
        struct row_key key;
        uint8_t ib[8];
        bool good;

        key_of(&key, ns, i);
        be64_put(ib, set);
        MDB_val k = {.mv_size = ROW_KEY_SIZE, .mv_data = key.b}, v = {.mv_size = 8, .mv_data = ib};
        snprintf(path, sizeof(path), "%s/ledger.mdb", dir);
        good = mdb_env_create(&env) == 0 && mdb_env_set_maxdbs(env, 16) == 0 &&
               mdb_env_open(env, path, MDB_NOSUBDIR, 0600) == 0 && mdb_txn_begin(env, NULL, 0, &txn) == 0 &&
               mdb_dbi_open(txn, "rowkeys", 0, &keys) == 0 && (!set || mdb_put(txn, keys, &k, &v, 0) == 0) &&
               mdb_get(txn, keys, &k, &v) == 0 && v.mv_size == 8;
        if (good)
                *ret_id = be64_get(v.mv_data);
        if (good)
                good = mdb_txn_commit(txn) == 0;
        else if (txn)
                mdb_txn_abort(txn);
        mdb_env_close(env);
        return good;
}

static void piece_tests(void)
{
        char dir[256];
        struct ledger *l = NULL;
        struct commit_result res;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        setenv("AGENTMETER_TEST_BACKLOG_KEYS", "50", 1);
        setenv("AGENTMETER_TEST_BACKLOG_PIECE_KEYS", "7", 1);
        ok(ledger_open(dir, 0, &l) == 0, "pieces: a new ledger, the backlog written at 50 keys, 7 a piece");
        ok(commit_rows(l, "/p/1", "a", 0, 60, 0, &res) == 0 && res.added == 60 && index_is(dir, 60, 60),
           "  60 rows: all 60 keys in the index, the watermark at 60");
        ok(commit_rows(l, "/p/2", "a", 60, 30, 0, &res) == 0 && res.added == 30 && index_is(dir, 60, 60),
           "  30 more: in the backlog");
        l = ledger_close(l);

        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) { /* a writer killed after the third piece of its write */
                struct ledger *w = NULL;
                setenv("AGENTMETER_TEST_BACKLOG_PIECE_KILL", "3", 1);
                if (ledger_open(dir, 0, &w) == 0)
                        commit_rows(w, "/p/3", "a", 90, 30, 0, &res);
                _exit(3); /* not killed: the test below fails */
        }
        int status = 0;
        ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
           "  a writer adds 30 rows (60 in its backlog) and is killed after its write's third piece");
        ok(index_is(dir, 60 + 21, 60), "  then: 21 of the 60 keys in the index, the watermark not moved");

        ok(ledger_open(dir, 0, &l) == 0, "  the writer opened again (the backlog read back from the rows)");
        ok(rows_in(l) == 120, "  120 rows, the killed writer's 30 too (%llu)", (unsigned long long)rows_in(l));
        ok(commit_rows(l, "/p/4", "a", 0, 120, 0, &res) == 0 && res.dup == 120 && res.added == 0,
           "  all 120 again: each counted once (in the index, in the backlog, or both)");
        ok(index_is(dir, 120, 120), "  and after that commit the backlog read back (60, 21 of them indexed "
           "already) written: 120 keys, watermark 120");
        ok(strstr(ledger_error(l), "another row") == NULL,
           "  the keys the killed writer had written counted as written, no error");
        ok(commit_rows(l, "/p/5", "b", 0, 10, 0, &res) == 0 && res.added == 10 && index_is(dir, 120, 120),
           "  10 new rows: in the backlog");
        ok(commit_rows(l, "/p/6", "a", 0, 120, 0, &res) == 0 && res.dup == 120 &&
           commit_rows(l, "/p/7", "b", 0, 10, 0, &res) == 0 && res.dup == 10 && rows_in(l) == 130,
           "  and every row still counted once (130)");

        /* a key of the backlog found in the index under another row */
        uint64_t id = 0;
        ok(commit_rows(l, "/p/8", "c", 0, 30, 0, &res) == 0 && res.added == 30 && index_is(dir, 120, 120),
           "  30 rows more: 40 in the backlog");
        l = ledger_close(l);
        ok(index_entry(dir, "c", 5, 999999, &id) && id == 999999,
           "  the index given an entry for one of them under row 999999");
        ok(ledger_open(dir, 0, &l) == 0 &&
           commit_rows(l, "/p/9", "d", 0, 20, 0, &res) == 0 && res.added == 20 && index_is(dir, 180, 180),
           "  20 rows more: the backlog written all the same, the watermark at 180");
        ok(strstr(ledger_error(l), "1 content keys indexed under another row") != NULL,
           "  and the ledger says one key was under another row: '%s'", ledger_error(l));
        l = ledger_close(l);
        uint64_t indexed = 0, through = 0;
        ok(index_entry(dir, "c", 5, 0, &id) && id == 999999 && index_state(dir, &indexed, &through) &&
           indexed == 180, "  that entry kept as it was (row %llu), 180 entries", (unsigned long long)id);
        unsetenv("AGENTMETER_TEST_BACKLOG_PIECE_KEYS");
        unsetenv("AGENTMETER_TEST_BACKLOG_KEYS");
}

/* The backlog's write meets a full map (at these sizes one of its pieces
 * does, seen by a print in the retry): the map grows, the write goes on */
static void piece_map_full_tests(void)
{
        char dir[256];
        struct ledger *l = NULL;
        struct ledger_stats st;
        struct commit_result res;
        uint64_t indexed = 0, through = 0;
        unsigned added = 0, dups = 0;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        setenv("AGENTMETER_TEST_MAPSIZE", "65536", 1);
        setenv("AGENTMETER_TEST_BACKLOG_KEYS", "200", 1);
        setenv("AGENTMETER_TEST_BACKLOG_PIECE_KEYS", "50", 1);
        ok(ledger_open(dir, 0, &l) == 0, "map full: a ledger with a 64 KiB map, the backlog written at 200 keys");
        unsigned behind = 0;
        for (unsigned i = 0; i < 20; i++) {
                if (commit_rows(l, "/m/1", "m", i * 100, 100, 0, &res) == 0)
                        added += res.added;
                /* every second commit makes 200 keys: written at once */
                if (!index_state(dir, &indexed, &through) || indexed != (i + 1) / 2 * 200)
                        behind++;
        }
        bool grown = ledger_get_stats(l, &st) == 0 && st.map_bytes > 65536;
        ok(added == 2000 && behind == 0 && indexed == 2000 && grown,
           "  2000 rows in 20 commits: the index took each 200 keys at once (behind %u times), 2000 in all "
           "(%llu), the map grown to %llu", behind, (unsigned long long)indexed, (unsigned long long)st.map_bytes);
        for (unsigned i = 0; i < 20; i++)
                if (commit_rows(l, "/m/2", "m", i * 100, 100, 0, &res) == 0)
                        dups += res.dup;
        ok(dups == 2000 && rows_in(l) == 2000, "  all 2000 again: each counted once");
        l = ledger_close(l);
        unsetenv("AGENTMETER_TEST_MAPSIZE");
        unsetenv("AGENTMETER_TEST_BACKLOG_PIECE_KEYS");
        unsetenv("AGENTMETER_TEST_BACKLOG_KEYS");
}

int main(void)
{
        char *dir = tap_tmpdir();
        struct ledger *l = NULL;
        struct commit_result res;

        module_tests();

        ok(ledger_open(dir, 0, &l) == 0, "open");
        /* one group: a key twice in a batch, again in a later batch */
        ok(ledger_group_begin(l) == 0, "group begins");
        ok(commit_rows(l, "/s/a", "r", 0, 100, 0, &res) == 0 && res.added == 100, "100 rows added");
        ok(commit_rows(l, "/s/b", "r", 50, 100, 0, &res) == 0 && res.added == 50 && res.dup == 50,
           "50 of the next 100 are the group's own: counted once");
        ok(rows_in(l) == 150, "inside the group: 150 rows (%llu)", (unsigned long long)rows_in(l));
        ok(ledger_group_end(l) == 0, "group end commits");
        ok(rows_in(l) == 150, "after it: 150");
        ok(commit_rows(l, "/s/c", "r", 0, 150, 0, &res) == 0 && res.dup == 150 && res.added == 0,
           "all 150 again, alone: each one already counted");

        /* an upsert merges into the row its own group added */
        ledger_group_begin(l);
        ok(commit_rows(l, "/s/u", "u", 0, 10, ROW_F_UPSERT, &res) == 0 && res.added == 10, "10 upsert rows");
        ok(commit_upsert(l, "/s/u2", "u", 3, &res) == 0 && res.merged == 1 && res.added == 0,
           "the same key, more output: merged into it");
        ok(ledger_group_end(l) == 0 && rows_in(l) == 160, "160 rows");
        ok(row_has(l, "u", 3, 99), "the row has the merged output");

        /* an aborted group's keys are not there; added again, once */
        ledger_group_begin(l);
        ok(commit_rows(l, "/s/x", "x", 0, 40, 0, &res) == 0 && res.added == 40, "40 rows in a group");
        ledger_group_abort(l);
        ok(rows_in(l) == 160, "aborted: 160 rows");
        ok(commit_rows(l, "/s/x", "x", 0, 40, 0, &res) == 0 && res.added == 40 && rows_in(l) == 200,
           "the 40 written again: added (200)");
        ok(commit_rows(l, "/s/x2", "x", 0, 40, 0, &res) == 0 && res.dup == 40, "and then counted once");

        /* reopened: the filter is built from rowkeys; it outgrows its size */
        l = ledger_close(l);
        ok(ledger_open(dir, 0, &l) == 0, "reopened");
        ok(commit_rows(l, "/s/c", "r", 0, 150, 0, &res) == 0 && res.dup == 150, "the first 150: counted");
        for (unsigned i = 0; i < 5; i++)
                commit_rows(l, "/s/big", "big", i * 4000, 4000, 0, &res);
        ok(rows_in(l) == 20200, "20000 more rows (%llu)", (unsigned long long)rows_in(l));
        unsigned dups = 0;
        for (unsigned i = 0; i < 5; i++)
                if (commit_rows(l, "/s/big2", "big", i * 4000, 4000, 0, &res) == 0)
                        dups += (unsigned)res.dup;
        ok(dups == 20000 && rows_in(l) == 20200, "each of them again: already counted (%u)", dups);
        ok(commit_rows(l, "/s/c2", "r", 0, 150, 0, &res) == 0 && res.dup == 150 &&
           commit_rows(l, "/s/x3", "x", 0, 40, 0, &res) == 0 && res.dup == 40,
           "and the older ones after the filter grew");
        l = ledger_close(l);

        /* a ledger of more keys than the filter takes: a lookup per row */
        setenv("AGENTMETER_TEST_KEYFILTER_MAX", "10000", 1);
        ok(ledger_open(dir, 0, &l) == 0, "reopened with a filter of at most 10000 keys");
        ok(commit_rows(l, "/s/y", "y", 0, 100, 0, &res) == 0 && res.added == 100, "100 new rows");
        ok(commit_rows(l, "/s/y2", "y", 0, 100, 0, &res) == 0 && res.dup == 100 &&
           commit_rows(l, "/s/c3", "r", 0, 150, 0, &res) == 0 && res.dup == 150,
           "they and older ones again: already counted");
        ledger_group_begin(l);
        ok(commit_rows(l, "/s/z", "z", 0, 30, 0, &res) == 0 && commit_rows(l, "/s/z2", "z", 10, 30, 0, &res) == 0 &&
           res.dup == 20 && res.added == 10 && ledger_group_end(l) == 0 && rows_in(l) == 20340,
           "inside a group too");
        l = ledger_close(l);
        unsetenv("AGENTMETER_TEST_KEYFILTER_MAX");
        backlog_tests();
        piece_tests();
        piece_map_full_tests();
        return tap_done();
}
