/* Reading queued sources (ingest.h: ingest_run): each in turn, or, while a
 * scan has many queued, plain line sources read ahead by the read pool's
 * workers with their commits made here, in queue order; group commits;
 * what a read says about its source (errors, backoff, renames). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-sqlite.h"
#include "ingest/internal.h"
#include "log.h"
#include "timefmt.h"

static void rows_committed(void *u, const struct usage_row *rows, const uint8_t *outcomes, size_t n)
{
        struct ingest *in = u;
        in->last_commit_ms = timefmt_now_ms();
        if (in->hooks.on_rows)
                in->hooks.on_rows(in->hooks.u, rows, outcomes, n);
}

static void note_error(struct ingest *in, struct source_rec *s, int err)
{
        (void)in;
        if (err == s->last_error)
                return; /* logged already */
        s->last_error = err;
        if (err == -ENOENT)
                log_full(LOG_INFO, s->adapter->id, s->path, 0, "source is gone; its rows stay in the ledger");
        else if (s->kind == CLASS_TABLE)
                log_full(LOG_WARNING, s->adapter->id, s->path, 0,
                         "cannot read database, skipping it and going on (retried later): %s",
                         adapt_db_strerror(err));
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

/* The source's context for a read (path, adapter, root, config). */
static struct source_ctx source_ctx_of(const struct ingest *in, const struct source_rec *s)
{
        return (struct source_ctx){
                .adapter = s->adapter,
                .path = s->path,
                .root_path = s->root_idx < in->roots.n ? in->roots.v[s->root_idx].path : "",
                .config = in->configs[s->adapter_idx],
                .source_hash = hash64(s->path, strlen(s->path)),
        };
}

/* stat() of a source about to be read: 0, or the error noted (and a source
 * gone for good marked so). */
static int stat_source(struct ingest *in, struct source_rec *s, struct stat *st)
{
        s->retry_wanted = false;
        if (stat(s->path, st) == 0)
                return 0;
        int e = -errno;
        note_error(in, s, e);
        /* gone, and the latest scan did not find it either: drop it from the
         * table (its rows and checkpoint stay in the ledger) */
        if (e == -ENOENT && !s->seen) {
                in->n_gone += !s->gone;
                s->gone = true;
        }
        return e;
}

/* What a read (r, out) says about its source, however it was read: its
 * counts, errors and backoff, renames and resets; 1 when it wants another
 * turn (TAIL_MORE), LEDGER_BLOCKED when the ledger refused a commit, else 0. */
static int read_done(struct ingest *in, struct source_rec *s, int r, const struct tail_outcome *out,
                     int ledger_error)
{
        if (out->have_counts) /* commits may have happened even on failure */
                ingest_account(in, s, &out->counts);
        bound_keeps(in, s);
        s->decoded += out->decoded;
        if (ledger_error) {
                /* the ledger, not the source: the source stays queued */
                ledger_refused(in, ledger_error);
                return LEDGER_BLOCKED;
        }
        if (r < 0) {
                note_error(in, s, r);
                s->retry_at_ms = timefmt_now_ms() + RETRY_MS;
                return 0;
        }
        s->size = out->size;
        s->offset = out->offset;
        if (out->renamed) {
                struct source_rec *old = ingest_find(in, out->renamed_from);
                if (old && old != s)
                        ingest_account(in, old, NULL); /* its checkpoint (and counts) moved here */
                log_full(LOG_INFO, s->adapter->id, s->path, 0,
                         "renamed from %s: checkpoint kept, nothing re-read", out->renamed_from);
        }
        if (out->reset)
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
        /* a commit written but perhaps not yet visible: a look very soon
         * (waiting SETTLE_MS for it was the OpenCode update probe's p99) */
        bool publishing = r == TAIL_PUBLISHING && s->quick_looks < PUBLISH_LOOKS_MAX;
        s->quick_looks = publishing ? s->quick_looks + 1 : 0;
        if (publishing)
                ingest_look_again(in, s, timefmt_now_ms() + PUBLISH_MS);
        else if (r == TAIL_SETTLING || r == TAIL_PUBLISHING)
                ingest_look_again(in, s, timefmt_now_ms() + SETTLE_MS);
        return 0;
}

