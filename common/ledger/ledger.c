/* The LMDB ledger: rows, tool calls, rollups, session sums and the source
 * checkpoint change in ONE write transaction, so a crash keeps all or none. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "binio.h"
#include "ledger/check.h"
#include "ledger/internal.h"
#include "testhook.h"

/* Test hook: AGENTMETER_TEST_MAPSIZE=<bytes> replaces the initial map size of
 * a writable open, so tests can force MDB_MAP_FULL and the growth path. */
#define MAP_INITIAL (256ull << 20) /* sparse: costs nothing until used */
#define SOURCE_KEY_INLINE 400      /* longer paths are keyed by their hash */

static const char *const db_names[DB_COUNT] = {
        [DB_META] = "meta",         [DB_ROWS] = "rows",         [DB_ROWKEYS] = "rowkeys",
        [DB_CALLS] = "calls",       [DB_SOURCES] = "sources",   [DB_IDENTITY] = "identity",
        [DB_ROLLUP] = "rollup",     [DB_SESSIONS] = "sessions", [DB_USAGE] = "usage",
        [DB_ACTIVITY] = "activity", /* DB_OUTBOX: ledger/outbox.c */
};

/* The only process-wide state: why the last ledger_open() on this thread
 * failed (there is no handle to hang it on). */
static _Thread_local char open_error[LEDGER_ERROR_MAX];

const char *ledger_path(const struct ledger *l)
{
        return l->path;
}

const char *ledger_error(const struct ledger *l)
{
        return l ? l->error : open_error;
}

const char *ledger_open_error(void)
{
        return open_error;
}

static size_t initial_map_size(void)
{
        long page = sysconf(_SC_PAGESIZE);
        unsigned long long v = test_hook_number("AGENTMETER_TEST_MAPSIZE", 1, MAP_LIMIT, 0);

        if (!v)
                return MAP_INITIAL;
        if (page > 0)
                v = (v + (unsigned long long)page - 1) / (unsigned long long)page *
                    (unsigned long long)page;
        return (size_t)v;
}

static int check_schema(struct ledger *l, MDB_txn *txn, bool create)
{
        MDB_val k = {.mv_size = 14, .mv_data = (void *)"schema_version"}, v;
        char buf[32];
        unsigned long ver;
        char *end;
        int rc = mdb_get(txn, l->dbi[DB_META], &k, &v);

        if (rc == MDB_NOTFOUND && create) {
                int n = snprintf(buf, sizeof(buf), "%d", LEDGER_SCHEMA_VERSION);
                MDB_val nv = {.mv_size = (size_t)n, .mv_data = buf};
                rc = mdb_put(txn, l->dbi[DB_META], &k, &nv, 0);
                if (rc == 0) {
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        n = snprintf(buf, sizeof(buf), "%lld",
                                     (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
                        MDB_val ck = {.mv_size = 10, .mv_data = (void *)"created_ms"};
                        nv = (MDB_val){.mv_size = (size_t)n, .mv_data = buf};
                        rc = mdb_put(txn, l->dbi[DB_META], &ck, &nv, 0);
                }
                return ledger_fail(l, rc);
        }
        if (rc) {
                snprintf(open_error, sizeof(open_error), "ledger %s has no schema version: %s",
                         l->path, mdb_strerror(rc));
                return rc == MDB_NOTFOUND ? -EBADMSG : ledger_fail(l, rc);
        }
        if (v.mv_size == 0 || v.mv_size >= sizeof(buf))
                goto bad;
        memcpy(buf, v.mv_data, v.mv_size);
        buf[v.mv_size] = 0;
        errno = 0;
        ver = strtoul(buf, &end, 10);
        if (errno || *end)
                goto bad;
        if (ver > LEDGER_SCHEMA_VERSION) {
                snprintf(open_error, sizeof(open_error),
                         "ledger %s has schema version %lu, this agentmeterd understands up to "
                         "%d; upgrade agentmeterd", l->path, ver, LEDGER_SCHEMA_VERSION);
                return -EPROTO;
        }
        if (create && ver >= 2 && ver < LEDGER_SCHEMA_VERSION) {
                /* 2 -> 4: no watermark means every row is indexed; from now
                 * on the index may lag, which a release of schema 2 would not
                 * know. 3 -> 4: rows written from now on are version-3
                 * values, which a release of schema 3 could not decode. Each
                 * refuses the ledger instead of counting twice or failing on
                 * the new rows. */
                int n = snprintf(buf, sizeof(buf), "%d", LEDGER_SCHEMA_VERSION);
                MDB_val nv = {.mv_size = (size_t)n, .mv_data = buf};
                return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], &k, &nv, 0));
        }
        return 0;
