/* OpenCode (npm opencode-ai, sst/opencode): where its data directory and
 * database are ($OPENCODE_DB, $XDG_DATA_HOME), and the shared OpenCode
 * readers (opencode.h) under the harness id "opencode". */
#include "opencode/opencode.h"

extern const struct adapter adapter_opencode; /* defined at the end of this file */

static int opencode_discover(const struct discover_env *env, struct root_list *out)
{
        return ocode_add_roots(&adapter_opencode, &ocode_flavor_opencode, discover_env_get(env, "HOME"),
                               discover_env_get(env, "XDG_DATA_HOME"), "OPENCODE_DB",
                               discover_env_get(env, "OPENCODE_DB"), out);
}

static int opencode_collect(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                            size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        return ocode_collect_db(&ocode_flavor_opencode, ctx, ps, io_watermark, max_rows, out, io_malformed);
}

static int opencode_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                             size_t *io_known, struct row_batch *out)
{
        return ocode_parse_document(&ocode_flavor_opencode, ctx, ps, doc, len, io_known, out);
}

static const char *const opencode_env[] = {
        "OPENCODE_DB",
        "XDG_DATA_HOME",
        NULL,
};

const struct adapter adapter_opencode = {
        .id = "opencode",
        .display_name = "OpenCode",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = opencode_env,
        .discover = opencode_discover,
        .classify = ocode_classify,
        .source_of = ocode_source_of,
        .parse_document = opencode_document,
        .collect_rows = opencode_collect,
        .status_extra = ocode_status,
};
