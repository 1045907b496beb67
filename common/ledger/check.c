/* Checks an LMDB data file with pread before LMDB maps it, so a truncated
 * or overwritten ledger is refused with a reason instead of crashing; and
 * the marker that tells a lost ledger from a new one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ledger/check.h"

/* LMDB 0.9's on-disk layout (64-bit builds: 8-byte page numbers). */
#define MDB_MAGIC_V 0xBEEFC0DEu
#define MDB_DATA_VERSION_V 1u
#define PAGEHDR 16u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_OVERFLOW 0x04u
#define P_META 0x08u
#define F_BIGDATA 0x01u
#define F_SUBDATA 0x02u
#define F_DUPDATA 0x04u
#define NODEHDR 8u
#define DB_SIZE 48u
#define META_OFF PAGEHDR            /* the meta inside its page */
#define META_END (META_OFF + 136u)  /* through mm_txnid */
#define P_INVALID UINT64_MAX
#define DEPTH_MAX 32u

struct meta {
        uint32_t magic, version, psize;
        uint64_t mapsize, last_pg, txnid;
        uint8_t dbs[2][DB_SIZE]; /* free, main */
};

struct tree_count {
        uint64_t branch, leaf, overflow, entries;
};

struct checker {
        int fd;
        uint32_t psize;
        uint64_t last_pg;
        uint8_t *used;  /* bitmap over pages 0..last_pg: reachable or free */
        char *why;
        size_t cap;
};

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

__attribute__((format(printf, 2, 3)))
static int bad(struct checker *c, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, c->cap, fmt, ap);
        va_end(ap);
        return -EBADMSG;
}

static int read_at(struct checker *c, void *buf, size_t n, uint64_t off)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = pread(c->fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return bad(c, "ends inside page %llu", (unsigned long long)(off / c->psize));
                got += (size_t)k;
        }
        return 0;
}

/* Marks pages [pg, pg + n) used; each may be used once. */
static int take(struct checker *c, uint64_t pg, uint64_t n, const char *what)
{
        if (pg < 2 || pg > c->last_pg || n > c->last_pg - pg + 1)
                return bad(c, "%s page %llu is outside the file's pages 2..%llu", what,
                           (unsigned long long)pg, (unsigned long long)c->last_pg);
        for (uint64_t i = pg; i < pg + n; i++) {
                if (c->used[i / 8] & (1u << (i % 8)))
                        return bad(c, "page %llu is used twice", (unsigned long long)i);
                c->used[i / 8] |= (uint8_t)(1u << (i % 8));
        }
        return 0;
}

static int parse_meta(struct checker *c, const uint8_t *p, uint64_t pgno, struct meta *m)
{
        if (get64(p) != pgno || !(get16(p + 10) & P_META))
                return bad(c, "meta page %llu has a wrong header", (unsigned long long)pgno);
        m->magic = get32(p + META_OFF);
        m->version = get32(p + META_OFF + 4);
        m->mapsize = get64(p + META_OFF + 16);
        memcpy(m->dbs[0], p + META_OFF + 24, DB_SIZE);
        memcpy(m->dbs[1], p + META_OFF + 24 + DB_SIZE, DB_SIZE);
        m->psize = get32(m->dbs[0]);
        m->last_pg = get64(p + META_OFF + 120);
        m->txnid = get64(p + META_OFF + 128);
        if (m->magic != MDB_MAGIC_V)
                return bad(c, "meta page %llu is not LMDB's (magic %08x)", (unsigned long long)pgno,
                           m->magic);
        if (m->version != MDB_DATA_VERSION_V)
                return bad(c, "meta page %llu has LMDB data version %u, expected %u",
                           (unsigned long long)pgno, m->version, MDB_DATA_VERSION_V);
        if (m->psize < 512 || m->psize > 65536 || (m->psize & (m->psize - 1)))
                return bad(c, "meta page %llu has a page size of %u", (unsigned long long)pgno,
                           m->psize);
        if (m->last_pg < 1 || m->last_pg >= UINT64_MAX / m->psize ||
            m->mapsize < (m->last_pg + 1) * m->psize)
                return bad(c, "meta page %llu: last page %llu does not fit its map size %llu",
                           (unsigned long long)pgno, (unsigned long long)m->last_pg,
                           (unsigned long long)m->mapsize);
        for (int i = 0; i < 2; i++) {
                uint64_t root = get64(m->dbs[i] + 40);
                if (root != P_INVALID && (root < 2 || root > m->last_pg))
                        return bad(c, "meta page %llu: a root page %llu beyond the last page %llu",
                                   (unsigned long long)pgno, (unsigned long long)root,
                                   (unsigned long long)m->last_pg);
        }
        return 0;
}