/* Reads s here, at most budget bytes: read_done's result. */
static int read_one(struct ingest *in, struct source_rec *s, uint64_t budget, uint64_t *io_extra)
{
        struct tail_ctx t = {
                .ledger = in->ledger,
                .limits = TAIL_LIMITS_DEFAULT,
                .counters = &in->counters,
                .on_rows = rows_committed,
                .u = in,
                .prices = in->prices,
                .spare = &in->spare,
                .keep = &s->keep,
        };
        struct source_ctx ctx = source_ctx_of(in, s);
        struct tail_outcome out = {0};
        int r;

        t.limits.budget_bytes = budget;
        t.verify_all = s->verify;
        if (stat_source(in, s, &ctx.st) < 0)
                return 0;
        uint64_t read_before = in->counters.bytes_read, commits_before = in->counters.commits;
        r = tail_source(&t, &ctx, s->kind, &out);
        /* a commit that went through (inside a group, only its end says so) */
        if (!in->in_group && !t.ledger_error && in->counters.commits != commits_before)
                ledger_writable(in);
        /* re-checked bytes, and a decoder's work beyond the lines it gave */
        uint64_t read = in->counters.bytes_read - read_before;
        *io_extra += out.verified + (out.decoded > read ? out.decoded - read : 0);
        return read_done(in, s, r, &out, t.ledger_error);
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
                                struct source_counts c = source_counts_of(&cp);
                                ingest_account(in, s, &c);
                        } else {
                                ingest_account(in, s, NULL);
                        }
                        ingest_enqueue(in, s);
                }
}

/* A group commit for what comes (true), unless one is open already. */
static bool group_begin(struct ingest *in)
{
        if (!in->in_group && ledger_group_begin(in->ledger) == 0) {
                in->in_group = true;
                in->group_from_rows = rows_seen(in);
                in->group_from_commits = in->counters.commits;
        }
        return in->in_group;
}

/* The open group (if any) committed: 0, or its commit's error, when the
 * jobs were dropped and every source queued again (group_lost). */
static int group_end(struct ingest *in)
{
        if (!in->in_group)
                return 0;
        int r = ledger_group_end(in->ledger);
        in->in_group = false;
        if (r < 0) {
                ingest_drop_jobs(in);
                group_lost(in, r);
        } else if (in->counters.commits != in->group_from_commits) { /* not an empty group */
                ledger_writable(in); /* something was written, and stuck */
        }
        return r;
}

/* The group holds in->group_rows rows (bounding its dirty pages, private
 * memory): committed, and another begun. false when the commit failed. */
static bool group_bound(struct ingest *in)
{
        if (!in->in_group || rows_seen(in) - in->group_from_rows < in->group_rows)
                return true;
        if (group_end(in) < 0)
                return false;
        group_begin(in);
        return true;
}

/* ---- the read pool: a scan's plain line sources read ahead ----------------- */

#define POOL_UNIT_ROWS 256 /* rows a worker hands over at once (its batch stays ~3 MB) */
/* Jobs handed out ahead of the writer: always two per worker; up to eight
 * per worker while the files in flight hold at most POOL_AHEAD_BYTES new
 * bytes (their units wait in memory, about as large as those bytes). With
 * two per worker the writer, taking jobs in order, waited for the one at
 * the head while the others were done: a scan of 609 files of 360 KB made
 * 1,941 futex calls and 972 context switches; 552 and 310 with more ahead. */
#define POOL_JOBS_MIN 2
#define POOL_JOBS_MAX 8
#define POOL_AHEAD_BYTES (8u << 20)

struct pool_job {
        struct read_job *rj;
        struct source_rec *s;
        char *root_path;         /* the job's copies: a rediscovery frees the roots */
        uint64_t rows_carry;     /* rows its committed units added */
        bool committed;
        struct checkpoint cp;    /* the last one committed */
        uint64_t ahead;          /* its new bytes when handed out (in->jobs_ahead) */
        struct pool_job *next;
};

