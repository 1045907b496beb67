/* Budgets: evaluates the rules of budgets.conf as rows are committed and,
 * when a warning level is crossed, logs one structured warning, sends one
 * desktop notification (session bus) and runs the user's command, once per
 * level and period (remembered in the ledger meta across restarts). */
#pragma once

#include <stdint.h>
#include <stddef.h>

#include <systemd/sd-event.h>

struct budget;
struct ledger;
struct usage_row;
struct json_object;

/* Reads conf_path (a missing file means no budgets; bad lines are logged
 * and skipped) and evaluates every rule once. e may be NULL (--once):
 * then no notifications, and evaluation happens at once, not coalesced. */
int budget_new(sd_event *e, struct ledger *l, const char *conf_path, struct budget **ret);
struct budget *budget_free(struct budget *b);

/* Re-reads the file (SIGHUP) and evaluates every rule. */
int budget_reload(struct budget *b);

/* The ingest commit hook: rules that a committed row counts against are
 * evaluated shortly after (coalesced, so a burst costs one evaluation). */
void budget_on_rows(struct budget *b, const struct usage_row *rows, const uint8_t *outcomes,
                    size_t n);

/* Evaluates the rules marked by budget_on_rows (all with all=1) now. */
int budget_evaluate(struct budget *b, int all);

/* {"config":path,"errors":[..],"rules":[{name,period,period_start,unit,limit,amount,
 *  percent,scope,match,levels,fired}]} for `status`. */
struct json_object *budget_status_json(const struct budget *b);