bad:
        snprintf(open_error, sizeof(open_error), "ledger %s has a malformed schema version",
                 l->path);
        return -EBADMSG;
}

/* Opens (and when writable creates) every named DB and checks the schema. */
static int open_dbs(struct ledger *l, MDB_txn *txn, void *ctx)
{
        unsigned flags = l->rdonly ? 0 : MDB_CREATE;
        int rc, r;

        (void)ctx;
        rc = mdb_dbi_open(txn, db_names[DB_META], flags, &l->dbi[DB_META]);
        if (rc == MDB_NOTFOUND) {
                snprintf(open_error, sizeof(open_error), "%s is not an agentmeterd ledger",
                         l->path);
                return -EBADMSG;
        }
        if (rc)
                return ledger_fail(l, rc);
        r = check_schema(l, txn, !l->rdonly);
        if (r < 0)
                return r;
        /* schema 1's rows and calls: there until migrated (store_migrate) */
        l->have_old_rows = mdb_dbi_open(txn, db_names[DB_USAGE], 0, &l->dbi[DB_USAGE]) == 0 &&
                           mdb_dbi_open(txn, db_names[DB_ACTIVITY], 0, &l->dbi[DB_ACTIVITY]) == 0;
        l->have_rows = true;
        for (int i = DB_META + 1; i < DB_USAGE; i++) {
                rc = mdb_dbi_open(txn, db_names[i], flags, &l->dbi[i]);
                if (rc == MDB_NOTFOUND && l->rdonly && l->have_old_rows &&
                    (i == DB_ROWS || i == DB_ROWKEYS || i == DB_CALLS)) {
                        l->have_rows = false; /* a schema-1 ledger, read as it is */
                        continue;
                }
                if (rc) {
                        snprintf(open_error, sizeof(open_error), "ledger %s: database %s: %s",
                                 l->path, db_names[i], mdb_strerror(rc));
                        return rc == MDB_NOTFOUND ? -EBADMSG : ledger_fail(l, rc);
                }
        }
        if (!l->rdonly && (r = backlog_open(l, txn)) < 0)
                return r;
        if ((r = srcstate_open(l, txn, !l->rdonly)) < 0)
                return r;
        return ledger_outbox_open(l, txn); /* only where a team outbox was made */
}

/* LMDB opens the data file (and, on some versions, the lock file) without
 * O_CLOEXEC: every descriptor of the environment gets FD_CLOEXEC, found by
 * its inode among our open descriptors, so no child (a budget command)
 * inherits a writable descriptor of the ledger. */
static void env_cloexec(struct ledger *l)
{
        char lock[sizeof(l->path) + 8];
        struct stat data_st, lock_st;
        mdb_filehandle_t fd;
        struct dirent *e;
        bool have_lock;
        DIR *d;

        if (mdb_env_get_fd(l->env, &fd) == 0 && fd >= 0)
                (void)fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
        snprintf(lock, sizeof(lock), "%s-lock", l->path);
        have_lock = stat(lock, &lock_st) == 0;
        if (stat(l->path, &data_st) < 0 || !(d = opendir("/proc/self/fd")))
                return;
        while ((e = readdir(d))) {
                char *end;
                long n = strtol(e->d_name, &end, 10);
                struct stat st;
                if (*end || n < 0 || n == dirfd(d) || fstat((int)n, &st) < 0)
                        continue;
                if ((st.st_dev == data_st.st_dev && st.st_ino == data_st.st_ino) ||
                    (have_lock && st.st_dev == lock_st.st_dev && st.st_ino == lock_st.st_ino))
                        (void)fcntl((int)n, F_SETFD, fcntl((int)n, F_GETFD) | FD_CLOEXEC);
        }
        closedir(d);
}

