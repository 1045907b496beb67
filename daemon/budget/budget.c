/* Budget evaluation: each rule's spend in its current period from the
 * ledger (rollups for total/harness/model, rows for project scopes), the
 * levels crossed, and which of them already fired in this period (ledger
 * meta "budget_state", so a restart fires nothing twice). */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget/alert.h"
#include "budget-conf.h"
#include "budget/budget.h"
#include "ledger/ledger.h"
#include "log.h"
#include "timefmt.h"

#define COALESCE_USEC 200000ULL
#define EVAL_SHARE 10 /* wait at least 10x the last evaluation: at most ~10% of the time */
#define STATE_META "budget_state"
#define STATE_MAX (256u * 1024u)
#define PERIOD_KEY_MAX 16

struct rule_state {
        char period_key[PERIOD_KEY_MAX];
        int64_t amount;
        unsigned fired[BUDGET_LEVELS_MAX]; /* levels that fired in period_key */
        size_t n_fired;
        bool dirty;
        bool evaluated;
};

struct budget {
        sd_event *event;
        sd_event_source *timer;
        struct ledger *ledger;
        struct budget_alert *alert;
        char *conf_path;
        struct budget_conf *conf;
        int conf_errno;                 /* of the last load; 0 or -ENOENT are fine */
        uint64_t last_eval_usec;        /* how long the last evaluation took */
        struct rule_state st[BUDGET_MAX];
};

static uint64_t mono_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The identity a fired level is remembered under: a changed limit, unit or
 * scope is a new budget and starts with nothing fired. */
static void rule_identity(const struct budget_rule *b, char *buf, size_t cap)
{
        snprintf(buf, cap, "%s|%s|%s|%lld|%s|%s", b->name, budget_period_name(b->period),
                 budget_unit_name(b->unit), (long long)b->limit, budget_scope_name(b->scope),
                 b->match);
}

/* Loads what fired from the ledger meta into st[] (matching by identity). */
static void state_load(struct budget *bg)
{
        char *buf = malloc(STATE_MAX);
        json_object *o = NULL;

        if (!buf)
                return;
        if (ledger_meta_get(bg->ledger, STATE_META, buf, STATE_MAX) == 0)
                o = json_tokener_parse(buf);
        free(buf);
        for (size_t i = 0; o && i < bg->conf->n_rules; i++) {
                char id[BUDGET_NAME_MAX + ROW_PROJECT_MAX + 64];
                json_object *e, *p, *f;
                struct rule_state *s = &bg->st[i];

                rule_identity(&bg->conf->rules[i], id, sizeof(id));
                if (!json_object_object_get_ex(o, id, &e) ||
                    !json_object_object_get_ex(e, "period", &p) ||
                    !json_object_object_get_ex(e, "fired", &f) ||
                    !json_object_is_type(f, json_type_array))
                        continue;
                snprintf(s->period_key, sizeof(s->period_key), "%s", json_object_get_string(p));
                s->n_fired = 0;
                for (size_t k = 0; k < json_object_array_length(f) && k < BUDGET_LEVELS_MAX; k++)
                        s->fired[s->n_fired++] =
                                (unsigned)json_object_get_int(json_object_array_get_idx(f, k));
        }
        json_object_put(o);
}

