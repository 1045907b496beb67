/* Kilo Code CLI (npm @kilocode/cli, an OpenCode fork): where its data directory
 * and database are ($KILO_DB, $XDG_DATA_HOME), and the shared OpenCode
 * readers (opencode.h) under the harness id "kilo", with what Kilo does
 * differently: a fork's copies carry cost 0 (the call keeps its own).
 * Also the Kilo Code VS Code extension (kilocode.kilo-code, a fork of
 * Cline's): its tasks/<taskId>/ui_messages.json in every editor dir
 * (vscode-tasks/), rooted at the extension's global storage so that the
 * tasks/ component tells them from the CLI's data directory. */
#include "opencode/opencode.h"
#include "adapt-util.h"
#include "vscode-tasks/tasks.h"

extern const struct adapter adapter_kilo; /* defined at the end of this file */

static int kilo_discover(const struct discover_env *env, struct root_list *out)
{
        int r = ocode_add_roots(&adapter_kilo, &ocode_flavor_kilo, discover_env_get(env, "HOME"),
                                discover_env_get(env, "XDG_DATA_HOME"), "KILO_DB",
                                discover_env_get(env, "KILO_DB"), out);

        return r < 0 ? r : vt_add_extension_roots(env, &adapter_kilo, "kilocode.kilo-code", out);
}

static enum classify_result kilo_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (depth >= 1 && adapt_component_is(relpath, 0, "tasks"))
                return vt_classify_tasks_below(relpath, name, depth, is_dir);
        return ocode_classify(relpath, name, depth, is_dir);
}

static int kilo_collect(const struct source_ctx *ctx, struct parse_state *ps, uint64_t *io_watermark,
                        size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        return ocode_collect_db(&ocode_flavor_kilo, ctx, ps, io_watermark, max_rows, out, io_malformed);
}

static int kilo_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                         size_t *io_known, struct row_batch *out)
{
        if (ctx && ctx->path && vt_is_doc(ctx->path))
                return vt_parse_document(ctx, ps, doc, len, io_known, out);
        return ocode_parse_document(&ocode_flavor_kilo, ctx, ps, doc, len, io_known, out);
}

static const char *const kilo_env[] = {
        "KILO_DB",
        "XDG_DATA_HOME",
        NULL,
};

const struct adapter adapter_kilo = {
        .id = "kilo",
        .display_name = "Kilo",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = kilo_env,
        .discover = kilo_discover,
        .classify = kilo_classify,
        .source_of = ocode_source_of,
        .parse_document = kilo_document,
        .collect_rows = kilo_collect,
        .status_extra = ocode_status,
};
