/* OpenClaw archives outside transcript_events: .zst archive and cold files
 * as zstd line sources read through tail (whole, resumed in tiny slices,
 * read once, several frames, a cut stream not decoded again, plain bytes
 * under a .zst name) and, through collect_rows, the blobs a database holds (zstd, identity,
 * cold sqlite storage, wrong sha256, bad zstd, a pass resumed by rowid),
 * each giving the same rows as the plain JSONL of the same session. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zstd.h>

#include "adapter.h"
#include "lines.h"
#include "openclaw/openclaw.h"
#include "registry.h"
#include "row.h"
#include "hash/sha256.h"
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

static const struct adapter *A = &adapter_openclaw;
static char ax[PATH_MAX], tmp[PATH_MAX];

static void *zcompress(const void *s, size_t n, size_t *ret_len)
{
        size_t cap = ZSTD_compressBound(n);
        void *out = malloc(cap);
        size_t k = ZSTD_compress(out, cap, s, n, 3);
        if (ZSTD_isError(k))
                exit(99);
        *ret_len = k;
        return out;
}

struct src {
        char path[PATH_MAX];
        struct source_ctx ctx;
        struct parse_state ps;
        uint64_t wm, malformed;
};

static void src_init(struct src *s, const char *path)
{
        memset(s, 0, sizeof(*s));
        xsnprintf(s->path, sizeof(s->path), "%s", path);
        s->ctx.adapter = A;
        s->ctx.path = s->path;
        s->ctx.source_hash = hash64(s->path, strlen(s->path));
}

static int collect_all(struct src *s, size_t max_rows, struct row_batch *b, int *ret_calls)
{
        int r, calls = 0;
        do {
                age_db(s->path); /* the writer long gone */
                r = A->collect_rows(&s->ctx, &s->ps, &s->wm, max_rows, b, &s->malformed);
                calls++;
        } while (r == 1 && calls < 10000);
        if (ret_calls)
                *ret_calls = calls;
        return r;
}

/* The rows of a fixture session read as a plain JSONL transcript. */
static void plain_rows(const char *name, struct row_batch *b)
{
        char p[PATH_MAX];
        xsnprintf(p, sizeof(p), "%s/%s", ax, name);
        if (read_lines(A, p, b) < 0)
                exit(99);
}

/* Same calls: the same keys and token sums, in any order. */
static bool same_rows(const struct row_batch *a, const struct row_batch *b)
{
        uint64_t ta = 0, tb = 0;
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++) {
                bool found = false;
                for (size_t j = 0; j < b->n && !found; j++)
                        found = memcmp(&a->rows[i].key, &b->rows[j].key, sizeof(a->rows[i].key)) == 0;
                if (!found)
                        return false;
                ta += a->rows[i].total + (uint64_t)a->rows[i].cost_nano;
                tb += b->rows[i].total + (uint64_t)b->rows[i].cost_nano;
        }
        return ta == tb;
}

static char *fixture(const char *name, size_t *ret_len)
{
        char p[PATH_MAX];
        xsnprintf(p, sizeof(p), "%s/%s", ax, name);
        char *s = slurp(p, ret_len);
        if (!s)
                exit(99);
        return s;
}

/* The cold-storage restore records of a session. */
static char *cold_records(const char *text, size_t *ret_len)
{
        struct json_object *arr = json_object_new_array();
        const char *line;
        size_t pos = 0, n, len = strlen(text), out_len = 0;
        int seq = 0;
        char *out = NULL;

        json_object_array_add(arr, json_tokener_parse("{\"kind\":\"header\",\"version\":1}"));
        while (next_line(text, len, &pos, &line, &n, NULL)) {
                struct json_object *rec = json_object_new_object(), *row = json_object_new_object();
                json_object_object_add(rec, "kind", json_object_new_string("event"));
                json_object_object_add(row, "seq", json_object_new_int(seq++));
                json_object_object_add(row, "event_json", json_object_new_string_len(line, (int)n));
                json_object_object_add(rec, "row", row);
                json_object_array_add(arr, rec);
        }
        /* records that are not events hold no usage, even when they look like one */
        json_object_array_add(arr, json_tokener_parse("{\"kind\":\"fts\",\"row\":{\"text\":\"usage\"}}"));
        json_object_array_add(arr, json_tokener_parse("{\"kind\":\"active\",\"row\":{\"seq\":3}}"));
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                const char *s = json_object_to_json_string_ext(json_object_array_get_idx(arr, i), JSON_C_TO_STRING_PLAIN);
                size_t k = strlen(s);
                out = realloc(out, out_len + k + 2);
                memcpy(out + out_len, s, k);
                out[out_len + k] = '\n';
                out_len += k + 1;
        }
        out[out_len] = 0;
        json_object_put(arr);
        *ret_len = out_len;
        return out;
}

