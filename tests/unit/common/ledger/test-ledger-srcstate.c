/* Unit tests of source states (ledger.h, db srcstate) on a real LMDB file:
 * written with a batch's rows and checkpoint, read back by source and key,
 * replaced and deleted; kept apart per source; moved with a renamed
 * source's checkpoint; gone with a failed commit or
 * an aborted group, as its rows are; bounds refused; and a ledger made
 * before the db existed opens read-only without it and gets it at its next
 * writable open. */
#include <errno.h>
#include <limits.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "tap.h"

static void mkrow(struct usage_row *r, const char *id)
{
        struct keyhash h;

        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, "test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN;
        r->kind = ROW_KIND_SNAPSHOT_STEP;
        r->time_ms = 1767225600000LL;
        r->input = 10;
        r->total = 10;
        ROW_SET(r->tool, "hermes");
        ROW_SET(r->session, id);
}

/* One row and one state entry (key -> value; value NULL: delete) of path. */
static int commit_one(struct ledger *l, const char *path, const char *row_id, const char *key, const char *value)
{
        struct usage_row row;
        struct checkpoint cp = { .kind = SOURCE_TABLE, .offset = 1, .ino = 1 };
        struct source_state_entry e = { .key = key, .key_len = strlen(key), .value = value,
                                        .value_len = value ? strlen(value) : 0 };

        mkrow(&row, row_id);
        ROW_SET(cp.tool, "hermes");
        struct commit_batch b = { .source_path = path, .cp = &cp, .rows = &row, .n_rows = 1, .states = &e,
                                  .n_states = 1 };
        return ledger_commit(l, &b, NULL);
}

static const char *get(struct ledger *l, const char *path, const char *key)
{
        static char buf[SOURCE_STATE_VALUE_MAX + 1];
        size_t len = 0;
        int r = ledger_get_source_state(l, path, key, strlen(key), buf, sizeof(buf) - 1, &len);

        if (r < 0)
                return r == -ENOENT ? "(none)" : "(error)";
        buf[len < sizeof(buf) - 1 ? len : sizeof(buf) - 1] = 0;
        return buf;
}

static uint64_t count(struct ledger *l, const char *path)
{
        uint64_t n = UINT64_MAX;
        ledger_count_source_states(l, path, &n);
        return n;
}

int main(void)
{
        char *dir = tap_tmpdir(), old[PATH_MAX + 16];
        struct ledger *l = NULL;
        char big[SOURCE_STATE_VALUE_MAX + 2];

        ok(ledger_open(dir, 0, &l) == 0, "open");
        is_str(get(l, "/a/state.db", "s1"), "(none)", "nothing yet");
        ok(commit_one(l, "/a/state.db", "r1", "s1", "one") == 0, "a batch with a state entry commits");
        is_str(get(l, "/a/state.db", "s1"), "one", "read back by source and key");
        is_str(get(l, "/b/state.db", "s1"), "(none)", "another source's key of the same name: apart");
        ok(commit_one(l, "/a/state.db", "r2", "s1", "two") == 0 && strcmp(get(l, "/a/state.db", "s1"), "two") == 0,
           "a later commit replaces it");
        commit_one(l, "/a/state.db", "r3", "s2", "x");
        commit_one(l, "/b/state.db", "r4", "s1", "y");
        is_int(count(l, "/a/state.db"), 2, "two entries of /a");
        is_int(count(l, "/b/state.db"), 1, "one of /b");
        ok(commit_one(l, "/a/state.db", "r5", "s2", NULL) == 0 && strcmp(get(l, "/a/state.db", "s2"), "(none)") == 0,
           "an empty value deletes the entry");

        /* with the rows, or not at all */
        memset(big, 'v', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        ok(commit_one(l, "/a/state.db", "r6", "s1", big) == -EINVAL, "a value past the bound fails the commit");
        struct usage_row probe;
        mkrow(&probe, "r6");
        ok(ledger_get_row(l, &probe.key, &probe) == -ENOENT && strcmp(get(l, "/a/state.db", "s1"), "two") == 0,
           "... and neither its row nor anything of its states is there");
        ledger_group_begin(l);
        commit_one(l, "/a/state.db", "r7", "s1", "three");
        is_str(get(l, "/a/state.db", "s1"), "three", "a group's reads see its states");
        ledger_group_abort(l);
        is_str(get(l, "/a/state.db", "s1"), "two", "an aborted group leaves the state as it was");
        /* a rename moves them with the checkpoint */
        commit_one(l, "/a/state.db", "r9", "s3", "three-3");
        ok(ledger_move_checkpoint(l, "/a/state.db", "/a/moved.db") == 0, "the checkpoint moved (a rename)");
        ok(strcmp(get(l, "/a/moved.db", "s1"), "two") == 0 && strcmp(get(l, "/a/moved.db", "s3"), "three-3") == 0 &&
                   count(l, "/a/moved.db") == 2,
           "... its two states under the new path");
        ok(count(l, "/a/state.db") == 0 && count(l, "/b/state.db") == 1, "... none left under the old; /b's untouched");
        ok(ledger_move_checkpoint(l, "/a/moved.db", "/a/state.db") == 0 && count(l, "/a/state.db") == 2,
           "and back");
        l = ledger_close(l);
        ok(ledger_open(dir, LEDGER_RDONLY, &l) == 0 && strcmp(get(l, "/a/state.db", "s1"), "two") == 0,
           "reopened read-only: there");
        l = ledger_close(l);

        /* a ledger without the db (made before it existed): read-only as it
         * is, the db made by the next writable open */
        MDB_env *env;
        MDB_txn *txn;
        MDB_dbi dbi;
        snprintf(old, sizeof(old), "%s/ledger.mdb", dir);
        mdb_env_create(&env);
        mdb_env_set_maxdbs(env, 32);
        mdb_env_set_mapsize(env, 256u << 20);
        ok(mdb_env_open(env, old, MDB_NOSUBDIR, 0600) == 0 && mdb_txn_begin(env, NULL, 0, &txn) == 0 &&
                   mdb_dbi_open(txn, "srcstate", 0, &dbi) == 0 && mdb_drop(txn, dbi, 1) == 0 &&
                   mdb_txn_commit(txn) == 0,
           "the db dropped (a ledger of an earlier release)");
        mdb_env_close(env);
        ok(ledger_open(dir, LEDGER_RDONLY, &l) == 0, "it opens read-only");
        ok(strcmp(get(l, "/a/state.db", "s1"), "(none)") == 0 && count(l, "/a/state.db") == 0,
           "... with no state");
        l = ledger_close(l);
        ok(ledger_open(dir, 0, &l) == 0 && commit_one(l, "/a/state.db", "r8", "s1", "four") == 0 &&
                   strcmp(get(l, "/a/state.db", "s1"), "four") == 0,
           "a writable open makes the db: states are kept again");
        ledger_close(l);
        return tap_done();
}