/* Durability: the env is opened MDB_NOSYNC (and never MDB_WRITEMAP), so a
 * commit does not fsync; ledger_sync() does, from a timer and at shutdown.
 * That is safe because rows and the checkpoint of the lines they came from
 * are written in the same txn: a system crash can only lose the most recent
 * transactions as a whole (LMDB keeps integrity without WRITEMAP), which
 * rolls the offsets back together with the rows, so those lines are simply
 * read again. Nothing is lost and nothing is counted twice. */
int ledger_open(const char *dir, unsigned flags, struct ledger **ret_ledger)
{
        struct ledger *l;
        unsigned envflags = MDB_NOSUBDIR | MDB_NOTLS;
        int rc, r, dead;

        open_error[0] = 0;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->rdonly = flags & LEDGER_RDONLY;
        l->rollup_lo_ms = INT64_MAX; /* no window yet: ledger_rollup_window */
        l->rollup_hi_ms = INT64_MIN;
        if ((size_t)snprintf(l->path, sizeof(l->path), "%s/%s", dir, LEDGER_FILE) >=
            sizeof(l->path)) {
                r = -ENAMETOOLONG;
                snprintf(open_error, sizeof(open_error), "ledger directory name too long");
                goto fail;
        }
        if (l->rdonly) {
                envflags |= MDB_RDONLY; /* precheck: no file, no ledger */
        } else {
                if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                        r = -errno;
                        snprintf(open_error, sizeof(open_error), "ledger directory %s: %s",
                                 dir, strerror(errno));
                        goto fail;
                }
                envflags |= MDB_NOSYNC;
        }
        r = ledger_precheck(dir, l->path, l->rdonly, open_error, sizeof(open_error));
        if (r < 0)
                goto fail;
        rc = mdb_env_create(&l->env);
        if (rc == 0)
                rc = mdb_env_set_maxdbs(l->env, DB_COUNT + 1);
        if (rc == 0 && !l->rdonly)
                rc = mdb_env_set_mapsize(l->env, initial_map_size());
        if (rc == 0)
                rc = mdb_env_open(l->env, l->path, envflags, 0600);
        if (rc) {
                r = ledger_errno(rc);
                snprintf(open_error, sizeof(open_error), "ledger %s: %s", l->path,
                         mdb_strerror(rc));
                goto fail;
        }
        env_cloexec(l);
        (void)mdb_reader_check(l->env, &dead); /* clear slots of crashed readers */
        if (l->rdonly) {
                MDB_txn *txn;
                r = ledger_read_begin(l, &txn);
                if (r == 0) {
                        r = open_dbs(l, txn, NULL);
                        if (r == 0) /* a committed read txn keeps its dbi handles */
                                r = ledger_errno(mdb_txn_commit(txn));
                        else
                                mdb_txn_abort(txn);
                }
        } else {
                r = ledger_write(l, open_dbs, NULL);
        }
        if (r < 0) {
                if (!open_error[0])
                        snprintf(open_error, sizeof(open_error), "ledger %s: %s", l->path,
                                 strerror(-r));
                goto fail;
        }
        if (r == 0 && !l->rdonly && l->have_old_rows) {
                r = store_migrate(l);
                /* a team outbox names calls by their place now: everything is
                 * sent again, and the server keeps each row and call once */
                if (r == 0 && l->outbox_on)
                        r = ledger_outbox_refill(l);
                if (r < 0) {
                        snprintf(open_error, sizeof(open_error),
                                 "ledger %s: moving its rows to the new layout failed: %s", l->path,
                                 strerror(-r));
                        goto fail;
                }
        }
        /* a new ledger's marker waits for its first sync (ledger_sync):
         * syncing an empty ledger here cost a first scan 2-3 ms of waiting
         * for the disk before reading a byte */
        l->marked = l->rdonly || ledger_marker_exists(dir);
        *ret_ledger = l;
        return 0;
fail:
        ledger_close(l);
        return r;
}

/* LMDB keeps every page a write txn made dirty (malloc'd: the env is not
 * MDB_WRITEMAP) on a free list of its env for the next txns, and frees it
 * only with the env: after a large txn (a scan's group commit, a backlog
 * flush into rowkeys, up to a page per leaf of that index) the list held
 * tens of MB of private memory for the process's life (18 MB after a 10 GB
 * scan). Closing the env frees it; the same file is opened again at once,
 * with the map size it had. Nothing is written: commits are in the file
 * already (MDB_NOSYNC only defers their fsync). */
