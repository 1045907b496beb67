/* Unit tests for ledger validation on real LMDB files made by ledger.c:
 * truncated, overwritten page by page, emptied or removed ledgers are
 * refused with a reason (never rebuilt silently); valid ones always pass. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/check.h"
#include "ledger/ledger.h"
#include "tap.h"
#include "testutil.h"

#define T0 1767225600000LL

static char dir[300], lpath[400], copy_dir[320], cpath[400], marker[400];

static void fill_row(struct usage_row *r, int i)
{
        struct keyhash h;
        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, "check");
        keyhash_u64(&h, (uint64_t)i);
        keyhash_end(&h, &r->key);
        r->flags = ROW_F_TOKENS_KNOWN;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = T0 + (int64_t)i * 60000;
        r->input = 100 + (uint64_t)i;
        r->output = 7;
        r->total = r->input + 7;
        r->cost_nano = 1000;
        r->cost_source = COST_VENDOR;
        ROW_SET(r->tool, "pi");
        snprintf(r->session, sizeof(r->session), "s%d", i % 13);
        ROW_SET(r->project, "/p");
        ROW_SET(r->provider, "anthropic");
        ROW_SET(r->model, "claude");
}

/* A ledger of n rows in batches, with checkpoints (one with a path long
 * enough to need an overflow page), so every page kind is present. */
static int build(struct ledger *l, int from, int n)
{
        static struct usage_row rows[100];
        char path[3200];
        struct checkpoint cp = {.kind = SOURCE_LINES};
        for (int i = from; i < from + n; i += 100) {
                int k = from + n - i < 100 ? from + n - i : 100;
                for (int j = 0; j < k; j++)
                        fill_row(&rows[j], i + j);
                memset(path, 'p', sizeof(path) - 1);
                path[0] = '/';
                path[i % 7 == 0 ? sizeof(path) - 1 : 40] = 0;
                cp.offset = (uint64_t)i;
                cp.state_len = 900;
                struct commit_batch b = {.source_path = path, .cp = &cp, .rows = rows, .n_rows = (size_t)k};
                struct commit_result res;
                if (ledger_commit(l, &b, &res) < 0)
                        return -1;
        }
        return 0;
}

static void copy_ledger(void)
{
        size_t n = 0;
        char *data = slurp(lpath, &n);
        mkdir_p(copy_dir);
        unlink(cpath);
        write_bytes(cpath, data, n);
        free(data);
}

static int count_rows_cb(const struct usage_row *r, void *u)
{
        (void)r;
        (*(size_t *)u)++;
        return 0;
}

static off_t file_size(const char *p)
{
        struct stat st;
        return stat(p, &st) == 0 ? st.st_size : -1;
}

static void overwrite(const char *p, off_t at, const void *b, size_t n)
{
        int fd = open(p, O_WRONLY);
        ok(fd >= 0 && pwrite(fd, b, n, at) == (ssize_t)n, "overwrite %zu bytes at %lld", n, (long long)at);
        close(fd);
}

