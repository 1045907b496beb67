/* Host names of the team server's url resolved without blocking the loop:
 * libpq resolves a host name itself, blocking, so the push looks names up
 * here (getaddrinfo_a, its completion written to an eventfd watched by
 * sd-event) and hands libpq the addresses as hostaddr. A lookup given up
 * (a timeout) is kept until it ends, never waited for on the loop. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

struct team_resolve;

/* hosts: libpq's host list ("a,b,/run/pg"; NULL: none). done(u) is called
 * on the loop once every lookup started by team_resolve_start ended. */
int team_resolve_new(sd_event *e, const char *hosts, void (*done)(void *u), void *u,
                     struct team_resolve **ret);
struct team_resolve *team_resolve_free(struct team_resolve *r);

/* Whether some host is a name (not a socket path or an address). */
bool team_resolve_needed(const struct team_resolve *r);
/* Starts the lookups (a started one is cancelled first). */
int team_resolve_start(struct team_resolve *r);
void team_resolve_cancel(struct team_resolve *r);
/* After done: libpq's hostaddr list for the hosts ("" for a path's entry),
 * "" when nothing resolved; -ENOENT with the reason in err when the only
 * host's name did not resolve. */
int team_resolve_hostaddr(struct team_resolve *r, char *buf, size_t cap, char *err, size_t err_cap);
