/* Prices in the daemon: the built-in table with the user's override
 * (${XDG_CONFIG_HOME:-~/.config}/agentmeterd/prices.conf), loaded at start
 * and on reload with problems logged, and repricing the ledger's computed
 * rows when the table in effect changed or on request. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ledger/reprice.h"
#include "pricing/pricing.h"

struct json_object;
struct prices;

#define PRICES_FILE "prices.conf"
#define PRICES_REPRICE_ROWS_PER_TXN 1024 /* x 2 KiB of queued values */

/* Loads the table (a bad override is logged and ignored); -ENOMEM or
 * -EBADMSG (a broken built-in table) only. */
int prices_new(struct prices **ret);
struct prices *prices_free(struct prices *p);
const struct price_table *prices_table(const struct prices *p);

/* Loads again; the old table stays in use when loading fails. Returns 1
 * when the table in effect changed, 0 when not. prices_table() keeps its
 * address (ingest may hold it). */
int prices_reload(struct prices *p);

/* Reprices every row the table priced (and rows it could not, or that a
 * harness priced 0 with tokens) and records the table's fingerprint in the
 * ledger. Logs a summary. */
int prices_reprice(struct prices *p, struct ledger *l, struct reprice_result *ret_result);
/* prices_reprice when the ledger was last priced with another table. */
int prices_reprice_if_changed(struct prices *p, struct ledger *l);

/* The `prices` object of `status`: table date, override, unpriced rows by model. */
struct json_object *prices_status_json(const struct prices *p, struct ledger *l);
/* The `reprice` control command: reload, reprice, answer with the counts. */
int prices_reprice_command(struct prices *p, struct ledger *l, struct json_object **ret_result,
                           const char **ret_code, const char **ret_error);