static struct pool_job *pool_job_free(struct pool_job *pj)
{
        if (pj) {
                read_job_free(pj->rj);
                free(pj->root_path);
                free(pj);
        }
        return NULL;
}

/* The reconcile walk's stat of s, as a struct stat with what the pool's
 * check reads (a regular file's identity, size and mtime), once: true when
 * there was one. */
static bool walk_stat_take(struct source_rec *s, struct stat *ret_st)
{
        if (!s->walk_seen)
                return false;
        s->walk_seen = false;
        *ret_st = (struct stat){
                .st_dev = (dev_t)s->walk_dev,
                .st_ino = (ino_t)s->walk_ino,
                .st_mode = S_IFREG,
                .st_size = (off_t)s->walk_size,
                .st_mtim = {.tv_sec = (time_t)s->walk_mtime_sec, .tv_nsec = (long)s->walk_mtime_nsec},
        };
        return true;
}

/* Whether the pool may read s: a plain line source with nothing kept and
 * not read already, with something to read, whose checkpoint the read
 * would not take from another path (a rename, a sibling: those need the
 * writer). Fills spec. Inside a group the checkpoint read sees the group. */
static bool pool_eligible(struct ingest *in, struct source_rec *s, struct read_job_spec *spec)
{
        char other[PATH_MAX];
        struct checkpoint scp;
        int r;

        if (!in->pool || s->kind != CLASS_LINES || s->keep || s->busy)
                return false;
        *spec = (struct read_job_spec){.ctx = source_ctx_of(in, s), .verify_all = s->verify,
                                       .limits = TAIL_LIMITS_DEFAULT};
        /* the walk's stat when it just saw the file (the worker's open looks again) */
        if (!walk_stat_take(s, &spec->ctx.st) &&
            (stat(s->path, &spec->ctx.st) < 0 || !S_ISREG(spec->ctx.st.st_mode)))
                return false; /* the writer says why */
        r = ledger_get_checkpoint(in->ledger, s->path, &spec->cp);
        if (r == 0) {
                const struct checkpoint *cp = &spec->cp;
                if (cp->kind != SOURCE_LINES || cp->flags)
                        return false;
                if (cp->size == (uint64_t)spec->ctx.st.st_size && cp->offset == cp->size &&
                    cp->mtime_ns == (int64_t)spec->ctx.st.st_mtim.tv_sec * 1000000000LL +
                                            spec->ctx.st.st_mtim.tv_nsec && !s->verify)
                        return false; /* unchanged: a stat here is cheaper than a hand-over */
                if ((cp->dev != (uint64_t)spec->ctx.st.st_dev || cp->ino != (uint64_t)spec->ctx.st.st_ino) &&
                    s->adapter->sibling_of)
                        return false; /* replaced: perhaps by its sibling */
                spec->have_cp = true;
        } else if (r == -ENOENT) {
                if (ledger_find_identity(in->ledger, spec->ctx.st.st_dev, spec->ctx.st.st_ino, other,
                                         sizeof(other)) == 0)
                        return false; /* perhaps renamed from there */
                if (s->adapter->sibling_of &&
                    s->adapter->sibling_of(s->path, other, sizeof(other)) > 0 &&
                    ledger_get_checkpoint(in->ledger, other, &scp) == 0)
                        return false;
        } else {
                return false;
        }
        spec->limits.commit_rows = POOL_UNIT_ROWS;
        return true;
}

static int pool_submit(struct ingest *in, struct source_rec *s, struct read_job_spec *spec)
{
        struct pool_job *pj = calloc(1, sizeof(*pj));

        if (!pj || !(pj->root_path = strdup(spec->ctx.root_path))) {
                free(pj);
                return -ENOMEM;
        }
        spec->ctx.root_path = pj->root_path;
        int r = read_pool_submit(in->pool, spec, pj, &pj->rj);
        if (r < 0) {
                pool_job_free(pj);
                return r;
        }
        pj->s = s;
        pj->ahead = read_job_spec_bytes(spec);
        in->jobs_ahead += pj->ahead;
        s->busy = true;
        if (in->jobs_tail)
                in->jobs_tail->next = pj;
        else
                in->jobs_head = pj;
        in->jobs_tail = pj;
        in->n_jobs++;
        return 0;
}

