/* What happens when a budget level is crossed: one structured journald
 * warning, one desktop notification over the session bus (asynchronous,
 * never blocking the loop), and the user's command through posix_spawn. */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

#include "budget-conf.h"

struct budget_alert;

struct budget_crossing {
        const struct budget_rule *rule;
        const char *period_key; /* "2026-12-01", "2026-W49", "2026-12" */
        unsigned level;         /* percent crossed */
        int64_t amount;         /* nano-USD or tokens spent in the period */
};

/* e may be NULL: then only the log line. */
int budget_alert_new(sd_event *e, struct budget_alert **ret);
struct budget_alert *budget_alert_free(struct budget_alert *a);

/* Logs, notifies, runs command ("" = none). Never blocks, never fails the
 * caller: trouble is logged. */
void budget_alert_fire(struct budget_alert *a, const struct budget_crossing *c,
                       const char *command);

/* "$12.345678" / "2,000,000 tokens" into buf. */
const char *budget_amount_text(enum budget_unit u, int64_t v, char *buf, size_t cap);
