/* The read pool (read-pool.h): one mutex for the pool and its jobs (units
 * are coarse: a few hundred rows or megabytes each), a condition variable
 * for the workers' new jobs and free space, one for the writer's waits.
 * Waiters are woken after the mutex is let go: a thread woken while it is
 * held (the writer, whose priority preempts the worker that woke it) only
 * sleeps again on the mutex, two context switches more each time.
 * A worker wakes the writer only when it waits for that very job: a wake-up
 * costs a system call and a context switch each, and the writer takes jobs
 * in order, so units of the jobs behind the one it waits for can wait. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest/read-pool.h"

#define UNITS_QUEUED_MAX 4 /* a job's units not yet taken: its worker waits beyond */

struct read_job {
        struct read_pool *pool;
        struct read_job_spec spec;
        char *path;
        void *owner;
        struct commit_unit *head, *tail;
        unsigned n_units;
        bool cancelled, done;
        bool space_wanted;     /* its worker waits for the writer to take a unit */
        bool by_writer;        /* read by the writer itself (read_pool_help): never waits */
        int result;
        struct tail_outcome outcome;
        struct tail_counters counters;
        struct read_job *next_pending;
        bool hinted;           /* its file was asked of the disk ahead (hint_ahead) */
};

struct read_pool {
        pthread_mutex_t mu;
        pthread_cond_t work;   /* workers: a job queued, space in a queue, or stop */
        pthread_cond_t ready;  /* the writer: a unit or a job's end */
        struct read_job *awaited; /* the job the writer waits on, or NULL */
        struct read_job *pending_head, *pending_tail;
        bool stop;
        bool cold;             /* the files come from the disk: read ahead of the jobs */
        uint64_t read_ahead;   /* files asked of the disk ahead, in all */
        unsigned n_threads;
        pthread_t *threads;
};

static int defer_unit(void *u, struct commit_unit *unit)
{
        struct read_job *j = u;
        struct read_pool *p = j->pool;

        pthread_mutex_lock(&p->mu);
        while (j->n_units >= UNITS_QUEUED_MAX && !j->by_writer && !j->cancelled && !p->stop) {
                j->space_wanted = true;
                pthread_cond_wait(&p->work, &p->mu);
        }
        j->space_wanted = false;
        if (j->cancelled || p->stop) {
                pthread_mutex_unlock(&p->mu);
                commit_unit_free(unit);
                return -ECANCELED;
        }
        unit->next = NULL;
        if (j->tail)
                j->tail->next = unit;
        else
                j->head = unit;
        j->tail = unit;
        j->n_units++;
        bool wake = p->awaited == j;
        pthread_mutex_unlock(&p->mu);
        if (wake) /* after the unlock: woken first, the writer would wait for the mutex */
                pthread_cond_signal(&p->ready);
        return 0;
}

static void run_job(struct read_job *j, struct tail_spare *spare)
{
        struct tail_ctx t = {
                .limits = j->spec.limits,
                .counters = &j->counters,
                .verify_all = j->spec.verify_all,
                .spare = spare,
                .defer = defer_unit,
                .defer_u = j,
                .given_cp = j->spec.have_cp ? &j->spec.cp : NULL,
        };
        struct tail_outcome out = {0};
        int r;

        t.limits.budget_bytes = UINT64_MAX; /* to the end: the writer is not held */
        r = tail_source(&t, &j->spec.ctx, CLASS_LINES, &out);
        struct read_pool *p = j->pool; /* done, j is the writer's to free */
        pthread_mutex_lock(&p->mu);
        /* a file the page cache did not hold turns reading ahead on; one
         * that it held without being asked for turns it off */
        if (j->counters.cold_reads)
                p->cold = true;
        else if (!j->hinted)
                p->cold = false;
        j->result = j->cancelled && r >= 0 ? -ECANCELED : r;
        j->outcome = out;
        j->done = true;
        bool wake = p->awaited == j;
        pthread_mutex_unlock(&p->mu);
        if (wake)
                pthread_cond_signal(&p->ready);
}

/* A worker names itself (top -H, /proc/PID/task/TID/comm) and gives way to
 * the ledger's writer. A scan of many small rows is as fast as its one
 * writer, and at equal priority the writer and two workers share two cores
 * by thirds: the writer waits, runnable, behind a worker whose units it
 * cannot take yet. A worker's nice value is its own (Linux's nice is per
 * thread), inherited from the thread that made the pool: raised by
 * READ_WORKER_NICE_ABOVE, at most 19. Where that fails the worker runs at
 * the writer's priority, slower only. */
