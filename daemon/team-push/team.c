/* The team ledger's life in the daemon (team.h): configuration, the outbox
 * switch, the history walk in bounded slices on the loop, the push. */
#include <errno.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/outbox.h"
#include "log.h"
#include "team-ledger/pq.h"
#include "team-ledger/conf.h"
#include "team-push/push.h"
#include "team-push/team.h"

#define FILL_ITEMS 4096 /* entries queued per slice of the walk (~1 ms of the loop) */

struct team {
        struct ledger *ledger;
        sd_event *event;
        bool present;            /* team.conf exists */
        struct team_conf conf;
        char error[TEAM_ERROR_MAX + 64]; /* why there is no push ("" = none) */
        struct team_push *push;
        const struct pq_api *pq; /* libpq, loaded when a push starts */
        sd_event_source *fill;
        struct outbox_walk walk;
        uint64_t filled;
};

static void fill_kick(void *u);

/* The url as libpq parses it; NULL-terminated arrays of the set options. */
struct parsed {
        const char *kw[64], *val[64];
        PQconninfoOption *opts;
};

static int parse_url(struct team *t, struct parsed *p)
{
        char *err = NULL, why[TEAM_ERROR_MAX];
        bool has_password = false;
        size_t n = 0;

        p->opts = t->pq->conninfoParse(t->conf.url, &err);
        if (!p->opts) {
                snprintf(t->error, sizeof(t->error), "%s: url does not parse: %s", TEAM_CONF_FILE,
                         err ? err : "out of memory");
                t->error[strcspn(t->error, "\n")] = 0;
                t->pq->freemem(err);
                return -EINVAL;
        }
        for (PQconninfoOption *o = p->opts; o->keyword && n < 63; o++) {
                if (!o->val)
                        continue;
                if (strcmp(o->keyword, "password") == 0 && o->val[0])
                        has_password = true;
                p->kw[n] = o->keyword, p->val[n++] = o->val;
        }
        p->kw[n] = p->val[n] = NULL;
        const char *refusal = team_conf_password_refusal(&t->conf, has_password, why, sizeof(why));
        if (refusal) {
                snprintf(t->error, sizeof(t->error), "%s", refusal);
                return -EPERM;
        }
        return 0;
}

/* Reads the file into t (present, conf, error). */
static void load(struct team *t)
{
        char path[PATH_MAX];
        int r = team_conf_path(path, sizeof(path));

        t->present = false;
        t->error[0] = 0;
        memset(&t->conf, 0, sizeof(t->conf));
        if (r == 0)
                r = team_conf_load(path, &t->conf);
        if (r == -ENOENT)
                return;
        t->present = true;
        if (r < 0)
                snprintf(t->error, sizeof(t->error), "cannot read %.400s: %s", path, strerror(-r));
        else if (t->conf.error[0])
                snprintf(t->error, sizeof(t->error), "%s", t->conf.error);
}

static void switch_outbox(struct team *t)
{
        int r = ledger_outbox_set(t->ledger, t->present);
        if (r < 0)
                log_errno(LOG_ERR, r, "cannot turn the team outbox %s", t->present ? "on" : "off");
}

int team_new(struct ledger *l, struct team **ret)
{
        struct team *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->ledger = l;
        load(t);
        switch_outbox(t);
        if (t->present && t->error[0])
                log_warning("team ledger off: %s", t->error);
        *ret = t;
        return 0;
}

static void start_push(struct team *t)
{
        struct parsed p = { 0 };
        int r;

        t->push = team_push_free(t->push);
        if (!t->present || t->error[0] || !t->event)
                return;
        t->pq = pq_api(t->error, sizeof(t->error));
        if (!t->pq) {
                log_warning("team ledger off: %s", t->error);
                return;
        }
        r = parse_url(t, &p);
        if (r == 0)
                r = team_push_new(t->event, t->ledger, &t->conf, p.kw, p.val, fill_kick, t, &t->push);
        t->pq->conninfoFree(p.opts);
        if (r == -ENOMEM)
                snprintf(t->error, sizeof(t->error), "out of memory");
        if (t->error[0])
                log_warning("team ledger off: %s", t->error);
}

