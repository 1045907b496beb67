/* The team push's batch as PostgreSQL COPY text: one line per usage row
 * (staging table am_rows) or tool call (am_calls), strings escaped and
 * made valid UTF-8 (a byte that is not becomes U+FFFD: the server would
 * refuse the whole batch). Keys as uuids. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ledger/ledger.h"
#include "row.h"

struct team_buf {
        char *p;
        size_t len, cap;
        bool oom; /* an append failed: the buffer is incomplete */
};
void team_buf_reset(struct team_buf *b);
void team_buf_free(struct team_buf *b);

/* The 16 bytes as a uuid's text, 8-4-4-4-12 lower-case hex. */
void team_uuid(const struct row_key *k, char ret[37]);

/* Appends one line; -ENOMEM (b->oom set). */
int team_copy_row(struct team_buf *b, const struct usage_row *r, bool repriced);
int team_copy_call(struct team_buf *b, const struct row_key *call_key, const struct activity_entry *c);