/* ---- files: zstd line sources, through tail into a real ledger --------------- */

static struct ledger *L;

/* Every row a commit passed on (whatever its outcome). */
static void keep_rows(void *u, const struct usage_row *rows, const uint8_t *outcomes, size_t n)
{
        struct row_batch *b = u;
        (void)outcomes;
        for (size_t i = 0; i < n; i++) {
                struct usage_row *r;
                if (row_batch_push(b, &r) == 0)
                        *r = rows[i];
        }
}

/* Reads path through tail_source until it is done (a kept decoder between
 * calls, as the daemon does); *ret_calls the calls it took. */
static int tail_all(const char *path, uint64_t budget, size_t commit_rows, struct row_batch *b,
                    int *ret_calls, struct tail_outcome *ret_out)
{
        struct tail_keep *keep = NULL;
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT, .on_rows = keep_rows,
                              .u = b, .keep = &keep };
        struct source_ctx ctx = { .adapter = A, .path = path, .root_path = tmp };
        struct tail_outcome out = { 0 }, last = { 0 };
        int r, calls = 0;

        t.limits.budget_bytes = budget;
        t.limits.commit_rows = commit_rows;
        ctx.source_hash = hash64(path, strlen(path));
        do {
                stat(path, &ctx.st);
                r = tail_source(&t, &ctx, CLASS_LINES, &out);
                calls++;
                last.decoded += out.decoded;
                last.offset = out.offset;
                last.counts = out.counts;
        } while (r == TAIL_MORE && calls < 100000);
        tail_keep_free(keep);
        if (ret_calls)
                *ret_calls = calls;
        if (ret_out)
                *ret_out = last;
        return r;
}

