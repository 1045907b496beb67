/* Ingest engine: sources by path (hash table), a FIFO of sources to read,
 * and the loop that hands each to tail_source. Errors on one source are
 * logged once, counted, and retried later with backoff; they never stop the
 * others. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest.h"
#include "log.h"
#include "paths.h"
#include "registry.h"
#include "scan.h"
#include "timefmt.h"

#define RETRY_MS 5000
#define SETTLE_MS 200 /* a database whose writer was at work: looked at again this soon */
#define LEDGER_RETRY_MS 1000
#define VISIT_COST (16u << 10) /* budget bytes one source visit counts as */
#define LEDGER_BLOCKED 2 /* read_one: the ledger refused the commit */
#define GROUP_ROWS 2048 /* rows per group commit: bounds its dirty pages (~20 MB) */
#define HEAVY_KEEPS 4   /* sources keeping a decoder between reads, at most */

struct ingest {
        struct ledger *ledger;
        const struct discover_env *env;
        struct ingest_hooks hooks;
        struct root_list roots;
        void *configs[REGISTRY_COUNT];
        void *status_caches[REGISTRY_COUNT]; /* adapter.status_extra's, freed with free() */
        struct source_rec **buckets;
        size_t nbuckets, n;
        struct source_rec *qhead, *qtail;
        int64_t retry_due_ms; /* earliest retry_at_ms of a source left out by ingest_run */
        int ledger_error;     /* the last commit the ledger refused (0: writable) */
        int64_t ledger_retry_ms; /* while refused: when to try again */
        struct tail_counters counters;
        int64_t last_commit_ms;
        const struct price_table *prices;
        struct source_counts adapter_counts[REGISTRY_COUNT]; /* sums of the sources' counts */
        struct source_rec *heavy[HEAVY_KEEPS]; /* sources whose keep holds a decoder */
        struct tail_spare spare; /* tail's buffers, kept between sources */
        uint64_t group_rows;    /* rows per group commit */
        int64_t slice_ms;       /* ingest_run returns after this long (0: no limit) */
        size_t n_gone;          /* records marked gone: sweep_gone has work */
        bool in_group;          /* ingest_run holds a group commit open */
};

