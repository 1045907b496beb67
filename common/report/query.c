/* Report requests: kind and cost-mode names, harness lists, the JSON
 * request form, and the checked date range. */
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "report/query.h"
#include "timefmt.h"

/* Why the last report call on this thread failed. */
static _Thread_local char report_error[512];

static const char *const kind_names[] = {
        [REPORT_DAILY] = "daily", [REPORT_MONTHLY] = "monthly", [REPORT_SESSION] = "session",
        [REPORT_MODEL] = "model", [REPORT_TOOL] = "tool", [REPORT_WEEKLY] = "weekly",
        [REPORT_PROJECT] = "project", [REPORT_BLOCKS] = "blocks",
};

static const char *const breakdown_names[] = {
        [REPORT_BREAKDOWN_NONE] = "none",
        [REPORT_BREAKDOWN_MODEL] = "model",
        [REPORT_BREAKDOWN_HARNESS] = "harness",
};

static const char *const wday_names[] = {
        "sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
};

static const char *const cost_names[] = {
        [REPORT_COST_AUTO] = "auto",
        [REPORT_COST_VENDOR] = "vendor",
        [REPORT_COST_COMPUTED] = "computed",
};

int report_fail(const char **ret_error, int r, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(report_error, sizeof(report_error), fmt, ap);
        va_end(ap);
        if (ret_error)
                *ret_error = report_error;
        return r;
}

int report_kind_parse(const char *s, enum report_kind *ret_kind)
{
        for (int k = REPORT_DAILY; s && k <= REPORT_KIND_LAST; k++)
                if (strcmp(s, kind_names[k]) == 0) {
                        *ret_kind = (enum report_kind)k;
                        return 0;
                }
        return -EINVAL;
}

const char *report_kind_name(enum report_kind k)
{
        return k >= REPORT_DAILY && k <= REPORT_KIND_LAST ? kind_names[k] : "unknown";
}

int report_by_parse(const char *s, enum report_by *ret)
{
        if (s && strcmp(s, "machine") == 0)
                *ret = REPORT_BY_MACHINE;
        else if (s && strcmp(s, "user") == 0)
                *ret = REPORT_BY_USER;
        else
                return -EINVAL;
        return 0;
}

const char *report_by_name(enum report_by b)
{
        return b == REPORT_BY_MACHINE ? "machine" : b == REPORT_BY_USER ? "user" : "none";
}

int report_breakdown_parse(const char *s, enum report_breakdown *ret)
{
        for (int b = REPORT_BREAKDOWN_NONE; s && b <= REPORT_BREAKDOWN_HARNESS; b++)
                if (strcmp(s, breakdown_names[b]) == 0) {
                        *ret = (enum report_breakdown)b;
                        return 0;
                }
        return -EINVAL;
}

const char *report_breakdown_name(enum report_breakdown b)
{
        return b >= REPORT_BREAKDOWN_NONE && b <= REPORT_BREAKDOWN_HARNESS ? breakdown_names[b]
                                                                           : "unknown";
}

int report_week_start_parse(const char *s, int *ret_wday)
{
        size_t n = s ? strlen(s) : 0;
        for (int d = 0; n >= 3 && d < 7; d++)
                if (n <= strlen(wday_names[d]) && strncasecmp(s, wday_names[d], n) == 0) {
                        *ret_wday = d;
                        return 0;
                }
        return -EINVAL;
}

const char *report_week_start_name(int wday)
{
        return wday >= 0 && wday < 7 ? wday_names[wday] : "unknown";
}

int report_week_start(const struct report_query *q)
{
        return q->week_start_set ? q->week_start : 1;
}

int report_cost_parse(const char *s, enum report_cost *ret_cost)
{
        for (int c = REPORT_COST_AUTO; s && c <= REPORT_COST_COMPUTED; c++)
                if (strcmp(s, cost_names[c]) == 0) {
                        *ret_cost = (enum report_cost)c;
                        return 0;
                }
        return -EINVAL;
}

