/* Report builder: groups rollups, sessions, activity (or, for the vendor
 * cost mode, usage rows) into report entries, days and months in the
 * asker's zone. The entries' index is report/groups.c, their order
 * report/order.c, the daemon's cache of old rollups report/cache-view.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/build.h"
#include "report/groups.h"
#include "report/order.h"
#include "timefmt.h"

/* ---- strings ----------------------------------------------------------- */

/* snprintf(dst, cap, "%s", src) without printf: reports copy several
 * strings per group */
static void copy_str(char *dst, size_t cap, const char *src)
{
        row_set_str(dst, cap, src, strlen(src));
}

/* snprintf(out, cap, "%s%s%s", a, sep, b), without printf (per rollup) */
static void join(char *out, size_t cap, const char *a, const char *sep, const char *b)
{
        size_t n = 0;
        for (const char *part[3] = { a, sep, b }, **p = part; p < part + 3; p++) {
                size_t k = strlen(*p);
                if (k > cap - 1 - n)
                        k = cap - 1 - n;
                memcpy(out + n, *p, k);
                n += k;
        }
        out[n] = 0;
}

/* ---- one run ------------------------------------------------------------ */

struct run {
        const struct report_query *q;
        const struct report_source *src;
        struct report_range rg;
        /* the day/month span of the last bucket mapped: buckets inside it
         * reuse its key without switching zones again */
        int64_t span_lo, span_hi;
        char span_key[11];
        struct report_groups groups;
        struct report_groups roots; /* merge_worktrees: project -> main checkout (in .project) */
        /* a session report with a limit, from the sessions' sums (each
         * session comes once): only the newest q->limit are kept in groups.v
         * (no index), heap[0] the oldest of them; every one is counted
         * and summed */
        bool newest_only;
        uint32_t *heap;
        size_t heap_cap, seen;
        struct usage_sums all;
};


/* ymd moved by n days. */
static void add_days(const char *ymd, int n, char out[11], int *ret_wday)
{
        struct tm tm = {0};
        time_t t;
        tm.tm_year = atoi(ymd) - 1900;
        tm.tm_mon = atoi(ymd + 5) - 1;
        tm.tm_mday = atoi(ymd + 8) + n;
        tm.tm_hour = 12;
        t = timegm(&tm);
        gmtime_r(&t, &tm);
        strftime(out, 11, "%Y-%m-%d", &tm);
        if (ret_wday)
                *ret_wday = tm.tm_wday;
}

void report_iso_week(const char *monday, char out[16])
{
        struct tm tm = {0};
        time_t t;
        tm.tm_year = atoi(monday) - 1900;
        tm.tm_mon = atoi(monday + 5) - 1;
        tm.tm_mday = atoi(monday + 8);
        tm.tm_hour = 12;
        t = timegm(&tm);
        gmtime_r(&t, &tm);
        strftime(out, 16, "%G-W%V", &tm);
}

/* The calendar span (day, week, month) of ms in the asker's zone: its key
 * in c->span_key, and its bounds cached so the next buckets inside it need
 * no zone switch. */
static void bucket_key(struct run *c, int64_t ms)
{
        enum report_kind kind = c->q->kind;
        char start[11], next[11];

        if (ms >= c->span_lo && ms < c->span_hi)
                return;
        if (kind == REPORT_MONTHLY) {
                char m[8];
                timefmt_month(ms, c->q->tz, m);
                copy_str(c->span_key, sizeof(c->span_key), m);
                snprintf(start, sizeof(start), "%s-01", m);
                report_shift_day(start, 1, next);
        } else if (kind == REPORT_WEEKLY) {
                char day[11];
                int wday;
                timefmt_day(ms, c->q->tz, day);
                add_days(day, 0, start, &wday);
                add_days(day, -((wday - report_week_start(c->q) + 7) % 7), start, NULL);
                memcpy(c->span_key, start, sizeof(start));
                add_days(start, 7, next, NULL);
        } else {
                timefmt_day(ms, c->q->tz, c->span_key);
                memcpy(start, c->span_key, sizeof(start));
                report_shift_day(start, 0, next);
        }
        if (timefmt_parse_day(start, c->q->tz, &c->span_lo) < 0 ||
            timefmt_parse_day(next, c->q->tz, &c->span_hi) < 0 || ms < c->span_lo ||
            ms >= c->span_hi)
                c->span_lo = c->span_hi = 0; /* no cache; the key is still right */
}

/* The main checkout of a git worktree: its .git is a file saying
 * "gitdir: <main>/.git/worktrees/<name>". Anything else is itself. */