/* The free list's values: a count, then that many page numbers. */
static int take_free_list(struct checker *c, const uint8_t *v, uint64_t n)
{
        uint64_t count;
        if (n < 8 || n % 8)
                return bad(c, "a free-list record of %llu bytes", (unsigned long long)n);
        count = get64(v);
        if (count != n / 8 - 1)
                return bad(c, "a free-list record with a wrong count");
        for (uint64_t i = 1; i <= count; i++) {
                int r = take(c, get64(v + 8 * i), 1, "a free");
                if (r < 0)
                        return r;
        }
        return 0;
}

static int walk(struct checker *c, uint64_t pg, unsigned level, unsigned depth, int which,
                struct tree_count *t);

/* One leaf node's value: inline, on overflow pages, or a named DB's record. */
static int leaf_value(struct checker *c, const uint8_t *node, unsigned flags, uint32_t dsize,
                      int which, struct tree_count *t)
{
        const uint8_t *data = node + NODEHDR + get16(node + 6);
        if (flags & F_DUPDATA)
                return bad(c, "a duplicate-sorted node (the ledger uses none)");
        if (flags & F_BIGDATA) {
                uint64_t ov = get64(data), pages = (PAGEHDR - 1 + (uint64_t)dsize) / c->psize + 1;
                uint8_t *buf;
                int r = take(c, ov, pages, "an overflow");
                if (r < 0)
                        return r;
                t->overflow += pages;
                buf = malloc(pages * c->psize);
                if (!buf)
                        return -ENOMEM;
                r = read_at(c, buf, pages * c->psize, ov * c->psize);
                if (r == 0 && (get64(buf) != ov || !(get16(buf + 10) & P_OVERFLOW) ||
                               get32(buf + 12) != pages))
                        r = bad(c, "overflow page %llu has a wrong header", (unsigned long long)ov);
                if (r == 0 && which == 0)
                        r = take_free_list(c, buf + PAGEHDR, dsize);
                free(buf);
                return r;
        }
        if (flags & F_SUBDATA) {
                struct tree_count sub = {0};
                uint64_t root;
                unsigned depth;
                int r;
                if (which != 1 || dsize != DB_SIZE)
                        return bad(c, "a named-database record in the wrong place");
                root = get64(data + 40);
                depth = get16(data + 6);
                if (root == P_INVALID)
                        return depth == 0 ? 0 : bad(c, "an empty named database with depth %u", depth);
                if (depth == 0 || depth > DEPTH_MAX)
                        return bad(c, "a named database of depth %u", depth);
                r = walk(c, root, 1, depth, 2, &sub);
                if (r < 0)
                        return r;
                if (sub.branch != get64(data + 8) || sub.leaf != get64(data + 16) ||
                    sub.overflow != get64(data + 24) || sub.entries != get64(data + 32))
                        return bad(c, "a named database's page counts disagree with its pages");
                return 0;
        }
        return which == 0 ? take_free_list(c, data, dsize) : 0;
}

/* One page of a tree at level (1 = root) of depth levels; which: 0 free
 * list, 1 main DB (named-DB records), 2 a named DB. */
static int walk(struct checker *c, uint64_t pg, unsigned level, unsigned depth, int which,
                struct tree_count *t)
{
        uint8_t *p;
        unsigned flags, lower, upper, n;
        int r = take(c, pg, 1, "a tree");

