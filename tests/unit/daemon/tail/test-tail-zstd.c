/* tail_zstd_file against a real LMDB ledger and real .zst files: decoded
 * offsets, small budgets that still progress, a plain sibling that wins,
 * checkpoints taken over across x <-> x.zst, a rewritten .zst read again
 * without double counting, a corrupt stream that keeps what decoded. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "adapt-util.h"
#include "ledger/ledger.h"
#include "registry.h"
#include "tail/tail.h"
#include "tap.h"
#include "testutil.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

static struct ledger *L;

static const char *HDR =
        "{\"type\":\"session\",\"version\":3,\"id\":\"z1\",\"timestamp\":\"2026-11-30T10:00:00.000Z\",\"cwd\":\"/p\"}\n";

/* a pi session of n calls numbered from base (pi lines: the simplest adapter
 * to drive tail; other bases make other calls) */
static char *session_text(int base, int n, size_t *ret_len)
{
        size_t cap = 1024 + (size_t)n * 512, len = strlen(HDR);
        char *t = malloc(cap);

        memcpy(t, HDR, len);
        for (int i = 0; i < n; i++)
                len += (size_t)snprintf(t + len, cap - len,
                                        "{\"type\":\"message\",\"id\":\"%08x\",\"timestamp\":\"2026-11-30T10:00:01.000Z\","
                                        "\"message\":{\"role\":\"assistant\",\"content\":[],\"provider\":\"p\","
                                        "\"model\":\"m\",\"usage\":{\"input\":%d,\"output\":1},\"timestamp\":%lld}}\n",
                                        base + i, 100 + base + i, 1796000000000LL + base + i);
        *ret_len = len;
        return t;
}

static void write_zst(const char *path, const char *text, size_t n)
{
        size_t cap = ZSTD_compressBound(n);
        char *buf = malloc(cap);
        size_t k = ZSTD_compress(buf, cap, text, n, 3);
        write_bytes(path, buf, k);
        free(buf);
}

/* pi lines, with Codex's x <-> x.zst sibling rule */
static struct adapter zpi;

static int run(const char *path, bool zstd, uint64_t budget, struct tail_outcome *out)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT };
        struct source_ctx ctx = { .adapter = &zpi, .path = path };

        t.limits.budget_bytes = budget;
        stat(path, &ctx.st);
        ctx.source_hash = hash64(path, strlen(path));
        (void)zstd; /* told by the file's first bytes */
        return tail_source(&t, &ctx, CLASS_LINES, out);
}