/* One of the head job's units into the ledger, as reader_commit would have
 * written it: priced here (the table may change between reads), its
 * checkpoint's row count carried over from the job's earlier units. */
static int pool_commit(struct ingest *in, struct pool_job *pj, struct commit_unit *u)
{
        struct row_batch *b = &in->spare.rows;
        struct commit_result res = {0};
        int r = commit_unit_rows(u, b);

        if (r < 0)
                return r;
        if (b->n > in->outcomes_cap) {
                uint8_t *o = realloc(in->outcomes, b->n);
                if (!o)
                        return -ENOMEM;
                in->outcomes = o;
                in->outcomes_cap = b->n;
        }
        pricing_apply_batch(in->prices, b);
        u->cp.rows_added += pj->rows_carry;
        struct commit_batch cb = {
                .source_path = pj->s->path, .cp = &u->cp, .rows = b->rows, .n_rows = b->n,
                .ret_outcomes = in->outcomes, .limits = b->limits, .limits_scope = pj->root_path,
        };
        r = ledger_commit(in->ledger, &cb, &res);
        if (r < 0) {
                row_batch_clear(b);
                return r;
        }
        pj->rows_carry += res.added;
        pj->cp = u->cp; /* rows_added as stored */
        pj->committed = true;
        if (!in->in_group)
                ledger_writable(in);
        in->counters.bytes_read += u->bytes;
        in->counters.lines += u->lines;
        in->counters.malformed += u->malformed;
        in->counters.oversized += u->oversized;
        in->counters.rows_added += res.added;
        in->counters.rows_dup += res.dup;
        in->counters.rows_merged += res.merged;
        in->counters.calls_added += res.calls_added;
        in->counters.commits++;
        if (b->n)
                rows_committed(in, b->rows, in->outcomes, b->n);
        row_batch_clear(b);
        return 0;
}

static void pool_pop(struct ingest *in)
{
        struct pool_job *pj = in->jobs_head;

        in->jobs_head = pj->next;
        if (!in->jobs_head)
                in->jobs_tail = NULL;
        in->n_jobs--;
        in->jobs_ahead -= pj->ahead;
        pj->s->busy = false;
        pool_job_free(pj);
}

void ingest_drop_jobs(struct ingest *in)
{
        for (struct pool_job *pj = in->jobs_head; pj; pj = pj->next)
                read_job_cancel(pj->rj);
        while (in->jobs_head) {
                struct pool_job *pj = in->jobs_head;
                struct commit_unit *u;
                int step;
                while ((step = read_job_next(pj->rj, INT64_MAX, &u)) == JOB_UNIT)
                        commit_unit_free(u);
                /* what it committed stands; the rest is read again from there */
                if (pj->committed) {
                        struct source_counts c = source_counts_of(&pj->cp);
                        ingest_account(in, pj->s, &c);
                }
                struct source_rec *s = pj->s;
                pool_pop(in);
                ingest_enqueue(in, s);
        }
}

/* The head job, one step: a unit committed, or its end taken (its source's
 * outcome as read_done says it). JOB_WAIT when it had nothing by the
 * deadline; LEDGER_BLOCKED when the ledger refused (every job dropped). */
