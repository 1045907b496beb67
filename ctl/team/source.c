/* Team report queries (team/source.h). Each result row becomes one
 * report_item / session / calls group for the builder, which groups them
 * in the asker's zone exactly as it groups the ledger's rollups. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "team-ledger/schema.h"
#include "team/source.h"
#include "timefmt.h"

#define S TEAM_SCHEMA "."
#define BUCKET "(time_ms - mod(mod(time_ms, 900000) + 900000, 900000))"
#define SQL_MAX 8192
#define MAX_PARAMS 8

/* ---- building a query ---------------------------------------------------- */

struct query {
        char sql[SQL_MAX];
        size_t len;
        const char *params[MAX_PARAMS];
        int n;
        char arrays[3][4096];
        int n_arrays;
};

static void add(struct query *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct query *x, const char *fmt, ...)
{
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(x->sql + x->len, sizeof(x->sql) - x->len, fmt, ap);
        va_end(ap);
        if (k > 0)
                x->len = x->len + (size_t)k < sizeof(x->sql) ? x->len + (size_t)k : sizeof(x->sql) - 1;
}

/* A text[] literal of a NULL-terminated list: {"a","b\"c"} */
static const char *array(struct query *x, const char *const *list, size_t max)
{
        char *a = x->arrays[x->n_arrays++];
        size_t n = 0, cap = sizeof(x->arrays[0]);

        a[n++] = '{';
        for (size_t i = 0; i < max && list[i] && n < cap - 8; i++) {
                if (i)
                        a[n++] = ',';
                a[n++] = '"';
                for (const char *p = list[i]; *p && n < cap - 6; p++) {
                        if (*p == '"' || *p == '\\')
                                a[n++] = '\\';
                        a[n++] = *p;
                }
                a[n++] = '"';
        }
        a[n++] = '}';
        a[n] = 0;
        return a;
}

static const char *party_col(const struct report_query *q)
{
        return q->by == REPORT_BY_MACHINE ? "machine" : q->by == REPORT_BY_USER ? "user_name" : "''";
}

/* The cost a row counts with under the query's mode (as report_sums_add_row). */
static const char *priced(const struct report_query *q)
{
        return q->cost == REPORT_COST_VENDOR ? "cost_source = 1" : "cost_source <> 0";
}

/* The usage_sums columns, in sums_from's order. */
static void sums_cols(struct query *x, const struct report_query *q)
{
        add(x, "count(*), count(*) FILTER (WHERE tokens_known),"
               " coalesce(sum(input) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(output) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(cache_read) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(cache_write) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(cache_write_1h) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(reasoning) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(total) FILTER (WHERE tokens_known), 0),"
               " coalesce(sum(cost_nano) FILTER (WHERE %s), 0),"
               " count(*) FILTER (WHERE %s),"
               " count(*) FILTER (WHERE %s AND cost_source = 2),"
               " coalesce(sum(n_calls), 0)",
            priced(q), priced(q), priced(q));
}
#define SUMS_N 13

/* WHERE: harness, machines, users (of the rows or the rollups) */
static void where_parties(struct query *x, const struct report_query *q)
{
        add(x, " WHERE true");
        if (q->harness[0]) {
                x->params[x->n++] = array(x, q->harness, REPORT_HARNESS_MAX);
                add(x, " AND harness = ANY($%d::text[])", x->n);
        }
        if (q->machines[0]) {
                x->params[x->n++] = array(x, q->machines, REPORT_PARTY_FILTER_MAX);
                add(x, " AND machine = ANY($%d::text[])", x->n);
        }
        if (q->users[0]) {
                x->params[x->n++] = array(x, q->users, REPORT_PARTY_FILTER_MAX);
                add(x, " AND user_name = ANY($%d::text[])", x->n);
        }
}

/* WHERE: harness, machines, users, session, project, and time in [lo, hi)
 * (INT64_MIN/MAX: open). */
static void where(struct query *x, const struct report_query *q, int64_t lo, int64_t hi)
{
        where_parties(x, q);
        /* --session, --project: of the row (a tool call: of the row that paid for it) */
        if (q->session) {
                x->params[x->n++] = q->session;
                add(x, " AND session = $%d", x->n);
        }
        if (q->project) {
                x->params[x->n++] = q->project;
                add(x, " AND project = $%d", x->n);
        }
        if (lo != INT64_MIN)
                add(x, " AND time_ms >= %" PRId64, lo);
        if (hi != INT64_MAX)
                add(x, " AND time_ms < %" PRId64, hi);
}

