/* What the GitHub Copilot CLI adapter's files share: which sources are the
 * legacy history-session-state files, and its status figures. */
#pragma once

#include <stdbool.h>

#include "adapter.h"

/* A history-session-state/ file (older Copilot CLI layout, not metered). */
bool copilot_is_legacy(const char *path);

/* adapter.status_extra: the premium requests the usage records carried
 * (Copilot's request multiplier, not dollars), the records read, the legacy
 * files found, and what each home's session-store.db mirrors (a
 * cross-check, never a source of rows); "notes" holds the same as
 * sentences for the text status. */
struct json_object *copilot_status(const struct adapter_status_ctx *ctx);
