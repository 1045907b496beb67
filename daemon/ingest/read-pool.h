/* Worker threads that read and parse line sources ahead of the ledger's one
 * writer, so a scan of many files uses every core: a job reads one plain
 * line source to its end (tail with defer: no ledger access at all) and
 * hands over its commits as units, in order; the writer takes them with
 * read_job_next and commits them itself, and while the job it commits next
 * has nothing for it, reads the next job itself (read_pool_help) instead of
 * sleeping. A job holds at most a few units at a time: a worker waits while
 * its writer is behind. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ingest/commit-unit.h"
#include "tail/tail.h"

struct read_pool;
struct read_job;

/* What a job reads: the source (ctx.path is copied), its checkpoint as the
 * writer last committed it (have_cp false: none), and the limits its units
 * are cut by (budget_bytes is ignored: a job reads to the end). */
struct read_job_spec {
        struct source_ctx ctx;
        struct checkpoint cp;
        bool have_cp;
        bool verify_all;
        struct tail_limits limits;
};

/* threads workers (at least 1): 0, -ENOMEM, or -errno of pthread_create.
 * Each worker is named READ_WORKER_NAME and runs READ_WORKER_NICE_ABOVE
 * nice steps below the calling thread (at most nice 19): the writer, the
 * scan's critical path, has a core when it wants one. */
#define READ_WORKER_NAME "agentmeter-read"
#define READ_WORKER_NICE_ABOVE 10

int read_pool_new(unsigned threads, struct read_pool **ret_pool);
/* Cancels every job, joins the workers, frees the pool (jobs not freed:
 * their owner frees them). NULL-safe; returns NULL. */
struct read_pool *read_pool_free(struct read_pool *p);
unsigned read_pool_threads(const struct read_pool *p);
/* Files the workers asked the disk for ahead of their jobs: while first
 * reads find the files outside the page cache, each job taken starts the
 * reads of the next 8 (a cold first scan waits for the disk less). */
uint64_t read_pool_read_ahead(struct read_pool *p);

/* Queues a job (read in submission order by the first free worker). */
int read_pool_submit(struct read_pool *p, const struct read_job_spec *spec, void *owner,
                     struct read_job **ret_job);

/* What a job has to read: from its checkpoint to the size seen, or the
 * whole file (none, or a file now shorter: read again from 0). */
uint64_t read_job_spec_bytes(const struct read_job_spec *spec);

/* The calling thread (the writer, with nothing yet of the job it commits
 * next) reads the oldest job no worker has started, as a worker would, its
 * units queued without bound, when it has at most max_bytes to read
 * (read_job_spec_bytes): true when it read one. spare: the caller's
 * buffers. */
bool read_pool_help(struct read_pool *p, uint64_t max_bytes, struct tail_spare *spare);

enum read_job_step {
        JOB_UNIT = 0, /* *ret_unit is the next unit; the caller owns it */
        JOB_DONE = 1, /* the job ended and every unit was taken */
        JOB_WAIT = 2, /* neither by the deadline */
};
/* The job's next unit or its end, waiting until deadline_ms (monotonic ms,
 * timefmt_mono_ms; INT64_MAX: no bound). */
int read_job_next(struct read_job *j, int64_t deadline_ms, struct commit_unit **ret_unit);
/* Whether read_job_next would return at once (a unit queued, or the end). */
bool read_job_ready(struct read_job *j);
/* After JOB_DONE: what tail_source returned (-ECANCELED when cancelled),
 * its outcome (counts without the rows of its units: the writer knows
 * those) and the counters it kept (resets). */
int read_job_result(const struct read_job *j, struct tail_outcome *ret_outcome,
                    struct tail_counters *ret_counters);
/* Stops the job at its next unit; units not yet taken are dropped. */
void read_job_cancel(struct read_job *j);
void *read_job_owner(const struct read_job *j);
/* Frees a job after JOB_DONE (or a pool freed); NULL-safe, returns NULL. */
struct read_job *read_job_free(struct read_job *j);
