/* The team ledger in the daemon: team.conf read at start and on SIGHUP,
 * the ledger's outbox turned on or off with it (no team.conf: nothing is
 * written for the team), the walk that queues a ledger's history when a
 * team is first configured, and the push (team-push/push.c) while a usable url
 * is configured. */
#pragma once

#include <systemd/sd-event.h>

#include "ledger/ledger.h"

struct json_object;
struct team;

/* Reads team.conf and turns the outbox on or off; no loop yet (--once
 * stops here). Problems with the file are logged and shown by status;
 * -ENOMEM only. */
int team_new(struct ledger *l, struct team **ret);
/* Starts the history walk and the push on the loop (NULL-safe, as are
 * team_reload and team_free). */
void team_start(struct team *t, sd_event *e);
/* SIGHUP: team.conf again; a changed configuration reconnects, an
 * unchanged one retries a failed connection now. */
void team_reload(struct team *t);
struct team *team_free(struct team *t);

/* The `team` object of `status` (agentmeterctl(1)). */
struct json_object *team_status_json(struct team *t);
