/* Cline CLI 3.x (the SDK rewrite): what its parts share. The session
 * document parser (cline/doc.c), the manifest beside it (cline/manifest.c)
 * and the adapter's discovery (cline.c). */
#pragma once

#include <stddef.h>

#include "adapter.h"

/* Every key of a Cline row begins with this format tag: (message id, ts). */
#define CLINE_KEY_FORMAT "cline-msg-v1"
/* A message without an id: (ts, model, provider, its four counts, cost). */
#define CLINE_KEY_FORMAT_NOID "cline-msg-noid-v1"

/* The longest manifest read; a bigger one is not read (no project). */
#define CLINE_MANIFEST_MAX (8u << 20)

/* What the session manifest (<session>/<session>.json) says the parser
 * needs: the session's working directory (cwd, else workspace_root) and
 * its current provider and model (for a message without modelInfo). */
struct cline_manifest {
        char cwd[ROW_PROJECT_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
};

/* Reads the manifest at path (at most CLINE_MANIFEST_MAX bytes): 0 and
 * *ret (fields "" when absent); -ENOENT and other -errno when it cannot
 * be read, -EFBIG over the limit, -EBADMSG when it is not a JSON object
 * with a cwd or workspace_root before any damage (a manifest caught
 * half-written keeps what its complete first members say). */
int cline_manifest_read(const char *path, struct cline_manifest *ret);

/* Where a document's session is, from its path under the root:
 * root/<session>/<stem>.messages.json. Fills the session directory's name
 * and the manifest's path; false when the path is not under the root that
 * way (then there is no manifest to read). *ret_side: the stem is not the
 * session's own (a sub-agent or team task of it). */
bool cline_doc_where(const struct source_ctx *ctx, char *session, size_t session_cap, char *manifest,
                     size_t manifest_cap, bool *ret_side);

/* adapter.parse_document for <session>/<stem>.messages.json. */
int cline_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                         size_t *io_known, struct row_batch *out);