static size_t path_hash(const char *s)
{
        size_t h = 1469598103934665603ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

static void on_rows(void *u, const struct usage_row *rows, const uint8_t *outcomes, size_t n)
{
        struct ingest *in = u;
        in->last_commit_ms = timefmt_now_ms();
        if (in->hooks.on_rows)
                in->hooks.on_rows(in->hooks.u, rows, outcomes, n);
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
        for (size_t b = 0; b < in->nbuckets; b++) {
                struct source_rec *s = in->buckets[b];
                while (s) {
                        struct source_rec *next = s->hnext;
                        tail_keep_free(s->keep);
                        free(s->path);
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
        /* sources keep pointing at root indexes: remap by path after swap */
        root_list_free(&in->roots);
        in->roots = roots;
        for (size_t i = 0; !same && i < in->roots.n; i++)
                log_root(&in->roots.v[i]);
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        int depth, cls;
                        s->root_idx = (size_t)-1;
                        for (size_t i = 0; i < in->roots.n; i++)
                                if (in->roots.v[i].adapter == s->adapter &&
                                    scan_classify(&in->roots.v[i], s->path, false, &depth, &cls) == 0) {
                                        s->root_idx = i;
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

static void enqueue(struct ingest *in, struct source_rec *s)
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
static void account(struct ingest *in, struct source_rec *s, const struct source_counts *now)
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

static struct source_counts counts_of(const struct checkpoint *cp)
{
        return (struct source_counts){
                .bytes_read = cp->bytes_read, .lines = cp->lines, .malformed = cp->malformed,
                .oversized = cp->oversized, .rows = cp->rows_added, .last_commit_ms = cp->last_commit_ms,
        };
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
        s = calloc(1, sizeof(*s));
        if (!s || !(s->path = strdup(path))) {
                free(s);
                return -ENOMEM;
        }
        s->adapter = root->adapter;
        s->adapter_idx = (size_t)idx;
        s->root_idx = (size_t)(root - in->roots.v);
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
                struct source_counts c = counts_of(&cp);
                account(in, s, &c);
        }
        size_t h = path_hash(path) & (in->nbuckets - 1);
        s->hnext = in->buckets[h];
        in->buckets[h] = s;
        in->n++;
        *ret = s;
        return 0;
}

static int visit_source(void *u, const struct root *root, const char *path, int kind)
{
        struct ingest *in = u;
        struct source_rec *s;
        int r = add_source(in, root, path, kind, &s);
        if (r < 0)
                return r;
        enqueue(in, s);
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
                        enqueue(in, s); /* re-stat every known file */
                }
        for (size_t i = 0; i < in->roots.n; i++) {
                int r = scan_root(&in->roots.v[i], &v);
                if (r < 0)
                        return r;
        }
        return 0;
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
                        int r = visit_source(in, root, path, cls);
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
                enqueue(in, s);
        }
}

/* Queues the known source at path: 1, or 0 when there is none. */
static int queue_known(struct ingest *in, const char *path)
{
        struct source_rec *s = lookup(in, path);
        if (!s)
                return 0;
        enqueue(in, s);
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
        return in->qhead != NULL;
}

static void note_error(struct ingest *in, struct source_rec *s, int err)
{
        (void)in;
        if (err == s->last_error)
                return; /* logged already */
        s->last_error = err;
        if (err == -ENOENT)
                log_full(LOG_INFO, s->adapter->id, s->path, 0, "source is gone; its rows stay in the ledger");
        else
                log_full(LOG_WARNING, s->adapter->id, s->path, err,
                         "cannot read source, skipping it and going on (retried later)");
}

/* The ledger refused a commit (a full disk, a map that cannot grow): said
 * once, as what it is; reading pauses (ingest_run) until LEDGER_RETRY_MS
 * later, then tries again; nothing is lost, the sources resume from their
 * stored checkpoints. */
static void ledger_refused(struct ingest *in, int err)
{
        if (!in->ledger_error)
                log_full(LOG_ERR, NULL, ledger_path(in->ledger), err,
                         "the ledger cannot be written; reading paused, nothing is lost: it "
                         "resumes as soon as a commit succeeds");
        in->ledger_error = err;
        in->ledger_retry_ms = timefmt_now_ms() + LEDGER_RETRY_MS;
}

static void ledger_writable(struct ingest *in)
{
        if (!in->ledger_error)
                return;
        log_info("the ledger is writable again; reading resumed");
        in->ledger_error = 0;
}

/* Queues s again at at_ms (the retry timer, ingest_queue_retries). */
static void look_again(struct ingest *in, struct source_rec *s, int64_t at_ms)
{
        s->retry_wanted = true;
        s->retry_at_ms = at_ms;
        if (!in->retry_due_ms || at_ms < in->retry_due_ms)
                in->retry_due_ms = at_ms;
}

/* Keeps at most HEAVY_KEEPS decoders alive between reads (each holds a
 * window of up to 16 MiB): the oldest is let go, and its source, when read
 * again, decodes from the start. */
static void bound_keeps(struct ingest *in, struct source_rec *s)
{
        size_t i, free_slot = HEAVY_KEEPS;

        for (i = 0; i < HEAVY_KEEPS; i++) {
                if (in->heavy[i] == s) {
                        if (!tail_keep_heavy(s->keep))
                                in->heavy[i] = NULL;
                        return;
                }
                if (!in->heavy[i] && free_slot == HEAVY_KEEPS)
                        free_slot = i;
        }
        if (!tail_keep_heavy(s->keep))
                return;
        if (free_slot == HEAVY_KEEPS) {
                free_slot = 0;
                in->heavy[0]->keep = tail_keep_free(in->heavy[0]->keep);
                memmove(&in->heavy[0], &in->heavy[1], (HEAVY_KEEPS - 1) * sizeof(in->heavy[0]));
                free_slot = HEAVY_KEEPS - 1;
        }
        in->heavy[free_slot] = s;
}

static int read_one(struct ingest *in, struct source_rec *s, uint64_t budget, uint64_t *io_extra)
{
        struct tail_ctx t = {
                .ledger = in->ledger,
                .limits = TAIL_LIMITS_DEFAULT,
                .counters = &in->counters,
                .on_rows = on_rows,
                .u = in,
                .prices = in->prices,
                .spare = &in->spare,
                .keep = &s->keep,
        };
        struct source_ctx ctx = {
                .adapter = s->adapter,
                .path = s->path,
                .root_path = s->root_idx < in->roots.n ? in->roots.v[s->root_idx].path : "",
                .config = in->configs[s->adapter_idx],
                .source_hash = hash64(s->path, strlen(s->path)),
        };
        struct tail_outcome out = {0};
        int r;

        t.limits.budget_bytes = budget;
        t.verify_all = s->verify;
        s->retry_wanted = false;
        if (stat(s->path, &ctx.st) < 0) {
                int e = -errno;
                note_error(in, s, e);
                /* gone, and the latest scan did not find it either: drop it
                 * from the table (its rows and checkpoint stay in the ledger) */
                if (e == -ENOENT && !s->seen) {
                        in->n_gone += !s->gone;
                        s->gone = true;
                }
                return 0;
        }
        uint64_t read_before = in->counters.bytes_read;
        r = tail_source(&t, &ctx, s->kind, &out);
        if (out.have_counts) /* commits may have happened even on failure */
                account(in, s, &out.counts);
        bound_keeps(in, s);
        s->decoded += out.decoded;
        /* re-checked bytes, and a decoder's work beyond the lines it gave */
        uint64_t read = in->counters.bytes_read - read_before;
        *io_extra += out.verified + (out.decoded > read ? out.decoded - read : 0);
        if (t.ledger_error) {
                /* the ledger, not the source: the source stays queued */
                ledger_refused(in, t.ledger_error);
                return LEDGER_BLOCKED;
        }
        if (!in->in_group) /* inside a group, only its end says it was written */
                ledger_writable(in);
        if (r < 0) {
                note_error(in, s, r);
                s->retry_at_ms = timefmt_now_ms() + RETRY_MS;
                return 0;
        }
        s->size = out.size;
        s->offset = out.offset;
        if (out.renamed) {
                struct source_rec *old = lookup(in, out.renamed_from);
                if (old && old != s)
                        account(in, old, NULL); /* its checkpoint (and counts) moved here */
                log_full(LOG_INFO, s->adapter->id, s->path, 0,
                         "renamed from %s: checkpoint kept, nothing re-read", out.renamed_from);
        }
        if (out.reset)
                log_full(LOG_INFO, s->adapter->id, s->path, 0,
                         "file was rewritten, truncated or replaced: reading it again from the "
                         "start (already counted rows are not counted twice)");
        if (r == TAIL_MORE)
                return 1; /* read on next turn; whether it reads well is known at its end */
        if (s->last_error)
                log_full(LOG_INFO, s->adapter->id, s->path, 0, "source readable again");
        s->last_error = 0;
        s->verify = false;
        s->not_source = r == TAIL_NOT_SOURCE;
        if (r == TAIL_SETTLING)
                look_again(in, s, timefmt_now_ms() + SETTLE_MS);
        return 0;
}

/* Asks the kernel to read the next queued file ahead while the current one
 * is parsed: on a cold initial scan the disk and the parser then overlap. */
static void prefetch(const struct source_rec *next)
{
        if (!next || next->kind != CLASS_LINES)
                return;
        int fd = open(next->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd < 0)
                return;
        /* only what is past the offset: a reconcile queues every known file */
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > next->offset)
                (void)posix_fadvise(fd, (off_t)next->offset,
                                    (off_t)((uint64_t)st.st_size - next->offset), POSIX_FADV_WILLNEED);
        close(fd);
}

/* Frees the records of sources that are gone (see read_one), so the table
 * shrinks with file churn. Only when nothing is queued: no queue link can
 * point at a freed record. */
static void sweep_gone(struct ingest *in)
{
        for (size_t b = 0; b < in->nbuckets; b++) {
                struct source_rec **pp = &in->buckets[b];
                while (*pp) {
                        struct source_rec *s = *pp;
                        if (s->gone && !s->queued) {
                                *pp = s->hnext;
                                in->n--;
                                in->n_gone--;
                                for (size_t i = 0; i < HEAVY_KEEPS; i++)
                                        if (in->heavy[i] == s)
                                                in->heavy[i] = NULL;
                                tail_keep_free(s->keep);
                                free(s->path);
                                free(s);
                                continue;
                        }
                        pp = &s->hnext;
                }
        }
}

static uint64_t rows_seen(const struct ingest *in)
{
        return in->counters.rows_added + in->counters.rows_dup + in->counters.rows_merged;
}

/* A group commit failed: none of its sources' rows or checkpoints were
 * written, so every source is read again from its stored checkpoint, and
 * its counters are those stored (the reads of the group had counted their
 * commits). */
static void group_lost(struct ingest *in, int err)
{
        ledger_refused(in, err);
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext) {
                        struct checkpoint cp;
                        if (s->gone)
                                continue;
                        if (ledger_get_checkpoint(in->ledger, s->path, &cp) == 0) {
                                struct source_counts c = counts_of(&cp);
                                account(in, s, &c);
                        } else {
                                account(in, s, NULL);
                        }
                        enqueue(in, s);
                }
}

