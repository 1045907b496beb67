/* What the OpenClaw SQLite unit tests share: the databases built from the
 * fixtures (plain and zstd rows), a source read through collect_rows, the
 * fixture directories. Included by test-openclaw-db.c only. */
#pragma once

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

static const struct adapter *A = &adapter_openclaw;
static char srcdir[PATH_MAX], fx[PATH_MAX], tmp[PATH_MAX];

static const char NAV[] = "{\"version\":1,\"report\":{\"kind\":\"canonical\"},\"navigation\":{},\"reset\":{},"
                          "\"model\":{},\"modelBytes\":0,\"modelWithoutCheckpointBytes\":0,"
                          "\"withoutCustomDataBytes\":0}";

/* ---- building databases ------------------------------------------------------- */

static inline void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

enum zmode { Z_SIZED, Z_UNSIZED, Z_TWO_FRAMES };

static inline void *compress(const char *s, size_t n, enum zmode m, size_t *ret_len)
{
        size_t cap = ZSTD_compressBound(n) * 2 + 64, k, k2;
        char *out = malloc(cap);
        ZSTD_CCtx *c = ZSTD_createCCtx();
        if (m == Z_SIZED) {
                k = ZSTD_compressCCtx(c, out, cap, s, n, 3);
        } else if (m == Z_UNSIZED) {
                ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
                k = ZSTD_compress2(c, out, cap, s, n);
        } else {
                k = ZSTD_compressCCtx(c, out, cap, s, n / 2, 3);
                k2 = ZSTD_compressCCtx(c, out + k, cap - k, s + n / 2, n - n / 2, 3);
                k += k2;
        }
        ZSTD_freeCCtx(c);
        if (ZSTD_isError(k))
                exit(99);
        *ret_len = k;
        return out;
}

/* plain: event_json; zstd: event_zstd (a blob given as is when blob != NULL) */
static inline void insert(sqlite3 *db, const char *sid, int64_t seq, const char *ev, bool zstd, enum zmode zm,
                   const void *blob, size_t blob_len)
{
        sqlite3_stmt *st;
        static const char *q_win = "INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, "
                                   "updated_at) VALUES (?1, 'agent:main:' || ?1, 1, 1)";
        if (sqlite3_prepare_v2(db, q_win, -1, &st, NULL) != SQLITE_OK)
                exit(99);
        sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
        if (sqlite3_prepare_v2(db,
                               "INSERT INTO transcript_events(session_id, seq, event_json, created_at, event_zstd, "
                               "event_utf8_bytes, navigation_json) VALUES (?1, ?2, ?3, 1796000000000 + ?2, ?4, ?5, ?6)",
                               -1, &st, NULL) != SQLITE_OK)
                exit(99);
        sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, seq);
        if (!zstd) {
                sqlite3_bind_text(st, 3, ev, -1, SQLITE_STATIC);
        } else {
                size_t n;
                void *z = blob ? NULL : compress(ev, strlen(ev), zm, &n);
                sqlite3_bind_blob(st, 4, blob ? blob : z, (int)(blob ? blob_len : n), SQLITE_TRANSIENT);
                sqlite3_bind_int64(st, 5, (int64_t)(ev ? strlen(ev) : 1));
                sqlite3_bind_text(st, 6, NAV, -1, SQLITE_STATIC);
                free(z);
        }
        if (sqlite3_step(st) != SQLITE_DONE) {
                printf("# insert failed: %s\n", sqlite3_errmsg(db));
                exit(99);
        }
        sqlite3_finalize(st);
}