int ledger_release_memory(struct ledger *l, bool force)
{
        MDB_envinfo info;
        int rc, r;

        if (l->rdonly || l->group || !(force || l->release_due))
                return 0;
        rc = mdb_env_info(l->env, &info);
        if (rc)
                return ledger_errno(rc);
        mdb_env_close(l->env);
        l->env = NULL;
        for (int attempt = 0; attempt < 3; attempt++) { /* a passing shortage (fds, memory) */
                if (l->env)
                        mdb_env_close(l->env);
                l->env = NULL;
                rc = mdb_env_create(&l->env);
                if (rc == 0)
                        rc = mdb_env_set_maxdbs(l->env, DB_COUNT + 1);
                if (rc == 0)
                        rc = mdb_env_set_mapsize(l->env, info.me_mapsize);
                if (rc == 0)
                        rc = mdb_env_open(l->env, l->path, MDB_NOSUBDIR | MDB_NOTLS | MDB_NOSYNC, 0600);
                if (rc == 0)
                        break;
        }
        if (rc) {
                snprintf(l->error, sizeof(l->error), "ledger %s: opened again: %s", l->path,
                         mdb_strerror(rc));
                return ledger_errno(rc);
        }
        env_cloexec(l);
        r = ledger_write(l, open_dbs, NULL); /* the same dbi handles, in the same order */
        if (r < 0)
                return r;
        l->release_due = false;
        return 1;
}

struct ledger *ledger_close(struct ledger *l)
{
        if (!l)
                return NULL;
        ledger_group_abort(l);
        if (l->env)
                mdb_env_close(l->env);
        newkeys_free(&l->newkeys);
        free(l->pending);
        free(l);
        return NULL;
}

int ledger_sync(struct ledger *l)
{
        char dir[PATH_MAX];

        if (l->rdonly)
                return 0;
        int r = ledger_errno(mdb_env_sync(l->env, 1));
        if (r == 0 && !l->marked) {
                /* after the sync: the marker never precedes the data */
                size_t n = strlen(l->path) - strlen(LEDGER_FILE) - 1;
                memcpy(dir, l->path, n);
                dir[n] = 0;
                ledger_mark_created(dir);
                l->marked = true;
        }
        return r;
}

int ledger_sync_start(struct ledger *l)
{
        int fd;

        if (l->rdonly)
                return 0;
        int rc = mdb_env_get_fd(l->env, &fd);
        if (rc)
                return ledger_errno(rc);
        return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0 ? -errno : 0;
}

int ledger_used_bytes(struct ledger *l, uint64_t *ret_bytes)
{
        MDB_envinfo info;
        MDB_stat st;
        int rc = mdb_env_info(l->env, &info);
        if (rc == 0)
                rc = mdb_env_stat(l->env, &st);
        if (rc != 0)
                return ledger_errno(rc);
        *ret_bytes = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
        return 0;
}

/* LMDB keeps its map's address to itself (mdb_env_info reports it only for
 * MDB_FIXEDMAP): the mapping of the data file's inode in /proc/self/maps. */
static int find_map(int fd, void **ret_addr, size_t *ret_len)
{
        struct stat st;
        char line[PATH_MAX + 128];
        unsigned long lo, hi, ino, maj, min;
        FILE *f;
        int r = -ENOENT;

        if (fstat(fd, &st) < 0)
                return -errno;
        f = fopen("/proc/self/maps", "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "%lx-%lx %*s %*x %lx:%lx %lu", &lo, &hi, &maj, &min, &ino) != 5)
                        continue;
                if (ino != st.st_ino || maj != major(st.st_dev) || min != minor(st.st_dev))
                        continue;
                *ret_addr = (void *)lo;
                *ret_len = hi - lo;
                r = 0;
                break;
        }
        fclose(f);
        return r;
}

/* Why: ext4 (Linux 6.16 and later) caches a file in large folios when it is
 * written in long runs, as a bulk ingest's group commits grow the ledger,
 * and a later 4 KB page write into such a folio walks every block of the
 * folio: a live append's ~20 page writes cost 5-6 us each instead of 2-3
 * (tests/bench/README.md). Dropped after a sync, the pages come back through
 * the map's faults in small folios. Our map's page-table entries go first
 * (posix_fadvise leaves mapped pages), dirty pages are written by the sync
 * before (DONTNEED drops clean pages only, so nothing is lost even if
 * another writer raced). A reader re-faults what it needs. */