/* ---- reading results ----------------------------------------------------- */

static uint64_t u64(const char *s)
{
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        return errno == ERANGE || s[0] == '-' ? (s[0] == '-' ? 0 : UINT64_MAX) : v;
}

static int64_t i64(const char *s)
{
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        return v; /* strtoll saturates at the int64 bounds */
}

static void sums_from(struct team_source *ts, PGresult *res, int row, int col, struct usage_sums *s)
{
        const char *v[SUMS_N];
        for (int i = 0; i < SUMS_N; i++)
                v[i] = ts->pq->getvalue(res, row, col + i);
        *s = (struct usage_sums){
                .events = u64(v[0]), .token_events = u64(v[1]), .input = u64(v[2]), .output = u64(v[3]),
                .cache_read = u64(v[4]), .cache_write = u64(v[5]), .cache_write_1h = u64(v[6]),
                .reasoning = u64(v[7]), .total = u64(v[8]), .cost_nano = i64(v[9]),
                .priced_events = u64(v[10]), .computed_events = u64(v[11]), .calls = u64(v[12]),
        };
}

static PGresult *exec(struct team_source *ts, struct query *x)
{
        PGresult *res = ts->pq->execParams(ts->conn, x->sql, x->n, NULL, x->params, NULL, NULL, 0);

        if (!res || ts->pq->resultStatus(res) != PGRES_TUPLES_OK) {
                snprintf(ts->error, sizeof(ts->error), "team server: %s",
                         res ? ts->pq->resultErrorMessage(res) : ts->pq->errorMessage(ts->conn));
                ts->error[strcspn(ts->error, "\n")] = 0;
                ts->pq->clear(res);
                return NULL;
        }
        return res;
}

/* ---- the four inputs ------------------------------------------------------- */

/* The first bucket start at or after ms (bucket >= lo <=> time >= ceil(lo)). */
static int64_t ceil_bucket(int64_t ms)
{
        if (ms == INT64_MIN || ms == INT64_MAX)
                return ms;
        int64_t m = ((ms % ROLLUP_BUCKET_MS) + ROLLUP_BUCKET_MS) % ROLLUP_BUCKET_MS;
        return m ? ms - m + ROLLUP_BUCKET_MS : ms;
}

static int items(struct team_source *ts, struct query *x, report_item_fn cb, void *u)
{
        PGresult *res = exec(ts, x);
        int r = 0;

        if (!res)
                return -EIO;
        for (int i = 0; r == 0 && i < ts->pq->ntuples(res); i++) {
                struct report_item it = {
                        .first_ms = i64(ts->pq->getvalue(res, i, 0)),
                        .last_ms = i64(ts->pq->getvalue(res, i, 1)),
                        .tool = ts->pq->getvalue(res, i, 2), .provider = ts->pq->getvalue(res, i, 3),
                        .model = ts->pq->getvalue(res, i, 4), .project = ts->pq->getvalue(res, i, 5),
                        .session = ts->pq->getvalue(res, i, 6), .party = ts->pq->getvalue(res, i, 7),
                };
                sums_from(ts, res, i, 8, &it.sums);
                r = cb(&it, u);
        }
        ts->pq->clear(res);
        return r;
}

/* ---- rollups, schema version 2 ---------------------------------------------------
 *
 * The server keeps sums per 15-minute bucket (rollup_rows); a report
 * groups them into the asker's days. Summing every bucket on the client
 * would move one result row per bucket, machine and model (a team's year:
 * hundreds of thousands); instead the client sends the starts of the
 * local days the data spans, computed by its own zone code exactly as the
 * builder computes a row's day, and the server sums per day
 * (width_bucket over that sorted array). Each result row is a day's
 * buckets, first and last bucket start: the builder puts it in the same
 * day, week and month as the buckets themselves. The model report needs
 * no days: one row per harness, model (and party) for the whole range. */
#define DAYS_MAX 40000 /* more local days than that (over a century): per bucket */