static void worktree_root(const char *path, char *out, size_t cap)
{
        char gitfile[ROW_PROJECT_MAX + 8], buf[ROW_PROJECT_MAX + 64];
        FILE *f;
        size_t n = 0;
        const char *w;

        snprintf(out, cap, "%s", path);
        if (path[0] != '/' || snprintf(gitfile, sizeof(gitfile), "%s/.git", path) >= (int)sizeof(gitfile))
                return;
        f = fopen(gitfile, "re");
        if (f) {
                n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
        }
        buf[n] = 0;
        buf[strcspn(buf, "\r\n")] = 0;
        if (strncmp(buf, "gitdir: /", 9) != 0 || !(w = strstr(buf + 8, "/.git/worktrees/")))
                return;
        snprintf(out, cap, "%.*s", (int)(w - (buf + 8)), buf + 8);
}

static const char *project_of(struct run *c, const char *project)
{
        struct report_entry *e;

        if (!c->q->merge_worktrees || !project[0])
                return project;
        e = report_groups_get(&c->roots, project, "", "");
        if (!e)
                return project;
        if (!e->first_ms) { /* first time seen */
                worktree_root(project, e->project, sizeof(e->project));
                e->first_ms = 1;
        }
        return e->project;
}

/* The entry a (time, harness, provider, model, project) falls into, for
 * every report but session and tool. */
static struct report_entry *group_of(struct run *c, int64_t ms, const char *tool,
                                     const char *provider, const char *model, const char *project,
                                     const char *party)
{
        char pm[ROW_PROVIDER_MAX + ROW_MODEL_MAX + 1], group[REPORT_GROUP_MAX];
        const char *key;
        struct report_entry *e;

        bool by_model = c->q->kind == REPORT_MODEL || c->q->breakdown == REPORT_BREAKDOWN_MODEL;

        if (by_model) /* "provider/model", or "model" without a provider */
                join(pm, sizeof(pm), provider, provider[0] ? "/" : "", model);
        if (c->q->kind == REPORT_MODEL) {
                key = pm;
        } else if (c->q->kind == REPORT_PROJECT) {
                key = project_of(c, project);
        } else {
                bucket_key(c, ms);
                key = c->span_key;
        }
        if (c->q->kind == REPORT_MODEL || c->q->breakdown == REPORT_BREAKDOWN_HARNESS)
                copy_str(group, sizeof(group), tool);
        else if (c->q->breakdown == REPORT_BREAKDOWN_MODEL)
                join(group, sizeof(group), tool, "\x1f", pm);
        else
                group[0] = 0;
        e = report_groups_get(&c->groups, key, group, party);
        if (e && by_model) {
                copy_str(e->harness, sizeof(e->harness), tool);
                copy_str(e->provider, sizeof(e->provider), provider);
                copy_str(e->model, sizeof(e->model), model);
        }
        return e;
}

static int rollup_cb(const struct report_item *r, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_harness_ok(c->q, r->tool))
                return 0;
        e = group_of(c, r->first_ms, r->tool, r->provider, r->model, "", r->party);
        if (!e)
                return -ENOMEM;
        usage_sums_add(&e->sums, &r->sums);
        return 0;
}

/* Every report but tool from the rows themselves (projects, and cost
 * modes the rollups cannot answer). */
static int row_cb(const struct report_item *r, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_row_ok(c->q, r->tool, r->session, r->project))
                return 0;
        if (c->q->kind == REPORT_SESSION) {
                e = report_groups_get(&c->groups, r->session, r->tool, r->party);
                if (!e)
                        return -ENOMEM;
                if (e->sums.events == 0 || r->first_ms < e->first_ms)
                        e->first_ms = r->first_ms;
                if (e->sums.events == 0 || r->last_ms >= e->last_ms) {
                        e->last_ms = r->last_ms;
                        if (r->model[0])
                                copy_str(e->model, sizeof(e->model), r->model);
                }
                if (!e->project[0])
                        copy_str(e->project, sizeof(e->project), r->project);
                copy_str(e->session, sizeof(e->session), r->session);
        } else {
                if (r->first_ms < c->rg.since_ms || r->first_ms >= c->rg.until_ms)
                        return 0;
                e = group_of(c, r->first_ms, r->tool, r->provider, r->model, r->project, r->party);
                if (!e)
                        return -ENOMEM;
        }
        usage_sums_add(&e->sums, &r->sums);
        return 0;
}

static bool session_in_range(const struct run *c, int64_t first_ms, int64_t last_ms)
{
        return first_ms < c->rg.until_ms && last_ms >= c->rg.since_ms;
}