const char *report_cost_name(enum report_cost c)
{
        return c >= REPORT_COST_AUTO && c <= REPORT_COST_COMPUTED ? cost_names[c] : "unknown";
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

bool report_query_filtered(const struct report_query *q)
{
        return q->session || q->project;
}

bool report_row_ok(const struct report_query *q, const char *tool, const char *session,
                   const char *project)
{
        if (q->session && strcmp(q->session, session ? session : "") != 0)
                return false;
        if (q->project && strcmp(q->project, project ? project : "") != 0)
                return false;
        return report_harness_ok(q, tool);
}

bool report_harness_ok(const struct report_query *q, const char *tool)
{
        if (!q->harness[0])
                return true;
        for (size_t i = 0; i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                if (strcmp(q->harness[i], tool) == 0)
                        return true;
        return false;
}

void report_shift_day(const char *ymd, int months, char out[11])
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

int report_query_range(const struct report_query *q, struct report_range *ret_range,
                       const char **ret_error)
{
        struct report_range rg = {.since_ms = INT64_MIN, .until_ms = INT64_MAX};
        char next[11];

        if (q->kind < REPORT_DAILY || q->kind > REPORT_KIND_LAST)
                return report_fail(ret_error, -EINVAL, "unknown report");
        if (q->breakdown < REPORT_BREAKDOWN_NONE || q->breakdown > REPORT_BREAKDOWN_HARNESS)
                return report_fail(ret_error, -EINVAL, "unknown breakdown");
        if (q->breakdown && q->kind != REPORT_DAILY && q->kind != REPORT_WEEKLY &&
            q->kind != REPORT_MONTHLY && q->kind != REPORT_PROJECT)
                return report_fail(ret_error, -EINVAL,
                                   "--breakdown applies to daily, weekly, monthly and project reports");
        if (q->week_start_set && (q->week_start < 0 || q->week_start > 6))
                return report_fail(ret_error, -EINVAL, "bad week start");
        if (q->cost < REPORT_COST_AUTO || q->cost > REPORT_COST_COMPUTED)
                return report_fail(ret_error, -EINVAL, "unknown cost mode");
        if (q->limit && q->kind != REPORT_SESSION)
                return report_fail(ret_error, -EINVAL, "--limit applies to session reports");
        if (timefmt_zone_valid(q->tz) < 0)
                return report_fail(ret_error, -EINVAL, "unknown time zone '%s'", q->tz);
        if (q->since && timefmt_parse_day(q->since, q->tz, &rg.since_ms) < 0)
                return report_fail(ret_error, -EINVAL,
                                   "bad --since date '%s': expected YYYY-MM-DD", q->since);
        if (q->until) {
                int64_t u;
                if (timefmt_parse_day(q->until, q->tz, &u) < 0)
                        return report_fail(ret_error, -EINVAL,
                                           "bad --until date '%s': expected YYYY-MM-DD", q->until);
                report_shift_day(q->until, 0, next);
                if (timefmt_parse_day(next, q->tz, &rg.until_ms) < 0)
                        return report_fail(ret_error, -EINVAL,
                                           "bad --until date '%s': expected YYYY-MM-DD", q->until);
        }
        if (q->since && q->until && rg.since_ms >= rg.until_ms)
                return report_fail(ret_error, -EINVAL, "--since %s is after --until %s", q->since,
                                   q->until);
        *ret_range = rg;
        return 0;
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
                return report_fail(ret_error, -EINVAL, "\"%s\" must be a string", name);
        *ret = json_object_get_string(v);
        return 0;
}

/* "harness": a list of strings, or "a,b" (then replaced in req by the list,
 * so the query can point into req). */
static int harness_from_json(json_object *req, struct report_query *q, const char **ret_error)
{
        json_object *h = NULL;
        int r;

        if (!json_object_object_get_ex(req, "harness", &h))
                return 0;
        if (h && json_object_is_type(h, json_type_string)) {
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
                        return report_fail(ret_error, -EINVAL, "too many harnesses (at most %d)",
                                           REPORT_HARNESS_MAX - 1);
                if (!h)
                        return -ENOMEM;
                json_object_object_add(req, "harness", h);
        }
        if (h && json_object_is_type(h, json_type_array)) {
                size_t n = json_object_array_length(h);
                if (n > REPORT_HARNESS_MAX - 1)
                        return report_fail(ret_error, -EINVAL, "too many harnesses (at most %d)",
                                           REPORT_HARNESS_MAX - 1);
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(h, i);
                        if (!json_object_is_type(e, json_type_string))
                                return report_fail(ret_error, -EINVAL,
                                                   "\"harness\" must hold strings");
                        q->harness[i] = json_object_get_string(e);
                }
        } else if (h && !json_object_is_type(h, json_type_null)) {
                return report_fail(ret_error, -EINVAL, "\"harness\" must be a list or a string");
        }
        return 0;
}

/* "limit": a whole number 0 .. REPORT_LIMIT_MAX, or null / absent (0). */
static int limit_from_json(json_object *req, uint32_t *ret, const char **ret_error)
{
        json_object *v;
        int64_t n;

        *ret = 0;
        if (!json_object_object_get_ex(req, "limit", &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return report_fail(ret_error, -EINVAL, "\"limit\" must be a whole number");
        n = json_object_get_int64(v);
        if (n < 0 || n > REPORT_LIMIT_MAX)
                return report_fail(ret_error, -EINVAL, "\"limit\" must be 0 .. %d", REPORT_LIMIT_MAX);
        *ret = (uint32_t)n;
        return 0;
}

int report_query_from_json(json_object *req, struct report_query *ret_query,
                           const char **ret_error)
{
        struct report_query q = {0};
        const char *kind, *cost, *breakdown, *week_start;
        json_object *mw;
        int r;

        if (!json_object_is_type(req, json_type_object))
                return report_fail(ret_error, -EINVAL, "request is not a JSON object");
        if ((r = opt_string(req, "report", &kind, ret_error)) < 0)
                return r;
        if (!kind)
                return report_fail(ret_error, -EINVAL, "missing \"report\"");
        if (report_kind_parse(kind, &q.kind) < 0)
                return report_fail(ret_error, -EINVAL, "unknown report '%s'", kind);
        if ((r = opt_string(req, "tz", &q.tz, ret_error)) < 0 ||
            (r = opt_string(req, "since", &q.since, ret_error)) < 0 ||
            (r = opt_string(req, "until", &q.until, ret_error)) < 0 ||
            (r = opt_string(req, "cost", &cost, ret_error)) < 0 ||
            (r = opt_string(req, "breakdown", &breakdown, ret_error)) < 0 ||
            (r = opt_string(req, "week_start", &week_start, ret_error)) < 0 ||
            (r = opt_string(req, "session", &q.session, ret_error)) < 0 ||
            (r = opt_string(req, "project", &q.project, ret_error)) < 0)
                return r;
        if (breakdown && report_breakdown_parse(breakdown, &q.breakdown) < 0)
                return report_fail(ret_error, -EINVAL,
                                   "unknown breakdown '%s' (model, harness)", breakdown);
        if (week_start && report_week_start_parse(week_start, &q.week_start) < 0)
                return report_fail(ret_error, -EINVAL,
                                   "unknown week start '%s' (monday .. sunday)", week_start);
        q.week_start_set = week_start != NULL;
        if (json_object_object_get_ex(req, "merge_worktrees", &mw) && mw) {
                if (!json_object_is_type(mw, json_type_boolean))
                        return report_fail(ret_error, -EINVAL, "\"merge_worktrees\" must be a boolean");
                q.merge_worktrees = json_object_get_boolean(mw);
        }
        if (cost && report_cost_parse(cost, &q.cost) < 0)
                return report_fail(ret_error, -EINVAL,
                                   "unknown cost mode '%s' (auto, vendor, computed)", cost);
        if ((r = harness_from_json(req, &q, ret_error)) < 0)
                return r;
        if ((r = limit_from_json(req, &q.limit, ret_error)) < 0)
                return r;
        *ret_query = q;
        return 0;
}
