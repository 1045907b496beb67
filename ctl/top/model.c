/* The data behind `top`: period sums grouped by harness, model or project
 * from the daemon's report command, recent calls, the five-hour block (the
 * ledger's last two days read once, then live rows), sources with errors. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "jfield.h"
#include "ledger/ledger.h"
#include "report/report.h"
#include "timefmt.h"
#include "top/model.h"

#define HISTORY_MS (48 * 3600 * 1000LL)

const char *top_group_name(enum top_group g)
{
        static const char *const n[] = { "harness", "model", "project" };
        return g < TOP_GROUPS ? n[g] : "?";
}

const char *top_period_name(enum top_period p)
{
        static const char *const n[] = { "today", "this week", "this month" };
        return p < TOP_PERIODS ? n[p] : "?";
}

void top_period_starts(int64_t now_ms, char days[TOP_PERIODS][11])
{
        time_t t = (time_t)(now_ms / 1000);
        struct tm tm, w;

        localtime_r(&t, &tm);
        strftime(days[TOP_TODAY], 11, "%Y-%m-%d", &tm);
        w = tm;
        w.tm_mday -= (tm.tm_wday + 6) % 7; /* Monday */
        w.tm_hour = 12;                    /* away from DST edges */
        w.tm_isdst = -1;
        mktime(&w);
        strftime(days[TOP_WEEK], 11, "%Y-%m-%d", &w);
        strftime(days[TOP_MONTH], 11, "%Y-%m-01", &tm);
}

static void sums_of(json_object *o, struct top_sums *s)
{
        double c;
        int64_t v;

        if (jdouble(o, "cost_usd", &c)) {
                s->cost_usd += c;
                s->priced = true;
        }
        if (jint(o, "total_tokens", &v) && v > 0)
                s->tokens += (uint64_t)v;
        if (jint(o, "events", &v) && v > 0)
                s->events += (uint64_t)v;
        if (jint_or(o, "unpriced_events", 0) > 0)
                s->unpriced = true;
}

static void line_key(const struct top_model *m, json_object *row, char *key)
{
        const char *h = jstr(row, "harness"), *p = jstr(row, "provider"), *mo = jstr(row, "model");
        switch (m->group) {
        case TOP_BY_MODEL:
                snprintf(key, TOP_KEY_MAX, "%s %s%s%s", h ? h : "?", p && *p ? p : "",
                         p && *p ? "/" : "", mo && *mo ? mo : "(unknown model)");
                break;
        case TOP_BY_PROJECT:
                snprintf(key, TOP_KEY_MAX, "%s", jstr(row, "project") && *jstr(row, "project")
                                                         ? jstr(row, "project")
                                                         : "(no project)");
                break;
        default:
                snprintf(key, TOP_KEY_MAX, "%s", h ? h : "?");
        }
}

static struct top_line *line_for(struct top_model *m, const char *key)
{
        for (size_t i = 0; i < m->n_lines; i++)
                if (strcmp(m->lines[i].key, key) == 0)
                        return &m->lines[i];
        if (m->n_lines == TOP_LINES_MAX)
                return NULL;
        struct top_line *l = &m->lines[m->n_lines++];
        memset(l, 0, sizeof(*l));
        snprintf(l->key, sizeof(l->key), "%s", key);
        return l;
}

static int by_month_cost(const void *a, const void *b)
{
        const struct top_line *x = a, *y = b;
        double cx = x->p[TOP_MONTH].cost_usd, cy = y->p[TOP_MONTH].cost_usd;
        if (cx != cy)
                return cx < cy ? 1 : -1;
        if (x->p[TOP_MONTH].tokens != y->p[TOP_MONTH].tokens)
                return x->p[TOP_MONTH].tokens < y->p[TOP_MONTH].tokens ? 1 : -1;
        return strcmp(x->key, y->key);
}

static int ask(struct top_model *m, const char *kind, const char *since, json_object **ret)
{
        json_object *req = json_object_new_object();
        char *detail = NULL;
        int r;

        json_object_object_add(req, "report", json_object_new_string(kind));
        json_object_object_add(req, "since", json_object_new_string(since));
        if (m->tz && *m->tz)
                json_object_object_add(req, "tz", json_object_new_string(m->tz));
        r = client_call(m->socket, "report", req, 30000, ret, &detail);
        json_object_put(req);
        if (r < 0)
                snprintf(m->problem, sizeof(m->problem), "report: %s",
                         detail ? detail : client_no_daemon(r) ? "no agentmeterd answering"
                                                               : strerror(-r));
        free(detail);
        return r;
}

static void refresh_sources(struct top_model *m)
{
        json_object *res = NULL, *errs = json_object_new_array();
        if (client_call(m->socket, "sources", NULL, 30000, &res, NULL) == 0) {
                json_object *src = jfield(res, "sources");
                for (size_t i = 0; src && i < json_object_array_length(src); i++) {
                        json_object *s = json_object_array_get_idx(src, i);
                        if (jstr(s, "error"))
                                json_object_array_add(errs, json_object_get(s));
                }
        }
        json_object_put(res);
        json_object_put(m->errors);
        m->errors = errs;
}

