/* Ingest engine, the table half: sources by path (hash table), the FIFO of
 * sources to read, discovery, scans and path events (reading what is
 * queued: ingest/run.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest/internal.h"
#include "log.h"
#include "paths.h"
#include "registry.h"
#include "ingest/scan.h"
#include "timefmt.h"

static size_t path_hash(const char *s)
{
        size_t h = 1469598103934665603ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

int ingest_new(struct ledger *l, const struct discover_env *env, const struct ingest_hooks *hooks,
               struct ingest **ret)
{
        struct ingest *in = calloc(1, sizeof(*in));
        if (!in)
                return -ENOMEM;
        in->ledger = l;
        in->group_rows = GROUP_ROWS;
        in->env = env;
        if (hooks)
                in->hooks = *hooks;
        in->nbuckets = 1024;
        in->buckets = calloc(in->nbuckets, sizeof(*in->buckets));
        if (!in->buckets) {
                free(in);
                return -ENOMEM;
        }
        *ret = in;
        return 0;
}

static void free_configs(struct ingest *in)
{
        for (size_t i = 0; i < REGISTRY_COUNT; i++) {
                if (in->configs[i] && registry_adapters[i]->free_config)
                        registry_adapters[i]->free_config(in->configs[i]);
                in->configs[i] = NULL;
        }
}

struct ingest *ingest_free(struct ingest *in)
{
        if (!in)
                return NULL;
        if (in->drop_jobs)
                in->drop_jobs(in);
        in->pool = read_pool_free(in->pool);
        free(in->outcomes);
        for (size_t b = 0; b < in->nbuckets; b++) {
                struct source_rec *s = in->buckets[b];
                while (s) {
                        struct source_rec *next = s->hnext;
                        tail_keep_free(s->keep);
                        free(s);
                        s = next;
                }
        }
        free(in->buckets);
        for (size_t i = 0; i < REGISTRY_COUNT; i++)
                free(in->status_caches[i]);
        tail_spare_free(&in->spare);
        free_configs(in);
        root_list_free(&in->roots);
        free(in);
        return NULL;
}

static void log_root(const struct root *r)
{
        struct stat st;
        bool exists = stat(r->path, &st) == 0 && S_ISDIR(st.st_mode);
        const char *state = exists ? "" : " (does not exist yet)";

        switch (r->reason) {
        case ROOT_ENV:
                log_full(LOG_INFO, r->adapter->id, r->path, 0, "root %s, moved by %s%s",
                         r->label, r->env_var, state);
                break;
        case ROOT_CONFIG:
        case ROOT_PROFILE:
                log_full(LOG_INFO, r->adapter->id, r->path, 0, "root %s, from %s %s%s", r->label,
                         root_reason_name(r->reason), r->detail, state);
                break;
        default:
                log_full(LOG_INFO, r->adapter->id, r->path, 0, "root %s (default)%s", r->label,
                         state);
        }
}

int ingest_discover(struct ingest *in)
{
        struct root_list roots = {0};
        int r;

        r = registry_discover(in->env, &roots);
        if (r < 0) {
                root_list_free(&roots);
                return log_errno(LOG_ERR, r, "discovery failed");
        }
        if (in->drop_jobs) /* they hold the configs and roots freed here */
                in->drop_jobs(in);
        free_configs(in);
        for (size_t i = 0; i < REGISTRY_COUNT; i++) {
                const struct adapter *a = registry_adapters[i];
                const char *warning = NULL;
                if (!a->load_config)
                        continue;
                r = a->load_config(in->env, &in->configs[i], &warning);
                if (r < 0)
                        log_full(LOG_WARNING, a->id, NULL, r,
                                 "could not load configuration, using defaults");
                if (warning)
                        log_full(LOG_WARNING, a->id, NULL, 0, "%s; using defaults, going on",
                                 warning);
        }
        /* log the roots when they change (start, reload, rescan) */
        bool same = roots.n == in->roots.n;
        for (size_t i = 0; same && i < roots.n; i++)
                same = strcmp(roots.v[i].path, in->roots.v[i].path) == 0 &&
                       roots.v[i].reason == in->roots.v[i].reason;
        bool same_notes = roots.n_notes == in->roots.n_notes;
        for (size_t i = 0; same_notes && i < roots.n_notes; i++)
                same_notes = strcmp(roots.notes[i].text, in->roots.notes[i].text) == 0;
        /* sources keep pointing at root indexes: remap by path after swap */
        root_list_free(&in->roots);
        in->roots = roots;
        for (size_t i = 0; !same && i < in->roots.n; i++)
                log_root(&in->roots.v[i]);
        for (size_t i = 0; !same_notes && i < in->roots.n_notes; i++)
                log_full(LOG_WARNING, in->roots.notes[i].adapter ? in->roots.notes[i].adapter->id : NULL, NULL, 0, "%s", in->roots.notes[i].text);
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        int depth, cls;
                        s->root_idx = UINT32_MAX;
                        for (size_t i = 0; i < in->roots.n; i++)
                                if (in->roots.v[i].adapter == s->adapter &&
                                    scan_classify(&in->roots.v[i], s->path, false, &depth, &cls) == 0) {
                                        s->root_idx = (uint32_t)i;
                                        break;
                                }
                }
        return 0;
}