static int state_save(struct budget *bg)
{
        json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        for (size_t i = 0; i < bg->conf->n_rules; i++) {
                char id[BUDGET_NAME_MAX + ROW_PROJECT_MAX + 64];
                const struct rule_state *s = &bg->st[i];
                if (!s->period_key[0])
                        continue;
                json_object *e = json_object_new_object(), *f = json_object_new_array();
                for (size_t k = 0; k < s->n_fired; k++)
                        json_object_array_add(f, json_object_new_int((int)s->fired[k]));
                json_object_object_add(e, "period", json_object_new_string(s->period_key));
                json_object_object_add(e, "fired", f);
                rule_identity(&bg->conf->rules[i], id, sizeof(id));
                json_object_object_add(o, id, e);
        }
        r = ledger_meta_set(bg->ledger, STATE_META,
                            json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return r;
}

struct sum_walk {
        const struct budget_rule *rule;
        int64_t from_ms, until_ms;
        struct usage_sums sums;
};

static int rollup_cb(const struct rollup_entry *e, void *u)
{
        struct sum_walk *w = u;
        if (budget_rule_matches(w->rule, e->tool, e->model, NULL))
                usage_sums_add(&w->sums, &e->sums);
        return 0;
}

static int row_cb(const struct usage_row *r, void *u)
{
        struct sum_walk *w = u;
        if (r->time_ms >= w->from_ms && r->time_ms < w->until_ms &&
            budget_rule_matches(w->rule, r->tool, r->model, r->project))
                usage_sums_add_row(&w->sums, r, 1);
        return 0;
}

/* The rule's spend in [from, until): cost or total tokens. */
static int period_amount(struct budget *bg, const struct budget_rule *b, int64_t from,
                         int64_t until, int64_t *ret_amount)
{
        struct sum_walk w = { .rule = b, .from_ms = from, .until_ms = until };
        int r;

        if (b->scope == BUDGET_PROJECT)
                r = ledger_foreach_row(bg->ledger, row_cb, &w); /* rollups have no project */
        else
                r = ledger_foreach_rollup(bg->ledger, from, until, rollup_cb, &w);
        if (r < 0)
                return r;
        *ret_amount = b->unit == BUDGET_USD ? w.sums.cost_nano
                                            : (int64_t)(w.sums.total > INT64_MAX ? INT64_MAX : w.sums.total);
        return 0;
}

static bool has_fired(const struct rule_state *s, unsigned level)
{
        for (size_t k = 0; k < s->n_fired; k++)
                if (s->fired[k] == level)
                        return true;
        return false;
}

static bool crossed(int64_t amount, int64_t limit, unsigned level)
{
        return (__int128)amount * 100 >= (__int128)limit * level;
}

/* Evaluates rule i; returns 1 when the fired state changed. A jump over
 * several levels at once fires only the highest (and marks the others). */
static int evaluate_rule(struct budget *bg, size_t i, int64_t now)
{
        const struct budget_rule *b = &bg->conf->rules[i];
        struct rule_state *s = &bg->st[i];
        char key[PERIOD_KEY_MAX];
        int64_t from, until, amount;
        unsigned top = 0;
        int r;

        budget_period_of(b->period, now, &from, &until, key, sizeof(key));
        r = period_amount(bg, b, from, until, &amount);
        if (r < 0)
                return log_errno(LOG_WARNING, r, "budget %s: cannot read the ledger", b->name);
        s->dirty = false;
        s->evaluated = true;
        s->amount = amount;
        bool changed = false;
        if (strcmp(s->period_key, key) != 0) {
                snprintf(s->period_key, sizeof(s->period_key), "%s", key);
                s->n_fired = 0;
                changed = true;
        }
        for (size_t k = 0; k < b->n_levels; k++)
                if (crossed(amount, b->limit, b->levels[k]) && !has_fired(s, b->levels[k])) {
                        top = b->levels[k];
                        if (s->n_fired < BUDGET_LEVELS_MAX)
                                s->fired[s->n_fired++] = b->levels[k];
                        changed = true;
                }
        if (top) {
                struct budget_crossing c = { .rule = b, .period_key = key, .level = top,
                                             .amount = amount };
                budget_alert_fire(bg->alert, &c, bg->conf->command);
        }
        return changed;
}

int budget_evaluate(struct budget *bg, int all)
{
        int64_t now = timefmt_now_ms();
        uint64_t t0 = mono_usec();
        bool changed = false;

        if (!bg || !bg->conf)
                return 0;
        for (size_t i = 0; i < bg->conf->n_rules; i++)
                if (all || bg->st[i].dirty || !bg->st[i].evaluated)
                        changed |= evaluate_rule(bg, i, now) > 0;
        bg->last_eval_usec = mono_usec() - t0;
        if (changed) {
                int r = state_save(bg);
                if (r < 0)
                        return log_errno(LOG_WARNING, r, "cannot remember the fired budget levels");
        }
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *u)
{
        (void)s;
        (void)usec;
        return budget_evaluate(u, 0), 0;
}

static int load(struct budget *bg)
{
        struct budget_conf *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        r = budget_conf_load(bg->conf_path, c);
        bg->conf_errno = r;
        if (r == -ENOENT) {
                log_debug("no budgets: %s does not exist", bg->conf_path);
        } else if (r < 0) {
                log_errno(LOG_WARNING, r, "cannot read the budgets in %s; no budgets", bg->conf_path);
        } else {
                for (unsigned i = 0; i < c->n_errors && i < BUDGET_ERRORS_MAX; i++)
                        log_warning("%s: %s (line ignored)", bg->conf_path, c->errors[i]);
                if (c->n_errors > BUDGET_ERRORS_MAX)
                        log_warning("%s: %u more bad lines ignored", bg->conf_path,
                                    c->n_errors - BUDGET_ERRORS_MAX);
                log_info("%zu budget%s from %s", c->n_rules, c->n_rules == 1 ? "" : "s",
                         bg->conf_path);
        }
        if (r < 0)
                c->n_rules = 0; /* keep the error for status, no rules */
        free(bg->conf);
        bg->conf = c;
        memset(bg->st, 0, sizeof(bg->st));
        state_load(bg);
        return 0;
}

int budget_new(sd_event *e, struct ledger *l, const char *conf_path, struct budget **ret)
{
        struct budget *bg = calloc(1, sizeof(*bg));
        int r;

        if (!bg)
                return -ENOMEM;
        bg->ledger = l;
        bg->conf_path = strdup(conf_path);
        r = bg->conf_path ? budget_alert_new(e, &bg->alert) : -ENOMEM;
        if (r >= 0 && e) {
                sigset_t m;
                bg->event = sd_event_ref(e);
                /* the command's exit is an sd-event child source: SIGCHLD blocked */
                sigemptyset(&m);
                sigaddset(&m, SIGCHLD);
                sigprocmask(SIG_BLOCK, &m, NULL);
                r = sd_event_add_time_relative(e, &bg->timer, CLOCK_MONOTONIC, COALESCE_USEC,
                                               50000, on_timer, bg);
                if (r >= 0)
                        r = sd_event_source_set_enabled(bg->timer, SD_EVENT_OFF);
        }
        if (r >= 0)
                r = load(bg);
        if (r < 0) {
                budget_free(bg);
                return r;
        }
        budget_evaluate(bg, 1);
        *ret = bg;
        return 0;
}

struct budget *budget_free(struct budget *bg)
{
        if (!bg)
                return NULL;
        sd_event_source_disable_unref(bg->timer);
        budget_alert_free(bg->alert);
        sd_event_unref(bg->event);
        free(bg->conf);
        free(bg->conf_path);
        free(bg);
        return NULL;
}

int budget_reload(struct budget *bg)
{
        int r;
        if (!bg)
                return 0;
        r = load(bg);
        if (r < 0)
                return log_errno(LOG_WARNING, r, "cannot reload the budgets");
        return budget_evaluate(bg, 1);
}

void budget_on_rows(struct budget *bg, const struct usage_row *rows, const uint8_t *outcomes,
                    size_t n)
{
        bool any = false;

        if (!bg || !bg->conf)
                return;
        for (size_t j = 0; j < n; j++) {
                if (outcomes[j] != ROW_ADDED && outcomes[j] != ROW_MERGED)
                        continue;
                for (size_t i = 0; i < bg->conf->n_rules; i++)
                        if (!bg->st[i].dirty &&
                            budget_rule_matches(&bg->conf->rules[i], rows[j].tool, rows[j].model,
                                                rows[j].project))
                                bg->st[i].dirty = any = true;
        }
        if (!any)
                return;
        if (!bg->timer) {
                budget_evaluate(bg, 0);
                return;
        }
        int enabled = SD_EVENT_OFF;
        sd_event_source_get_enabled(bg->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return;
        /* project rules scan the rows: a big ledger makes evaluation slow,
         * so a burst of commits (the initial scan) waits in proportion */
        uint64_t now, wait = bg->last_eval_usec * EVAL_SHARE;
        sd_event_now(bg->event, CLOCK_MONOTONIC, &now);
        sd_event_source_set_time(bg->timer, now + (wait > COALESCE_USEC ? wait : COALESCE_USEC));
        sd_event_source_set_enabled(bg->timer, SD_EVENT_ONESHOT);
}

static json_object *amount_json(enum budget_unit u, int64_t v)
{
        return u == BUDGET_USD ? json_object_new_double((double)v / 1e9) : json_object_new_int64(v);
}

json_object *budget_status_json(const struct budget *bg)
{
        json_object *o = json_object_new_object(), *errs = json_object_new_array(),
                    *rules = json_object_new_array();

        json_object_object_add(o, "config", bg ? json_object_new_string(bg->conf_path) : NULL);
        json_object_object_add(o, "errors", errs);
        json_object_object_add(o, "rules", rules);
        if (!bg || !bg->conf)
                return o;
        if (bg->conf_errno < 0 && bg->conf_errno != -ENOENT)
                json_object_array_add(errs, json_object_new_string(strerror(-bg->conf_errno)));
        for (unsigned i = 0; i < bg->conf->n_errors && i < BUDGET_ERRORS_MAX; i++)
                json_object_array_add(errs, json_object_new_string(bg->conf->errors[i]));
        json_object_object_add(o, "command", json_object_new_boolean(bg->conf->command[0] != 0));
        int64_t now = timefmt_now_ms();
        for (size_t i = 0; i < bg->conf->n_rules; i++) {
                const struct budget_rule *b = &bg->conf->rules[i];
                struct rule_state cur = bg->st[i];
                const struct rule_state *s = &cur;
                char key[PERIOD_KEY_MAX];
                int64_t from, until;
                /* a new period with nothing committed in it yet */
                budget_period_of(b->period, now, &from, &until, key, sizeof(key));
                if (cur.evaluated && strcmp(cur.period_key, key) != 0) {
                        snprintf(cur.period_key, sizeof(cur.period_key), "%s", key);
                        cur.amount = 0;
                        cur.n_fired = 0;
                }
                json_object *r = json_object_new_object(), *lv = json_object_new_array(),
                            *fired = json_object_new_array();
                for (size_t k = 0; k < b->n_levels; k++)
                        json_object_array_add(lv, json_object_new_int((int)b->levels[k]));
                for (size_t k = 0; k < s->n_fired; k++)
                        json_object_array_add(fired, json_object_new_int((int)s->fired[k]));
                json_object_object_add(r, "name", json_object_new_string(b->name));
                json_object_object_add(r, "period", json_object_new_string(budget_period_name(b->period)));
                json_object_object_add(r, "period_start", json_object_new_string(s->period_key));
                json_object_object_add(r, "unit", json_object_new_string(budget_unit_name(b->unit)));
                json_object_object_add(r, "limit", amount_json(b->unit, b->limit));
                json_object_object_add(r, "amount", amount_json(b->unit, s->amount));
                /* one decimal, floored: the journal and the command show its whole part */
                int64_t tenths = budget_percent_tenths(s->amount, b->limit);
                char pct[32];
                snprintf(pct, sizeof(pct), "%lld.%lld", (long long)(tenths / 10), (long long)(tenths % 10));
                json_object_object_add(r, "percent", json_object_new_double_s((double)tenths / 10.0, pct));
                json_object_object_add(r, "scope", json_object_new_string(budget_scope_name(b->scope)));
                json_object_object_add(r, "match", b->scope ? json_object_new_string(b->match) : NULL);
                json_object_object_add(r, "levels", lv);
                json_object_object_add(r, "fired", fired);
                json_object_array_add(rules, r);
        }
        return o;
}
