/* Reports from the ledger's derived DBs (rollups, sessions, activity) as one
 * JSON object: days and months in the asker's zone, NULL never shown as 0. */
#include <errno.h>
#include <math.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "report.h"
#include "row.h"
#include "timefmt.h"

#define KEY_MAX (ROW_PROVIDER_MAX + ROW_MODEL_MAX)

/* Why the last report_run/report_query_from_json on this thread failed. */
static _Thread_local char report_error[512];

static const char *const kind_names[] = {
        [REPORT_DAILY] = "daily", [REPORT_MONTHLY] = "monthly", [REPORT_SESSION] = "session",
        [REPORT_MODEL] = "model", [REPORT_TOOL] = "tool",
};

int report_kind_parse(const char *s, enum report_kind *ret_kind)
{
        for (int k = REPORT_DAILY; s && k <= REPORT_TOOL; k++)
                if (strcmp(s, kind_names[k]) == 0) {
                        *ret_kind = (enum report_kind)k;
                        return 0;
                }
        return -EINVAL;
}

const char *report_kind_name(enum report_kind k)
{
        return k >= REPORT_DAILY && k <= REPORT_TOOL ? kind_names[k] : "unknown";
}

int report_parse_harness_list(char *buf, struct report_query *q)
{
        const char *v[REPORT_HARNESS_MAX] = {0};
        size_t n = 0;
        char *save = NULL;

        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *end;
                t += strspn(t, " \t");
                end = t + strlen(t);
                while (end > t && (end[-1] == ' ' || end[-1] == '\t'))
                        *--end = 0;
                if (!*t)
                        continue;
                if (n == REPORT_HARNESS_MAX - 1)
                        return -EINVAL;
                v[n++] = t;
        }
        memcpy(q->harness, v, sizeof(v));
        return 0;
}

