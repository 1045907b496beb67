/* `agentmeterctl report`: the request from the options, the report from the
 * daemon, from the ledger itself when no daemon answers, or from the team
 * ledger (--team), rendered as a table, CSV, JSON, a chart or a page. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "chart.h"
#include "client.h"
#include "complete/complete.h"
#include "fmt.h"
#include "html/report.h"
#include "jfield.h"
#include "ledger/ledger.h"
#include "origins.h"
#include "paths.h"
#include "proto.h"
#include "registry.h"
#include "render/render.h"
#include "report/report.h"
#include "install/service.h"
#include "cleanup.h"
#include "statusline.h"
#include "team/team.h"
#include "render/status.h"
#include "timefmt.h"
#include "top/top.h"


static bool valid_day(const char *s)
{
        int y, m, d, n = 0;
        return strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) == 3 && n == 10 &&
               m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/* The zone the user's days are in: $TZ, else the name /etc/localtime
 * links to, else NULL (the daemon's local time: the same machine). */
const char *cli_local_zone(char *buf, size_t cap)
{
        const char *tz = getenv("TZ");
        ssize_t n;
        char *z;

        if (tz && *tz) {
                /* a zoneinfo path is sent as its name; a TZ the daemon would
                 * refuse (a POSIX rule, another path) falls back to localtime */
                tz += tz[0] == ':';
                if (tz[0] == '/' && (z = strstr(tz, "zoneinfo/")))
                        tz = z + strlen("zoneinfo/");
                if (timefmt_zone_valid(tz) == 0)
                        return tz;
        }
        n = readlink("/etc/localtime", buf, cap - 1);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        z = strstr(buf, "zoneinfo/");
        return z ? z + strlen("zoneinfo/") : NULL;
}

/* The table, CSV, JSON, or with --chart the cost bars. */
static int show_report(struct args *a, struct json_object *rep, enum render_format fmt)
{
        if (a->seen & O_CHART)
                return chart_render(stdout, rep, chart_width(stdout));
        return render_report(stdout, rep, fmt, isatty(STDOUT_FILENO));
}

/* No daemon: the report of request req from the ledger, read-only, by this
 * process (the same query the daemon would build from req). 0, or minus an
 * exit status. Says once on stderr that it read the ledger itself. */
static int report_from_ledger(struct args *a, struct json_object *req, struct json_object **ret_rep)
{
        static bool said;
        _cleanup_(ledger_closep) struct ledger *l = NULL;
        struct report_query q;
        char dir[PATH_MAX];
        const char *err = NULL;
        int r;

        r = report_query_from_json(req, &q, &err);
        if (r < 0)
                return -cli_usage_error("%s", err ? err : "invalid report query");
        if (a->state_dir)
                snprintf(dir, sizeof(dir), "%s", a->state_dir);
        else if ((r = paths_state_dir(dir, sizeof(dir))) < 0) {
                fprintf(stderr, "agentmeterctl: cannot find the state directory: %s\n", strerror(-r));
                return -EXIT_ERR;
        }
        r = ledger_open(dir, LEDGER_RDONLY, &l);
        if (r == -ENOENT) {
                cli_no_daemon_message(cli_socket_path(a));
                fprintf(stderr, "agentmeterctl: and there is no ledger in %s yet\n", dir);
                return -EXIT_NODAEMON;
        }
        if (r < 0) {
                const char *why = ledger_open_error();
                fprintf(stderr, "agentmeterctl: cannot read the ledger in %s: %s\n", dir,
                        why && *why ? why : strerror(-r));
                return -EXIT_ERR;
        }
        /* a session's origin from this shell's own discovery (the daemon
         * would use its own, the same when install recorded the variables) */
        struct root_list roots = { 0 };
        struct origins_ctx oc = { l, &roots };
        if (q.kind == REPORT_SESSION && registry_discover(&registry_process_env, &roots) >= 0) {
                q.annotate = origins_annotate_cb;
                q.annotate_u = &oc;
        }
        r = report_run(l, &q, ret_rep, &err);
        root_list_free(&roots);
        if (r == -EINVAL)
                return -cli_usage_error("%s", err ? err : "invalid report query");
        if (r < 0) {
                fprintf(stderr, "agentmeterctl: report failed: %s\n", err ? err : strerror(-r));
                return -EXIT_ERR;
        }
        if (!said)
                fprintf(stderr, "agentmeterctl: no agentmeterd is answering on %s; read the ledger %s "
                                "directly (read-only)\n", cli_socket_path(a), ledger_path(l));
        said = true;
        return 0;
}