static void test_file(void)
{
        char dir[PATH_MAX], p[PATH_MAX], cold[PATH_MAX], lpath[PATH_MAX];
        struct row_batch want = { 0 }, b = { 0 };
        struct tail_outcome out;
        size_t n, zn;
        char *text = fixture("deleted-zstd.jsonl", &n);
        void *z = zcompress(text, n, &zn);
        int calls;

        xsnprintf(lpath, sizeof(lpath), "%s/ledger", tmp);
        mkdir_p(lpath);
        if (ledger_open(lpath, 0, &L) < 0)
                exit(99);
        plain_rows("deleted-zstd.jsonl", &want);
        ok(want.n == 2, "fixture: two billable calls (the delivery-mirror row is not one)");
        xsnprintf(dir, sizeof(dir), "%s/agents/main/sessions", tmp);
        mkdir_p(dir);
        xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g1.zst", dir);
        write_bytes(p, z, zn);

        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, &out), TAIL_DONE, "published archive: a zstd line source");
        ok(same_rows(&b, &want), "published archive: the same calls as the plain transcript");
        is_int((int)out.offset, (int)n, "offset: the decoded bytes");
        row_batch_clear(&b);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, &out), TAIL_DONE, "read again unchanged");
        ok(b.n == 0 && out.decoded == 0, "  nothing decoded, nothing passed: a file written once is read once");

        /* a new name for the same bytes (the checkpoint is another path's):
         * read in tiny slices, one row per commit */
        xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g2.zst", dir);
        write_bytes(p, z, zn);
        is_int(tail_all(p, 64, 1, &b, &calls, NULL), TAIL_DONE, "tiny budgets");
        ok(calls >= 2 && same_rows(&b, &want), "  resumed in decoded bytes, the same calls (%d calls)", calls);
        row_batch_clear(&b);

        /* touched (a new mtime): decoded again to check it is the same
         * stream, nothing after the offset, nothing counted again */
        struct timeval tv[2] = { { 1800000000, 0 }, { 1800000000, 0 } };
        utimes(p, tv);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, &out), TAIL_DONE, "touched file: checked");
        ok(b.n == 0 && out.offset == n && out.decoded > 0, "  decoded to the offset, nothing new");
        row_batch_clear(&b);

        /* two frames and a skippable frame, no newline at the end */
        {
                size_t k1, k2, m = n - 1, half = m / 2;
                void *z1 = zcompress(text, half, &k1), *z2 = zcompress(text + half, m - half, &k2);
                static const uint8_t skip[12] = { 0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4 };
                uint8_t *cat = malloc(k1 + k2 + sizeof(skip));
                memcpy(cat, z1, k1);
                memcpy(cat + k1, skip, sizeof(skip));
                memcpy(cat + k1 + sizeof(skip), z2, k2);
                xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g3.zst", dir);
                write_bytes(p, cat, k1 + k2 + sizeof(skip));
                is_int(tail_all(p, 64 << 20, 1024, &b, NULL, NULL), TAIL_DONE,
                       "several frames, a skippable one, no final newline");
                ok(same_rows(&b, &want), "  the same calls (the last one unterminated but complete)");
                row_batch_clear(&b);
                free(z1);
                free(z2);
                free(cat);
        }

        /* a cut stream: what decoded before the cut counts; not decoded
         * again until the file changes */
        xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g4.zst", dir);
        write_bytes(p, z, zn - 8);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, NULL), -EBADMSG, "cut: -EBADMSG");
        ok(b.n <= want.n, "  at most the calls before the cut (%zu)", b.n);
        row_batch_clear(&b);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, &out), -EBADMSG, "again, unchanged: -EBADMSG");
        ok(out.decoded == 0 && b.n == 0, "  without decoding it again");
        write_bytes(p, z, zn);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, NULL), TAIL_DONE, "repaired: read");
        ok(same_rows(&b, &want), "  the same calls");
        row_batch_clear(&b);
        /* bytes that are not zstd under a .zst name: a corrupt stream */
        xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g5.zst", dir);
        write_bytes(p, text, n);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, NULL), -EBADMSG, "not zstd: -EBADMSG");
        is_int((int)b.n, 0, "  no rows from it");
        /* zstd without the name: told by the bytes */
        xsnprintf(p, sizeof(p), "%s/a2.jsonl.deleted.2026-11-20T08-00-00.000Z.g6", tmp);
        write_bytes(p, z, zn);
        is_int(tail_all(p, 64 << 20, 1024, &b, NULL, NULL), TAIL_DONE, "zstd bytes, no .zst name: decoded");
        ok(same_rows(&b, &want), "  the same calls");
        row_batch_clear(&b);
        row_batch_free(&want);

        /* a cold file: only kind "event" records, a bad record skipped and counted */
        {
                char *ctext = fixture("cold-file.jsonl", &n), *rec;
                size_t rn, bn;
                plain_rows("cold-file.jsonl", &want);
                rec = cold_records(ctext, &rn);
                static const char broken[] = "{\"kind\":\"event\",\"row\":\n";
                rec = realloc(rec, rn + sizeof(broken));
                memcpy(rec + rn, broken, strlen(broken));
                rn += strlen(broken);
                void *cz = zcompress(rec, rn, &bn);
                xsnprintf(cold, sizeof(cold), "%s/cold", dir);
                mkdir_p(cold);
                xsnprintf(p, sizeof(p), "%s/cold/%064d.jsonl.zst", dir, 7);
                write_bytes(p, cz, bn);
                is_int(tail_all(p, 64 << 20, 1024, &b, NULL, &out), TAIL_DONE, "cold file: read");
                ok(want.n == 2 && same_rows(&b, &want), "  the same calls as the plain transcript");
                is_int((int)out.counts.malformed, 1, "  the broken record counted as malformed");
                row_batch_clear(&b);
                row_batch_free(&want);
                free(ctext);
                free(rec);
                free(cz);
        }
        row_batch_free(&b);
        free(text);
        free(z);
        L = ledger_close(L);
}