static int pool_step(struct ingest *in, int64_t deadline, uint64_t *io_budget_left, uint64_t *io_extra)
{
        struct pool_job *pj = in->jobs_head;
        struct commit_unit *u;
        /* nothing of the head yet: the writer reads a job behind it instead
         * of sleeping, one that fits in what is left of the slice's budget
         * (a job is read to its end). On two cores one worker and a writer
         * that reads when it has nothing to commit keep both busy; two
         * workers and a writer that sleeps made an r2000 scan switch
         * contexts 7,000 times (12 us each on this VM) and left cores idle */
        while (!read_job_ready(pj->rj) && read_pool_help(in->pool, *io_budget_left, &in->spare))
                ;
        int step = read_job_next(pj->rj, deadline, &u);

        if (step == JOB_WAIT)
                return JOB_WAIT;
        if (step == JOB_UNIT) {
                int r = pool_commit(in, pj, u);
                commit_unit_free(u);
                if (r < 0) {
                        ingest_drop_jobs(in);
                        ledger_refused(in, r);
                        return LEDGER_BLOCKED;
                }
                return JOB_UNIT;
        }
        struct tail_outcome out;
        struct tail_counters jc;
        struct source_rec *s = pj->s;
        int r = read_job_result(pj->rj, &out, &jc);
        in->counters.resets += jc.resets;
        in->counters.renames += jc.renames;
        if (pj->committed) {
                out.counts = source_counts_of(&pj->cp);
                out.have_counts = true;
        }
        pool_pop(in);
        /* a source that needs the writer is read here, still in its turn */
        int more = r == TAIL_SERIAL ? read_one(in, s, *io_budget_left, io_extra)
                                    : read_done(in, s, r, &out, 0);
        if (more)
                ingest_enqueue(in, s);
        if (more == LEDGER_BLOCKED) {
                s->retry_wanted = true;
                return LEDGER_BLOCKED;
        }
        return JOB_DONE;
}

static bool feed_pool(struct ingest *in);
static void walk_over(struct ingest *in);

int ingest_set_read_threads(struct ingest *in, unsigned threads)
{
        ingest_drop_jobs(in);
        in->pool = read_pool_free(in->pool);
        in->drop_jobs = ingest_drop_jobs; /* for the table half (ingest.c) */
        in->feed_pool = feed_pool;
        in->walk_over = walk_over;
        if (threads == 0)
                return 0;
        return read_pool_new(threads, &in->pool);
}

/* The queue's next source, or NULL: one in its backoff is moved to the
 * deferred list instead (it waits for ingest_queue_retries). */
struct deferred {
        struct source_rec *head, *tail;
};

/* s, taken from the queue in its backoff, waits for the slice after it. */
static void defer_source(struct ingest *in, struct source_rec *s, struct deferred *d)
{
        ingest_look_again(in, s, s->retry_at_ms);
        s->qnext = NULL;
        if (d->tail)
                d->tail->qnext = s;
        else
                d->head = s;
        d->tail = s;
}

static struct source_rec *next_source(struct ingest *in, int64_t now, struct deferred *d)
{
        while (in->qhead) {
                struct source_rec *s = in->qhead;
                if (s->busy && in->jobs_head)
                        return NULL; /* its job first: a source is read once at a time */
                in->qhead = s->qnext;
                if (!in->qhead)
                        in->qtail = NULL;
                s->queued = false;
                s->walk_seen = false; /* read_one stats it */
                if (!(s->last_error && s->retry_at_ms > now))
                        return s;
                defer_source(in, s, d);
        }
        return NULL;
}

/* Whether the pool takes another job (POOL_JOBS_MIN and _MAX per reader:
 * the workers and the writer, which reads jobs too: read_pool_help). */
static bool pool_room(const struct ingest *in)
{
        size_t threads = read_pool_threads(in->pool) + 1;

        if (in->n_jobs < POOL_JOBS_MIN * threads)
                return true;
        return in->n_jobs < POOL_JOBS_MAX * threads && in->jobs_ahead < POOL_AHEAD_BYTES;
}

/* Hands the pool what it may read from the queue's head on, in order, while
 * it has room; stops at the first source it may not read (which then waits
 * for the jobs before it): false then, true when the pool is full or the
 * queue empty. A source in its backoff is moved to d, or, without d, also
 * stops the fill. */
static bool pool_fill(struct ingest *in, int64_t now, struct deferred *d)
{
        struct read_job_spec spec;

        while (in->pool && pool_room(in) && in->qhead &&
               (in->jobs_head || in->qhead->qnext)) { /* a scan: more than one queued */
                struct source_rec *s = in->qhead;
                bool backoff = s->last_error && s->retry_at_ms > now;
                if (backoff && !d)
                        return false;
                if (!backoff && (!pool_eligible(in, s, &spec) || pool_submit(in, s, &spec) < 0))
                        return false;
                in->qhead = s->qnext;
                if (!in->qhead)
                        in->qtail = NULL;
                s->queued = false;
                if (backoff)
                        defer_source(in, s, d);
        }
        return true;
}