int top_model_refresh(struct top_model *m)
{
        char days[TOP_PERIODS][11];
        /* by project: every session of each period, no limit, because a
         * project's line is the sum of its sessions and the total the sum of
         * all lines (a limit would drop the older sessions' cost from both) */
        const char *kind = m->group == TOP_BY_PROJECT ? "session" : "model";

        top_period_starts(timefmt_now_ms(), days);
        m->problem[0] = 0;
        m->n_lines = 0;
        memset(m->total, 0, sizeof(m->total));
        for (int p = 0; p < TOP_PERIODS; p++) {
                json_object *rep = NULL, *rows;
                int r = ask(m, kind, days[p], &rep);
                if (r < 0)
                        return r;
                rows = jfield(rep, "rows");
                for (size_t i = 0; rows && i < json_object_array_length(rows); i++) {
                        json_object *row = json_object_array_get_idx(rows, i);
                        char key[TOP_KEY_MAX];
                        line_key(m, row, key);
                        struct top_line *l = line_for(m, key);
                        if (l)
                                sums_of(row, &l->p[p]);
                        if (m->group == TOP_BY_PROJECT)
                                sums_of(row, &m->total[p]);
                }
                if (m->group != TOP_BY_PROJECT)
                        sums_of(jfield(rep, "totals"), &m->total[p]);
                json_object_put(rep);
        }
        qsort(m->lines, m->n_lines, sizeof(m->lines[0]), by_month_cost);
        refresh_sources(m);
        return 0;
}

static void put_call(struct top_model *m, const char *key, int64_t t, bool priced, int64_t cost,
                     uint64_t tokens)
{
        struct block_call c = { .time_ms = t, .priced = priced, .cost_nano = cost, .tokens = tokens };
        snprintf(c.key, sizeof(c.key), "%s", key ? key : "");
        (void)block_set_put(&m->blocks, &c);
}

/* The newest TOP_RECENT_MAX rows of the history, for the last calls. */
struct history {
        struct top_model *m;
        int64_t since_ms;
        json_object *rows[TOP_RECENT_MAX];
        int64_t times[TOP_RECENT_MAX];
        size_t n;
};

static void keep_recent(struct history *h, const struct usage_row *r)
{
        size_t at = h->n;
        if (h->n == TOP_RECENT_MAX) {
                if (r->time_ms <= h->times[0])
                        return;
                json_object_put(h->rows[0]);
                memmove(h->rows, h->rows + 1, (h->n - 1) * sizeof(h->rows[0]));
                memmove(h->times, h->times + 1, (h->n - 1) * sizeof(h->times[0]));
                at = --h->n;
        }
        while (at > 0 && h->times[at - 1] > r->time_ms)
                at--;
        memmove(h->rows + at + 1, h->rows + at, (h->n - at) * sizeof(h->rows[0]));
        memmove(h->times + at + 1, h->times + at, (h->n - at) * sizeof(h->times[0]));
        h->rows[at] = report_row_json(r);
        h->times[at] = r->time_ms;
        h->n++;
}

static int history_cb(const struct usage_row *r, void *u)
{
        struct history *h = u;
        char hex[2 * ROW_KEY_SIZE + 1];

        if (r->time_ms < h->since_ms)
                return 0;
        row_key_hex(&r->key, hex);
        put_call(h->m, hex, r->time_ms, r->cost_source != COST_NONE, r->cost_nano,
                 r->flags & ROW_F_TOKENS_KNOWN ? r->total : 0);
        keep_recent(h, r);
        return 0;
}

int top_model_load_history(struct top_model *m, const char *state_dir)
{
        struct ledger *l = NULL;
        struct history *h = calloc(1, sizeof(*h));
        int r = h ? ledger_open(state_dir, LEDGER_RDONLY, &l) : -ENOMEM;

        if (r >= 0) {
                h->m = m;
                h->since_ms = timefmt_now_ms() - HISTORY_MS;
                r = ledger_foreach_row(l, history_cb, h);
                ledger_close(l);
        }
        if (r >= 0)
                m->blocks_from_ledger = true;
        /* history first, then whatever the stream already delivered */
        for (size_t i = h ? h->n : 0; i-- > 0;) {
                if (r >= 0 && m->n_recent < TOP_RECENT_MAX && h->rows[i]) {
                        memmove(m->recent + 1, m->recent, m->n_recent * sizeof(m->recent[0]));
                        m->recent[0] = h->rows[i];
                        m->n_recent++;
                } else {
                        json_object_put(h->rows[i]);
                }
        }
        free(h);
        return r;
}

void top_model_add_row(struct top_model *m, json_object *row)
{
        const char *t = jstr(row, "time");
        int64_t ms, tokens = 0;
        double cost = 0;
        bool priced = jdouble(row, "cost_usd", &cost);

        m->rows_seen++;
        if (m->n_recent == TOP_RECENT_MAX) {
                json_object_put(m->recent[0]);
                memmove(m->recent, m->recent + 1, (TOP_RECENT_MAX - 1) * sizeof(m->recent[0]));
                m->n_recent--;
        }
        m->recent[m->n_recent++] = json_object_get(row);
        if (!t || timefmt_parse_rfc3339(t, strlen(t), &ms) < 0)
                return;
        jint(row, "total_tokens", &tokens);
        put_call(m, jstr(row, "key"), ms, priced, (int64_t)llround(cost * 1e9),
                 tokens > 0 ? (uint64_t)tokens : 0);
        block_set_forget_before(&m->blocks, timefmt_now_ms() - HISTORY_MS);
}

void top_model_free(struct top_model *m)
{
        for (size_t i = 0; i < m->n_recent; i++)
                json_object_put(m->recent[i]);
        m->n_recent = 0;
        json_object_put(m->errors);
        m->errors = NULL;
        block_set_free(&m->blocks);
}