int ledger_drop_cache(struct ledger *l)
{
        mdb_filehandle_t fd;
        void *map;
        size_t len;
        int r, rc;

        r = ledger_sync(l);
        if (r < 0)
                return r;
        rc = mdb_env_get_fd(l->env, &fd);
        if (rc != 0)
                return ledger_errno(rc);
        r = find_map(fd, &map, &len);
        if (r < 0)
                return r;
        if (madvise(map, len, MADV_DONTNEED) < 0)
                return -errno;
        r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        return -r; /* posix_fadvise returns the error number itself */
}

/* ---- checkpoints --------------------------------------------------------- */

#define CP_VALUE_MAX (256 + CHECKPOINT_STATE_MAX + PATH_MAX)

static size_t source_key(const char *path, uint8_t key[SOURCE_KEY_INLINE + 1])
{
        size_t n = strlen(path);
        if (n <= SOURCE_KEY_INLINE) {
                memcpy(key, path, n);
                return n;
        }
        /* Over LMDB's key limit: NUL (never starts a path) + 128-bit hash. */
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits(path, n));
        key[0] = 0;
        memcpy(key + 1, c.digest, sizeof(c.digest));
        return 1 + sizeof(c.digest);
}

static void identity_key(uint64_t dev, uint64_t ino, uint8_t key[16])
{
        be64_put(key, dev);
        be64_put(key + 8, ino);
}

static int cp_encode(const struct checkpoint *cp, const char *path, uint8_t *buf, size_t cap,
                     size_t *ret_len)
{
        struct bw w = {.p = buf, .cap = cap};

        if (cp->state_len > CHECKPOINT_STATE_MAX)
                return -EINVAL;
        bw_u8(&w, VALUE_VERSION);
        bw_u8(&w, cp->kind);
        bw_str(&w, cp->tool, sizeof(cp->tool));
        bw_u64(&w, cp->dev);
        bw_u64(&w, cp->ino);
        bw_u64(&w, cp->size);
        bw_u64(&w, (uint64_t)cp->mtime_ns);
        bw_u64(&w, cp->offset);
        bw_u64(&w, cp->head_hash);
        bw_u32(&w, cp->head_len);
        bw_u64(&w, cp->marker_hash);
        bw_u32(&w, cp->marker_len);
        bw_u64(&w, cp->bytes_read);
        bw_u64(&w, cp->lines);
        bw_u64(&w, cp->malformed);
        bw_u64(&w, cp->oversized);
        bw_u64(&w, cp->rows_added);
        bw_u64(&w, cp->resets);
        bw_u64(&w, (uint64_t)cp->last_commit_ms);
        bw_u32(&w, cp->state_len);
        bw_bytes(&w, cp->state, cp->state_len);
        bw_str(&w, path, PATH_MAX);
        /* appended after the path, so checkpoints written before decode */
        bw_u8(&w, cp->consumed_known);
        bw_u64(&w, cp->sum_len);
        bw_u64(&w, cp->sum_hash);
        bw_u64(&w, cp->tail_hash);
        bw_u8(&w, cp->flags);
        if (w.overflow)
                return -ENOBUFS;
        *ret_len = w.len;
        return 0;
}

static int cp_decode(const MDB_val *v, struct checkpoint *cp, char path[PATH_MAX])
{
        struct br r = {.p = v->mv_data, .len = v->mv_size};
        const uint8_t *st;

        memset(cp, 0, sizeof(*cp));
        if (br_u8(&r) != VALUE_VERSION)
                return -EBADMSG;
        cp->kind = br_u8(&r);
        br_str(&r, cp->tool, sizeof(cp->tool));
        cp->dev = br_u64(&r);
        cp->ino = br_u64(&r);
        cp->size = br_u64(&r);
        cp->mtime_ns = (int64_t)br_u64(&r);
        cp->offset = br_u64(&r);
        cp->head_hash = br_u64(&r);
        cp->head_len = br_u32(&r);
        cp->marker_hash = br_u64(&r);
        cp->marker_len = br_u32(&r);
        cp->bytes_read = br_u64(&r);
        cp->lines = br_u64(&r);
        cp->malformed = br_u64(&r);
        cp->oversized = br_u64(&r);
        cp->rows_added = br_u64(&r);
        cp->resets = br_u64(&r);
        cp->last_commit_ms = (int64_t)br_u64(&r);
        cp->state_len = br_u32(&r);
        if (cp->state_len > CHECKPOINT_STATE_MAX)
                return -EBADMSG;
        st = br_take(&r, cp->state_len);
        if (st)
                memcpy(cp->state, st, cp->state_len);
        br_str(&r, path, PATH_MAX);
        if (!r.bad && r.pos < r.len) {
                cp->consumed_known = br_u8(&r);
                cp->sum_len = br_u64(&r);
                cp->sum_hash = br_u64(&r);
                cp->tail_hash = br_u64(&r);
        }
        if (!r.bad && r.pos < r.len)
                cp->flags = br_u8(&r);
        return r.bad || r.pos != r.len ? -EBADMSG : 0;
}