/* As the daemon reads: the source's kept state carried from call to call. */
static int run_kept(const char *path, uint64_t budget, struct tail_keep **keep, struct tail_outcome *out)
{
        struct tail_ctx t = { .ledger = L, .limits = TAIL_LIMITS_DEFAULT, .keep = keep };
        struct source_ctx ctx = { .adapter = &zpi, .path = path };

        t.limits.budget_bytes = budget;
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

int main(void)
{
        char *tmp = tap_tmpdir(), db[PATH_MAX], plain[PATH_MAX], z[PATH_MAX], cut[PATH_MAX];
        struct tail_outcome out;

        zpi = adapter_pi;
        zpi.sibling_of = adapt_zst_sibling;
        size_t len, n2;
        char *text = session_text(0, 12000, &len), *more;
        int r, calls;

        pj(db, tmp, "state");
        mkdir_p(db);
        is_int(ledger_open(db, 0, &L), 0, "ledger opened");
        pj(z, tmp, "a.jsonl.zst");
        pj(plain, tmp, "a.jsonl");

        /* a fresh .zst in small slices: every slice progresses, offsets are decoded bytes */
        write_zst(z, text, len);
        calls = 0;
        do {
                r = run(z, true, 64 << 10, &out);
                calls++;
        } while (r == TAIL_MORE && calls < 1000);
        is_int(r, TAIL_DONE, "read to the end");
        ok(calls > 2, "in %d budget slices", calls);
        is_int(rows(), 12000, "every call counted once");
        is_int(offset_of(z), len, "offset = decoded length");
        is_int(run(z, true, 64 << 20, &out), TAIL_DONE, "again");
        is_int(rows(), 12000, "nothing new");

        /* the same stream under another name, read in the same slices with
         * the decoder kept between them: it is decoded once (before, every
         * slice decoded again from byte 0 to its offset: quadratic) */
        {
                char k1[PATH_MAX], k2[PATH_MAX];
                struct tail_keep *keep = NULL;
                uint64_t extra_kept = 0, extra_fresh = 0; /* bytes decoded */
                int n_kept = 0, n_fresh = 0;
                pj(k1, tmp, "k1.jsonl.zst");
                pj(k2, tmp, "k2.jsonl.zst");
                write_zst(k1, text, len);
                write_zst(k2, text, len);
                do {
                        r = run_kept(k1, 64 << 10, &keep, &out);
                        extra_kept += out.decoded;
                        n_kept++;
                } while (r == TAIL_MORE && n_kept < 1000);
                ok(r == TAIL_DONE && keep == NULL, "kept decoder: read to the end, nothing kept after");
                do {
                        r = run(k2, true, 64 << 10, &out);
                        extra_fresh += out.decoded;
                        n_fresh++;
                } while (r == TAIL_MORE && n_fresh < 1000);
                printf("# bytes decoded for a %zu-byte stream: %llu with the decoder kept (%d slices), "
                       "%llu with a new decoder each slice (%d)\n", len, (unsigned long long)extra_kept, n_kept,
                       (unsigned long long)extra_fresh, n_fresh);
                ok(n_kept > 10 && extra_kept < len + len / 8, "  decoded once: %llu bytes for %zu",
                   (unsigned long long)extra_kept, len);
                ok(offset_of(k1) == len && offset_of(k2) == len, "  both to the end");
                /* a restart half-way: the decoder comes to the offset in slices too */
                pj(k1, tmp, "k3.jsonl.zst");
                write_zst(k1, text, len);
                r = run_kept(k1, len / 2, &keep, &out);
                tail_keep_free(keep);
                keep = NULL;
                uint64_t half = offset_of(k1);
                int slices = 0;
                do {
                        r = run_kept(k1, 64 << 10, &keep, &out);
                        slices++;
                } while (r == TAIL_MORE && slices < 1000);
                ok(half > 0 && half < len && r == TAIL_DONE && slices > 3 && offset_of(k1) == len,
                   "  after a restart at %llu, on in %d slices to the end", (unsigned long long)half, slices);
        }

        /* resume: decompressed to a plain file (new inode) and appended */
        more = session_text(0, 12010, &n2);
        write_bytes(plain, more, n2);
        uint64_t zoff = offset_of(z);
        ok(run(z, true, 64 << 20, &out) == TAIL_DONE && offset_of(z) == zoff && rows() == 12000,
           "a .zst beside its plain file is not read");
        unlink(z);
        is_int(run(plain, false, 64 << 20, &out), TAIL_DONE, "plain read");
        ok(out.renamed && strstr(out.renamed_from, "a.jsonl.zst") && !out.reset,
           "it took the .zst's checkpoint (renamed_from %s)", out.renamed_from);
        is_int(rows(), 12010, "only the ten appended calls are new");

        /* compressed again: the .zst takes the plain file's checkpoint */
        write_zst(z, more, n2);
        unlink(plain);
        is_int(run(z, true, 64 << 20, &out), TAIL_DONE, "compressed again");
        ok(!out.reset, "not read from 0 (the plain file's checkpoint, or its own if the inode came back)");
        is_int(offset_of(z), n2, "at the end already");
        is_int(rows(), 12010, "nothing counted twice");

        /* a rewritten .zst with other content: read again from 0, keys dedup */
        free(text);
        text = session_text(0, 5, &len);
        text[len - 3] = ' '; /* change a byte before the old offset: a different file */
        write_zst(z, text, len);
        is_int(run(z, true, 64 << 20, &out), TAIL_DONE, "rewritten .zst read");
        ok(out.reset, "identity changed: re-read from 0");
        is_int(rows(), 12010, "... without counting anything twice");

        /* a cut stream: what decoded before the cut counts, the error is reported */
        free(text);
        text = session_text(1000000, 20000, &len);
        pj(cut, tmp, "b.jsonl.zst");
        {
                size_t cap = ZSTD_compressBound(len);
                char *buf = malloc(cap);
                size_t k = ZSTD_compress(buf, cap, text, len, 1);
                write_bytes(cut, buf, k * 3 / 4);
                free(buf);
        }
        uint64_t before = rows();
        is_int(run(cut, true, 256 << 20, &out), -EBADMSG, "a cut stream: -EBADMSG");
        ok(rows() > before && rows() < before + 20000, "the calls before the cut are counted (%llu)",
           (unsigned long long)(rows() - before));
        ok(offset_of(cut) > 0 && offset_of(cut) < len, "its offset stops at the last whole line");

        free(text);
        free(more);
        ledger_close(L);
        return tap_done();
}
