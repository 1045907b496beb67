/* Commit units (commit-unit.h): a row is stored as its fields up to its
 * tool calls, then its n_calls calls, nothing of the unused slots. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/commit-unit.h"

#define ROW_HEAD offsetof(struct usage_row, calls)

static size_t compact_size(const struct usage_row *r)
{
        uint32_t n = r->n_calls < ROW_CALLS_MAX ? r->n_calls : ROW_CALLS_MAX;
        return ROW_HEAD + n * sizeof(struct tool_call);
}

int commit_unit_new(const struct checkpoint *cp, struct row_batch *b, struct commit_unit **ret)
{
        struct commit_unit *u = calloc(1, sizeof(*u));
        size_t len = 0;

        if (!u)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++)
                len += compact_size(&b->rows[i]);
        if (len && !(u->rows = malloc(len))) {
                free(u);
                return -ENOMEM;
        }
        for (size_t i = 0, off = 0; i < b->n; i++) {
                size_t n = compact_size(&b->rows[i]);
                memcpy(u->rows + off, &b->rows[i], n);
                off += n;
        }
        u->rows_len = len;
        u->n_rows = b->n;
        u->cp = *cp;
        u->limits = b->limits;
        b->limits = NULL;
        *ret = u;
        return 0;
}

int commit_unit_rows(struct commit_unit *u, struct row_batch *b)
{
        size_t off = 0;

        row_batch_clear(b);
        for (size_t i = 0; i < u->n_rows; i++) {
                struct usage_row *r;
                if (u->rows_len - off < ROW_HEAD)
                        return -EBADMSG;
                int e = row_batch_push_raw(b, &r); /* written whole below */
                if (e < 0)
                        return e;
                memcpy(r, u->rows + off, ROW_HEAD);
                size_t n = compact_size(r);
                if (u->rows_len - off < n)
                        return -EBADMSG;
                memcpy(r->calls, u->rows + off + ROW_HEAD, n - ROW_HEAD);
                off += n;
        }
        b->limits = u->limits;
        u->limits = NULL;
        return 0;
}

struct commit_unit *commit_unit_free(struct commit_unit *u)
{
        if (u) {
                free(u->rows);
                free(u->limits);
                free(u);
        }
        return NULL;
}