/* Rows from a fixture .tsv: mode<TAB>session_id<TAB>seq<TAB>event */
static inline void load_tsv(sqlite3 *db, const char *rel)
{
        char path[PATH_MAX];
        xsnprintf(path, sizeof(path), "%s/%s", fx, rel);
        char *text = slurp(path, NULL), *save = NULL;
        if (!text)
                exit(99);
        sql(db, "BEGIN");
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *mode = line, *sid, *seq, *ev;
                if (*line == '#' || !(sid = strchr(mode, '\t')) || !(seq = strchr(sid + 1, '\t')) ||
                    !(ev = strchr(seq + 1, '\t')))
                        continue;
                *sid++ = *seq++ = *ev++ = 0;
                if (strcmp(mode, "trajectory") == 0) {
                        sqlite3_stmt *st;
                        sqlite3_prepare_v2(db, "INSERT INTO trajectory_runtime_events(session_id, seq, run_id, "
                                               "event_json, created_at) VALUES (?1, ?2, 'run', ?3, 1)", -1, &st, NULL);
                        sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
                        sqlite3_bind_int64(st, 2, atoll(seq));
                        sqlite3_bind_text(st, 3, ev, -1, SQLITE_STATIC);
                        if (sqlite3_step(st) != SQLITE_DONE)
                                exit(99);
                        sqlite3_finalize(st);
                } else {
                        insert(db, sid, atoll(seq), ev, strcmp(mode, "zstd") == 0, Z_SIZED, NULL, 0);
                }
        }
        sql(db, "COMMIT");
        free(text);
}

static sqlite3 *db_new(const char *path, bool wal)
{
        char sp[PATH_MAX], dir[PATH_MAX], cmd[PATH_MAX + 16];
        sqlite3 *db;
        xsnprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = 0;
        xsnprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
        (void)!system(cmd);
        if (sqlite3_open(path, &db) != SQLITE_OK)
                exit(99);
        xsnprintf(sp, sizeof(sp), "%s/schema.sql", fx);
        char *schema = slurp(sp, NULL);
        if (!schema)
                exit(99);
        sql(db, schema);
        free(schema);
        if (!wal)
                sql(db, "PRAGMA journal_mode=DELETE");
        return db;
}

static inline void db_build(const char *path, bool wal, const char *tsv)
{
        sqlite3 *db = db_new(path, wal);
        if (tsv)
                load_tsv(db, tsv);
        sqlite3_close(db);
}

/* ---- reading -------------------------------------------------------------------- */

struct src {
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm;
        uint64_t malformed; /* collect_rows's count of undecodable events */
};

static inline void src_init(struct src *s, const char *path)
{
        memset(s, 0, sizeof(*s));
        xsnprintf(s->path, sizeof(s->path), "%s", path);
        s->ctx.adapter = A;
        s->ctx.path = s->path;
        s->ctx.source_hash = hash64(s->path, strlen(s->path));
}

/* One call, the writer long gone (see test_settling for a recent one). */
static inline int collect(struct src *s, size_t max_rows, struct row_batch *b)
{
        age_db(s->path);
        return A->collect_rows(&s->ctx, &s->ps, &s->wm, max_rows, b, &s->malformed);
}

/* Calls until done; returns the last result, *ret_calls the number of calls. */
static inline int collect_all(struct src *s, size_t max_rows, struct row_batch *b, int *ret_calls)
{
        int r, calls = 0;
        do {
                r = collect(s, max_rows, b);
                calls++;
        } while (r == 1 && calls < 10000);
        if (ret_calls)
                *ret_calls = calls;
        return r;
}

static inline void check_case(const char *name, const struct totals *t)
{
        char p[PATH_MAX];
        xsnprintf(p, sizeof(p), "%s/expected.json", fx);
        struct json_object *root = json_object_from_file(p), *cases, *c;
        ok(root && json_object_object_get_ex(root, "cases", &cases) && json_object_object_get_ex(cases, name, &c),
           "expected.json has %s", name);
        if (!root)
                return;
        printf("# %s\n", name);
        totals_check(t, c, NULL, false);
        is_int(t->synthetic, 0, "no synthetic rows");
        json_object_put(root);
}

static int64_t max_rowid(const char *path)
{
        sqlite3 *db;
        sqlite3_stmt *st;
        int64_t v = -1;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT max(rowid) FROM transcript_events", -1, &st, NULL) == SQLITE_OK) {
                if (sqlite3_step(st) == SQLITE_ROW)
                        v = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
        }
        sqlite3_close(db);
        return v;
}

#define S1 "b3a2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c01"
#define S2 "c4b3a2d1-0f9e-4b8a-9d7c-6f5e4b3a2c02"

static inline const struct usage_row *find_kind(const struct row_batch *b, int kind, const char *session)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->rows[i].kind == kind && strcmp(b->rows[i].session, session) == 0)
                        return &b->rows[i];
        return NULL;
}

/* ---- the fixture databases --------------------------------------------------------- */