/* An entry of a session's sums (key: session, group and harness: tool). */
static void session_fill(struct report_entry *e, const struct session_entry *s, const char *party)
{
        memset(e, 0, sizeof(*e));
        copy_str(e->key, sizeof(e->key), s->session);
        copy_str(e->group, sizeof(e->group), s->tool);
        copy_str(e->party, sizeof(e->party), party);
        copy_str(e->harness, sizeof(e->harness), s->tool);
        copy_str(e->session, sizeof(e->session), s->session);
        copy_str(e->project, sizeof(e->project), s->project);
        copy_str(e->model, sizeof(e->model), s->model);
        e->first_ms = s->first_ms;
        e->last_ms = s->last_ms;
        e->sums = s->sums;
}


/* heap[i] older than heap[j] in the report's order */
static bool heap_less(const struct run *c, size_t i, size_t j)
{
        return report_session_cmp(&c->groups.v[c->heap[i]], &c->groups.v[c->heap[j]]) < 0;
}

static void heap_swap(struct run *c, size_t i, size_t j)
{
        uint32_t t = c->heap[i];
        c->heap[i] = c->heap[j];
        c->heap[j] = t;
}

static void heap_up(struct run *c, size_t i)
{
        while (i > 0 && heap_less(c, i, (i - 1) / 2)) {
                heap_swap(c, i, (i - 1) / 2);
                i = (i - 1) / 2;
        }
}

static void heap_down(struct run *c, size_t i)
{
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < c->groups.n && heap_less(c, l, m))
                        m = l;
                if (r < c->groups.n && heap_less(c, r, m))
                        m = r;
                if (m == i)
                        return;
                heap_swap(c, i, m);
                i = m;
        }
}

/* The session among the newest q->limit so far, or not: the oldest kept
 * makes room for a newer one. Memory stays q->limit entries however many
 * sessions the ledger holds. */
static int keep_newest(struct run *c, const struct session_entry *s, const char *party)
{
        struct report_entry *oldest;
        struct report_entry cand;

        c->seen++;
        usage_sums_add(&c->all, &s->sums);
        if (c->groups.n < c->q->limit) {
                if (report_groups_reserve(&c->groups) < 0)
                        return -ENOMEM;
                if (c->heap_cap < c->groups.cap) {
                        uint32_t *nh = reallocarray(c->heap, c->groups.cap, sizeof(*nh));
                        if (!nh)
                                return -ENOMEM;
                        c->heap = nh;
                        c->heap_cap = c->groups.cap;
                }
                session_fill(&c->groups.v[c->groups.n], s, party);
                c->heap[c->groups.n] = (uint32_t)c->groups.n;
                c->groups.n++;
                heap_up(c, c->groups.n - 1);
                return 0;
        }
        oldest = &c->groups.v[c->heap[0]];
        if (s->last_ms < oldest->last_ms)
                return 0; /* the common case: no copy at all */
        session_fill(&cand, s, party);
        if (report_session_cmp(&cand, oldest) <= 0)
                return 0;
        *oldest = cand;
        heap_down(c, 0);
        return 0;
}

static int session_cb(const struct session_entry *s, const char *party, void *u)
{
        struct run *c = u;

        if (!report_row_ok(c->q, s->tool, s->session, s->project) ||
            !session_in_range(c, s->first_ms, s->last_ms))
                return 0;
        if (c->newest_only)
                return keep_newest(c, s, party);
        /* each (session, harness, party) comes once: no index to find it by */
        if (report_groups_reserve(&c->groups) < 0)
                return -ENOMEM;
        session_fill(&c->groups.v[c->groups.n++], s, party);
        return 0;
}

static int calls_cb(const struct report_calls *a, void *u)
{
        struct run *c = u;
        struct report_entry *e;

        if (!report_harness_ok(c->q, a->tool))
                return 0;
        e = report_groups_get(&c->groups, a->name, a->tool, a->party);
        if (!e)
                return -ENOMEM;
        e->calls += a->calls;
        e->priced_calls += a->priced_calls;
        e->share_nano += a->share_nano;
        return 0;
}

/* ---- result ------------------------------------------------------------- */

/* Drops the sessions (built from rows) outside the range. */
static void keep_sessions_in_range(struct run *c)
{
        size_t k = 0;
        for (size_t i = 0; i < c->groups.n; i++)
                if (session_in_range(c, c->groups.v[i].first_ms, c->groups.v[i].last_ms))
                        memmove(&c->groups.v[k++], &c->groups.v[i], sizeof(c->groups.v[i]));
        c->groups.n = k;
}

