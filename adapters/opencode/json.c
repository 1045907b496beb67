/* The JSON-file era of OpenCode (up to 1.1): storage/message/<session>/
 * <message>.json, one pretty-printed message per file, created with every
 * token 0 when its step starts and rewritten in place (truncate and write,
 * same inode) when it finishes. Each file is a document source: every
 * version read whole, the one row it holds emitted again with the same key
 * (the same as the row an upgrade migrates into the database), so a
 * rewrite is an upsert and not a second call. A version that is not a
 * whole JSON object may be a read between the truncate and the write: it
 * is incomplete (the daemon looks again, and counts it malformed only if
 * it stays so after its writer is done). In this era tokens.output already
 * includes tokens.reasoning. */
#include <errno.h>
#include <string.h>

#include "opencode/opencode.h"

int ocode_parse_document(const struct ocode_flavor *fl, const struct source_ctx *ctx, struct parse_state *ps,
                         const char *doc, size_t len, size_t *io_known, struct row_batch *out)
{
        char session[ROW_SESSION_MAX] = "";
        struct ocode_msg m;
        int64_t fallback_ms = 0;
        int r;

        (void)ps;
        *io_known = 0; /* one message: nothing worth skipping next time */
        if (ocode_msg_parse(doc, len, &m) < 0)
                return PARSE_INCOMPLETE;
        if (!m.session.p && ctx && ctx->path) {
                /* storage/message/<session>/<message>.json */
                const char *end = strrchr(ctx->path, '/'), *start = end;
                while (start && start > ctx->path && start[-1] != '/')
                        start--;
                if (start && end > start)
                        row_set_str(session, sizeof(session), start, (size_t)(end - start));
        }
        if (ctx)
                fallback_ms = (int64_t)ctx->st.st_mtim.tv_sec * 1000 + ctx->st.st_mtim.tv_nsec / 1000000;
        r = ocode_msg_row(fl, &m, OCODE_ERA_JSON, m.session.p ? NULL : session, fallback_ms,
                          ctx ? ctx->source_hash : 0, out);
        return r < 0 ? r : PARSE_OK;
}
