/* Factory Droid's per-session snapshot (<id>.settings.json, replaced whole
 * after every call): its cumulative tokenUsage turned into the difference
 * to the last snapshot read, and the custom-model map that prices it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"

/* Dedup-key format tag: bump when the key's fields change. */
#define DROID_KEY_STEP "droid-step-v1" /* (session id, resets, the five highest totals) */

/* ~/.factory/settings.json customModels, in order. */
#define DROID_MODELS_MAX 256
struct droid_model {
        char model[ROW_MODEL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char slug[ROW_MODEL_MAX]; /* displayName, each run of blanks as one '-' ("" without one) */
};
struct droid_config {
        size_t n;
        struct droid_model v[];
};

/* The config entry a custom:<slug>-<n> id names, or NULL (not custom, no
 * such entry, no config). Droid 0.225.2 wrote custom:Fake-Claude-0 for
 * customModels[1] (displayName "Fake Claude"; the -m option it was given
 * said -1): the slug names the entry and <n> counts among the entries of
 * that slug, so the n-th entry whose slug matches (ASCII case ignored) is
 * the one; when no entry has a matching slug, customModels[n] if it has
 * no displayName; else none (unpriced). */
const struct droid_model *droid_custom_model(const struct droid_config *c, const char *id);

/* adapter.parse_document for <id>.settings.json.
 *
 * Reads only model, providerLock and tokenUsage {inputTokens, outputTokens,
 * cacheCreationTokens, cacheReadTokens, thinkingTokens} (never
 * inclusiveTokenUsage, lastCallTokenUsage or the .bak). ps->priv keeps the
 * highest totals read (each of the five) and how many rollbacks were seen.
 * The totals are cumulative and only grow (a fork or a sub-agent is a
 * session of its own), so a snapshot where any of input, output, cache
 * read or cache write is lower than the highest read is an older one
 * written back (the .bak restored, a second Droid with an older state, a
 * sync): a rollback, counted once in status, adding nothing; a later
 * snapshot adds only what rises above the highest totals, so the calls of
 * a rollback and regrowth are counted once (a second writer's own calls
 * below the highest totals are not seen). A snapshot above them makes one
 * row (kind ROW_KIND_SNAPSHOT_STEP, tool "droid") holding the rise; an
 * unchanged or lower one (or one without tokenUsage) none.
 * Tokens: input = inputTokens (cache read excluded), cache_write =
 * cacheCreationTokens, output includes thinking (reasoning, a subset).
 * Session = the file name's <id>; project = the cwd of the sibling
 * <id>.jsonl's session_start (read once); model = customModels[n].model
 * of ctx->config for custom:<name>-<n> (model_alias the id Droid wrote;
 * provider the entry's), else the id as written (provider providerLock);
 * time = the file's mtime (approximate: the step ended then). Key:
 * DROID_KEY_STEP over (session id, the resets a state before rollbacks
 * had seen, the five highest totals), so the same snapshot read again (a crash before the commit, a
 * copy under another path) is the same row, and two sessions with equal
 * totals are two rows. Returns PARSE_OK, PARSE_INCOMPLETE (not one whole
 * JSON object: torn), PARSE_MALFORMED (tokenUsage numbers that are not
 * non-negative integers) or -ENOMEM; *io_known is always 0. */
int droid_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                         size_t *io_known, struct row_batch *out);

/* Rollbacks the parse state has seen (status). -ENOENT when it holds none. */
int droid_rollbacks(const struct parse_state *ps, uint32_t *ret_rollbacks);