/* ---- the history walk ----------------------------------------------------- */

static int on_fill(sd_event_source *s, void *u)
{
        struct team *t = u;
        bool done = false;
        int r = ledger_outbox_fill(t->ledger, &t->walk, FILL_ITEMS, &done);

        if (r < 0) {
                log_errno(LOG_WARNING, r, "team: cannot queue the ledger's history; trying again "
                                          "at the next reload");
                done = true;
        }
        if (!done) {
                t->filled += FILL_ITEMS;
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        if (r == 0)
                log_info("team: the ledger's history is queued for the team server");
        return 0;
}

/* Starts the walk when the outbox says one is due (a first configuration,
 * or the server lost this ledger's history). */
static void fill_kick(void *u)
{
        struct team *t = u;
        struct outbox_state st;

        if (!t->event || ledger_outbox_state(t->ledger, &st) < 0 || !st.on || !st.filling)
                return;
        if (!t->fill) {
                if (sd_event_add_defer(t->event, &t->fill, on_fill, t) < 0) {
                        t->fill = NULL;
                        return;
                }
                sd_event_source_set_priority(t->fill, SD_EVENT_PRIORITY_IDLE);
        }
        t->walk = (struct outbox_walk){ 0 };
        (void)sd_event_source_set_enabled(t->fill, SD_EVENT_ONESHOT);
}

void team_start(struct team *t, sd_event *e)
{
        if (!t)
                return;
        t->event = sd_event_ref(e);
        fill_kick(t);
        start_push(t);
}

static bool same_conf(const struct team_conf *a, const struct team_conf *b)
{
        return strcmp(a->url, b->url) == 0 && strcmp(a->machine, b->machine) == 0 &&
               strcmp(a->user, b->user) == 0 && strcmp(a->machine_key, b->machine_key) == 0 &&
               a->connect_timeout_s == b->connect_timeout_s && a->query_timeout_s == b->query_timeout_s &&
               a->private_file == b->private_file;
}

void team_reload(struct team *t)
{
        if (!t)
                return;
        struct team_conf old = t->conf;
        bool was = t->present, had_push = t->push != NULL;

        load(t);
        switch_outbox(t);
        if (t->present != was)
                log_info("team ledger %s", t->present ? "configured" : "no longer configured: the "
                                                                       "outbox is emptied");
        fill_kick(t);
        if (t->present && !t->error[0] && had_push && same_conf(&old, &t->conf))
                team_push_retry_now(t->push);
        else
                start_push(t);
}

struct team *team_free(struct team *t)
{
        if (!t)
                return NULL;
        t->push = team_push_free(t->push);
        sd_event_source_disable_unref(t->fill);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}

json_object *team_status_json(struct team *t)
{
        if (!t)
                return NULL;
        json_object *o = json_object_new_object();
        struct outbox_state st;
        char id[2 * OUTBOX_ID_SIZE + 1] = "";

        if (!o)
                return NULL;
        json_object_object_add(o, "configured", json_object_new_boolean(t->present));
        if (!t->present)
                return o;
        json_object_object_add(o, "machine", json_object_new_string(t->conf.machine));
        json_object_object_add(o, "user", json_object_new_string(t->conf.user));
        json_object_object_add(o, "machine_key", json_object_new_string(t->conf.machine_key));
        if (ledger_outbox_state(t->ledger, &st) == 0) {
                for (size_t i = 0; i < OUTBOX_ID_SIZE; i++)
                        snprintf(id + 2 * i, 3, "%02x", st.id[i]);
                json_object_object_add(o, "ledger_id", json_object_new_string(id));
                json_object_object_add(o, "backlog", json_object_new_int64((int64_t)st.entries));
                json_object_object_add(o, "filling", json_object_new_boolean(st.filling));
                json_object_object_add(o, "acked_seq", json_object_new_int64((int64_t)st.acked_seq));
        }
        if (t->push) {
                team_push_status(t->push, o);
        } else {
                json_object_object_add(o, "state", json_object_new_string("error"));
                json_object_object_add(o, "last_error", json_object_new_string(t->error[0] ? t->error : "not started"));
        }
        return o;
}