const struct root_list *ingest_roots(const struct ingest *in)
{
        return &in->roots;
}

bool ingest_root_exists(const struct ingest *in, size_t i)
{
        struct stat st;
        return i < in->roots.n && stat(in->roots.v[i].path, &st) == 0 && S_ISDIR(st.st_mode);
}

static struct source_rec *lookup(const struct ingest *in, const char *path)
{
        for (struct source_rec *s = in->buckets[path_hash(path) & (in->nbuckets - 1)]; s; s = s->hnext)
                if (strcmp(s->path, path) == 0)
                        return s;
        return NULL;
}

static int rehash(struct ingest *in)
{
        size_t nb = in->nbuckets * 2;
        struct source_rec **b = calloc(nb, sizeof(*b));
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < in->nbuckets; i++) {
                struct source_rec *s = in->buckets[i];
                while (s) {
                        struct source_rec *next = s->hnext;
                        size_t h = path_hash(s->path) & (nb - 1);
                        s->hnext = b[h];
                        b[h] = s;
                        s = next;
                }
        }
        free(in->buckets);
        in->buckets = b;
        in->nbuckets = nb;
        return 0;
}

void ingest_enqueue(struct ingest *in, struct source_rec *s)
{
        if (s->queued)
                return;
        s->queued = true;
        s->qnext = NULL;
        if (in->qtail)
                in->qtail->qnext = s;
        else
                in->qhead = s;
        in->qtail = s;
}

/* Sets a source's counters to its checkpoint's (now: all zero when it has
 * none, e.g. its checkpoint moved away), moving its share of its adapter's
 * sums with them. */
void ingest_account(struct ingest *in, struct source_rec *s, const struct source_counts *now)
{
        struct source_counts *sum = &in->adapter_counts[s->adapter_idx];
        struct source_counts zero = {0};

        if (!now)
                now = &zero;
        sum->bytes_read += now->bytes_read - s->counts.bytes_read;
        sum->lines += now->lines - s->counts.lines;
        sum->malformed += now->malformed - s->counts.malformed;
        sum->oversized += now->oversized - s->counts.oversized;
        sum->rows += now->rows - s->counts.rows;
        if (now->last_commit_ms > sum->last_commit_ms)
                sum->last_commit_ms = now->last_commit_ms;
        s->counts = *now;
}

static int add_source(struct ingest *in, const struct root *root, const char *path, int kind,
                      struct source_rec **ret)
{
        struct source_rec *s = lookup(in, path);
        if (s) {
                s->seen = true;
                in->n_gone -= s->gone;
                s->gone = false;
                *ret = s;
                return 0;
        }
        if (in->n >= in->nbuckets && rehash(in) < 0)
                return -ENOMEM;
        int idx = registry_index(root->adapter);
        if (idx < 0)
                return -EINVAL; /* a root of no listed adapter: a bug, never a slot of another's */
        size_t len = strlen(path);
        if ((size_t)idx > UINT8_MAX || (size_t)(root - in->roots.v) >= UINT32_MAX)
                return -EINVAL;
        s = calloc(1, sizeof(*s) + len + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s->path, path, len + 1);
        s->adapter = root->adapter;
        s->adapter_idx = (uint8_t)idx;
        s->root_idx = (uint32_t)(root - in->roots.v);
        s->kind = (uint8_t)kind;
        s->seen = true;
        /* a source read by an earlier run starts where its checkpoint is
         * (progress and prefetch must not treat it as unread) */
        struct checkpoint cp;
        if (ledger_get_checkpoint(in->ledger, path, &cp) == 0) {
                if (kind == CLASS_LINES) {
                        s->size = cp.size;
                        s->offset = cp.offset;
                }
                struct source_counts c = source_counts_of(&cp);
                ingest_account(in, s, &c);
        }
        size_t h = path_hash(path) & (in->nbuckets - 1);
        s->hnext = in->buckets[h];
        in->buckets[h] = s;
        in->n++;
        *ret = s;
        return 0;
}