/* The --machine and --user lists of the command line into q (pointing
 * into bufs). */
static int party_lists(struct args *a, struct report_query *q, char bufs[2][1024])
{
        for (int k = 0; k < 2; k++) {
                const char **list = k ? q->users : q->machines;
                char *save = NULL, *b = bufs[k];
                size_t n = 0;
                snprintf(b, 1024, "%s", k ? a->users : a->machines);
                for (char *t = strtok_r(b, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                        if (n + 1 >= REPORT_PARTY_FILTER_MAX)
                                return cli_usage_error("too many names in %s", k ? "--user" : "--machine");
                        list[n++] = t;
                }
        }
        return EXIT_OK;
}

/* --team: the report of request req from the team server, through the
 * same query and builder as a local one. 0, or minus an exit status. */
static int report_from_team(struct args *a, struct json_object *req, struct json_object **ret_rep)
{
        struct report_query q;
        char bufs[2][1024], msg[1024];
        const char *err = NULL;
        int r = report_query_from_json(req, &q, &err);

        if (r < 0)
                return -cli_usage_error("%s", err ? err : "invalid report query");
        q.team = true;
        if (a->by)
                (void)report_by_parse(a->by, &q.by); /* checked by cli_cmd_report */
        r = party_lists(a, &q, bufs);
        if (r != EXIT_OK)
                return -r;
        r = team_report(a->url, &q, ret_rep, msg, sizeof(msg));
        if (r == -EINVAL)
                return -cli_usage_error("%s", msg);
        if (r < 0) {
                fprintf(stderr, "agentmeterctl: %s\n", msg);
                return -EXIT_ERR;
        }
        return 0;
}

/* The report of request req: the daemon's answer, as its text (*ret_line,
 * when ret_line is given and the daemon answered) or parsed (*ret_rep);
 * with no daemon answering, the ledger's. 0, or minus an exit status. */
static int fetch_report(struct args *a, struct json_object *req, char **ret_line, size_t *ret_len,
                        struct json_object **ret_rep)
{
        char *line = NULL, *detail = NULL;
        size_t len;
        int r;

        if (a->seen & O_TEAM) /* the team server, not the daemon */
                return report_from_team(a, req, ret_rep);
        r = client_call_line(cli_socket_path(a), "report", req, 120000, &line, &len, &detail);

        if (client_no_daemon(r))
                return report_from_ledger(a, req, ret_rep);
        if (r >= 0 && ret_line) {
                *ret_line = line;
                *ret_len = len;
                return 0;
        }
        if (r >= 0)
                r = client_take(line, len, ret_rep, &detail);
        free(line);
        if (r < 0) {
                r = cli_call_failed(a, r, detail);
                free(detail);
                return -r;
        }
        return 0;
}

/* The sessions a session report lists: --all every one (0), --limit N,
 * else the newest CLI_SESSION_LIMIT. */
static long long session_limit(const struct args *a)
{
        if (a->seen & O_ALL)
                return 0;
        if (a->limit)
                return strtoll(a->limit, NULL, 10);
        return CLI_SESSION_LIMIT;
}

/* --limit's value: a whole number 0 .. REPORT_LIMIT_MAX (0: every session). */
static bool valid_limit(const char *s)
{
        char *end;
        long long n;

        if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
                return false;
        n = strtoll(s, &end, 10);
        return *end == 0 && n >= 0 && n <= REPORT_LIMIT_MAX;
}

/* The report request: kind, range, zone, filters and modes. NULL on
 * ENOMEM; *ret_bad names an unknown --harness id (NULL otherwise). */
static struct json_object *report_request(struct args *a, enum report_kind kind, const char *tz,
                                          const char *breakdown, char *bad, size_t bad_cap)
{
        struct json_object *req = json_object_new_object();

        if (!req)
                return NULL;
        if (breakdown)
                json_object_object_add(req, "breakdown", json_object_new_string(breakdown));
        if (a->week_start)
                json_object_object_add(req, "week_start", json_object_new_string(a->week_start));
        if (a->seen & O_MERGE_WT)
                json_object_object_add(req, "merge_worktrees", json_object_new_boolean(1));
        if (a->cost)
                json_object_object_add(req, "cost", json_object_new_string(a->cost));
        json_object_object_add(req, "report", json_object_new_string(report_kind_name(kind)));
        if (a->since)
                json_object_object_add(req, "since", json_object_new_string(a->since));
        if (a->until)
                json_object_object_add(req, "until", json_object_new_string(a->until));
        if (tz)
                json_object_object_add(req, "tz", json_object_new_string(tz));
        if (a->session)
                json_object_object_add(req, "session", json_object_new_string(a->session));
        if (a->project)
                json_object_object_add(req, "project", json_object_new_string(a->project));
        if (kind == REPORT_SESSION) /* checked by cli_cmd_report */
                json_object_object_add(req, "limit", json_object_new_int64(session_limit(a)));
        if (a->harness[0]) {
                struct json_object *h = json_object_new_array();
                char copy[sizeof(a->harness)], *save = NULL;
                snprintf(copy, sizeof(copy), "%s", a->harness);
                for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
                        if (!registry_find(id)) {
                                snprintf(bad, bad_cap, "%s", id);
                                json_object_put(h);
                                json_object_put(req);
                                return NULL;
                        }
                        json_object_array_add(h, json_object_new_string(id));
                }
                json_object_object_add(req, "harness", h);
        }
        return req;
}