int main(void)
{
        struct ledger *l = NULL;
        char why[512];
        const long ps = sysconf(_SC_PAGESIZE);
        size_t rows = 0;
        int r;

        snprintf(dir, sizeof(dir), "%s/state", tap_tmpdir());
        snprintf(lpath, sizeof(lpath), "%s/%s", dir, LEDGER_FILE);
        snprintf(marker, sizeof(marker), "%s/%s", dir, LEDGER_MARKER);
        snprintf(copy_dir, sizeof(copy_dir), "%s.copy", dir);
        snprintf(cpath, sizeof(cpath), "%s/%s", copy_dir, LEDGER_FILE);

        is_int(ledger_check_file(lpath, why, sizeof(why)), -ENOENT, "missing file: -ENOENT");

        /* ---- a real ledger, grown over many commits, always valid */
        r = ledger_open(dir, 0, &l);
        is_int(r, 0, "fresh ledger opens");
        ok(access(marker, F_OK) != 0, "no marker %s before the new ledger's first sync", LEDGER_MARKER);
        is_int(ledger_sync(l), 0, "the first sync");
        ok(access(marker, F_OK) == 0, "the marker %s is written by the first sync", LEDGER_MARKER);
        ok(build(l, 0, 3000) == 0, "3,000 rows in 30 commits");
        is_int(ledger_check_file(lpath, why, sizeof(why)), 0, "valid after 30 commits");
        if (why[0])
                printf("#   why: %s\n", why);
        ok(build(l, 0, 500) == 0 && build(l, 3000, 1000) == 0, "duplicates and 1,000 more rows");
        r = ledger_check_file(lpath, why, sizeof(why));
        is_int(r, 0, "valid after reuse of freed pages");
        if (r)
                printf("#   why: %s\n", why);
        l = ledger_close(l);
        is_int(ledger_check_file(lpath, why, sizeof(why)), 0, "valid after close");
        const off_t size = file_size(lpath);
        const long pages = (long)(size / ps);
        ok(pages > 20, "the ledger has %ld pages", pages);

        /* ---- truncations: every length a user's truncate could leave */
        const off_t cuts[] = {1, 100, 4095, 8192, 8193, 3 * 8192, size / 2, size - ps, size - 1};
        for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
                copy_ledger();
                ok(truncate(cpath, cuts[i]) == 0, "truncate to %lld", (long long)cuts[i]);
                r = ledger_check_file(cpath, why, sizeof(why));
                is_int(r, -EBADMSG, "truncated ledger refused");
                printf("#   %lld bytes: %s\n", (long long)cuts[i], why);
        }
        copy_ledger();
        ok(truncate(cpath, 8192) == 0, "truncate -s 8192");
        ledger_check_file(cpath, why, sizeof(why));
        ok(strstr(why, "truncated") != NULL, "the reason says truncated: %s", why);

        /* ---- meta pages: magic, version, page size, map size */
        static const struct { off_t at; const char *what; } metas[] = {
                {16, "magic of meta 0"}, {20, "version of meta 0"}, {40, "page size of meta 0"},
                {32, "map size of meta 0"}, {0, "page number of meta 0"},
        };
        for (size_t i = 0; i < sizeof(metas) / sizeof(metas[0]); i++) {
                for (int m = 0; m < 2; m++) {
                        static const uint8_t junk[8] = {0xff, 0x13, 0x77, 0x00, 0x42, 0x99, 0x01, 0xfe};
                        copy_ledger();
                        overwrite(cpath, metas[i].at + m * ps, junk, metas[i].at == 32 ? 1 : 4);
                        if (metas[i].at == 32) { /* map size 1: smaller than the data */
                                uint8_t one[8] = {1};
                                overwrite(cpath, metas[i].at + m * ps, one, 8);
                        }
                        r = ledger_check_file(cpath, why, sizeof(why));
                        is_int(r, -EBADMSG, metas[i].what);
                        printf("#   meta %d: %s\n", m, why);
                }
        }

        /* ---- every page overwritten with random bytes in turn: refused, or
         * (a free page) the ledger still opens, reads and commits cleanly */
        srand(7);
        int refused = 0, harmless = 0, broken = 0;
        for (long p = 2; p < pages; p++) {
                uint8_t *junk = malloc((size_t)ps);
                for (long j = 0; j < ps; j++)
                        junk[j] = (uint8_t)rand();
                copy_ledger();
                int fd = open(cpath, O_WRONLY);
                if (pwrite(fd, junk, (size_t)ps, (off_t)p * ps) != ps)
                        broken++;
                close(fd);
                free(junk);
                if (ledger_check_file(cpath, why, sizeof(why)) == -EBADMSG) {
                        refused++;
                        continue;
                }
                struct ledger *c = NULL;
                size_t n = 0;
                if (ledger_open(copy_dir, 0, &c) == 0 &&
                    ledger_foreach_row(c, count_rows_cb, &n) == 0 && n == 4000 &&
                    build(c, 5000, 100) == 0 && ledger_check_file(cpath, why, sizeof(why)) == 0)
                        harmless++;
                else
                        broken++;
                ledger_close(c);
        }
        printf("# %ld pages overwritten: %d refused, %d free (harmless), %d broken\n", pages - 2,
               refused, harmless, broken);
        is_int(broken, 0, "no overwritten page gets past the check and breaks the ledger");
        ok(refused > pages / 2, "most pages are in use and their damage is refused (%d)", refused);

        /* ---- ledger_open refuses a damaged ledger, changing nothing */
        copy_ledger();
        ok(truncate(cpath, 8192) == 0, "truncate the copy to 8192");
        r = ledger_open(copy_dir, 0, &l);
        is_int(r, -EBADMSG, "writable open refuses the truncated ledger");
        ok(strstr(ledger_open_error(), cpath) && strstr(ledger_open_error(), "move it aside"),
           "the error names the file and what to do: %s", ledger_open_error());
        is_int(file_size(cpath), 8192, "the refused file is left as it was");
        r = ledger_open(copy_dir, LEDGER_RDONLY, &l);
        is_int(r, -EBADMSG, "read-only open refuses it too");

        /* ---- an emptied or removed ledger where one existed: refused */
        copy_ledger();
        {
                char cm[400];
                snprintf(cm, sizeof(cm), "%s/" LEDGER_MARKER, copy_dir);
                write_file(cm, "x\n");
                ok(truncate(cpath, 0) == 0, "truncate -s 0");
                r = ledger_open(copy_dir, 0, &l);
                is_int(r, -EBADMSG, "an empty ledger with the marker is refused, not rebuilt");
                ok(strstr(ledger_open_error(), "empty") && strstr(ledger_open_error(), LEDGER_MARKER),
                   "... saying so: %s", ledger_open_error());
                is_int(file_size(cpath), 0, "... and the file is still empty");
                unlink(cpath);
                is_int(ledger_open(copy_dir, 0, &l), -EBADMSG, "a missing ledger with the marker is refused");
                ok(access(cpath, F_OK) != 0, "... and nothing was created");
                is_int(ledger_open(copy_dir, LEDGER_RDONLY, &l), -EBADMSG, "read-only: refused as well");
                unlink(cm);
                is_int(ledger_open(copy_dir, LEDGER_RDONLY, &l), -ENOENT,
                       "without the marker, read-only finds no ledger (as before)");
                r = ledger_open(copy_dir, 0, &l);
                is_int(r, 0, "without the marker a new ledger starts (the user chose to)");
                ok(access(cm, F_OK) != 0 && ledger_sync(l) == 0 && access(cm, F_OK) == 0,
                   "... and gets its marker at its first sync");
                ledger_foreach_row(l, count_rows_cb, &rows);
                is_int(rows, 0, "... empty");
                l = ledger_close(l);
        }

        /* ---- a ledger made before markers existed gets one at its first sync */
        unlink(marker);
        r = ledger_open(dir, 0, &l);
        is_int(r, 0, "an existing ledger without a marker opens");
        ok(ledger_sync(l) == 0 && access(marker, F_OK) == 0, "... and the marker is written by its first sync");
        rows = 0;
        ledger_foreach_row(l, count_rows_cb, &rows);
        is_int(rows, 4000, "... with all its rows");
        l = ledger_close(l);
        return tap_done();
}