static int visit_source(void *u, const struct root *root, const char *path, int kind,
                        const struct stat *st)
{
        struct ingest *in = u;
        struct source_rec *s;
        int r = add_source(in, root, path, kind, &s);
        if (r < 0)
                return r;
        s->walk_seen = st && S_ISREG(st->st_mode);
        if (s->walk_seen) {
                s->walk_dev = (uint64_t)st->st_dev;
                s->walk_ino = (uint64_t)st->st_ino;
                s->walk_size = (uint64_t)st->st_size;
                s->walk_mtime_sec = (int64_t)st->st_mtim.tv_sec;
                s->walk_mtime_nsec = (uint32_t)st->st_mtim.tv_nsec;
        }
        ingest_enqueue(in, s);
        if (in->walk_feeds && !in->feed_pool(in))
                in->walk_feeds = false; /* the rest waits for ingest_run */
        return 0;
}

static int visit_dir(void *u, const struct root *root, const char *path, int depth)
{
        struct ingest *in = u;
        if (in->hooks.on_dir)
                return in->hooks.on_dir(in->hooks.u, root, path, depth) < 0 ? 0 : 0;
        return 0;
}

int ingest_reconcile(struct ingest *in)
{
        struct scan_visitor v = { .on_dir = visit_dir, .on_source = visit_source, .u = in };
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        s->seen = false;
                        s->walk_seen = false; /* this walk's, if it finds it */
                        ingest_enqueue(in, s); /* re-stat every known file */
                }
        /* the workers read what the walk finds while it goes on (a first
         * scan's walk of 6,500 files took 33 ms of idle workers), and the
         * walk commits their units as they are ready; not while the ledger
         * refuses commits (reading is paused then) */
        in->walk_feeds = in->pool && in->feed_pool && !in->ledger_error;
        int r = 0;
        for (size_t i = 0; i < in->roots.n && r >= 0; i++)
                r = scan_root(&in->roots.v[i], &v);
        in->walk_feeds = false;
        if (in->walk_over)
                in->walk_over(in);
        return r; /* scan_root: 0 or a visitor's negative errno */
}

/* A path that may be new: a directory under a root is scanned, a file
 * that classifies as a source is added and queued. 1 when relevant. */
static int notice_path(struct ingest *in, const char *path, bool is_dir)
{
        struct scan_visitor v = { .on_dir = visit_dir, .on_source = visit_source, .u = in };
        int relevant = 0;

        for (size_t i = 0; i < in->roots.n; i++) {
                const struct root *root = &in->roots.v[i];
                int depth, cls;
                if (scan_classify(root, path, is_dir, &depth, &cls) < 0)
                        continue;
                if (is_dir && cls == CLASS_DESCEND) {
                        int r = scan_dir(root, path, depth, &v);
                        if (r < 0)
                                return r;
                        relevant = 1;
                } else if (!is_dir && class_is_source(cls)) {
                        int r = visit_source(in, root, path, cls, NULL);
                        if (r < 0)
                                return r;
                        relevant = 1;
                }
        }
        return relevant;
}

struct source_rec *ingest_find(struct ingest *in, const char *path)
{
        return lookup(in, path);
}

void ingest_verify_all(struct ingest *in)
{
        size_t iter;
        for (struct source_rec *s = ingest_sources_first(in, &iter); s; s = ingest_sources_next(in, &iter)) {
                s->verify = true;
                ingest_enqueue(in, s);
        }
}

/* Queues s again at at_ms (the retry timer, ingest_queue_retries). */
void ingest_look_again(struct ingest *in, struct source_rec *s, int64_t at_ms)
{
        s->retry_wanted = true;
        s->retry_at_ms = at_ms;
        if (!in->retry_due_ms || at_ms < in->retry_due_ms)
                in->retry_due_ms = at_ms;
}

