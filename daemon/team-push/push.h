/* The team push: one connection to the team's PostgreSQL, driven by the
 * event loop through libpq's asynchronous API (the loop never waits on the
 * network), sending the ledger's outbox in batches (COPY into staging
 * tables, one merge, the cursor, COMMIT) and acknowledging each batch in
 * the ledger only after the server committed it. Unreachable: retries with
 * backoff and jitter, logging once per change of state. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "ledger/ledger.h"
#include "team-ledger/conf.h"

struct json_object;
struct team_push;

/* Starts connecting at once. keywords/values: the url as libpq parsed it
 * (copied). on_refill: called when the server turned out to lack this
 * ledger's history and the outbox's walk was set due again. -ENOMEM. */
int team_push_new(sd_event *e, struct ledger *l, const struct team_conf *conf,
                  const char *const *keywords, const char *const *values,
                  void (*on_refill)(void *u), void *u, struct team_push **ret);
struct team_push *team_push_free(struct team_push *p);

/* A reload: while waiting to retry, try now. */
void team_push_retry_now(struct team_push *p);

/* Adds state, server, connected_since, last_push, sent counters,
 * last_error(_at), next_retry to o. */
void team_push_status(const struct team_push *p, struct json_object *o);