void report_result_finish(const struct report_query *q, struct report_entry *rows, size_t n,
                          struct report_result *res)
{
        int (*cmp)(const void *, const void *) = q->kind == REPORT_SESSION ? report_session_cmp
                                                 : q->kind == REPORT_TOOL  ? report_tool_cmp
                                                                           : report_key_cmp;

        report_sort_entries(rows, n, cmp);
        *res = (struct report_result){.kind = q->kind, .rows = rows, .n = n, .rows_total = n};
        for (size_t i = 0; i < res->n; i++) {
                const struct report_entry *e = &res->rows[i];
                if (q->kind == REPORT_TOOL) {
                        res->calls += e->calls;
                        res->priced_calls += e->priced_calls;
                        res->share_nano += e->share_nano;
                } else {
                        usage_sums_add(&res->totals, &e->sums);
                }
        }
        /* a session limit: the newest (the last in this order), the totals
         * of all */
        if (q->kind == REPORT_SESSION && q->limit && n > q->limit) {
                memmove(rows, rows + (n - q->limit), q->limit * sizeof(*rows));
                res->n = q->limit;
        }
}

static void finish(struct run *c, struct report_result *res)
{
        report_result_finish(c->q, c->groups.v, c->groups.n, res);
        c->groups.v = NULL;
        if (c->newest_only) { /* the kept ones are summed; the report sums all */
                res->totals = c->all;
                res->rows_total = c->seen;
        }
}

/* Rollups in [from, until), when that is not empty. */
static int scan(struct run *c, int64_t from_ms, int64_t until_ms)
{
        return from_ms < until_ms ? c->src->rollups(c->src->ctx, c->q, from_ms, until_ms, rollup_cb, c) : 0;
}

/* Every report but tool from the rows themselves: projects, cost modes
 * the rollups cannot answer, filters they do not keep. */
static bool from_rows(const struct report_query *q)
{
        return q->cost == REPORT_COST_VENDOR || q->kind == REPORT_PROJECT ||
               (report_query_filtered(q) && q->kind != REPORT_SESSION);
}

bool report_reads_rollups(const struct report_query *q)
{
        return !from_rows(q) && (q->kind == REPORT_DAILY || q->kind == REPORT_WEEKLY ||
                                 q->kind == REPORT_MONTHLY || q->kind == REPORT_MODEL);
}

int report_add_rollups(const struct report_source *src, const struct report_query *q,
                       struct report_groups *groups, int64_t from_ms, int64_t until_ms)
{
        struct run c = {.q = q, .src = src, .groups = *groups};
        int r = scan(&c, from_ms, until_ms);

        *groups = c.groups;
        report_groups_free(&c.roots);
        return r;
}

static int build(const struct report_source *src, const struct report_query *q,
                 struct report_result *ret_result, const char **ret_error)
{
        struct run c = {.q = q, .src = src};
        int r;

        r = report_query_range(q, &c.rg, ret_error);
        if (r < 0)
                return r;
        if (q->kind == REPORT_BLOCKS) /* built on top: report/blocks.c */
                return report_fail(ret_error, -EINVAL, "blocks are built by report_blocks_build");
        if (q->kind == REPORT_TOOL) {
                r = src->calls(src->ctx, q, &c.rg, calls_cb, &c);
        } else if (from_rows(q)) {
                r = src->rows(src->ctx, q, row_cb, &c);
                if (r >= 0 && q->kind == REPORT_SESSION)
                        keep_sessions_in_range(&c);
        } else if (q->kind == REPORT_SESSION) {
                c.newest_only = q->limit > 0;
                r = src->sessions(src->ctx, q, session_cb, &c);
        } else {
                r = scan(&c, c.rg.since_ms, c.rg.until_ms);
        }
        if (r < 0)
                report_fail(ret_error, r, "reading the %s: %s", src->ledger ? "ledger" : "team server",
                            strerror(-r));
        else
                finish(&c, ret_result);
        report_groups_free(&c.groups);
        report_groups_free(&c.roots);
        free(c.heap);
        return r < 0 ? r : 0;
}

int report_build(struct ledger *l, const struct report_query *q, struct report_result *ret_result,
                 const char **ret_error)
{
        struct report_source src;
        report_source_ledger(l, &src);
        return build(&src, q, ret_result, ret_error);
}

int report_build_from(const struct report_source *src, const struct report_query *q,
                      struct report_result *ret_result, const char **ret_error)
{
        return build(src, q, ret_result, ret_error);
}

void report_result_free(struct report_result *res)
{
        if (!res)
                return;
        free(res->rows);
        *res = (struct report_result){0};
}
