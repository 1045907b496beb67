/* tail_source: a source of each kind to its reader (tail/lines.c,
 * tail/document.c, tail/table.c), which share tail/reader.c. */
#include <errno.h>

#include "tail/reader.h"

int tail_source(struct tail_ctx *t, const struct source_ctx *src, int kind,
                struct tail_outcome *ret_outcome)
{
        if (t->defer && kind != CLASS_LINES)
                return TAIL_SERIAL; /* a worker reads plain line sources only */
        switch (kind) {
        case CLASS_LINES:
                return tail_lines(t, src, ret_outcome);
        case CLASS_DOCUMENT:
                return tail_document(t, src, ret_outcome);
        case CLASS_TABLE:
                return tail_table(t, src, ret_outcome);
        }
        return -EINVAL;
}
