/* Roo Code (VS Code extension rooveterinaryinc.roo-cline), a fork of
 * Cline's extension that keeps its tasks the same way:
 * <globalStorage>/rooveterinaryinc.roo-cline/tasks/<taskId>/ui_messages.json
 * in every editor data dir (roots.c, ui-messages.c). */
#include "adapter.h"
#include "vscode-tasks/tasks.h"

extern const struct adapter adapter_roo; /* defined at the end of this file */

static int roo_discover(const struct discover_env *env, struct root_list *out)
{
        return vt_add_editor_roots(env, &adapter_roo, "rooveterinaryinc.roo-cline", out);
}

static const char *const roo_env[] = { NULL };

const struct adapter adapter_roo = {
        .id = "roo",
        .display_name = "Roo Code",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,         /* the row's cost where Roo knows a price */
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_NONE, /* inside tokensOut, not written apart */
        },
        .env = roo_env,
        .unverified = "read as Cline's extension tasks (the same core); no task Roo Code wrote itself yet",
        .discover = roo_discover,
        .classify = vt_classify,
        .parse_document = vt_parse_document,
};
