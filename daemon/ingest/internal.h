/* The ingest engine's state, shared by its two halves: ingest.c (the table
 * of sources, discovery, scans and events) and ingest/run.c (reading queued
 * sources, alone or through the read pool, and the group commits). Internal
 * to the ingest engine. */
#pragma once

#include "ingest/ingest.h"
#include "ingest/read-pool.h"
#include "registry.h"

#define RETRY_MS 5000
#define SETTLE_MS 200 /* a database whose writer was at work: looked at again this soon */
#define TABLE_EVENT_MS 5 /* a database written to: read this long after (its writer's commit
                          * becomes visible in the -shm after the -wal write we were told of) */
#define PUBLISH_MS 3 /* a database's written commit not yet visible: looked at again this soon */
#define PUBLISH_LOOKS_MAX 20 /* ... that many times in a row at most (a writer gone between
                              * writing and publishing), then at SETTLE_MS */
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
        bool in_group;          /* ingest_run (or the walk's commits) holds a group commit open */
        uint64_t group_from_rows, group_from_commits; /* rows and commits seen when it began */
        bool walk_feeds;        /* the reconcile walk hands the pool sources as it finds them */
        struct read_pool *pool; /* workers for scans of many sources (NULL: none) */
        void (*drop_jobs)(struct ingest *in); /* ingest_drop_jobs, set with the pool */
        /* hands the pool what is queued while it has room (as ingest_run
         * does): false once the head is a source it may not take (that one,
         * and all behind it, wait for ingest_run); set with the pool */
        bool (*feed_pool)(struct ingest *in);
        /* the end of a walk that fed the pool: the group of the units it
         * committed meanwhile is committed; set with the pool */
        void (*walk_over)(struct ingest *in);
        struct pool_job *jobs_head, *jobs_tail; /* handed to the pool, oldest first */
        size_t n_jobs;
        uint64_t jobs_ahead; /* new bytes of the jobs handed out (ingest/run.c) */
        uint8_t *outcomes;      /* the pool's commits' row outcomes */
        size_t outcomes_cap;
};

/* ingest.c */
void ingest_enqueue(struct ingest *in, struct source_rec *s);
/* Queues s again at at_ms (the retry timer, ingest_queue_retries). */
void ingest_look_again(struct ingest *in, struct source_rec *s, int64_t at_ms);
/* Sets a source's counters to now (NULL: all zero), moving its share of
 * its adapter's sums with them. */
void ingest_account(struct ingest *in, struct source_rec *s, const struct source_counts *now);

static inline struct source_counts source_counts_of(const struct checkpoint *cp)
{
        return (struct source_counts){
                .bytes_read = cp->bytes_read, .lines = cp->lines, .malformed = cp->malformed,
                .oversized = cp->oversized, .rows = cp->rows_added, .last_commit_ms = cp->last_commit_ms,
        };
}

/* ingest/run.c */
/* Cancels and frees the jobs in the pool (their sources are read again
 * from their checkpoints). */
void ingest_drop_jobs(struct ingest *in);