#define WALK_READ_BUDGET (8u << 20) /* a source that needs the writer, read in the walk */

/* in->feed_pool, for the reconcile walk (ingest.c): a source in its
 * backoff stops the fill there (no deferred list outside ingest_run). The
 * units and ends of jobs ready now are committed, in a group the walk keeps
 * open (walk_over commits it), so the workers are not held by a writer that
 * walks: a first scan's walk of 6,500 files took 35 ms, and the workers,
 * their jobs ahead done, waited out most of it. */
static bool feed_pool(struct ingest *in)
{
        bool more = pool_fill(in, timefmt_now_ms(), NULL);
        uint64_t left = WALK_READ_BUDGET, extra = 0;

        while (in->jobs_head && read_job_ready(in->jobs_head->rj)) {
                if (!group_begin(in))
                        break; /* committed one at a time by ingest_run */
                if (pool_step(in, INT64_MAX, &left, &extra) == LEDGER_BLOCKED || !group_bound(in))
                        return false;
                more = pool_fill(in, timefmt_now_ms(), NULL) && more;
        }
        return more && !in->ledger_error;
}

/* in->walk_over: the walk's group committed. */
static void walk_over(struct ingest *in)
{
        (void)group_end(in);
}

int ingest_run(struct ingest *in, uint64_t budget_bytes)
{
        uint64_t start = in->counters.bytes_read, extra = 0;
        int64_t now = timefmt_now_ms();
        int64_t deadline = in->slice_ms ? timefmt_mono_ms() + in->slice_ms : INT64_MAX;
        struct deferred deferred = {0};
        /* several sources queued (a scan): one group commit for the slice,
         * so each B-tree page is written once, not once per source */
        bool grouped;

        /* the ledger refused the last commit: wait for the retry timer */
        if (in->ledger_error && now < in->ledger_retry_ms)
                return 0;
        grouped = ((in->qhead && in->qhead->qnext) || in->jobs_head) && group_begin(in);

        for (;;) {
                uint64_t used = in->counters.bytes_read - start + extra;
                uint64_t left = budget_bytes > used ? budget_bytes - used : 1;
                pool_fill(in, now, &deferred);
                if (in->jobs_head) {
                        int step = pool_step(in, deadline, &left, &extra);
                        if (step == LEDGER_BLOCKED)
                                break;
                        if (step == JOB_WAIT)
                                break; /* the slice is up; the workers go on */
                } else {
                        struct source_rec *s = next_source(in, now, &deferred);
                        if (!s)
                                break;
                        prefetch(in->qhead);
                        int more = read_one(in, s, left, &extra);
                        if (more)
                                ingest_enqueue(in, s);
                        if (more == LEDGER_BLOCKED) {
                                s->retry_wanted = true;
                                break;
                        }
                        /* a visit costs like reading VISIT_COST bytes (stat,
                         * open, checkpoint), so a reconcile of many unchanged
                         * files, or a rescan re-checking every consumed byte,
                         * yields the loop too */
                        extra += VISIT_COST;
                }
                if (grouped && !group_bound(in)) {
                        grouped = false;
                        break;
                }
                grouped = grouped && in->in_group;
                if (in->counters.bytes_read - start + extra >= budget_bytes)
                        break;
                if (deadline != INT64_MAX && timefmt_mono_ms() >= deadline)
                        break; /* the rest next turn: a request waits no longer than this */
        }
        /* deferred sources wait for ingest_queue_retries (or the next
         * reconcile or event after their backoff) */
        for (struct source_rec *s = deferred.head; s; s = s->qnext)
                s->queued = false;
        if (grouped)
                (void)group_end(in);
        if (!in->qhead && !in->jobs_head && in->n_gone) /* not a walk of every source per append */
                sweep_gone(in);
        return in->qhead || in->jobs_head ? 1 : 0;
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
                                ingest_enqueue(in, s); /* still early: ingest_run defers it again */
                        }
}
