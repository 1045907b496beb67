/* The data behind the live page and how it stays current: the daemon's
 * tail stream (rows as they are committed), the period sums and the month's
 * reports asked again shortly after rows arrive, the five-hour block and
 * the last calls (the ledger's history once per connection, then live rows,
 * keyed so a row is never shown twice). After the daemon goes away it
 * reconnects, reads the history again and replaces what the page shows, so
 * nothing is lost or doubled. With --team, the team ledger polled instead. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "top/model.h"

struct json_object;
struct tailconn;
struct web_hub;

#define WEB_RECENT 20
enum { WEB_TOP_SESSION = 0, WEB_TOP_PROJECT, WEB_TOP_MODEL, WEB_TOPS };
/* The rows of a top report the page reads; of the month's sessions it asks
 * for the newest this many (report session's limit: a heavy user's month
 * has thousands), and shows the costliest of them. */
#define WEB_TOP_READ 512

struct web_feed_options {
        const char *socket_path;
        const char *state_dir; /* NULL: the default */
        const char *tz;        /* NULL: the local zone */
        bool team;
        const char *team_url;  /* NULL: team.conf's */
};

/* What the page shows (web/view.c renders it). */
struct web_data {
        bool team;
        bool live;                                 /* following the daemon's stream */
        char problem[512];                         /* "" when fine */
        struct json_object *period[TOP_PERIODS];   /* reports since today / week / month start */
        struct json_object *daily;                 /* this month per day, by model */
        struct json_object *tops[WEB_TOPS];        /* this month's sessions, projects, models */
        struct json_object *parties[2];            /* team: this month by machine, by user */
        struct top_model m;                        /* the five-hour block (m.blocks) */
        struct json_object *recent[WEB_RECENT];    /* newest last, unique keys */
        size_t n_recent;
        uint64_t rows_seen;
};

struct web_feed {
        const struct web_feed_options *o;
        struct web_hub *hub;
        struct web_data d;
        struct tailconn *tc;
        int64_t refresh_due, reconnect_at, tick_at; /* monotonic ms; 0 = none */
};

/* Connects (a daemon not answering yet is no error: it retries) and
 * publishes the first state. -errno only for what cannot work. */
/* The request of a report the page shows (the protocol's "report"
 * command): kind since since (YYYY-MM-DD), breakdown and tz when not NULL
 * or empty; a session report bounded to the newest WEB_TOP_READ. NULL: no
 * memory. */
struct json_object *web_report_request(const char *kind, const char *since, const char *breakdown,
                                       const char *tz);

int web_feed_start(struct web_feed *f, const struct web_feed_options *o, struct web_hub *hub);
/* The stream's fd (-1 when none) and when web_feed_run wants to run next. */
int web_feed_fd(const struct web_feed *f);
int64_t web_feed_next(const struct web_feed *f);
/* Reads what the stream has (readable) and does what is due. */
void web_feed_run(struct web_feed *f, bool readable);
void web_feed_free(struct web_feed *f);