static bool harness_ok(const struct report_query *q, const char *tool)
{
        if (!q->harness[0])
                return true;
        for (size_t i = 0; i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                if (strcmp(q->harness[i], tool) == 0)
                        return true;
        return false;
}

/* ---- aggregation: a sorted array keyed by (key, harness) ----------------- */

struct agg_row {
        char key[KEY_MAX];
        char harness[ROW_TOOL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        struct usage_sums sums;
        uint64_t calls, priced_calls; /* tool report */
        double share_nano;           /* tool report: sum of cost / n_calls */
};

struct agg {
        struct agg_row *v;
        size_t n, cap, last;
};

static int agg_cmp(const struct agg_row *r, const char *key, const char *harness)
{
        int c = strcmp(r->key, key);
        return c ? c : strcmp(r->harness, harness);
}

static struct agg_row *agg_get(struct agg *a, const char *key, const char *harness)
{
        size_t lo = 0, hi = a->n;

        if (a->last < a->n && agg_cmp(&a->v[a->last], key, harness) == 0)
                return &a->v[a->last];
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = agg_cmp(&a->v[mid], key, harness);
                if (c == 0)
                        return &a->v[a->last = mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (a->n == a->cap) {
                size_t ncap = a->cap ? a->cap * 2 : 64;
                struct agg_row *nv = realloc(a->v, ncap * sizeof(*nv));
                if (!nv)
                        return NULL;
                a->v = nv;
                a->cap = ncap;
        }
        memmove(&a->v[lo + 1], &a->v[lo], (a->n - lo) * sizeof(*a->v));
        memset(&a->v[lo], 0, sizeof(*a->v));
        snprintf(a->v[lo].key, sizeof(a->v[lo].key), "%s", key);
        snprintf(a->v[lo].harness, sizeof(a->v[lo].harness), "%s", harness);
        a->n++;
        return &a->v[a->last = lo];
}

/* ---- JSON ---------------------------------------------------------------- */

/* USD from nano-USD, shown to the micro-dollar (rounded half away from
 * zero): the number and its text agree exactly. */
static json_object *money_json(int64_t nano)
{
        char buf[40];
        uint64_t a = nano < 0 ? -(uint64_t)nano : (uint64_t)nano;
        uint64_t micro = (a + 500) / 1000;
        snprintf(buf, sizeof(buf), "%s%llu.%06llu", nano < 0 ? "-" : "",
                 (unsigned long long)(micro / 1000000), (unsigned long long)(micro % 1000000));
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static json_object *share_json(double nano)
{
        return money_json((int64_t)llround(nano));
}

static void add(json_object *o, const char *k, json_object *v)
{
        json_object_object_add(o, k, v);
}

static json_object *tokens_json(uint64_t v, bool known)
{
        return known ? json_object_new_int64((int64_t)v) : NULL;
}

/* The six token fields of a row or a sum, all null when not known. */
static void tokens_add(json_object *o, uint64_t input, uint64_t output, uint64_t cache_read,
                       uint64_t cache_write, uint64_t reasoning, uint64_t total, bool known)
{
        add(o, "input_tokens", tokens_json(input, known));
        add(o, "output_tokens", tokens_json(output, known));
        add(o, "cache_read_tokens", tokens_json(cache_read, known));
        add(o, "cache_write_tokens", tokens_json(cache_write, known));
        add(o, "reasoning_tokens", tokens_json(reasoning, known));
        add(o, "total_tokens", tokens_json(total, known));
}

static void sums_json(json_object *o, const struct usage_sums *s)
{
        const char *src = NULL;

        tokens_add(o, s->input, s->output, s->cache_read, s->cache_write, s->reasoning, s->total,
                   s->token_events > 0);
        add(o, "cost_usd", s->priced_events ? money_json(s->cost_nano) : NULL);
        if (s->priced_events)
                src = s->computed_events == 0               ? "vendor-reported"
                      : s->computed_events == s->priced_events ? "computed"
                                                              : "mixed";
        add(o, "cost_source", src ? json_object_new_string(src) : NULL);
        add(o, "unpriced_events", json_object_new_int64((int64_t)(s->events - s->priced_events)));
        add(o, "events", json_object_new_int64((int64_t)s->events));
        add(o, "tool_calls", json_object_new_int64((int64_t)s->calls));
}

static json_object *str_or_null(const char *s)
{
        return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *time_json(int64_t ms)
{
        char buf[32];
        timefmt_format_utc(ms, buf);
        return json_object_new_string(buf);
}

json_object *report_row_json(const struct usage_row *r)
{
        json_object *o = json_object_new_object(), *calls = json_object_new_array();
        char hex[2 * ROW_KEY_SIZE + 1];

        if (!o || !calls) {
                json_object_put(o);
                json_object_put(calls);
                return NULL;
        }
        row_key_hex(&r->key, hex);
        add(o, "key", json_object_new_string(hex));
        add(o, "harness", json_object_new_string(r->tool));
        add(o, "session", json_object_new_string(r->session));
        add(o, "project", json_object_new_string(r->project));
        add(o, "provider", json_object_new_string(r->provider));
        add(o, "model", json_object_new_string(r->model));
        if (r->model_alias[0])
                add(o, "model_alias", json_object_new_string(r->model_alias));
        add(o, "kind", json_object_new_string(row_kind_name(r->kind)));
        add(o, "time", time_json(r->time_ms));
        add(o, "sidechain", json_object_new_boolean(!!(r->flags & ROW_F_SIDECHAIN)));
        tokens_add(o, r->input, r->output, r->cache_read, r->cache_write, r->reasoning, r->total,
                   r->flags & ROW_F_TOKENS_KNOWN);
        add(o, "cost_usd", r->cost_source != COST_NONE ? money_json(r->cost_nano) : NULL);
        add(o, "cost_source",
            r->cost_source != COST_NONE ? json_object_new_string(cost_source_name(r->cost_source))
                                        : NULL);
        for (uint32_t i = 0; i < r->n_calls && i < ROW_CALLS_MAX; i++)
                json_object_array_add(calls, json_object_new_string(r->calls[i].name));
        add(o, "tool_calls", calls);
        return o;
}

/* ---- running ------------------------------------------------------------- */

struct run {
        const struct report_query *q;
        struct ledger *l;
        int64_t since_ms, until_ms;
        /* the day/month span of the last bucket mapped: buckets inside it
         * reuse its key without switching zones again */
        int64_t span_lo, span_hi;
        char span_key[11];
        struct agg agg;
        struct session_entry *sess;
        size_t n_sess, cap_sess;
        struct usage_row *row; /* tool report: the row a call belongs to */
};

/* The day after "YYYY-MM-DD" (months=0) or the first of the next month. */
static void shift_day(const char *ymd, int months, char out[11])
{
        struct tm tm = {0};
        time_t t;
        tm.tm_year = atoi(ymd) - 1900;
        tm.tm_mon = atoi(ymd + 5) - 1 + months;
        tm.tm_mday = months ? 1 : atoi(ymd + 8) + 1;
        tm.tm_hour = 12;
        t = timegm(&tm);
        gmtime_r(&t, &tm);
        strftime(out, 11, "%Y-%m-%d", &tm);
}

static void bucket_key(struct run *c, int64_t ms)
{
        bool monthly = c->q->kind == REPORT_MONTHLY;
        char start[11], next[11];

        if (ms >= c->span_lo && ms < c->span_hi)
                return;
        if (monthly) {
                char m[8];
                timefmt_month(ms, c->q->tz, m);
                snprintf(c->span_key, sizeof(c->span_key), "%s", m);
                snprintf(start, sizeof(start), "%s-01", m);
        } else {
                timefmt_day(ms, c->q->tz, c->span_key);
                memcpy(start, c->span_key, sizeof(start));
        }
        shift_day(start, monthly, next);
        if (timefmt_parse_day(start, c->q->tz, &c->span_lo) < 0 ||
            timefmt_parse_day(next, c->q->tz, &c->span_hi) < 0 || ms < c->span_lo ||
            ms >= c->span_hi)
                c->span_lo = c->span_hi = 0; /* no cache; the key is still right */
}

static int rollup_cb(const struct rollup_entry *e, void *u)
{
        struct run *c = u;
        struct agg_row *row;

        if (!harness_ok(c->q, e->tool))
                return 0;
        if (c->q->kind == REPORT_MODEL) {
                char key[KEY_MAX];
                snprintf(key, sizeof(key), "%s%s%s", e->provider, e->provider[0] ? "/" : "",
                         e->model);
                row = agg_get(&c->agg, key, e->tool);
                if (row) {
                        memcpy(row->provider, e->provider, sizeof(row->provider));
                        memcpy(row->model, e->model, sizeof(row->model));
                }
        } else {
                bucket_key(c, e->bucket_ms);
                row = agg_get(&c->agg, c->span_key, "");
        }
        if (!row)
                return -ENOMEM;
        usage_sums_add(&row->sums, &e->sums);
        return 0;
}

static int session_cb(const struct session_entry *e, void *u)
{
        struct run *c = u;

        if (!harness_ok(c->q, e->tool) || e->first_ms >= c->until_ms || e->last_ms < c->since_ms)
                return 0;
        if (c->n_sess == c->cap_sess) {
                size_t ncap = c->cap_sess ? c->cap_sess * 2 : 64;
                struct session_entry *nv = realloc(c->sess, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                c->sess = nv;
                c->cap_sess = ncap;
        }
        c->sess[c->n_sess++] = *e;
        return 0;
}

static int session_cmp(const void *a, const void *b)
{
        const struct session_entry *x = a, *y = b;
        int c;
        if (x->last_ms != y->last_ms)
                return x->last_ms < y->last_ms ? -1 : 1;
        c = strcmp(x->tool, y->tool);
        return c ? c : strcmp(x->session, y->session);
}

static int activity_cb(const struct activity_entry *e, void *u)
{
        struct run *c = u;
        struct agg_row *row;
        int r;

        if (!harness_ok(c->q, e->tool) || e->time_ms < c->since_ms || e->time_ms >= c->until_ms)
                return 0;
        row = agg_get(&c->agg, e->name, e->tool);
        if (!row)
                return -ENOMEM;
        row->calls++;
        /* a nested read txn: allowed, the ledger env is MDB_NOTLS */
        r = ledger_get_row(c->l, &e->usage_key, c->row);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (c->row->cost_source != COST_NONE) {
                row->priced_calls++;
                row->share_nano += (double)c->row->cost_nano /
                                    (double)(c->row->n_calls ? c->row->n_calls : 1);
        }
        return 0;
}

static int tool_cmp(const void *a, const void *b)
{
        const struct agg_row *x = a, *y = b;
        if (x->calls != y->calls)
                return x->calls > y->calls ? -1 : 1;
        return agg_cmp(x, y->key, y->harness);
}

static json_object *local_zone_json(void)
{
        const char *tz = getenv("TZ");
        char buf[PATH_MAX];
        ssize_t n;

        if (tz && *tz)
                return json_object_new_string(tz[0] == ':' ? tz + 1 : tz);
        n = readlink("/etc/localtime", buf, sizeof(buf) - 1);
        if (n > 0) {
                const char *z;
                buf[n] = 0;
                z = strstr(buf, "zoneinfo/");
                if (z)
                        return json_object_new_string(z + 9);
        }
        return json_object_new_string("localtime");
}

static json_object *build_rows(struct run *c, json_object **ret_totals)
{
        json_object *rows = json_object_new_array(), *totals = json_object_new_object();
        struct usage_sums all = {0};
        uint64_t calls = 0, priced_calls = 0;
        double share = 0;

        if (c->q->kind == REPORT_SESSION) {
                qsort(c->sess, c->n_sess, sizeof(*c->sess), session_cmp);
                for (size_t i = 0; i < c->n_sess; i++) {
                        const struct session_entry *e = &c->sess[i];
                        json_object *o = json_object_new_object();
                        add(o, "key", json_object_new_string(e->session));
                        add(o, "harness", json_object_new_string(e->tool));
                        add(o, "session", json_object_new_string(e->session));
                        add(o, "project", json_object_new_string(e->project));
                        add(o, "model", json_object_new_string(e->model));
                        add(o, "first", time_json(e->first_ms));
                        add(o, "last", time_json(e->last_ms));
                        sums_json(o, &e->sums);
                        json_object_array_add(rows, o);
                        usage_sums_add(&all, &e->sums);
                }
        } else {
                if (c->q->kind == REPORT_TOOL)
                        qsort(c->agg.v, c->agg.n, sizeof(*c->agg.v), tool_cmp);
                for (size_t i = 0; i < c->agg.n; i++) {
                        const struct agg_row *a = &c->agg.v[i];
                        json_object *o = json_object_new_object();
                        add(o, "key", json_object_new_string(a->key));
                        if (c->q->kind == REPORT_TOOL) {
                                add(o, "harness", json_object_new_string(a->harness));
                                add(o, "tool", json_object_new_string(a->key));
                                add(o, "calls", json_object_new_int64((int64_t)a->calls));
                                add(o, "cost_share_usd",
                                    a->priced_calls ? share_json(a->share_nano) : NULL);
                                calls += a->calls;
                                priced_calls += a->priced_calls;
                                share += a->share_nano;
                        } else {
                                if (c->q->kind == REPORT_MODEL) {
                                        add(o, "harness", json_object_new_string(a->harness));
                                        add(o, "provider", json_object_new_string(a->provider));
                                        add(o, "model", json_object_new_string(a->model));
                                }
                                sums_json(o, &a->sums);
                                usage_sums_add(&all, &a->sums);
                        }
                        json_object_array_add(rows, o);
                }
        }
        if (c->q->kind == REPORT_TOOL) {
                add(totals, "calls", json_object_new_int64((int64_t)calls));
                add(totals, "cost_share_usd", priced_calls ? share_json(share) : NULL);
        } else {
                sums_json(totals, &all);
        }
        *ret_totals = totals;
        return rows;
}

static int fail(const char **ret_error, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(const char **ret_error, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(report_error, sizeof(report_error), fmt, ap);
        va_end(ap);
        if (ret_error)
                *ret_error = report_error;
        return r;
}

static int run_in_zone(struct ledger *l, const struct report_query *q, json_object **ret_report,
                       const char **ret_error)
{
        struct run c = {.q = q, .l = l, .since_ms = INT64_MIN, .until_ms = INT64_MAX};
        json_object *o, *h = NULL, *totals = NULL;
        char next[11];
        int r = 0;

        if (q->kind < REPORT_DAILY || q->kind > REPORT_TOOL)
                return fail(ret_error, -EINVAL, "unknown report");
        if (timefmt_zone_valid(q->tz) < 0)
                return fail(ret_error, -EINVAL, "unknown time zone '%s'", q->tz);
        if (q->since && timefmt_parse_day(q->since, q->tz, &c.since_ms) < 0)
                return fail(ret_error, -EINVAL, "bad --since date '%s': expected YYYY-MM-DD",
                            q->since);
        if (q->until) {
                int64_t u;
                if (timefmt_parse_day(q->until, q->tz, &u) < 0)
                        return fail(ret_error, -EINVAL,
                                    "bad --until date '%s': expected YYYY-MM-DD", q->until);
                shift_day(q->until, 0, next);
                if (timefmt_parse_day(next, q->tz, &c.until_ms) < 0)
                        return fail(ret_error, -EINVAL,
                                    "bad --until date '%s': expected YYYY-MM-DD", q->until);
        }
        if (q->since && q->until && c.since_ms >= c.until_ms)
                return fail(ret_error, -EINVAL, "--since %s is after --until %s", q->since,
                            q->until);

        switch (q->kind) {
        case REPORT_SESSION:
                r = ledger_foreach_session(l, session_cb, &c);
                break;
        case REPORT_TOOL:
                c.row = malloc(sizeof(*c.row));
                r = c.row ? ledger_foreach_activity(l, activity_cb, &c) : -ENOMEM;
                break;
        default:
                r = ledger_foreach_rollup(l, c.since_ms, c.until_ms, rollup_cb, &c);
                break;
        }
        if (r < 0) {
                fail(ret_error, r, "reading the ledger: %s", strerror(-r));
                goto out;
        }
        o = json_object_new_object();
        if (!o) {
                r = -ENOMEM;
                goto out;
        }
        add(o, "report", json_object_new_string(report_kind_name(q->kind)));
        add(o, "tz", q->tz && *q->tz ? json_object_new_string(q->tz) : local_zone_json());
        add(o, "since", str_or_null(q->since));
        add(o, "until", str_or_null(q->until));
        if (q->harness[0]) {
                h = json_object_new_array();
                for (size_t i = 0; i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                        json_object_array_add(h, json_object_new_string(q->harness[i]));
        }
        add(o, "harness", h);
        add(o, "rows", build_rows(&c, &totals));
        add(o, "totals", totals);
        *ret_report = o;
out:
        free(c.agg.v);
        free(c.sess);
        free(c.row);
        return r;
}

/* A string or null member; anything else is an error. */
static int opt_string(json_object *req, const char *name, const char **ret, const char **ret_error)
{
        json_object *v;
        if (!json_object_object_get_ex(req, name, &v) || json_object_is_type(v, json_type_null)) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return fail(ret_error, -EINVAL, "\"%s\" must be a string", name);
        *ret = json_object_get_string(v);
        return 0;
}

int report_query_from_json(json_object *req, struct report_query *ret_query,
                           const char **ret_error)
{
        struct report_query q = {0};
        json_object *h = NULL;
        const char *kind;
        int r;

        if (!json_object_is_type(req, json_type_object))
                return fail(ret_error, -EINVAL, "request is not a JSON object");
        if ((r = opt_string(req, "report", &kind, ret_error)) < 0)
                return r;
        if (!kind)
                return fail(ret_error, -EINVAL, "missing \"report\"");
        if (report_kind_parse(kind, &q.kind) < 0)
                return fail(ret_error, -EINVAL, "unknown report '%s'", kind);
        if ((r = opt_string(req, "tz", &q.tz, ret_error)) < 0 ||
            (r = opt_string(req, "since", &q.since, ret_error)) < 0 ||
            (r = opt_string(req, "until", &q.until, ret_error)) < 0)
                return r;
        if (!json_object_object_get_ex(req, "harness", &h))
                h = NULL;
        if (h && json_object_is_type(h, json_type_string)) {
                /* "a,b": replace it in req by the array, so q can point into req */
                char *buf = strdup(json_object_get_string(h));
                struct report_query tmp = {0};
                if (!buf)
                        return -ENOMEM;
                r = report_parse_harness_list(buf, &tmp);
                h = r == 0 ? json_object_new_array() : NULL;
                for (size_t i = 0; h && i < REPORT_HARNESS_MAX && tmp.harness[i]; i++)
                        json_object_array_add(h, json_object_new_string(tmp.harness[i]));
                free(buf);
                if (r < 0)
                        return fail(ret_error, -EINVAL, "too many harnesses (at most %d)",
                                    REPORT_HARNESS_MAX - 1);
                if (!h)
                        return -ENOMEM;
                json_object_object_add(req, "harness", h);
        }
        if (h && json_object_is_type(h, json_type_array)) {
                size_t n = json_object_array_length(h);
                if (n > REPORT_HARNESS_MAX - 1)
                        return fail(ret_error, -EINVAL, "too many harnesses (at most %d)",
                                    REPORT_HARNESS_MAX - 1);
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(h, i);
                        if (!json_object_is_type(e, json_type_string))
                                return fail(ret_error, -EINVAL,
                                            "\"harness\" must hold strings");
                        q.harness[i] = json_object_get_string(e);
                }
        } else if (h && !json_object_is_type(h, json_type_null)) {
                return fail(ret_error, -EINVAL, "\"harness\" must be a list or a string");
        }
        *ret_query = q;
        return 0;
}

int report_run(struct ledger *l, const struct report_query *q, json_object **ret_report,
               const char **ret_error)
{
        struct timefmt_zone z = {0};
        int r;

        /* one zone switch for the whole report, not two per conversion */
        if (timefmt_zone_valid(q->tz) == 0)
                timefmt_zone_enter(&z, q->tz);
        r = run_in_zone(l, q, ret_report, ret_error);
        timefmt_zone_leave(&z);
        return r;
}
