/* Hermes Agent (NousResearch): state.db under $HERMES_HOME (or ~/.hermes)
 * and each profile's; the table reader (hermes/db.c) and its figures. */
#pragma once

#include <stdint.h>

#include "adapter.h"

/* Dedup-key format tag: bump when the key's fields change. */
#define HERMES_KEY_STEP "hermes-step-v1" /* (session id, totals before, totals after, reset) */
/* Spaces of the source state's keys (running-totals.h tot_update). */
#define HERMES_SPACE_SESSION 's'
#define HERMES_SPACE_AUX 'a'
/* An auxiliary call's step: (hash of its session_model_usage key and its
 * task, totals before, after, reset); never a session step's key. */
#define HERMES_KEY_AUX "hermes-aux-v1"

/* adapter.collect_rows for state.db: every read takes all of `sessions`
 * (one row per session: small) and emits, per session whose totals grew,
 * one ROW_KIND_SNAPSHOT_STEP row holding the growth (the first sight of a
 * session: its whole totals, dated by its own times on a first scan, now
 * when seen live; a decrease of a token counter is a reset: the totals
 * count whole again). Compression children are sessions of their own, so
 * every row counts. input = input_tokens (uncached), output includes
 * reasoning; cost = actual_cost_usd where the provider reported one, else
 * estimated_cost_usd, none when 0 (the price table prices it). Model and
 * provider: the session's latest in session_model_usage, else sessions.model
 * (the string 'null' is none).
 * From schema 22 on, session_model_usage keys its rows by task too: ''
 * is the main loop (in sessions already), anything else auxiliary calls
 * (compression summaries, titles, vision) that never reach sessions; each
 * such row's growth is a row of its own (its model, provider, and cost),
 * under the session's id, keyed apart from the sessions' steps. */
int hermes_collect_rows(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                        size_t max_rows, struct row_batch *out, uint64_t *io_malformed);

/* What a state.db's parse state says, for status. */
struct hermes_figures {
        uint64_t steps;     /* rows emitted: growths of a session's totals */
        uint64_t calls;     /* the API calls those steps fold (api_call_count) */
        uint64_t resets;    /* totals that went down, counted whole again */
        uint64_t unmetered; /* reads that found a change of a session whose snapshot is not kept */
        uint64_t tracked;   /* sessions whose last snapshot is kept */
        uint64_t beyond;    /* sessions past TOT_STORED_MAX: metered once whole, then not */
        uint64_t aux_steps; /* rows of auxiliary calls (session_model_usage, task not '') */
        uint64_t aux_calls; /* the calls they fold */
        uint64_t refused;   /* sessions (and auxiliary rows) the last read refused: a counter that is
                             * text, negative or past its bound; their last snapshot stands */
};
/* 0 and *ret; -EINVAL when ps holds no state of this reader. */
int hermes_figures(const struct parse_state *ps, struct hermes_figures *ret);
