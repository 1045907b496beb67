/* OpenClaw's published archive files (sessions/<sid>.jsonl.deleted.<ts>.<gen>.zst)
 * and cold-storage files (sessions/cold/<sha256>.jsonl.zst) as sources: written
 * once, so read whole, again only when the file itself changed. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binio.h"
#include "openclaw.h"

/* parse_state.priv of such a source (the named fields are the pi state of
 * a read in progress): u8 FILE_PRIV_FORMAT | u8 done | u64 fingerprint */
#define FILE_PRIV_FORMAT 0x46 /* 'F': not a database state's format byte */
#define FILE_PRIV_LEN    10

static bool ends_with(const char *s, size_t n, const char *suffix)
{
        size_t k = strlen(suffix);
        return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

bool openclaw_is_archive_file(const char *path, enum oc_archive_format *ret_format)
{
        const char *name = strrchr(path, '/');
        size_t n, dn;

        name = name ? name + 1 : path;
        n = strlen(name);
        if (name[0] == '.' || !ends_with(name, n, ".zst"))
                return false;
        dn = (size_t)(name - path);
        if (dn >= 6 && memcmp(name - 6, "/cold/", 6) == 0) {
                if (!ends_with(name, n, ".jsonl.zst") || n == strlen(".jsonl.zst"))
                        return false;
                *ret_format = OC_ARCHIVE_COLD;
                return true;
        }
        if ((strstr(name, ".jsonl.deleted.") || strstr(name, ".jsonl.reset.")) && name[0] != '.') {
                *ret_format = OC_ARCHIVE_JSONL;
                return true;
        }
        return false;
}

static uint64_t file_fp(const struct stat *st)
{
        int64_t v[5] = { (int64_t)st->st_dev, (int64_t)st->st_ino, (int64_t)st->st_size,
                         (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec,
                         (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec };
        return hash64(v, sizeof(v));
}

/* 0 and the fingerprint of the last read when priv is ours. */
static int priv_get(const struct parse_state *ps, bool *ret_done, uint64_t *ret_fp)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        uint8_t done;
        uint64_t fp;

        if (ps->priv_len != FILE_PRIV_LEN || br_u8(&r) != FILE_PRIV_FORMAT)
                return -ENOENT;
        done = br_u8(&r);
        fp = br_u64(&r);
        if (r.bad)
                return -ENOENT;
        *ret_done = done != 0;
        *ret_fp = fp;
        return 0;
}

static void priv_put(struct parse_state *ps, bool done, uint64_t fp)
{
        struct bw w = { ps->priv, 0, sizeof(ps->priv), false };

        bw_u8(&w, FILE_PRIV_FORMAT);
        bw_u8(&w, done ? 1 : 0);
        bw_u64(&w, fp);
        ps->priv_len = (uint32_t)w.len;
}

int openclaw_collect_file(const struct source_ctx *ctx, struct parse_state *ps,
                          uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                          uint64_t *io_malformed)
{
        enum oc_archive_format format;
        struct parse_state work = *ps;
        struct stat st;
        bool done = false;
        uint64_t fp = 0, skip = *io_watermark;
        int fd, r;

        if (!openclaw_is_archive_file(ctx->path, &format))
                return -EPROTO;
        fd = open(ctx->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EBADMSG;
        if (r < 0) {
                close(fd);
                return r;
        }
        if (priv_get(ps, &done, &fp) < 0 || fp != file_fp(&st)) {
                /* new, or changed since: read it from the start */
                memset(&work, 0, sizeof(work));
                skip = 0;
                done = false;
        } else if (done) {
                close(fd);
                return 0; /* read already, unchanged */
        }
        struct oc_archive_read a = {
                .ctx = ctx, .ps = &work, .format = format, .skip = skip,
                .max_rows = max_rows ? max_rows : 1, .out = out,
        };
        r = openclaw_archive_read_fd(&a, fd);
        close(fd);
        if (r < 0)
                return r;
        priv_put(&work, r == 0, file_fp(&st));
        *ps = work;
        *io_watermark = a.consumed;
        *io_malformed += a.malformed;
        return r;
}