/* Reads the checkpoint stored for path in txn: 0, -ENOENT, -EBADMSG. */
static int cp_get(struct ledger *l, MDB_txn *txn, const char *path, struct checkpoint *cp)
{
        uint8_t kb[SOURCE_KEY_INLINE + 1];
        char stored[PATH_MAX];
        MDB_val k = {.mv_data = kb}, v;
        int rc;

        k.mv_size = source_key(path, kb);
        rc = mdb_get(txn, l->dbi[DB_SOURCES], &k, &v);
        if (rc)
                return ledger_fail(l, rc);
        return cp_decode(&v, cp, stored);
}

/* Writes path's checkpoint and points (dev, ino) at path; drops the identity
 * entry of path's previous (dev, ino) when it still pointed here. */
int ledger_put_checkpoint(struct ledger *l, MDB_txn *txn, const char *path,
                          const struct checkpoint *cp)
{
        uint8_t kb[SOURCE_KEY_INLINE + 1], ib[16], buf[CP_VALUE_MAX];
        struct checkpoint old;
        MDB_val k = {.mv_data = kb}, v = {.mv_data = buf}, ik = {.mv_size = 16, .mv_data = ib}, iv;
        size_t n = strlen(path);
        int r, rc;

        if (n == 0 || n >= PATH_MAX)
                return -EINVAL;
        r = cp_encode(cp, path, buf, sizeof(buf), &v.mv_size);
        if (r < 0)
                return r;
        bool had = cp_get(l, txn, path, &old) == 0;
        if (had && (old.dev != cp->dev || old.ino != cp->ino)) {
                identity_key(old.dev, old.ino, ib);
                if (mdb_get(txn, l->dbi[DB_IDENTITY], &ik, &iv) == 0 && iv.mv_size == n &&
                    memcmp(iv.mv_data, path, n) == 0 &&
                    (rc = mdb_del(txn, l->dbi[DB_IDENTITY], &ik, NULL)) != 0)
                        return ledger_fail(l, rc);
        }
        k.mv_size = source_key(path, kb);
        rc = mdb_put(txn, l->dbi[DB_SOURCES], &k, &v, 0);
        if (rc)
                return ledger_fail(l, rc);
        identity_key(cp->dev, cp->ino, ib);
        /* the same file as before: its identity entry is there already (a put
         * would copy a path of that B-tree's pages in every commit) */
        if (had && old.dev == cp->dev && old.ino == cp->ino &&
            mdb_get(txn, l->dbi[DB_IDENTITY], &ik, &iv) == 0 && iv.mv_size == n &&
            memcmp(iv.mv_data, path, n) == 0)
                return 0;
        iv = (MDB_val){.mv_size = n, .mv_data = (void *)path};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_IDENTITY], &ik, &iv, 0));
}

int ledger_get_checkpoint(struct ledger *l, const char *path, struct checkpoint *ret_cp)
{
        struct checkpoint cp;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = cp_get(l, txn, path, &cp);
        ledger_read_end(l, txn);
        if (r == 0)
                *ret_cp = cp;
        return r;
}

