/* What a report asks for (kind, zone, date range, harness filter, cost
 * mode), parsed from the command line or a JSON request, and resolved into
 * the millisecond range the builder reads. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct json_object;

enum report_kind {
        REPORT_DAILY = 1,
        REPORT_MONTHLY,
        REPORT_SESSION,
        REPORT_MODEL,
        REPORT_TOOL,
        REPORT_WEEKLY,
        REPORT_PROJECT,
        REPORT_BLOCKS,
};
#define REPORT_KIND_LAST REPORT_BLOCKS

/* Rows of daily, weekly, monthly and project reports split further. */
enum report_breakdown {
        REPORT_BREAKDOWN_NONE = 0,
        REPORT_BREAKDOWN_MODEL,   /* per (harness, provider/model) */
        REPORT_BREAKDOWN_HARNESS, /* per harness */
};

/* Which costs a report counts. AUTO: every cost the ledger holds (vendor
 * where the harness wrote one, our table's otherwise). VENDOR: only costs
 * the harness wrote; rows priced by the table count as unpriced. COMPUTED:
 * costs from the price table; the ledger holds no table price for rows the
 * harness priced itself, so those keep their vendor cost (and show as
 * vendor-reported). */
enum report_cost {
        REPORT_COST_AUTO = 0,
        REPORT_COST_VENDOR,
        REPORT_COST_COMPUTED,
};

#define REPORT_HARNESS_MAX 8
/* The largest session limit a query takes (more is every session anyway). */
#define REPORT_LIMIT_MAX 10000000

/* Team reports (agentmeterctl --team): rows split by the machine or the
 * user that first sent them. */
enum report_by {
        REPORT_BY_NONE = 0,
        REPORT_BY_MACHINE,
        REPORT_BY_USER,
};
#define REPORT_PARTY_FILTER_MAX 16

struct report_result;

struct report_query {
        enum report_kind kind;
        const char *tz;     /* NULL/"" = local */
        const char *since;  /* "YYYY-MM-DD" inclusive, or NULL */
        const char *until;  /* "YYYY-MM-DD" inclusive, or NULL */
        const char *harness[REPORT_HARNESS_MAX]; /* NULL-terminated filter; empty = all */
        enum report_cost cost;
        enum report_breakdown breakdown;
        int week_start;       /* weekly: first day, 0 = Sunday .. 6 = Saturday; default 1 */
        bool week_start_set;  /* week_start given (else Monday: ISO 8601 weeks) */
        bool merge_worktrees; /* project: a git worktree counts as its main checkout */
        const char *session; /* only this session's rows (NULL: every session) */
        const char *project; /* only rows recorded in this project (cwd), as written */
        int64_t now_ms;  /* blocks: "now" for the active block (0: the clock; tests set it) */
        bool calls_only; /* tool report: count calls, no cost share (no row read per call) */
        /* team reports: read from the team server (the header says so),
         * split by machine or user, and only these machines and users
         * (NULL-terminated; empty: all), which the source applies */
        bool team;
        enum report_by by;
        const char *machines[REPORT_PARTY_FILTER_MAX];
        const char *users[REPORT_PARTY_FILTER_MAX];
        /* session report: called on the built rows before they are written,
         * to fill in their origin (the daemon's and the client's
         * adapters/origins.h); NULL: none. Its failure fails the report. */
        int (*annotate)(void *u, struct report_result *res);
        void *annotate_u;
        /* session report: only the newest `limit` sessions (by last time)
         * are listed, the totals and the count (report_result.rows_total)
         * stay those of every session in the range; 0: every session */
        uint32_t limit;
};

/* "machine" / "user"; -EINVAL. */
int report_by_parse(const char *s, enum report_by *ret);
const char *report_by_name(enum report_by b);

/* "daily" -> REPORT_DAILY; -EINVAL. */
int report_kind_parse(const char *s, enum report_kind *ret_kind);
const char *report_kind_name(enum report_kind k);
/* "model" / "harness" / "none"; -EINVAL. */
int report_breakdown_parse(const char *s, enum report_breakdown *ret);
const char *report_breakdown_name(enum report_breakdown b);
/* "monday" (or "mon", any case) -> 1; -EINVAL. */
int report_week_start_parse(const char *s, int *ret_wday);
const char *report_week_start_name(int wday);
/* The query's week start (Monday unless set). */
int report_week_start(const struct report_query *q);

/* "vendor" -> REPORT_COST_VENDOR ("auto", "computed"); -EINVAL. */
int report_cost_parse(const char *s, enum report_cost *ret_cost);
const char *report_cost_name(enum report_cost c);

/* Parses "pi,openclaw" into q->harness (pointers into buf, which it edits). */
int report_parse_harness_list(char *buf, struct report_query *q);
/* Whether rows of harness `tool` pass the query's filter. */
bool report_harness_ok(const struct report_query *q, const char *tool);
/* Whether a row (harness, session, project) passes the harness, session
 * and project filters. */
bool report_row_ok(const struct report_query *q, const char *tool, const char *session,
                   const char *project);
/* A session or project filter is set: the rollups (which keep neither)
 * cannot answer, the rows are read. */
bool report_query_filtered(const struct report_query *q);

/* Builds the same query from a JSON request object {"report":"daily","tz":..,
 * "since":..,"until":..,"harness":[..] or "a,b","cost":"auto",
 * "breakdown":"model","week_start":"monday","merge_worktrees":true,
 * "session":"id","project":"/path","limit":50}; strings point into req.
 * "limit" (session reports): 0 or absent, every session. */
int report_query_from_json(struct json_object *req, struct report_query *ret_query,
                           const char **ret_error);

/* The query's range as UTC ms [since, until) (open ends INT64_MIN/MAX),
 * checked: -EINVAL with *ret_error saying which date or zone is wrong. */
struct report_range {
        int64_t since_ms, until_ms;
};
int report_query_range(const struct report_query *q, struct report_range *ret_range,
                       const char **ret_error);

/* "YYYY-MM-DD" of the day after ymd (months = 0) or the first of the next
 * month (months = 1). */
void report_shift_day(const char *ymd, int months, char out[11]);

/* Sets the thread-local error text the report functions hand back in
 * *ret_error (valid until the next call on this thread); returns r. */
int report_fail(const char **ret_error, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