/* ---- database blobs ------------------------------------------------------------- */

static void sql(sqlite3 *db, const char *s)
{
        char *err = NULL;
        if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
                printf("# sql failed: %s: %s\n", s, err ? err : "?");
                exit(99);
        }
}

static void sha_hex(const void *p, size_t n, char hex[65])
{
        struct sha256 s;
        uint8_t d[SHA256_SIZE];
        sha256_init(&s);
        sha256_update(&s, p, n);
        sha256_final(&s, d);
        sha256_hex(d, hex);
}

static void archive(sqlite3 *db, const char *sid, const char *enc, const void *blob, size_t n, const char *sha)
{
        sqlite3_stmt *st;
        char name[200];
        xsnprintf(name, sizeof(name), "%s.jsonl.deleted.x.g1.zst", sid);
        if (sqlite3_prepare_v2(db,
                               "INSERT INTO session_transcript_archives(session_id, generation, session_key, reason, "
                               "encoding, archive_blob, archive_sha256, archive_name, created_at) "
                               "VALUES (?1, 'g1', 'k', 'deleted', ?2, ?3, ?4, ?5, 1)",
                               -1, &st, NULL) != SQLITE_OK)
                exit(99);
        sqlite3_bind_text(st, 1, sid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, enc, -1, SQLITE_STATIC);
        sqlite3_bind_blob(st, 3, blob, (int)n, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, sha, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, name, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
                exit(99);
        sqlite3_finalize(st);
}

static void test_db(void)
{
        char p[PATH_MAX], dir[PATH_MAX], hex[65], schema[PATH_MAX];
        struct row_batch want = { 0 }, b = { 0 };
        struct src s;
        sqlite3 *db;
        size_t n1, n2, n3, z1n, z3n, cn;
        char *t1 = fixture("deleted-zstd.jsonl", &n1), *t2 = fixture("deleted-identity.jsonl", &n2);
        char *t3 = fixture("cold-sqlite.jsonl", &n3), *cold = cold_records(t3, &cn), *t4;
        void *z1 = zcompress(t1, n1, &z1n), *z3 = zcompress(cold, cn, &z3n);
        size_t n4, z4n;
        void *z4;
        int calls;

        plain_rows("deleted-zstd.jsonl", &want);
        plain_rows("deleted-identity.jsonl", &want);
        plain_rows("cold-sqlite.jsonl", &want);
        xsnprintf(dir, sizeof(dir), "%s/db/agents/main/agent", tmp);
        mkdir_p(dir);
        xsnprintf(p, sizeof(p), "%s/openclaw-agent.sqlite", dir);
        xsnprintf(schema, sizeof(schema), "%s/fixtures/openclaw/schema.sql", am_srcdir());
        char *ddl = slurp(schema, NULL);
        if (!ddl || sqlite3_open(p, &db) != SQLITE_OK)
                exit(99);
        sql(db, ddl);
        free(ddl);
        sha_hex(z1, z1n, hex);
        archive(db, "a2", "zstd", z1, z1n, hex);     /* sha256 of the stored bytes */
        sha_hex(t2, n2, hex);
        archive(db, "a3", "identity", t2, n2, hex);  /* identity: the same bytes */
        {
                sqlite3_stmt *st;
                if (sqlite3_prepare_v2(db,
                                       "INSERT INTO session_transcript_cold_archives(session_id, generation, "
                                       "archive_name, archive_sha256, event_count, raw_bytes, archive_bytes, last_seq, "
                                       "archived_at, storage, archive_blob) VALUES ('a5', 'c1', 'x.jsonl.zst', ?1, 9, "
                                       "1, 1, 9, 1, 'sqlite', ?2)",
                                       -1, &st, NULL) != SQLITE_OK)
                        exit(99);
                sha_hex(cold, cn, hex); /* sha256 of the decoded bytes: accepted too */
                sqlite3_bind_text(st, 1, hex, -1, SQLITE_TRANSIENT);
                sqlite3_bind_blob(st, 2, z3, (int)z3n, SQLITE_STATIC);
                if (sqlite3_step(st) != SQLITE_DONE)
                        exit(99);
                sqlite3_finalize(st);
        }
        /* faults: a wrong sha256, a blob that is not zstd */
        t4 = fixture("bad-sha.jsonl", &n4);
        z4 = zcompress(t4, n4, &z4n);
        archive(db, "a7", "zstd", z4, z4n, "0000000000000000000000000000000000000000000000000000000000000000");
        sha_hex(t4, n4, hex);
        archive(db, "a9", "zstd", t4, n4, hex);

        src_init(&s, p);
        is_int(collect_all(&s, 4096, &b, NULL), 0, "database: archives read after transcript_events");
        ok(want.n == 4 && same_rows(&b, &want), "  zstd, identity and cold sqlite blobs: the same calls as plain");
        is_int((int)s.malformed, 2, "  the wrong-sha256 and the bad zstd blob counted");
        uint32_t bad = 0;
        ok(openclaw_db_faults(&s.ps, &bad) == 0 && bad == 2, "  two faults in the state status reads");
        for (size_t i = 0; i < b.n; i++)
                if (b.rows[i].source_hash != openclaw_origin_hash(p, OC_ARCHIVE_JSONL) &&
                    b.rows[i].source_hash != openclaw_origin_hash(p, OC_ARCHIVE_COLD))
                        ok(0, "  row %zu without an archive origin", i);
        row_batch_clear(&b);

        src_init(&s, p);
        is_int(collect_all(&s, 1, &b, &calls), 0, "one row per call");
        ok(calls >= 4 && same_rows(&b, &want), "  the pass resumes by rowid: the same calls (%d calls)", calls);
        is_int((int)s.malformed, 2, "  faults counted once");
        row_batch_clear(&b);

        /* the database changes, the archives do not: nothing read again */
        sql(db, "INSERT INTO session_windows(session_id, session_key, created_at, updated_at) VALUES ('z','k',1,1)");
        is_int(collect_all(&s, 4096, &b, NULL), 0, "database changed elsewhere");
        is_int((int)b.n, 0, "  the unchanged archive set is not read again");

        /* the sha256 repaired: the set changed, read again, the call appears */
        sha_hex(z4, z4n, hex);
        {
                char q[300];
                xsnprintf(q, sizeof(q), "UPDATE session_transcript_archives SET archive_sha256='%s' WHERE session_id='a7'", hex);
                sql(db, q);
        }
        is_int(collect_all(&s, 4096, &b, NULL), 0, "repaired blob: the set is read again");
        is_int((int)b.n, 5, "  the four known calls again (duplicates for the ledger) and the repaired one");
        ok(openclaw_db_faults(&s.ps, &bad) == 0 && bad == 1, "  one fault left");
        is_int((int)s.malformed, 2, "  no fault counted twice");
        row_batch_clear(&b);

        /* a state written before archives were read (format 1): they are read */
        src_init(&s, p);
        collect_all(&s, 4096, &b, NULL);
        row_batch_clear(&b);
        s.ps.priv_len = 34;
        s.ps.priv[0] = 1;
        is_int(collect_all(&s, 4096, &b, NULL), 0, "format-1 state");
        is_int((int)b.n, 5, "  the archives are read");
        row_batch_clear(&b);

        sqlite3_close(db);
        row_batch_free(&b);
        row_batch_free(&want);
        free(t1);
        free(t2);
        free(t3);
        free(t4);
        free(cold);
        free(z1);
        free(z3);
        free(z4);
}

static void test_sha256(void)
{
        char hex[65];
        sha_hex("abc", 3, hex);
        is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256(abc)");
        sha_hex("", 0, hex);
        is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256(\"\")");
        char *m = malloc(1000000);
        memset(m, 'a', 1000000);
        sha_hex(m, 1000000, hex);
        is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "sha256(a x 1e6)");
        free(m);
}

int main(void)
{
        xsnprintf(ax, sizeof(ax), "%s/fixtures/openclaw/archives", am_srcdir());
        xsnprintf(tmp, sizeof(tmp), "%s", tap_tmpdir());
        test_sha256();
        test_file();
        test_db();
        return tap_done();
}