int ledger_find_identity(struct ledger *l, uint64_t dev, uint64_t ino, char *ret_path,
                         size_t cap)
{
        uint8_t ib[16];
        char path[PATH_MAX];
        struct checkpoint cp;
        MDB_val ik = {.mv_size = 16, .mv_data = ib}, iv;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        identity_key(dev, ino, ib);
        r = ledger_errno(mdb_get(txn, l->dbi[DB_IDENTITY], &ik, &iv));
        if (r == 0 && iv.mv_size >= sizeof(path))
                r = -EBADMSG;
        if (r == 0) {
                memcpy(path, iv.mv_data, iv.mv_size);
                path[iv.mv_size] = 0;
                r = cp_get(l, txn, path, &cp);
                /* a stale entry (the path now holds another file) is no match */
                if (r == 0 && (cp.dev != dev || cp.ino != ino))
                        r = -ENOENT;
        }
        ledger_read_end(l, txn);
        if (r == 0 && strlen(path) >= cap)
                r = -ENAMETOOLONG;
        if (r == 0)
                memcpy(ret_path, path, strlen(path) + 1);
        return r;
}

struct move_ctx {
        const char *from, *to;
};

static int move_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct move_ctx *m = u;
        uint8_t kb[SOURCE_KEY_INLINE + 1];
        MDB_val k = {.mv_data = kb};
        struct checkpoint cp;
        int r = cp_get(l, txn, m->from, &cp);

        if (r < 0)
                return r;
        k.mv_size = source_key(m->from, kb);
        r = ledger_fail(l, mdb_del(txn, l->dbi[DB_SOURCES], &k, NULL));
        if (r < 0)
                return r;
        if ((r = srcstate_move(l, txn, m->from, m->to)) < 0) /* its states follow it */
                return r;
        return ledger_put_checkpoint(l, txn, m->to, &cp);
}

int ledger_move_checkpoint(struct ledger *l, const char *old_path, const char *new_path)
{
        struct move_ctx m = {old_path, new_path};
        if (strcmp(old_path, new_path) == 0)
                return 0;
        return ledger_write(l, move_txn, &m);
}

int ledger_foreach_checkpoint(struct ledger *l,
                              int (*cb)(const char *path, const struct checkpoint *cp, void *u),
                              void *u)
{
        return ledger_foreach_checkpoint_under(l, NULL, cb, u);
}

int ledger_foreach_checkpoint_under(struct ledger *l, const char *dir,
                                    int (*cb)(const char *path, const struct checkpoint *cp, void *u),
                                    void *u)
{
        struct checkpoint *cp = malloc(sizeof(*cp));
        char path[PATH_MAX], prefix[PATH_MAX];
        MDB_cursor *c = NULL;
        MDB_txn *txn = NULL;
        MDB_val k, v;
        size_t n;
        int r, rc;

        if (!cp)
                return -ENOMEM;
        prefix[0] = '\0'; /* dir NULL: every path (an empty prefix) */
        n = dir ? (size_t)snprintf(prefix, sizeof(prefix), "%s/", strcmp(dir, "/") ? dir : "") : 0;
        if (n >= sizeof(prefix)) {
                free(cp);
                return -ENAMETOOLONG;
        }
        r = ledger_read_begin(l, &txn);
        if (r == 0)
                r = ledger_errno(mdb_cursor_open(txn, l->dbi[DB_SOURCES], &c));
        /* the paths too long for a key are keyed by their hash (a NUL
         * first): they sort first, and are told by the path in the value */
        for (rc = r ? MDB_NOTFOUND : mdb_cursor_get(c, &k, &v, MDB_FIRST);
             rc == 0 && k.mv_size > 0 && ((const uint8_t *)k.mv_data)[0] == 0;
             rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                r = cp_decode(&v, cp, path);
                if (r == 0 && strncmp(path, prefix, n) == 0)
                        r = cb(path, cp, u);
                if (r != 0)
                        break;
        }
        /* a prefix longer than a key: every path below it is hashed */
        if (r == 0 && (rc == 0 || rc == MDB_NOTFOUND) && n <= SOURCE_KEY_INLINE) {
                if (n > 0) { /* else on from the first path keyed by itself */
                        k = (MDB_val){ .mv_size = n, .mv_data = prefix };
                        rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
                }
                for (; rc == 0 && k.mv_size >= n && memcmp(k.mv_data, prefix, n) == 0;
                     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
                        r = cp_decode(&v, cp, path);
                        if (r == 0)
                                r = cb(path, cp, u);
                        if (r != 0)
                                break;
                }
        }
        if (r == 0 && rc != 0 && rc != MDB_NOTFOUND)
                r = ledger_errno(rc);
        if (c)
                mdb_cursor_close(c);
        if (txn)
                ledger_read_end(l, txn);
        free(cp);
        return r;
}

