/* One row of a report (struct report_entry), on its own so that the
 * builder (report/build.h), the grouping index (report/groups.h), the
 * report order (report/order.h) and the cache (report/cache-view.h) can
 * all name it without including each other. */
#pragma once

#include <stdint.h>

#include "ledger/ledger.h"
#include "row.h"

#define REPORT_KEY_MAX (ROW_PROVIDER_MAX + ROW_MODEL_MAX)

/* One row of a report. Which fields are filled depends on the kind:
 * daily/weekly/monthly: key (YYYY-MM-DD / first day of the week / YYYY-MM)
 * and sums; project: key = project (cwd), sums; with a breakdown also
 * harness (and for model provider, model); model: key "provider/model",
 * harness, provider, model, sums; session: key = session, harness, session,
 * project, model (last seen), first/last, sums of the whole session; tool:
 * key = tool name, harness, calls, priced_calls and share_nano (sum over
 * calls of the paying row's cost / its calls). */
#define REPORT_GROUP_MAX (ROW_TOOL_MAX + ROW_PROVIDER_MAX + ROW_MODEL_MAX + 2)
#define REPORT_PARTY_MAX 64
#define REPORT_ORIGIN_MAX 160
struct report_entry {
        char key[ROW_PROJECT_MAX];
        char group[REPORT_GROUP_MAX]; /* second grouping key (harness, model); sort order */
        char party[REPORT_PARTY_MAX]; /* report_query.by: the machine or user; else "" */
        char harness[ROW_TOOL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];
        /* session: where it comes from, when its harness's roots say so
         * (the editor of a VS Code extension's task: "Code", "vscode-server";
         * several joined by ", "); "" when unknown (report_query.annotate) */
        char origin[REPORT_ORIGIN_MAX];
        int64_t first_ms, last_ms;
        struct usage_sums sums;
        uint64_t calls, priced_calls;
        double share_nano;
};