/* The day after "YYYY-MM-DD" (civil arithmetic; no zone). */
static void next_day(const char day[11], char out[11])
{
        struct tm tm = { 0 };
        int y = 0, m = 0, d = 0;
        char buf[64];

        sscanf(day, "%d-%d-%d", &y, &m, &d);
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d + 1;
        tm.tm_hour = 12;
        time_t t = timegm(&tm);
        gmtime_r(&t, &tm);
        snprintf(buf, sizeof(buf), "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
        memcpy(out, buf, 10);
        out[10] = 0;
}

/* The bigint[] literal of the local day starts in tz from the day of lo
 * to the day of hi; NULL when they are too many (or on ENOMEM). */
static char *day_starts(const char *tz, int64_t lo, int64_t hi)
{
        char day[11], next[11];
        int64_t start;
        size_t n = 0, cap = 4096;
        char *a = malloc(cap);

        if (!a)
                return NULL;
        timefmt_day(lo, tz, day);
        a[n++] = '{';
        for (int i = 0; i < DAYS_MAX; i++) {
                if (timefmt_parse_day(day, tz, &start) < 0)
                        break;
                if (start > hi) {
                        if (a[n - 1] == ',')
                                n--;
                        a[n++] = '}';
                        a[n] = 0;
                        return a;
                }
                if (n + 32 > cap) {
                        char *b = realloc(a, cap *= 2);
                        if (!b)
                                break;
                        a = b;
                }
                n += (size_t)snprintf(a + n, cap - n, "%" PRId64 ",", start);
                next_day(day, next);
                memcpy(day, next, sizeof(day));
        }
        free(a);
        return NULL;
}

/* Whether the day starts (a bigint[] literal) and the range's ends are
 * whole hours: then the hourly rollups give the same days. */
static bool whole_hours(const char *days, int64_t lo, int64_t hi)
{
        if ((lo != INT64_MIN && lo % 3600000) || (hi != INT64_MAX && hi % 3600000))
                return false;
        for (const char *p = days + 1; *p && *p != '}';) {
                char *end;
                long long v = strtoll(p, &end, 10);
                if (end == p || v % 3600000)
                        return false;
                p = *end == ',' ? end + 1 : end;
        }
        return true;
}

#define ROLLUP_SUMS " sum(events), sum(token_events), sum(input), sum(output), sum(cache_read)," \
                    " sum(cache_write), sum(cache_write_1h), sum(reasoning), sum(total), sum(cost_nano)," \
                    " sum(priced_events), sum(computed_events), sum(calls)"

/* The data's time span (every meter's, from the rollups' key: a superset
 * of what a filtered query finds) cut to [lo, hi); ret_lo > ret_hi when
 * there is none. */
static int rollup_span(struct team_source *ts, int64_t lo, int64_t hi, int64_t *ret_lo, int64_t *ret_hi)
{
        struct query x = { 0 };
        PGresult *res;
        int64_t first, last;

        add(&x, "SELECT coalesce(first_ms, 1), coalesce(last_ms, 0) FROM " S "rollup_span");
        if (!(res = exec(ts, &x)))
                return -EIO;
        first = i64(ts->pq->getvalue(res, 0, 0));
        last = i64(ts->pq->getvalue(res, 0, 1));
        ts->pq->clear(res);
        *ret_lo = first > lo ? first : lo;
        *ret_hi = hi == INT64_MAX || last < hi ? last : hi - 1;
        return 0;
}

/* Whether the builder groups the report's rollups by provider and model
 * (report/build.c, group_of): the model report and --breakdown model.
 * Every other rollup report groups them by day (and party, and harness
 * with --breakdown harness): asking the server for the models too would
 * multiply the rows it sums and sends by the models (a team's year by
 * machine: 23,360 groups instead of 5,840, most of the report's time). */
static bool by_model(const struct report_query *q)
{
        return q->kind == REPORT_MODEL || q->breakdown == REPORT_BREAKDOWN_MODEL;
}

static int team_rollups_v2(struct team_source *ts, const struct report_query *q, int64_t from_ms,
                           int64_t until_ms, report_item_fn cb, void *u)
{
        struct query x = { 0 };
        int64_t lo = ceil_bucket(from_ms), hi = ceil_bucket(until_ms), first, last;
        const char *dims = by_model(q) ? "harness, provider, model" : "harness, '', ''";
        const char *view = "rollup_rows";
        char *days = NULL;
        int r;

        if (q->kind == REPORT_MODEL) {
                /* no days: the model report sums the range whole */
                if ((lo == INT64_MIN || lo % 3600000 == 0) && (hi == INT64_MAX || hi % 3600000 == 0))
                        view = "rollup_hours";
        } else {
                r = rollup_span(ts, lo, hi, &first, &last);
                if (r < 0 || first > last)
                        return r;
                days = day_starts(q->tz, first, last);
                if (days && whole_hours(days, lo, hi))
                        view = "rollup_hours";
        }
        /* grouped by the harness, the party's name and (by_model) the
         * model; the constant columns are not grouped by */
        add(&x, "SELECT min(bucket_ms), max(bucket_ms), %s, '', '', %s," ROLLUP_SUMS " FROM " S "%s", dims,
            party_col(q), view);
        where_parties(&x, q);
        if (lo != INT64_MIN)
                add(&x, " AND bucket_ms >= %" PRId64, lo);
        if (hi != INT64_MAX)
                add(&x, " AND bucket_ms < %" PRId64, hi);
        add(&x, " GROUP BY 3%s%s", by_model(q) ? ", 4, 5" : "", q->by != REPORT_BY_NONE ? ", 8" : "");
        if (days) {
                x.params[x.n++] = days;
                add(&x, ", width_bucket(bucket_ms, $%d::bigint[])", x.n);
        } else if (q->kind != REPORT_MODEL) {
                add(&x, ", bucket_ms");
        }
        r = items(ts, &x, cb, u);
        free(days);
        return r;
}

static int team_rollups(void *ctx, const struct report_query *q, int64_t from_ms, int64_t until_ms,
                        report_item_fn cb, void *u)
{
        struct team_source *ts = ctx;
        struct query x = { 0 };

        if (ts->version >= 2)
                return team_rollups_v2(ts, q, from_ms, until_ms, cb, u);
        /* a version-1 server: the rows themselves, per bucket */
        add(&x, "SELECT " BUCKET ", " BUCKET ", harness, provider, model, '', '', %s, ", party_col(q));
        sums_cols(&x, q);
        add(&x, " FROM " S "usage_rows");
        where(&x, q, ceil_bucket(from_ms), ceil_bucket(until_ms));
        add(&x, " GROUP BY 1, 3, 4, 5, 8");
        return items(ts, &x, cb, u);
}

/* Rows, summed as finely as the kind needs (team/source.h). */
static int team_rows(void *ctx, const struct report_query *q, report_item_fn cb, void *u)
{
        struct team_source *ts = ctx;
        struct query x = { 0 };
        struct report_range rg;
        const char *why;

        if (report_query_range(q, &rg, &why) < 0)
                return -EINVAL;
        if (q->kind == REPORT_SESSION) {
                /* whole sessions (the builder keeps those overlapping the range) */
                add(&x, "SELECT min(time_ms), max(time_ms), harness, '',"
                        " coalesce((array_agg(model ORDER BY time_ms DESC) FILTER (WHERE model <> ''))[1], ''),"
                        " coalesce((array_agg(project ORDER BY time_ms DESC) FILTER (WHERE project <> ''))[1], ''),"
                        " session, %s, ", party_col(q));
                sums_cols(&x, q);
                add(&x, " FROM " S "usage_rows");
                where(&x, q, INT64_MIN, INT64_MAX);
                add(&x, " GROUP BY 3, 7, 8");
        } else if (q->kind == REPORT_BLOCKS) {
                add(&x, "SELECT time_ms, time_ms, harness, '', '', '', '', %s, ", party_col(q));
                sums_cols(&x, q);
                add(&x, " FROM " S "usage_rows");
                where(&x, q, rg.since_ms, rg.until_ms);
                add(&x, " GROUP BY 1, 3, 8");
        } else {
                add(&x, "SELECT " BUCKET ", " BUCKET ", harness, provider, model, project, '', %s, ", party_col(q));
                sums_cols(&x, q);
                add(&x, " FROM " S "usage_rows");
                where(&x, q, rg.since_ms, rg.until_ms);
                add(&x, " GROUP BY 1, 3, 4, 5, 6, 8");
        }
        return items(ts, &x, cb, u);
}

static int team_sessions(void *ctx, const struct report_query *q, report_session_fn cb, void *u)
{
        struct team_source *ts = ctx;
        struct query x = { 0 };
        struct report_range rg;
        const char *why;
        PGresult *res;
        int r = 0;

        if (report_query_range(q, &rg, &why) < 0)
                return -EINVAL;
        /* the ledger's session sums: project and model of the latest row
         * that has one */
        add(&x, "SELECT harness, session, %s, min(time_ms), max(time_ms),"
                " coalesce((array_agg(project ORDER BY time_ms DESC) FILTER (WHERE project <> ''))[1], ''),"
                " coalesce((array_agg(model ORDER BY time_ms DESC) FILTER (WHERE model <> ''))[1], ''), ",
            party_col(q));
        sums_cols(&x, q);
        add(&x, " FROM " S "usage_rows");
        where(&x, q, INT64_MIN, INT64_MAX);
        add(&x, " GROUP BY 1, 2, 3");
        if (rg.since_ms != INT64_MIN || rg.until_ms != INT64_MAX)
                add(&x, " HAVING min(time_ms) < %" PRId64 " AND max(time_ms) >= %" PRId64, rg.until_ms, rg.since_ms);
        if (!(res = exec(ts, &x)))
                return -EIO;
        struct session_entry *e = malloc(sizeof(*e));
        if (!e) {
                ts->pq->clear(res);
                return -ENOMEM;
        }
        for (int i = 0; r == 0 && i < ts->pq->ntuples(res); i++) {
                memset(e, 0, sizeof(*e));
                row_set_str(e->tool, sizeof(e->tool), ts->pq->getvalue(res, i, 0), strlen(ts->pq->getvalue(res, i, 0)));
                row_set_str(e->session, sizeof(e->session), ts->pq->getvalue(res, i, 1), strlen(ts->pq->getvalue(res, i, 1)));
                e->first_ms = i64(ts->pq->getvalue(res, i, 3));
                e->last_ms = i64(ts->pq->getvalue(res, i, 4));
                row_set_str(e->project, sizeof(e->project), ts->pq->getvalue(res, i, 5), strlen(ts->pq->getvalue(res, i, 5)));
                row_set_str(e->model, sizeof(e->model), ts->pq->getvalue(res, i, 6), strlen(ts->pq->getvalue(res, i, 6)));
                sums_from(ts, res, i, 7, &e->sums);
                r = cb(e, ts->pq->getvalue(res, i, 2), u);
        }
        free(e);
        ts->pq->clear(res);
        return r;
}

static int team_calls(void *ctx, const struct report_query *q, const struct report_range *rg,
                      report_calls_fn cb, void *u)
{
        struct team_source *ts = ctx;
        struct query x = { 0 };
        PGresult *res;
        int r = 0;

        add(&x, "SELECT harness, tool, %s, count(*), count(*) FILTER (WHERE %s),"
                " coalesce(sum(cost_nano::float8 / greatest(n_calls, 1)) FILTER (WHERE %s), 0)"
                " FROM " S "tool_calls",
            party_col(q), priced(q), priced(q));
        where(&x, q, rg->since_ms, rg->until_ms);
        add(&x, " GROUP BY 1, 2, 3");
        if (!(res = exec(ts, &x)))
                return -EIO;
        for (int i = 0; r == 0 && i < ts->pq->ntuples(res); i++) {
                struct report_calls c = {
                        .tool = ts->pq->getvalue(res, i, 0), .name = ts->pq->getvalue(res, i, 1),
                        .party = ts->pq->getvalue(res, i, 2), .calls = u64(ts->pq->getvalue(res, i, 3)),
                        .priced_calls = u64(ts->pq->getvalue(res, i, 4)),
                        .share_nano = strtod(ts->pq->getvalue(res, i, 5), NULL),
                };
                r = cb(&c, u);
        }
        ts->pq->clear(res);
        return r;
}

void team_source_init(struct team_source *ts, const struct pq_api *pq, PGconn *conn, int version,
                      struct report_source *ret_src)
{
        ts->pq = pq;
        ts->conn = conn;
        ts->version = version;
        ts->error[0] = 0;
        *ret_src = (struct report_source){
                .rollups = team_rollups, .rows = team_rows, .sessions = team_sessions,
                .calls = team_calls, .ctx = ts, .ledger = NULL,
        };
}