/* Queues the known source at path: 1, or 0 when there is none. */
static int queue_known(struct ingest *in, const char *path)
{
        struct source_rec *s = lookup(in, path);
        if (!s)
                return 0;
        s->walk_seen = false; /* changed since the walk saw it */
        /* a database: its writer's commit is published in the -shm (no
         * event) just after the -wal write that woke us, so a read this
         * instant mostly finds it not yet there, and then waits for the
         * settle read (SETTLE_MS later): read a few ms after instead */
        if (s->kind == CLASS_TABLE && !s->queued && !s->last_error)
                ingest_look_again(in, s, timefmt_now_ms() + TABLE_EVENT_MS);
        else
                ingest_enqueue(in, s);
        return 1;
}

/* The root path lies under (the first one, as for classify), or NULL. */
static const struct root *root_of(const struct ingest *in, const char *path)
{
        for (size_t i = 0; i < in->roots.n; i++)
                if (paths_within(path, in->roots.v[i].path, NULL))
                        return &in->roots.v[i];
        return NULL;
}

int ingest_path_event(struct ingest *in, const char *path, bool is_dir, bool content_changed)
{
        const struct root *root;
        char other[PATH_MAX];

        if (is_dir)
                return notice_path(in, path, true);
        if (queue_known(in, path))
                return 1;
        root = root_of(in, path);
        if (root && root->adapter->source_of) {
                switch (root->adapter->source_of(path, content_changed, other, sizeof(other))) {
                case SOURCE_NONE:
                        return 0;
                case SOURCE_OTHER:
                        if (queue_known(in, other))
                                return 1;
                        return notice_path(in, other, false);
                case SOURCE_SELF:
                        break;
                }
        }
        return notice_path(in, path, false);
}

bool ingest_pending(const struct ingest *in)
{
        return in->qhead != NULL || in->jobs_head != NULL;
}

size_t ingest_read_jobs(const struct ingest *in)
{
        return in->n_jobs;
}

struct source_rec *ingest_sources_next(struct ingest *in, size_t *iter)
{
        /* iter encodes bucket index << 20 | position; simpler: walk buckets */
        size_t b = *iter >> 20, pos = *iter & 0xfffff;
        for (; b < in->nbuckets; b++, pos = 0) {
                size_t k = 0;
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext, k++)
                        if (k == pos) {
                                *iter = (b << 20) | (pos + 1);
                                return s;
                        }
        }
        *iter = b << 20;
        return NULL;
}

struct source_rec *ingest_sources_first(struct ingest *in, size_t *iter)
{
        *iter = 0;
        return ingest_sources_next(in, iter);
}

const struct tail_counters *ingest_counters(const struct ingest *in)
{
        return &in->counters;
}

void ingest_progress(const struct ingest *in, uint64_t *ret_done, uint64_t *ret_known)
{
        uint64_t done = 0, known = 0;
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        if (s->kind != CLASS_LINES)
                                continue;
                        struct stat st;
                        uint64_t size = s->size;
                        if (s->size == 0 && s->offset == 0 && stat(s->path, &st) == 0)
                                size = (uint64_t)st.st_size;
                        known += size;
                        done += s->not_source ? size : (s->offset < size ? s->offset : size);
                }
        *ret_done = done;
        *ret_known = known;
}

void ingest_adapter_stats(const struct ingest *in, const struct adapter *a, struct adapter_stats *ret)
{
        struct adapter_stats st = {0};
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        if (s->adapter != a)
                                continue;
                        st.files++;
                        if (s->last_error)
                                st.errors++;
                        if (s->not_source)
                                st.not_source++;
                }
        int idx = registry_index(a);
        if (idx < 0) {
                *ret = st;
                return;
        }
        const struct source_counts *c = &in->adapter_counts[idx];
        st.bytes_read = c->bytes_read;
        st.lines = c->lines;
        st.malformed = c->malformed;
        st.oversized = c->oversized;
        st.rows = c->rows;
        st.last_commit_ms = c->last_commit_ms;
        *ret = st;
}


struct ledger *ingest_ledger(const struct ingest *in)
{
        return in->ledger;
}

int64_t ingest_last_commit_ms(const struct ingest *in)
{
        return in->last_commit_ms;
}

void ingest_set_prices(struct ingest *in, const struct price_table *t)
{
        in->prices = t;
}

const struct price_table *ingest_prices(const struct ingest *in)
{
        return in->prices;
}

void **ingest_status_cache(struct ingest *in, const struct adapter *a)
{
        int idx = registry_index(a);
        return idx < 0 ? NULL : &in->status_caches[idx];
}