/* ---- meta ---------------------------------------------------------------- */

int ledger_meta_get(struct ledger *l, const char *name, char *ret_value, size_t cap)
{
        MDB_val k = {.mv_size = strlen(name), .mv_data = (void *)name}, v;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        r = ledger_errno(mdb_get(txn, l->dbi[DB_META], &k, &v));
        if (r == 0 && v.mv_size >= cap)
                r = -ENOBUFS;
        if (r == 0) {
                memcpy(ret_value, v.mv_data, v.mv_size);
                ret_value[v.mv_size] = 0;
        }
        ledger_read_end(l, txn);
        return r;
}

struct meta_ctx {
        const char *name, *value;
};

static int meta_txn(struct ledger *l, MDB_txn *txn, void *u)
{
        struct meta_ctx *m = u;
        MDB_val k = {.mv_size = strlen(m->name), .mv_data = (void *)m->name};
        MDB_val v = {.mv_size = strlen(m->value), .mv_data = (void *)m->value};
        return ledger_fail(l, mdb_put(txn, l->dbi[DB_META], &k, &v, 0));
}

int ledger_meta_set(struct ledger *l, const char *name, const char *value)
{
        struct meta_ctx m = {name, value};
        if (!*name || strlen(name) > SOURCE_KEY_INLINE)
                return -EINVAL;
        return ledger_write(l, meta_txn, &m);
}

/* ---- stats --------------------------------------------------------------- */

int ledger_get_stats(struct ledger *l, struct ledger_stats *ret_stats)
{
        static const int which[] = {DB_ROWS, DB_CALLS, DB_SOURCES, DB_SESSIONS, DB_ROLLUP,
                                    DB_USAGE, DB_ACTIVITY};
        struct ledger_stats s = {0};
        uint64_t old_rows = 0, old_calls = 0;
        uint64_t *out[] = {&s.rows, &s.calls, &s.sources, &s.sessions, &s.rollups, &old_rows, &old_calls};
        MDB_envinfo info;
        struct stat st;
        MDB_txn *txn;
        int r = ledger_read_begin(l, &txn);

        if (r < 0)
                return r;
        for (size_t i = 0; r == 0 && i < sizeof(which) / sizeof(which[0]); i++) {
                MDB_stat ms;
                bool store = which[i] == DB_ROWS || which[i] == DB_CALLS;
                bool old = which[i] == DB_USAGE || which[i] == DB_ACTIVITY;
                if ((store && !l->have_rows) || (old && !l->have_old_rows))
                        continue;
                r = ledger_errno(mdb_stat(txn, l->dbi[which[i]], &ms));
                if (r == 0)
                        *out[i] = ms.ms_entries;
        }
        ledger_read_end(l, txn);
        s.rows += old_rows;
        s.calls += old_calls;
        if (r < 0)
                return r;
        r = ledger_errno(mdb_env_info(l->env, &info));
        if (r < 0)
                return r;
        s.map_bytes = info.me_mapsize;
        if (stat(l->path, &st) < 0)
                return -errno;
        s.file_bytes = (uint64_t)st.st_size;
        *ret_stats = s;
        return 0;
}

/* ---- reading ------------------------------------------------------------- */
/* A cursor walk of one named db in its own read txn (used by the row and
 * sum readers in ledger/rows.c and ledger/sums.c). */

int ledger_scan(struct ledger *l, int db, const MDB_val *start, ledger_entry_fn fn, void *ctx)
{
        MDB_cursor *c = NULL;
        MDB_txn *txn;
        MDB_val k, v;
        int r = ledger_read_begin(l, &txn), rc;

        if (r < 0)
                return r;
        r = ledger_errno(mdb_cursor_open(txn, l->dbi[db], &c));
        if (r == 0) {
                if (start)
                        k = *start;
                rc = mdb_cursor_get(c, &k, &v, start ? MDB_SET_RANGE : MDB_FIRST);
                for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
                        if ((r = fn(&k, &v, ctx)) != 0)
                                break;
                if (r == 0 && rc != MDB_NOTFOUND)
                        r = ledger_errno(rc);
                mdb_cursor_close(c);
        }
        ledger_read_end(l, txn);
        return r;
}
