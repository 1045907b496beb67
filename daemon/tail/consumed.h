/* What a line source's checkpoint knows of the bytes already consumed: a
 * hash chain over them in fixed blocks plus a hash of the part after the
 * last whole block, kept up to date at each commit for the cost of the new
 * bytes. It tells a file rewritten in place (same length, same first line,
 * same bytes before the offset: `cat new > F`, `dd conv=notrunc`, a
 * recreated file with a reused inode) from one that was only appended to. */
#pragma once

#include <stdbool.h>

#include "ledger/ledger.h"

#define CONSUMED_BLOCK (64u * 1024u)

/* Brings cp's consumed fields up to cp->offset, reading from fd what is
 * new since cp->sum_len (the whole blocks) and the last partial block. */
int consumed_extend(int fd, struct checkpoint *cp);

/* Whether the bytes [0, cp->offset) of fd are still those the checkpoint
 * consumed: 1 yes, 0 no (rewritten), negative errno when unreadable. With
 * only_tail, the part after the last whole block alone (constant cost, for
 * every growth); else everything (for suspicious changes and rescans). A
 * checkpoint that has no consumed fields yet (written before they existed)
 * verifies as 1. */
int consumed_verify(int fd, const struct checkpoint *cp, bool only_tail);

/* The same chain fed from the reader's own buffer as it consumes bytes, so a
 * commit does not read them a second time (same hashes as consumed_extend).
 * Whole blocks are hashed where they lie in the caller's buffer; the bytes
 * after the last one stay there too (pending) until the caller lets them
 * go (consumed_acc_hold copies them then): a file read in one buffer is
 * hashed without a copy. */
struct consumed_acc {
        bool valid;
        uint64_t off;      /* bytes [0, off) are folded in, held or pending */
        uint64_t sum_len;  /* whole blocks [0, sum_len) are in sum_hash */
        uint64_t sum_hash;
        uint8_t *part;     /* held: [sum_len, sum_len + part_len), shorter than a block */
        size_t part_len;   /* pending: [sum_len + part_len, off), in the caller's buffer */
};

/* The caller's buffer: the source's bytes [off, off + len) at p. */
struct consumed_window {
        const uint8_t *p;
        uint64_t off;
        size_t len;
};

/* Starts at cp->offset from cp's fields: reads [cp->sum_len, cp->offset)
 * (less than a block) once. Not valid (so consumed_acc_apply falls back to
 * consumed_extend) for a checkpoint without consumed fields past offset 0. */
int consumed_acc_seed(struct consumed_acc *acc, int fd, const struct checkpoint *cp);
/* The bytes up to upto, which w holds from where the held ones end on
 * (else the chain is dropped: the next apply reads the file). */
int consumed_acc_feed(struct consumed_acc *acc, const struct consumed_window *w, uint64_t upto);
/* Copies the pending bytes out of w, before the caller reuses its buffer. */
int consumed_acc_hold(struct consumed_acc *acc, const struct consumed_window *w);
/* consumed_extend(fd, cp) from the fed bytes (held, or pending in w) when
 * they reach cp->offset in the current block, else by reading (then seeded
 * again). */
int consumed_acc_apply(struct consumed_acc *acc, int fd, struct checkpoint *cp,
                       const struct consumed_window *w);
void consumed_acc_free(struct consumed_acc *acc);