static void worker_gives_way(void)
{
        id_t self = (id_t)gettid();
        int nice;

        errno = 0;
        nice = getpriority(PRIO_PROCESS, self);
        if (nice == -1 && errno)
                return;
        nice = nice + READ_WORKER_NICE_ABOVE < 19 ? nice + READ_WORKER_NICE_ABOVE : 19;
        (void)setpriority(PRIO_PROCESS, self, nice);
}

/* The oldest job no one has started, taken off the pending list (the
 * pool's mutex held; the list not empty). */
static struct read_job *pending_pop(struct read_pool *p)
{
        struct read_job *j = p->pending_head;

        p->pending_head = j->next_pending;
        if (!p->pending_head)
                p->pending_tail = NULL;
        return j;
}

/* A cold first scan (after a reboot) waits for the disk one file at a
 * time: each worker's read is the only request the disk has. While the
 * files come from the disk, a worker taking a job first asks the kernel to
 * start reading the next HINT_AHEAD pending jobs' files (WILLNEED returns
 * once the reads are queued), so the disk serves several at once: r200's
 * 221 MB, page cache dropped, 0.32 -> 0.24 s (median of 7). Hinting every
 * file cost 6% with the files in the page cache, so the hints wait for a
 * first read that missed it. Called with the pool's mutex held; drops it meanwhile. */
#define HINT_AHEAD 8

static void hint_ahead(struct read_pool *p)
{
        char *paths[HINT_AHEAD];
        uint64_t offs[HINT_AHEAD];
        int n = 0;

        for (struct read_job *j = p->pending_head; j && n < HINT_AHEAD; j = j->next_pending) {
                if (j->hinted || j->cancelled)
                        continue;
                j->hinted = true;
                if ((paths[n] = strdup(j->path))) {
                        offs[n] = j->spec.have_cp ? j->spec.cp.offset : 0;
                        n++;
                }
        }
        if (n == 0)
                return;
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < n; i++) {
                int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                struct stat st;
                if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
                        (void)posix_fadvise(fd, (off_t)offs[i], 0, POSIX_FADV_WILLNEED);
                if (fd >= 0)
                        close(fd);
                free(paths[i]);
        }
        pthread_mutex_lock(&p->mu);
        p->read_ahead += (uint64_t)n;
}

static void *worker(void *u)
{
        struct read_pool *p = u;
        struct tail_spare spare = {0};

        (void)pthread_setname_np(pthread_self(), READ_WORKER_NAME);
        worker_gives_way();
        pthread_mutex_lock(&p->mu);
        for (;;) {
                while (!p->pending_head && !p->stop)
                        pthread_cond_wait(&p->work, &p->mu);
                if (p->stop)
                        break;
                struct read_job *j = pending_pop(p);
                if (j->cancelled) {
                        j->result = -ECANCELED;
                        j->done = true;
                        if (p->awaited == j)
                                pthread_cond_signal(&p->ready);
                        continue;
                }
                if (p->cold) /* a worker only: the writer never waits on a disk queue */
                        hint_ahead(p);
                pthread_mutex_unlock(&p->mu);
                run_job(j, &spare);
                pthread_mutex_lock(&p->mu);
        }
        pthread_mutex_unlock(&p->mu);
        tail_spare_free(&spare);
        return NULL;
}

uint64_t read_job_spec_bytes(const struct read_job_spec *spec)
{
        uint64_t size = spec->ctx.st.st_size > 0 ? (uint64_t)spec->ctx.st.st_size : 0;
        return spec->have_cp && size > spec->cp.offset ? size - spec->cp.offset : size;
}

bool read_pool_help(struct read_pool *p, uint64_t max_bytes, struct tail_spare *spare)
{
        pthread_mutex_lock(&p->mu);
        struct read_job *j = p->pending_head;
        if (!j || p->stop || j->cancelled || read_job_spec_bytes(&j->spec) > max_bytes) {
                pthread_mutex_unlock(&p->mu);
                return false; /* a cancelled one: a worker ends it */
        }
        pending_pop(p);
        j->by_writer = true;
        pthread_mutex_unlock(&p->mu);
        run_job(j, spare);
        return true;
}

uint64_t read_pool_read_ahead(struct read_pool *p)
{
        pthread_mutex_lock(&p->mu);
        uint64_t n = p->read_ahead;
        pthread_mutex_unlock(&p->mu);
        return n;
}

