/* Crush (Charm): per project .crush/crush.db, the projects listed in
 * projects.json; the table reader (crush/db.c) and its figures. */
#pragma once

#include <stdint.h>

#include "adapter.h"

/* Dedup-key format tags: bump when a key's fields change. */
#define CRUSH_KEY_COST "crush-cost-v1" /* (session id): a root session's cost, upserted */
#define CRUSH_KEY_CALL "crush-call-v1" /* (session id, prompt, completion, cost as written) */
/* (session id, digest of prompt, completion, cost as written): a refused row,
 * never stored (the ring of the last keys read, so it is malformed once) */
#define CRUSH_KEY_REFUSED "crush-refused-v1"

/* adapter.collect_rows for crush.db. `sessions.cost` accumulates (a parent
 * adds its finished children's) and prompt_tokens/completion_tokens are the
 * last call's, overwritten by every call. So:
 * - each root session (parent_session_id NULL or '') has one cost row,
 *   ROW_F_UPSERT (the ledger keeps the largest cost seen: exactly what
 *   Crush wrote), kind ROW_KIND_SNAPSHOT_STEP, tokens unknown, dated by
 *   the session's creation;
 * - each overwrite seen is one call (ROW_KIND_RESPONSE): a row with its tokens (input = prompt,
 *   output = completion, as Crush counts them) and cost 0 (the cost is in
 *   its root's row), dated when seen; its key is the session with the
 *   values written, so a save that moved nothing else (a title, a message
 *   count) is the same key, and never a second call;
 * - a first scan finds each session's last call only: that row is written
 *   with the same key but tokens unknown (shown as "—", never as the
 *   session's total), its tokens counted apart for status.
 * Only rows whose updated_at reached the last read's (less a margin) are
 * read again. The model is the session's latest assistant message's. */
int crush_collect_rows(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                       size_t max_rows, struct row_batch *out, uint64_t *io_malformed);

struct crush_figures {
        uint64_t calls;           /* overwrites seen live: calls with their tokens */
        uint64_t leftovers;       /* sessions whose last call a first scan found */
        uint64_t leftover_tokens; /* ... and that call's tokens (not the sessions' totals) */
        uint64_t roots;           /* root sessions at the last read */
        uint64_t cost_nano;       /* their cost at the last read */
        uint64_t refused;         /* rows refused so far (a token count or cost that is
                                   * text, negative or past its bound), each once: a
                                   * read sees only the rows changed since the last */
};
/* 0 and *ret; -EINVAL when ps holds no state of this reader. */
int crush_figures(const struct parse_state *ps, struct crush_figures *ret);

/* Why a live call's tokens stay prompt (as input) and completion (as
 * output), for status and the README: Crush writes each as a sum of two
 * classes, by a formula that changed at v0.36.0 (charmbracelet/crush
 * 5ddf9d1, "fix: token calculation"), and no migration came with that
 * release, so crush.db does not tell which formula wrote a row; and
 * either formula leaves a sum no reading can take apart. */
#define CRUSH_TOKEN_CLASSES                                                                              \
        "a call's tokens are Crush's prompt (counted as input) and completion (as output), not split into " \
        "cache classes: up to v0.35 prompt = input + cache write and completion = output + cache read, "   \
        "from v0.36.0 prompt = input + cache read and completion = output; crush.db does not say which "    \
        "release wrote a row (no migration came with v0.36.0), and either way each figure is a sum of two " \
        "classes that cannot be taken apart"