/* --html: the report, and for the kinds whose cost chart stacks by model
 * the same report broken down by model. */
static int report_html(struct args *a, struct json_object *req, enum report_kind kind, const char *tz)
{
        _cleanup_json_ struct json_object *rep = NULL, *by = NULL, *req2 = NULL;
        char when[FMT_MAX], bad[64] = "";
        struct json_object *now = json_object_new_object();
        int r = fetch_report(a, req, NULL, NULL, &rep);

        if (r < 0) {
                json_object_put(now);
                return -r;
        }
        if (html_wants_series(report_kind_name(kind), a->breakdown)) {
                req2 = report_request(a, kind, tz, "model", bad, sizeof(bad));
                /* no stacking is no reason to fail: the page draws one series */
                if (req2 && fetch_report(a, req2, NULL, NULL, &by) < 0)
                        by = NULL;
        }
        if (now)
                json_object_object_add(now, "t", json_object_new_int64(timefmt_now_ms()));
        fmt_time(now, "t", when);
        json_object_put(now);
        r = html_report(stdout, rep, by, when);
        if (r == -EINVAL) {
                fputs("agentmeterctl: the report has no \"rows\" list\n", stderr);
                return EXIT_ERR;
        }
        return r < 0 ? EXIT_ERR : EXIT_OK;
}

