/* The ingest engine: discovered roots, the table of known sources, and a
 * queue of sources to read. --once drains the queue and exits; the live
 * daemon feeds it from inotify and reconcile and drains it in slices. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "adapter.h"
#include "ledger/ledger.h"
#include "tail/tail.h"

/* A known source, in memory: where it is, its kind, how the last read
 * went, and its checkpoint's figures as of that read (the checkpoint itself
 * lives in the ledger; tail reports what it committed, nothing is read
 * back). One allocation per source, its path inside it (issue 51: a heavy
 * user's 32,000 files; tests/bench/README.md says what one costs): fields
 * ordered largest first, so there are no holes. */
struct source_rec {
        struct source_rec *hnext, *qnext;
        const struct adapter *adapter;
        struct tail_keep *keep; /* what a read that yielded keeps (tail.h) */
        uint64_t size, offset;  /* as of the last read */
        struct source_counts counts; /* its checkpoint's cumulative counters */
        uint64_t decoded;       /* a compressed source: bytes its decoder produced since start */
        int64_t retry_at_ms;    /* don't try again before (errors), or look again at (settling) */
        /* A regular file as the reconcile's walk found it: the read pool's
         * check of the source takes this instead of a stat of its own (a
         * long path's stat was a tenth of a realistic scan's writer), once,
         * and only while no event came for the source since the walk. */
        uint64_t walk_dev, walk_ino, walk_size;
        int64_t walk_mtime_sec;
        uint32_t walk_mtime_nsec;
        int32_t last_error;     /* negative errno of the last attempt, 0 if fine */
        uint32_t root_idx;      /* UINT32_MAX: under no root now */
        uint8_t adapter_idx;    /* its index in registry_adapters */
        uint8_t kind;           /* CLASS_LINES, CLASS_DOCUMENT or CLASS_TABLE */
        uint8_t quick_looks;    /* TAIL_PUBLISHING reads in a row (PUBLISH_LOOKS_MAX) */
        bool walk_seen;
        bool queued;
        bool seen;              /* found by the latest scan */
        bool not_source;
        bool gone;              /* deleted: dropped from the table at the next sweep */
        bool retry_wanted;      /* read it at retry_at_ms (queued during a backoff, or settling) */
        bool verify;            /* next read checks every consumed byte (rescan) */
        bool busy;              /* being read by a read-pool worker */
        char path[];
};

/* Per adapter, kept up to date as sources are read (no ledger access):
 * files, errors and not_source count the known sources; the rest sums
 * their checkpoints' counters. */
struct adapter_stats {
        uint64_t files, errors, not_source;
        uint64_t bytes_read, lines, malformed, oversized, rows;
        int64_t last_commit_ms;
};

struct ingest;

struct ingest_hooks {
        /* a directory to watch (called by scans) */
        int (*on_dir)(void *u, const struct root *root, const char *path, int depth);
        /* after each commit */
        tail_rows_fn on_rows;
        void *u;
};

int ingest_new(struct ledger *l, const struct discover_env *env, const struct ingest_hooks *hooks,
               struct ingest **ret);
struct ingest *ingest_free(struct ingest *in);

/* (Re)runs discovery and loads adapter configs; logs what moved each root. */
int ingest_discover(struct ingest *in);
const struct root_list *ingest_roots(const struct ingest *in);
/* Root i: whether its path currently exists as a directory. */
bool ingest_root_exists(const struct ingest *in, size_t i);

/* Scans every root, adds new sources, queues every known source (a full
 * reconcile: re-stat everything, read what changed). With read threads,
 * the sources the walk queues are handed to them as it finds them, in
 * queue order, while the pool has room and until the queue's head is one
 * they may not read; the walk commits the units they have ready as it goes
 * (in a group committed at its end), ingest_run the rest. */
int ingest_reconcile(struct ingest *in);

/* Queues every known source for a read that checks every byte already
 * consumed against the checkpoint (an explicit rescan): a rewrite no cheap
 * sign gave away is read again. */
void ingest_verify_all(struct ingest *in);

/* Reads queued sources until the queue is empty (0) or budget_bytes are
 * used or the slice time (ingest_set_slice_ms) is up (1: call again).
 * Every byte read, decoded or re-checked counts against budget_bytes. */
int ingest_run(struct ingest *in, uint64_t budget_bytes);
/* Rows per group commit when several sources are queued (0: the default,
 * 2,048, about 20 MB of dirty ledger pages; `--once` takes more). */
void ingest_set_group_rows(struct ingest *in, uint64_t rows);
/* Worker threads for scans of many sources (read-pool.h): while more than
 * one source is queued, plain line sources are read and parsed by them and
 * their rows committed by ingest_run, in queue order. 0 threads: none
 * (every source read by ingest_run itself). 0 or negative errno. */
int ingest_set_read_threads(struct ingest *in, unsigned threads);
/* ingest_run also returns once it has worked ms milliseconds (0: only the
 * byte budget ends it), so the loop answers requests in between. */
void ingest_set_slice_ms(struct ingest *in, int64_t ms);
/* The one way in for a path an event named. A directory (is_dir) that
 * appeared under a root is scanned (and watched through on_dir). A file
 * that changed (content_changed: written, created or moved in; else an
 * attribute change or a close) queues the source it belongs to, which the
 * root's adapter decides (adapter->source_of), noticing it first when it is
 * new. 1 when something was queued or scanned, 0 when the path is nobody's,
 * negative errno. */
int ingest_path_event(struct ingest *in, const char *path, bool is_dir, bool content_changed);
bool ingest_pending(const struct ingest *in);
/* Sources handed to the read threads whose reads ingest_run has not yet
 * finished committing. */
size_t ingest_read_jobs(const struct ingest *in);

/* A source that failed is not read again for a while; when an event or a
 * reconcile queued it meanwhile, ingest_run leaves it out and notes when
 * it is due: ingest_retry_due() (CLOCK_REALTIME ms, 0: none). Then
 * ingest_queue_retries() queues those sources again. */
int64_t ingest_retry_due(const struct ingest *in);
/* The negative errno of the last commit the ledger refused (a full disk),
 * 0 when it is writable. */
int ingest_ledger_error(const struct ingest *in);
void ingest_queue_retries(struct ingest *in);

/* The known source at path, or NULL. */
struct source_rec *ingest_find(struct ingest *in, const char *path);

/* Iteration and figures for status. */
struct source_rec *ingest_sources_first(struct ingest *in, size_t *iter);
struct source_rec *ingest_sources_next(struct ingest *in, size_t *iter);
const struct tail_counters *ingest_counters(const struct ingest *in);
void ingest_progress(const struct ingest *in, uint64_t *ret_done, uint64_t *ret_known);
void ingest_adapter_stats(const struct ingest *in, const struct adapter *a,
                          struct adapter_stats *ret);
struct ledger *ingest_ledger(const struct ingest *in);
/* Where adapter a's status_extra keeps its cache (NULL for an adapter not
 * in the registry); freed with the engine. */
void **ingest_status_cache(struct ingest *in, const struct adapter *a);
/* The price table rows are priced with before each commit (NULL: none);
 * the caller keeps it alive while set. */
void ingest_set_prices(struct ingest *in, const struct price_table *t);
/* The table rows are priced with (NULL: none). */
const struct price_table *ingest_prices(const struct ingest *in);
int64_t ingest_last_commit_ms(const struct ingest *in);
