/* Compaction calls of Claude Code: written to no assistant line, their usage
 * is only in the session's cumulative cost-state. Each transcript keeps, per
 * model, what its lines account for; a cost-state that exceeds it in a run
 * with a compaction boundary meters the difference, once. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "adapter.h"
#include "row.h"

struct jscan_span;

struct cl_tok {
        uint64_t input, output, cache_read, cache_write, cache_write_1h;
};

/* A cost-state line's modelUsage (as parsed; bad: a count out of bounds or
 * more models than CL_CS_MODELS). */
#define CL_CS_MODELS 16
struct cl_cs_model {
        char model[ROW_MODEL_MAX];
        struct cl_tok t;
};
struct cl_cost_state {
        bool present, bad;
        uint32_t n;
        struct cl_cs_model v[CL_CS_MODELS];
};

/* What one transcript has accounted for (parse_state.priv, see claude/acct.c). */
#define CL_ACCT_MODELS 8

#define CL_RUN_AGENT    0x02u /* a sub-agent ran since the last cost-state (its calls are elsewhere) */
#define CL_COPIES       0x04u /* fork copies seen before the first cost-state: its baseline is the source's */
#define CL_CS_SEEN      0x08u /* a cost-state has been read */
#define CL_OVERFLOW     0x10u /* too many models to keep: nothing more can be exact */
struct cl_acct {
        uint8_t flags;
        uint32_t boundaries;    /* compact_boundary lines in this run */
        uint64_t boundary_hash; /* hash of the last one's uuid */
        int64_t boundary_ms;    /* its time (0: none) */
        uint64_t unmetered;     /* cost-state differences not metered (could not be exact) */
        uint64_t unmetered_tokens;
        uint64_t last_key;      /* the last response seen (its lines repeat its usage) */
        struct cl_tok last;
        uint32_t n;
        struct {
                uint64_t model_hash;
                struct cl_tok d; /* the cost-state this file's lines account for */
        } m[CL_ACCT_MODELS];
};

/* The compaction to meter. */
struct cl_compaction {
        char model[ROW_MODEL_MAX];
        struct cl_tok t;
        uint64_t boundary_hash;
        int64_t time_ms; /* the boundary's, 0 when it had none */
};

/* From / into parse_state.priv (an empty or unknown area: a fresh start).
 * store: when the models do not fit PS_PRIV_MAX they are dropped and
 * CL_OVERFLOW set. */
void cl_acct_load(const struct parse_state *ps, struct cl_acct *ret);
void cl_acct_store(struct parse_state *ps, struct cl_acct *a);

/* A response line (row as emitted): its usage counts once per response,
 * growing when a later line of it says more. copy: a fork copy; agent: it
 * called the Agent/Task tool. */
void cl_acct_call(struct cl_acct *a, const struct row_key *key, const struct usage_row *row,
                  bool copy, bool agent);

/* A main-chain compact_boundary line. */
void cl_acct_boundary(struct cl_acct *a, const struct jscan_span *uuid, int64_t time_ms);

/* A cost-state: true and *ret when the difference for current_model is one
 * exact compaction (a boundary in this run, no sub-agent, no unknown
 * baseline, no field below what the lines account for). Differences it
 * cannot attribute are added to a->unmetered. The run ends here. */
bool cl_acct_cost_state(struct cl_acct *a, const struct cl_cost_state *cs, const char *current_model,
                        struct cl_compaction *ret);

/* For status: runs and tokens seen only in cost totals (0 when none). */
void cl_acct_unmetered(const struct parse_state *ps, uint64_t *ret_runs, uint64_t *ret_tokens);