int ingest_run(struct ingest *in, uint64_t budget_bytes)
{
        uint64_t start = in->counters.bytes_read, extra = 0;
        int64_t now = timefmt_now_ms();
        int64_t deadline = in->slice_ms ? timefmt_mono_ms() + in->slice_ms : INT64_MAX;
        struct source_rec *deferred = NULL, *dtail = NULL;
        /* several sources queued (a scan): one group commit for the slice,
         * so each B-tree page is written once, not once per source */
        bool grouped;

        /* the ledger refused the last commit: wait for the retry timer */
        if (in->ledger_error && now < in->ledger_retry_ms)
                return 0;
        grouped = in->in_group = in->qhead && in->qhead->qnext && ledger_group_begin(in->ledger) == 0;
        uint64_t group_rows = rows_seen(in);

        while (in->qhead) {
                struct source_rec *s = in->qhead;
                in->qhead = s->qnext;
                if (!in->qhead)
                        in->qtail = NULL;
                s->queued = false;
                if (s->last_error && s->retry_at_ms > now) {
                        /* keep it for the next slice after its backoff */
                        look_again(in, s, s->retry_at_ms);
                        s->qnext = NULL;
                        if (dtail)
                                dtail->qnext = s;
                        else
                                deferred = s;
                        dtail = s;
                        continue;
                }
                prefetch(in->qhead);
                uint64_t used = in->counters.bytes_read - start + extra;
                int more = read_one(in, s, budget_bytes > used ? budget_bytes - used : 1, &extra);
                if (more)
                        enqueue(in, s);
                if (more == LEDGER_BLOCKED) {
                        s->retry_wanted = true;
                        break;
                }
                if (grouped && rows_seen(in) - group_rows >= in->group_rows) {
                        /* bound the group's dirty pages (private memory) */
                        int r = ledger_group_end(in->ledger);
                        in->in_group = false;
                        if (r < 0) {
                                group_lost(in, r);
                                grouped = false;
                                break;
                        }
                        ledger_writable(in);
                        grouped = in->in_group = ledger_group_begin(in->ledger) == 0;
                        group_rows = rows_seen(in);
                }
                /* a visit costs like reading VISIT_COST bytes (stat, open,
                 * checkpoint), so a reconcile of many unchanged files, or a
                 * rescan re-checking every consumed byte, yields the loop too */
                extra += VISIT_COST;
                if (in->counters.bytes_read - start + extra >= budget_bytes)
                        break;
                if (deadline != INT64_MAX && timefmt_mono_ms() >= deadline)
                        break; /* the rest next turn: a request waits no longer than this */
        }
        /* deferred sources wait for ingest_queue_retries (or the next
         * reconcile or event after their backoff) */
        for (struct source_rec *s = deferred; s; s = s->qnext)
                s->queued = false;
        if (grouped) {
                int r = ledger_group_end(in->ledger);
                in->in_group = false;
                if (r < 0)
                        group_lost(in, r);
                else
                        ledger_writable(in);
        }
        if (!in->qhead && in->n_gone) /* not a walk of every source per append */
                sweep_gone(in);
        return in->qhead ? 1 : 0;
}

void ingest_set_slice_ms(struct ingest *in, int64_t ms)
{
        in->slice_ms = ms > 0 ? ms : 0;
}

void ingest_set_group_rows(struct ingest *in, uint64_t rows)
{
        in->group_rows = rows ? rows : GROUP_ROWS;
}

int64_t ingest_retry_due(const struct ingest *in)
{
        if (in->ledger_error && (!in->retry_due_ms || in->ledger_retry_ms < in->retry_due_ms))
                return in->ledger_retry_ms;
        return in->retry_due_ms;
}

int ingest_ledger_error(const struct ingest *in)
{
        return in->ledger_error;
}

void ingest_queue_retries(struct ingest *in)
{
        in->retry_due_ms = 0;
        for (size_t b = 0; b < in->nbuckets; b++)
                for (struct source_rec *s = in->buckets[b]; s; s = s->hnext)
                        if (s->retry_wanted) {
                                s->retry_wanted = false;
                                enqueue(in, s); /* still early: ingest_run defers it again */
                        }
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