int cli_cmd_report(struct args *a)
{
        _cleanup_json_ struct json_object *req = NULL, *rep = NULL;
        enum render_format fmt = a->seen & O_JSON ? RENDER_JSON
                                 : a->seen & O_CSV ? RENDER_CSV
                                                   : RENDER_TABLE;
        enum report_kind kind;
        enum report_cost cost;
        enum report_breakdown bd;
        int wday;
        char zbuf[PATH_MAX], bad[64] = "";
        const char *tz = a->tz ? a->tz : cli_local_zone(zbuf, sizeof(zbuf));
        int n_formats = !!(a->seen & O_JSON) + !!(a->seen & O_CSV) + !!(a->seen & O_CHART) +
                        !!(a->seen & O_HTML);
        int r;

        if ((a->seen & O_JSON) && (a->seen & O_CSV))
                return cli_usage_error("%s", "--json and --csv exclude each other");
        if ((a->seen & O_CHART) && (a->seen & (O_JSON | O_CSV)))
                return cli_usage_error("%s", "--chart draws for people; it excludes --json and --csv");
        if (n_formats > 1)
                return cli_usage_error("%s", "--html is a page of its own; it excludes --json, --csv and --chart");
        if ((a->seen & O_CHART) && strcmp(a->pos[1], "daily") != 0 &&
            strcmp(a->pos[1], "weekly") != 0 && strcmp(a->pos[1], "monthly") != 0)
                return cli_usage_error("--chart is for daily, weekly and monthly reports, not '%s'",
                                   a->pos[1]);
        if (report_kind_parse(a->pos[1], &kind) < 0)
                return cli_usage_error("unknown report '%s' (daily, weekly, monthly, project, blocks, session, "
                                   "model, tool)",
                                   a->pos[1]);
        if (a->since && !valid_day(a->since))
                return cli_usage_error("--since wants YYYY-MM-DD, not '%s'", a->since);
        if (a->until && !valid_day(a->until))
                return cli_usage_error("--until wants YYYY-MM-DD, not '%s'", a->until);
        if (a->cost && report_cost_parse(a->cost, &cost) < 0)
                return cli_usage_error("--cost wants auto, vendor or computed, not '%s'", a->cost);
        if (a->breakdown && (report_breakdown_parse(a->breakdown, &bd) < 0 || bd == REPORT_BREAKDOWN_NONE))
                return cli_usage_error("--breakdown wants model or harness, not '%s'", a->breakdown);
        if (a->breakdown && kind != REPORT_DAILY && kind != REPORT_WEEKLY && kind != REPORT_MONTHLY &&
            kind != REPORT_PROJECT)
                return cli_usage_error("%s", "--breakdown applies to daily, weekly, monthly and project");
        if (a->week_start && report_week_start_parse(a->week_start, &wday) < 0)
                return cli_usage_error("--week-start wants a day name (monday .. sunday), not '%s'",
                                   a->week_start);
        if (a->week_start && kind != REPORT_WEEKLY)
                return cli_usage_error("%s", "--week-start applies to the weekly report");
        if ((a->seen & O_MERGE_WT) && kind != REPORT_PROJECT)
                return cli_usage_error("%s", "--merge-worktrees applies to the project report");
        if ((a->seen & (O_LIMIT | O_ALL)) && kind != REPORT_SESSION)
                return cli_usage_error("%s", "--limit and --all apply to the session report");
        if ((a->seen & O_LIMIT) && (a->seen & O_ALL))
                return cli_usage_error("%s", "--limit and --all exclude each other");
        if ((a->seen & O_LIMIT) && !valid_limit(a->limit))
                return cli_usage_error("--limit wants a whole number of sessions (0: all), not '%s'",
                                       a->limit);
        if ((a->session && !*a->session) || (a->project && !*a->project))
                return cli_usage_error("%s", "--session and --project want a value");
        if ((a->seen & (O_BY | O_MACHINE | O_USER | O_URL)) && !(a->seen & O_TEAM))
                return cli_usage_error("%s", "--by, --machine, --user and --url apply to --team reports");
        enum report_by by;
        if (a->by && report_by_parse(a->by, &by) < 0)
                return cli_usage_error("--by wants machine or user, not '%s'", a->by);
        req = report_request(a, kind, tz, a->breakdown, bad, sizeof(bad));
        if (!req && bad[0])
                return cli_usage_error("unknown harness '%s'", bad);
        if (!req)
                return EXIT_ERR;
        if (a->seen & O_HTML)
                return report_html(a, req, kind, tz);

        char *line = NULL;
        const char *text;
        size_t len = 0, text_len;
        /* --json into a pipe or file: the daemon's text is what printing
         * its parse would give (jsonw.h), so it goes out as it came */
        bool raw = fmt == RENDER_JSON && !isatty(STDOUT_FILENO);
        r = fetch_report(a, req, raw ? &line : NULL, &len, &rep);
        if (r < 0)
                return -r;
        if (line && proto_ok_result_text(line, len, &text, &text_len) == 0) {
                bool written = fwrite(text, 1, text_len, stdout) == text_len && putchar('\n') != EOF;
                free(line);
                return written ? EXIT_OK : EXIT_ERR;
        }
        if (line) {
                char *detail = NULL;
                r = client_take(line, len, &rep, &detail);
                free(line);
                if (r < 0) {
                        r = cli_call_failed(a, r, detail);
                        free(detail);
                        return r;
                }
        }
        if (show_report(a, rep, fmt) < 0) {
                fputs("agentmeterctl: the daemon's report has no \"rows\" list\n", stderr);
                return EXIT_ERR;
        }
        return EXIT_OK;
}
