/* The origin of a session in reports: the label of the ROOT_F_ORIGIN roots
 * (the editor a VS Code extension's task was written in: "Code",
 * "vscode-server", ...) whose sources hold it. Nothing new is stored: the
 * ledger's checkpoints under those roots carry each source's session in
 * their parse state, and the root list (the daemon's, or the client's own
 * discovery when it reads the ledger itself) names the editor. */
#pragma once

#include "adapter.h"
#include "ledger/ledger.h"
#include "report/build.h"

/* Fills res->rows[].origin of a session report from the checkpoints under
 * the origin roots of roots: each label once, joined by ", " in root
 * order (as many as REPORT_ORIGIN_MAX holds). Other kinds: nothing. 0,
 * -ENOMEM or a ledger error. */
int origins_annotate(struct ledger *l, const struct root_list *roots, struct report_result *res);

/* The same as a report_query.annotate callback (u: struct origins_ctx). */
struct origins_ctx {
        struct ledger *ledger;
        const struct root_list *roots;
};
int origins_annotate_cb(void *u, struct report_result *res);
