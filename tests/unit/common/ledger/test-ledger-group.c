/* Unit tests of group commit on a real LMDB file: reads inside a group see
 * its writes, an abort or a failed write drops the whole group (and says
 * so at the end), later writes still commit, and a map that fills up inside
 * a group loses nothing once the lost sources are written again; appends
 * through a write txn's cursors never outlive it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "tap.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static void mkrow(struct usage_row *r, const char *id, int64_t t)
{
        struct keyhash h;

        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, "test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = t;
        r->input = 100;
        r->output = 7;
        r->total = 107;
        ROW_SET(r->tool, "pi");
        ROW_SET(r->session, id);
        ROW_SET(r->project, "/p");
        ROW_SET(r->provider, "prov");
        ROW_SET(r->model, "m");
        /* a tool call on every other row: appends to the calls db too */
        if (t / 1000 % 2 == 0) {
                r->n_calls = 1;
                snprintf(r->calls[0].id, sizeof(r->calls[0].id), "call-%s", id);
                ROW_SET(r->calls[0].name, "bash");
        }
}

/* n rows named <path>-<i> and the checkpoint (offset n) of path, as tail
 * commits one source's batch. */
static int commit_source(struct ledger *l, const char *path, int n)
{
        struct usage_row *rows = calloc((size_t)n, sizeof(*rows));
        struct checkpoint cp = {.kind = SOURCE_LINES, .offset = (uint64_t)n, .ino = 1};
        char id[64];
        int r;

        for (int i = 0; i < n; i++) {
                snprintf(id, sizeof(id), "%s-%d", path, i);
                mkrow(&rows[i], id, T0 + i * 1000);
        }
        ROW_SET(cp.tool, "pi");
        struct commit_batch b = {.source_path = path, .cp = &cp, .rows = rows, .n_rows = (size_t)n};
        r = ledger_commit(l, &b, NULL);
        free(rows);
        return r;
}

static uint64_t rows_in(struct ledger *l)
{
        struct ledger_stats st;
        return ledger_get_stats(l, &st) == 0 ? st.rows : UINT64_MAX;
}

static uint64_t calls_in(struct ledger *l)
{
        struct ledger_stats st;
        return ledger_get_stats(l, &st) == 0 ? st.calls : UINT64_MAX;
}

static bool has_cp(struct ledger *l, const char *path)
{
        struct checkpoint cp;
        return ledger_get_checkpoint(l, path, &cp) == 0;
}

int main(void)
{
        char *dir = tap_tmpdir();
        struct ledger *l = NULL;

        ok(ledger_open(dir, 0, &l) == 0, "open");

        /* reads see the group; an abort drops all of it */
        ok(ledger_group_begin(l) == 0, "group begins");
        ok(commit_source(l, "/s/a", 3) == 0 && commit_source(l, "/s/b", 4) == 0, "two sources in it");
        ok(has_cp(l, "/s/a") && rows_in(l) == 7, "reads inside the group see its rows and checkpoints");
        ledger_group_abort(l);
        ok(!has_cp(l, "/s/a") && !has_cp(l, "/s/b") && rows_in(l) == 0 && calls_in(l) == 0,
           "abort: none of it is there");

        /* committed at the end, and there after a reopen */
        ledger_group_begin(l);
        commit_source(l, "/s/a", 3);
        commit_source(l, "/s/b", 4);
        ok(ledger_group_end(l) == 0, "group end commits");
        l = ledger_close(l);
        ok(ledger_open(dir, 0, &l) == 0 && rows_in(l) == 7 && calls_in(l) == 4 && has_cp(l, "/s/a") &&
                   has_cp(l, "/s/b"),
           "reopened: both sources' rows, calls and checkpoints");

        /* a failed write drops the group; what follows commits on its own */
        ledger_group_begin(l);
        ok(commit_source(l, "/s/c", 2) == 0, "c in the group");
        ok(commit_source(l, "", 2) < 0, "a write that fails (empty path)");
        ok(commit_source(l, "/s/d", 5) == 0, "d after the failure");
        ok(ledger_group_end(l) < 0, "the end says the group was lost");
        ok(!has_cp(l, "/s/c") && has_cp(l, "/s/d") && rows_in(l) == 7 + 5,
           "c (before the failure) is gone whole, d (after it) is there");
        ok(commit_source(l, "/s/c", 2) == 0 && rows_in(l) == 14 && calls_in(l) == 8,
           "c written again: counted once");

        /* appends go through the write txn's cursors: each txn's own, never
         * one of an ended txn (LMDB frees them with it and reuses the txn
         * object; a kept one would be freed memory, which ASan reports) */
        for (int i = 0; i < 3; i++) {
                char g[32], p[32];
                snprintf(g, sizeof(g), "/x/%d-group", i);
                snprintf(p, sizeof(p), "/x/%d-plain", i);
                ledger_group_begin(l);
                commit_source(l, g, 4);
                ledger_group_abort(l);
                ok(commit_source(l, p, 4) == 0, "round %d: a plain write after an aborted group", i);
                ledger_group_begin(l);
                commit_source(l, g, 4);
                ok(ledger_group_end(l) == 0, "round %d: the group again, committed", i);
        }
        ok(rows_in(l) == 14 + 3 * 8 && calls_in(l) == 8 + 3 * 4,
           "every round's rows and calls once, the aborted ones not at all (%llu rows, %llu calls)",
           (unsigned long long)rows_in(l), (unsigned long long)calls_in(l));
        l = ledger_close(l);
        ok(ledger_open(dir, 0, &l) == 0 && rows_in(l) == 14 + 3 * 8 && calls_in(l) == 8 + 3 * 4,
           "... and after a reopen");
        l = ledger_close(l);

        /* a map that fills up inside a group */
        char small[PATH_MAX];
        snprintf(small, sizeof(small), "%s/small", dir);
        setenv("AGENTMETER_TEST_MAPSIZE", "262144", 1);
        ok(ledger_open(small, 0, &l) == 0, "open with a 256 KiB map");
        unsetenv("AGENTMETER_TEST_MAPSIZE");
        char path[64];
        int lost_groups = 0, failed = 0;
        const int sources = 40, per = 50;
        bool done[40] = {false};
        for (int round = 0; round < 10; round++) {
                int pending = 0;
                ledger_group_begin(l);
                for (int s = 0; s < sources; s++) {
                        if (done[s])
                                continue;
                        snprintf(path, sizeof(path), "/m/%d", s);
                        if (commit_source(l, path, per) < 0)
                                failed++;
                        pending++;
                }
                if (ledger_group_end(l) < 0)
                        lost_groups++;
                /* the caller's part: whatever has no checkpoint is read again */
                for (int s = 0; s < sources; s++) {
                        snprintf(path, sizeof(path), "/m/%d", s);
                        done[s] = has_cp(l, path);
                }
                if (!pending)
                        break;
        }
        int missing = 0;
        for (int s = 0; s < sources; s++)
                missing += !done[s];
        ok(lost_groups > 0, "the map filled inside a group (%d groups lost)", lost_groups);
        ok(failed == 0, "no single write failed (each is retried with a grown map)");
        ok(missing == 0 && rows_in(l) == (uint64_t)(sources * per) && calls_in(l) == (uint64_t)(sources * per / 2),
           "after the lost sources were written again: every row and call once (%llu, %llu)",
           (unsigned long long)rows_in(l), (unsigned long long)calls_in(l));
        l = ledger_close(l);
        return tap_done();
}
