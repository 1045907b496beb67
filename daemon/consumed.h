/* What a line source's checkpoint knows of the bytes already consumed: a
 * hash chain over them in fixed blocks plus a hash of the part after the
 * last whole block, kept up to date at each commit for the cost of the new
 * bytes. It tells a file rewritten in place (same length, same first line,
 * same bytes before the offset: `cat new > F`, `dd conv=notrunc`, a
 * recreated file with a reused inode) from one that was only appended to. */
#pragma once

#include <stdbool.h>

#include "ledger.h"

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