int read_pool_new(unsigned threads, struct read_pool **ret_pool)
{
        struct read_pool *p = calloc(1, sizeof(*p));
        pthread_condattr_t ca;
        int r = 0;

        if (!p)
                return -ENOMEM;
        if (threads < 1)
                threads = 1;
        p->threads = calloc(threads, sizeof(*p->threads));
        if (!p->threads) {
                free(p);
                return -ENOMEM;
        }
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->work, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* read_job_next's deadline */
        pthread_cond_init(&p->ready, &ca);
        pthread_condattr_destroy(&ca);
        /* workers take no signal (they inherit this mask): the daemon's
         * go to its event loop (signalfd), whatever thread they hit */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (unsigned i = 0; i < threads; i++) {
                r = pthread_create(&p->threads[i], NULL, worker, p);
                if (r)
                        break;
                p->n_threads++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r) {
                read_pool_free(p);
                return -r;
        }
        *ret_pool = p;
        return 0;
}

struct read_pool *read_pool_free(struct read_pool *p)
{
        if (!p)
                return NULL;
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        for (struct read_job *j = p->pending_head; j; j = j->next_pending) {
                j->cancelled = true;
                j->result = -ECANCELED;
                j->done = true;
        }
        p->pending_head = p->pending_tail = NULL;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (unsigned i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->ready);
        pthread_mutex_destroy(&p->mu);
        free(p->threads);
        free(p);
        return NULL;
}

unsigned read_pool_threads(const struct read_pool *p)
{
        return p->n_threads;
}

int read_pool_submit(struct read_pool *p, const struct read_job_spec *spec, void *owner,
                     struct read_job **ret_job)
{
        struct read_job *j = calloc(1, sizeof(*j));

        if (!j)
                return -ENOMEM;
        j->path = strdup(spec->ctx.path);
        if (!j->path) {
                free(j);
                return -ENOMEM;
        }
        j->pool = p;
        j->spec = *spec;
        j->spec.ctx.path = j->path;
        j->owner = owner;
        pthread_mutex_lock(&p->mu);
        if (p->pending_tail)
                p->pending_tail->next_pending = j;
        else
                p->pending_head = j;
        p->pending_tail = j;
        pthread_mutex_unlock(&p->mu);
        pthread_cond_signal(&p->work);
        *ret_job = j;
        return 0;
}

int read_job_next(struct read_job *j, int64_t deadline_ms, struct commit_unit **ret_unit)
{
        struct read_pool *p = j->pool;
        struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};
        int step;
        bool space = false;

        pthread_mutex_lock(&p->mu);
        for (;;) {
                if (j->head) {
                        struct commit_unit *u = j->head;
                        j->head = u->next;
                        if (!j->head)
                                j->tail = NULL;
                        j->n_units--;
                        u->next = NULL;
                        *ret_unit = u;
                        /* not on every unit: each broadcast wakes the idle
                         * workers too */
                        space = j->space_wanted;
                        step = JOB_UNIT;
                        break;
                }
                if (j->done) {
                        step = JOB_DONE;
                        break;
                }
                p->awaited = j;
                int rc = deadline_ms == INT64_MAX ? pthread_cond_wait(&p->ready, &p->mu)
                                                  : pthread_cond_timedwait(&p->ready, &p->mu, &ts);
                p->awaited = NULL;
                if (rc == ETIMEDOUT && !j->head && !j->done) {
                        step = JOB_WAIT;
                        break;
                }
        }
        pthread_mutex_unlock(&p->mu);
        if (space)
                pthread_cond_broadcast(&p->work);
        return step;
}

bool read_job_ready(struct read_job *j)
{
        pthread_mutex_lock(&j->pool->mu);
        bool ready = j->head || j->done;
        pthread_mutex_unlock(&j->pool->mu);
        return ready;
}

int read_job_result(const struct read_job *j, struct tail_outcome *ret_outcome,
                    struct tail_counters *ret_counters)
{
        if (ret_outcome)
                *ret_outcome = j->outcome;
        if (ret_counters)
                *ret_counters = j->counters;
        return j->result;
}

void read_job_cancel(struct read_job *j)
{
        struct read_pool *p = j->pool;

        pthread_mutex_lock(&p->mu);
        j->cancelled = true;
        while (j->head) {
                struct commit_unit *u = j->head;
                j->head = u->next;
                commit_unit_free(u);
        }
        j->tail = NULL;
        j->n_units = 0;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
}

void *read_job_owner(const struct read_job *j)
{
        return j->owner;
}

struct read_job *read_job_free(struct read_job *j)
{
        if (j) {
                while (j->head) {
                        struct commit_unit *u = j->head;
                        j->head = u->next;
                        commit_unit_free(u);
                }
                free(j->path);
                free(j);
        }
        return NULL;
}
