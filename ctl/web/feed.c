/* The live page's data (feed.h): the tail stream, report requests to the
 * daemon (or the team server), the ledger's history after each connect. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "jfield.h"
#include "paths.h"
#include "report/query.h"
#include "tailconn.h"
#include "team/team.h"
#include "timefmt.h"
#include "web/feed.h"
#include "web/hub.h"
#include "web/view.h"

#define COALESCE_MS 150   /* rows landing together: one refresh */
#define RECONNECT_MS 1000 /* the daemon gone: try again this often */
#define TICK_MS 30000     /* the block's countdown, a new day */
#define TEAM_POLL_MS 3000 /* the team ledger has no stream: ask again */

static void put(struct json_object **slot, struct json_object *o)
{
        json_object_put(*slot);
        *slot = o;
}

struct json_object *web_report_request(const char *kind, const char *since, const char *breakdown,
                                       const char *tz)
{
        struct json_object *req = json_object_new_object();

        if (!req)
                return NULL;
        json_object_object_add(req, "report", json_object_new_string(kind));
        json_object_object_add(req, "since", json_object_new_string(since));
        if (breakdown)
                json_object_object_add(req, "breakdown", json_object_new_string(breakdown));
        if (tz && *tz)
                json_object_object_add(req, "tz", json_object_new_string(tz));
        if (strcmp(kind, "session") == 0)
                json_object_object_add(req, "limit", json_object_new_int(WEB_TOP_READ));
        return req;
}

static int ask(struct web_feed *f, const char *kind, const char *since, const char *breakdown,
               const char *by, struct json_object **ret)
{
        _cleanup_json_ struct json_object *req = web_report_request(kind, since, breakdown, f->o->tz);
        char *detail = NULL;
        int r;

        if (!req)
                return -ENOMEM;
        if (f->o->team) {
                struct report_query q;
                const char *err = NULL;
                r = report_query_from_json(req, &q, &err);
                if (r < 0) {
                        snprintf(f->d.problem, sizeof(f->d.problem), "report: %s", err ? err : "bad query");
                        return r;
                }
                q.team = true;
                if (by)
                        (void)report_by_parse(by, &q.by);
                r = team_report(f->o->team_url, &q, ret, f->d.problem, sizeof(f->d.problem));
                return r;
        }
        r = client_call(f->o->socket_path, "report", req, 30000, ret, &detail);
        if (r < 0)
                snprintf(f->d.problem, sizeof(f->d.problem), "%s",
                         detail           ? detail
                         : client_no_daemon(r) ? "no agentmeterd is answering; waiting for it"
                                               : strerror(-r));
        free(detail);
        return r;
}

/* Every report the page shows, asked again. */
static int refresh(struct web_feed *f)
{
        static const char *const top_kinds[WEB_TOPS] = { "session", "project", "model" };
        char days[TOP_PERIODS][11];
        struct json_object *o;
        int r = 0;

        top_period_starts(timefmt_now_ms(), days);
        f->d.problem[0] = 0;
        for (int p = 0; p < TOP_PERIODS && r >= 0; p++)
                if ((r = ask(f, "model", days[p], NULL, NULL, &o)) >= 0)
                        put(&f->d.period[p], o);
        if (r >= 0 && (r = ask(f, "daily", days[TOP_MONTH], "model", NULL, &o)) >= 0)
                put(&f->d.daily, o);
        for (int k = 0; k < WEB_TOPS && r >= 0; k++)
                if ((r = ask(f, top_kinds[k], days[TOP_MONTH], NULL, NULL, &o)) >= 0)
                        put(&f->d.tops[k], o);
        for (int k = 0; f->o->team && k < 2 && r >= 0; k++)
                if ((r = ask(f, "model", days[TOP_MONTH], NULL, k ? "user" : "machine", &o)) >= 0)
                        put(&f->d.parties[k], o);
        return r;
}

static void publish(struct web_feed *f)
{
        char *state = web_view_state(&f->d);
        if (state)
                web_hub_publish(f->hub, state);
}

/* A row from the stream (or the history): the last calls keep one row per
 * key, the newest version of it, newest last. */
static void add_recent(struct web_data *d, struct json_object *row)
{
        const char *key = jstr(row, "key");

        for (size_t i = 0; key && i < d->n_recent; i++) {
                const char *k = jstr(d->recent[i], "key");
                if (k && strcmp(k, key) == 0) {
                        json_object_put(d->recent[i]);
                        memmove(d->recent + i, d->recent + i + 1, (d->n_recent - i - 1) * sizeof(d->recent[0]));
                        d->n_recent--;
                        break;
                }
        }
        if (d->n_recent == WEB_RECENT) {
                json_object_put(d->recent[0]);
                memmove(d->recent, d->recent + 1, (WEB_RECENT - 1) * sizeof(d->recent[0]));
                d->n_recent--;
        }
        d->recent[d->n_recent++] = json_object_get(row);
}