        if (r < 0)
                return r;
        p = malloc(c->psize);
        if (!p)
                return -ENOMEM;
        r = read_at(c, p, c->psize, pg * c->psize);
        if (r < 0)
                goto out;
        flags = get16(p + 10);
        lower = get16(p + 12);
        upper = get16(p + 14);
        if (get64(p) != pg) {
                r = bad(c, "page %llu says it is page %llu", (unsigned long long)pg,
                        (unsigned long long)get64(p));
                goto out;
        }
        if ((flags != P_BRANCH && flags != P_LEAF) || (flags == P_LEAF) != (level == depth) ||
            lower < PAGEHDR || (lower - PAGEHDR) % 2 || upper < lower || upper > c->psize ||
            (flags == P_BRANCH && lower == PAGEHDR)) {
                r = bad(c, "page %llu has a malformed header", (unsigned long long)pg);
                goto out;
        }
        n = (lower - PAGEHDR) / 2;
        if (flags == P_BRANCH)
                t->branch++;
        else
                t->leaf++, t->entries += n;
        for (unsigned i = 0; i < n && r == 0; i++) {
                unsigned off = get16(p + PAGEHDR + 2 * i);
                const uint8_t *node = p + off;
                unsigned nflags, ksize;
                uint32_t dsize;

                if (off < upper || off + NODEHDR > c->psize) {
                        r = bad(c, "page %llu: node %u outside the page", (unsigned long long)pg, i);
                        break;
                }
                nflags = get16(node + 4);
                ksize = get16(node + 6);
                if (off + NODEHDR + ksize > c->psize) {
                        r = bad(c, "page %llu: key %u overruns the page", (unsigned long long)pg, i);
                        break;
                }
                if (flags == P_BRANCH) {
                        uint64_t child = (uint64_t)get16(node) | (uint64_t)get16(node + 2) << 16 |
                                         (uint64_t)nflags << 32;
                        r = walk(c, child, level + 1, depth, which, t);
                        continue;
                }
                dsize = (uint32_t)get16(node) | (uint32_t)get16(node + 2) << 16;
                if (off + NODEHDR + ksize + ((nflags & F_BIGDATA) ? 8u : dsize) > c->psize) {
                        r = bad(c, "page %llu: value %u overruns the page", (unsigned long long)pg, i);
                        break;
                }
                r = leaf_value(c, node, nflags, dsize, which, t);
        }
out:
        free(p);
        return r;
}

static int walk_db(struct checker *c, const uint8_t *db, int which, const char *name)
{
        struct tree_count t = {0};
        uint64_t root = get64(db + 40);
        unsigned depth = get16(db + 6);
        int r;

        if (root == P_INVALID)
                return depth == 0 ? 0 : bad(c, "the empty %s has depth %u", name, depth);
        if (depth == 0 || depth > DEPTH_MAX)
                return bad(c, "the %s has depth %u", name, depth);
        r = walk(c, root, 1, depth, which, &t);
        if (r < 0)
                return r;
        if (t.branch != get64(db + 8) || t.leaf != get64(db + 16) || t.overflow != get64(db + 24) ||
            t.entries != get64(db + 32))
                return bad(c, "the %s's page counts disagree with its pages", name);
        return 0;
}

static int check_fd(struct checker *c, uint64_t size)
{
        uint8_t head[META_END];
        struct meta m[2];
        const struct meta *cur;
        int r;

        if (size == 0)
                return bad(c, "is empty (0 bytes)");
        c->psize = 4096; /* for messages until the meta says */
        if (size < META_END)
                return bad(c, "is too short for an LMDB file (%llu bytes)", (unsigned long long)size);
        r = read_at(c, head, sizeof(head), 0);
        if (r < 0)
                return r;
        r = parse_meta(c, head, 0, &m[0]);
        if (r < 0)
                return r;
        c->psize = m[0].psize;
        if (size % c->psize)
                return bad(c, "is %llu bytes, not a whole number of %u-byte pages",
                           (unsigned long long)size, c->psize);
        if (size < 2ull * c->psize)
                return bad(c, "has no second meta page");
        r = read_at(c, head, sizeof(head), c->psize);
        if (r < 0)
                return r;
        r = parse_meta(c, head, 1, &m[1]);
        if (r < 0)
                return r;
        if (m[1].psize != m[0].psize)
                return bad(c, "its meta pages disagree on the page size");
        for (int i = 0; i < 2; i++)
                if (m[i].last_pg >= size / c->psize)
                        return bad(c, "is %llu pages long, but meta page %d says the last page is "
                                   "%llu (truncated?)", (unsigned long long)(size / c->psize), i,
                                   (unsigned long long)m[i].last_pg);
        cur = m[1].txnid > m[0].txnid ? &m[1] : &m[0];
        c->last_pg = cur->last_pg;
        c->used = calloc(c->last_pg / 8 + 1, 1);
        if (!c->used)
                return -ENOMEM;
        c->used[0] |= 3; /* the meta pages */
        r = walk_db(c, cur->dbs[0], 0, "free list");
        if (r == 0)
                r = walk_db(c, cur->dbs[1], 1, "main database");
        /* LMDB: every page up to the last is either in a tree or free */
        for (uint64_t i = 2; r == 0 && i <= c->last_pg; i++)
                if (!(c->used[i / 8] & (1u << (i % 8))))
                        r = bad(c, "page %llu is neither in use nor free", (unsigned long long)i);
        return r;
}