static void clear_recent(struct web_data *d)
{
        for (size_t i = 0; i < d->n_recent; i++)
                json_object_put(d->recent[i]);
        d->n_recent = 0;
}

/* After each (re)connect: the block and the last calls from the ledger,
 * read-only, replacing what was there (rows the stream brings after the
 * subscription replace their own copies by key). */
static void load_history(struct web_feed *f)
{
        char dir[4096];

        top_model_free(&f->d.m);
        f->d.m = (struct top_model){ .socket = f->o->socket_path, .tz = f->o->tz };
        clear_recent(&f->d);
        if (f->o->state_dir)
                snprintf(dir, sizeof(dir), "%s", f->o->state_dir);
        else if (paths_state_dir(dir, sizeof(dir)) < 0)
                return;
        if (top_model_load_history(&f->d.m, dir) < 0)
                return;
        for (size_t i = 0; i < f->d.m.n_recent; i++)
                add_recent(&f->d, f->d.m.recent[i]);
}

static int on_event(struct json_object *ev, void *u)
{
        struct web_feed *f = u;
        const char *kind = jstr(ev, "event");
        struct json_object *row = jfield(ev, "row");

        if (!kind || strcmp(kind, "row") != 0 || !row)
                return 0;
        top_model_add_row(&f->d.m, row);
        add_recent(&f->d, row);
        f->d.rows_seen++;
        if (!f->refresh_due)
                f->refresh_due = timefmt_mono_ms() + COALESCE_MS;
        return 0;
}

static void connect_stream(struct web_feed *f)
{
        int64_t now = timefmt_mono_ms();

        if (tailconn_open(f->o->socket_path, 5000, &f->tc) < 0) {
                f->tc = NULL;
                f->reconnect_at = now + RECONNECT_MS;
                if (f->d.live || !f->d.problem[0]) {
                        f->d.live = false;
                        snprintf(f->d.problem, sizeof(f->d.problem),
                                 "no agentmeterd is answering; waiting for it");
                        publish(f);
                }
                return;
        }
        /* subscribed first, then read: a row committed in between is in
         * both, and its key keeps it once */
        f->d.live = true;
        load_history(f);
        f->refresh_due = now;
}

int web_feed_start(struct web_feed *f, const struct web_feed_options *o, struct web_hub *hub)
{
        memset(f, 0, sizeof(*f));
        f->o = o;
        f->hub = hub;
        f->d.team = o->team;
        f->d.m = (struct top_model){ .socket = o->socket_path, .tz = o->tz };
        f->tick_at = timefmt_mono_ms() + (o->team ? TEAM_POLL_MS : TICK_MS);
        if (o->team) {
                f->d.live = true;
                f->refresh_due = timefmt_mono_ms();
        } else {
                connect_stream(f);
        }
        web_feed_run(f, false);
        return 0;
}

int web_feed_fd(const struct web_feed *f)
{
        return f->tc ? tailconn_fd(f->tc) : -1;
}

int64_t web_feed_next(const struct web_feed *f)
{
        int64_t next = f->tick_at;

        if (f->refresh_due && f->refresh_due < next)
                next = f->refresh_due;
        if (!f->o->team && !f->tc && f->reconnect_at < next)
                next = f->reconnect_at;
        return next;
}

void web_feed_run(struct web_feed *f, bool readable)
{
        int64_t now;

        if (readable && f->tc && tailconn_read(f->tc, on_event, f) < 0) {
                f->tc = tailconn_free(f->tc);
                f->d.live = false;
                snprintf(f->d.problem, sizeof(f->d.problem), "agentmeterd went away; reconnecting");
                f->reconnect_at = timefmt_mono_ms() + RECONNECT_MS / 4;
                publish(f);
        }
        now = timefmt_mono_ms();
        if (!f->o->team && !f->tc && now >= f->reconnect_at)
                connect_stream(f);
        if (now >= f->tick_at) {
                f->tick_at = now + (f->o->team ? TEAM_POLL_MS : TICK_MS);
                if (f->o->team || f->tc)
                        f->refresh_due = now;
        }
        if (f->refresh_due && now >= f->refresh_due) {
                f->refresh_due = 0;
                (void)refresh(f); /* a failure is shown as the problem */
                publish(f);
        }
}

void web_feed_free(struct web_feed *f)
{
        f->tc = tailconn_free(f->tc);
        for (int p = 0; p < TOP_PERIODS; p++)
                put(&f->d.period[p], NULL);
        put(&f->d.daily, NULL);
        for (int k = 0; k < WEB_TOPS; k++)
                put(&f->d.tops[k], NULL);
        put(&f->d.parties[0], NULL);
        put(&f->d.parties[1], NULL);
        clear_recent(&f->d);
        top_model_free(&f->d.m);
}