int ledger_check_file(const char *path, char *why, size_t cap)
{
        struct checker c = {.fd = -1, .why = why, .cap = cap};
        struct stat st;
        int r;

        if (cap)
                why[0] = 0;
        if (sizeof(size_t) != 8)
                return 0; /* the layout above is the 64-bit one */
        c.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (c.fd < 0) {
                r = -errno;
                snprintf(why, cap, "%s", strerror(errno));
                return r;
        }
        if (fstat(c.fd, &st) < 0) {
                r = -errno;
                snprintf(why, cap, "%s", strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
                r = bad(&c, "is not a regular file");
        } else {
                r = check_fd(&c, (uint64_t)st.st_size);
        }
        free(c.used);
        close(c.fd);
        return r;
}

/* ---- before ledger_open maps the file ------------------------------------- */

__attribute__((format(printf, 3, 4)))
static void say(char *err, size_t cap, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
}

static int marker_path(const char *dir, char path[PATH_MAX])
{
        return (size_t)snprintf(path, PATH_MAX, "%s/%s", dir, LEDGER_MARKER) < PATH_MAX ? 0
                                                                                    : -ENAMETOOLONG;
}

bool ledger_marker_exists(const char *dir)
{
        char marker[PATH_MAX];
        return marker_path(dir, marker) == 0 && access(marker, F_OK) == 0;
}

int ledger_precheck(const char *dir, const char *path, bool rdonly, char *err, size_t cap)
{
        char marker[PATH_MAX], why[512];
        bool had = ledger_marker_exists(dir);
        struct stat st;
        int r;

        if (marker_path(dir, marker) < 0)
                marker[0] = 0;
        if (stat(path, &st) < 0) {
                if (errno != ENOENT) {
                        r = -errno;
                        say(err, cap, "ledger %s: %s", path, strerror(errno));
                        return r;
                }
                st.st_size = -1;
        }
        if (st.st_size <= 0 && had) {
                say(err, cap, "ledger %s is %s, but %s says this state directory held a ledger; "
                    "refusing to start an empty one silently. Restore the file from a backup, "
                    "or remove %s to start afresh from the session files still on disk (rows "
                    "of files deleted since are lost)", path, st.st_size < 0 ? "missing" : "empty",
                    marker, marker);
                return -EBADMSG;
        }
        if (st.st_size < 0 && rdonly) {
                say(err, cap, "ledger %s: %s", path, strerror(ENOENT));
                return -ENOENT; /* read-only never creates anything */
        }
        if (st.st_size <= 0 && !rdonly)
                return 0; /* new, or a creation that never finished: LMDB starts it */
        for (int attempt = 0;; attempt++) {
                r = ledger_check_file(path, why, sizeof(why));
                if (r != -EBADMSG || !rdonly || attempt == 2)
                        break;
                usleep(50 * 1000);
        }
        if (r == -EBADMSG)
                say(err, cap, "ledger %s is damaged: it %s. Refusing to use it; nothing was "
                    "changed. Restore it from a backup, or move it aside to rebuild the ledger "
                    "from the session files still on disk (rows of files deleted since are "
                    "lost): mv %s %s.damaged; rm %s; then start agentmeterd again", path, why,
                    path, path, marker);
        else if (r < 0)
                say(err, cap, "ledger %s: %s", path, why);
        return r;
}

void ledger_mark_created(const char *dir)
{
        char marker[PATH_MAX], buf[64];
        int fd, n;

        if (marker_path(dir, marker) < 0)
                return;
        fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return;
        n = snprintf(buf, sizeof(buf), "agentmeterd ledger created or first checked at %lld\n",
                     (long long)time(NULL));
        /* no fsync of its own: it is made only once the ledger is on disk,
         * so wherever it survives a crash the ledger did too */
        (void)!write(fd, buf, (size_t)n);
        close(fd);
}
