/* agentmeterctl: the command line to agentmeterd. Parses the command and
 * its options, asks the daemon over the control socket (or reads the ledger
 * itself for `report` when no daemon answers) and renders the answer. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chart.h"
#include "cli.h"
#include "client.h"
#include "complete/complete.h"
#include "fmt.h"
#include "html/report.h"
#include "jfield.h"
#include "ledger/ledger.h"
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
#include "web/listen.h"
#include "web/web.h"

struct command {
        const char *name;
        int (*run)(struct args *a);
        unsigned allowed;
        int n_pos; /* positional arguments after the command */
        enum complete_value positional; /* what they are, for completion */
        const char *help;               /* one line, for completion */
};

static const char usage_text[] =
        "Usage: agentmeterctl [--socket PATH] [--state-dir DIR] COMMAND [OPTIONS]\n"
        "\n"
        "Commands:\n"
        "  status [--json]                 daemon, ledger, scan progress, every harness root\n"
        "  sources [--json]                every file the daemon reads, with its counters\n"
        "  report daily|weekly|monthly|project|blocks|session|model|tool [--since YYYY-MM-DD]\n"
        "         [--until YYYY-MM-DD] [--tz ZONE] [--harness ID,...] [--cost auto|vendor|computed]\n"
        "         [--breakdown model|harness] [--week-start DAY] [--merge-worktrees]\n"
        "         [--session ID] [--project PATH] [--limit N|--all] [--json|--csv|--chart|--html]\n"
        "         [--team [--by machine|user] [--machine NAME,...] [--user NAME,...] [--url URL]]\n"
        "                                  token and cost report (--html: one self-contained page;\n"
        "                                  --team: every machine's, from the team ledger, team.conf;\n"
        "                                  session: the newest 50, --limit N or --all for more)\n"
        "  tail [--json]                   print rows as the daemon commits them (Ctrl-C ends)\n"
        "  top                             live full-screen view: spend, 5-hour block, last\n"
        "                                  calls (g: grouping, q: quit); lines when piped\n"
        "  metrics                         the Prometheus metrics the daemon exports\n"
        "  statusline [--format FMT] [--json]  one line for Claude Code's statusLine (reads its\n"
        "                                  JSON on stdin; never waits more than 50 ms for the daemon)\n"
        "  rescan                          ask the daemon to re-discover and reconcile\n"
        "  reprice                         reload the price table and override, re-price\n"
        "                                  every row agentmeterd priced (vendor costs stay)\n"
        "  version                         client and daemon versions\n"
        "  web [--listen HOST:PORT] [--team [--url URL]]\n"
        "                                  live dashboard in the browser; prints the URL with\n"
        "                                  its secret first (default 127.0.0.1:8791)\n"
        "  web --url                       the URL (with the secret) of the installed web socket\n"
        "  install [--no-start] [--force] [--metrics-dir DIR] [--web [--listen HOST:PORT]]\n"
        "                                  set up the systemd user unit with this shell's\n"
        "                                  discovery variables; enable and (re)start it;\n"
        "                                  DIR: node_exporter's textfile directory;\n"
        "                                  --web: also the socket-activated web dashboard\n"
        "  uninstall                       stop, disable, remove what install wrote\n"
        "  team init [--url URL]           create or migrate the team ledger's schema (PostgreSQL)\n"
        "  completion bash|zsh|fish        print the shell's completion script\n"
        "  help                            this text\n"
        "\n"
        "Exit status: 0 ok, 1 error, 2 usage error, 3 no agentmeterd answering.\n"
        "See agentmeterctl(1).\n";

static int cmd_status(struct args *a)
{
        _cleanup_json_ struct json_object *st = NULL;
        int r = cli_call(a, "status", NULL, 10000, &st);
        bool json = a->seen & O_JSON;

        if (r < 0)
                return -r;
        if (json)
                cli_print_json(st);
        else if (render_status(stdout, st) < 0)
                return EXIT_ERR;
        render_env_mismatch(json ? stderr : stdout, st, registry_env_vars(), cli_process_get, NULL);
        return EXIT_OK;
}

static int cmd_sources(struct args *a)
{
        _cleanup_json_ struct json_object *res = NULL;
        int r = cli_call(a, "sources", NULL, 30000, &res);

        if (r < 0)
                return -r;
        if (a->seen & O_JSON)
                return cli_print_json(res);
        if (render_sources(stdout, res) < 0) {
                fputs("agentmeterctl: the daemon's sources answer has no \"sources\" list\n", stderr);
                return EXIT_ERR;
        }
        return EXIT_OK;
}
static int on_tail_event(struct json_object *ev, void *u)
{
        bool json = *(bool *)u;
        const char *kind = jstr(ev, "event");
        struct json_object *row = jfield(ev, "row");
        int r;

        if (!kind || strcmp(kind, "row") != 0 || !row)
                return 0;
        if (json) {
                printf("%s\n", json_object_to_json_string_ext(row, JSON_C_TO_STRING_PLAIN |
                                                                      JSON_C_TO_STRING_NOSLASHESCAPE));
                r = fflush(stdout) != 0 ? -errno : 0;
        } else {
                r = render_tail_row(stdout, row) < 0 ? -errno : 0;
        }
        return r < 0 ? (r == -EPIPE ? -EPIPE : -EIO) : 0;
}

static int cmd_tail(struct args *a)
{
        bool json = a->seen & O_JSON;
        char *detail = NULL;
        int r;

        if (isatty(STDERR_FILENO))
                fprintf(stderr, "following agentmeterd on %s; Ctrl-C ends\n", cli_socket_path(a));
        r = client_tail(cli_socket_path(a), on_tail_event, &json, &detail);
        if (r == -EPIPE)
                r = 0; /* the reader went away: e.g. `agentmeterctl tail | head` */
        if (r < 0)
                r = cli_call_failed(a, r, detail);
        free(detail);
        return r;
}

static int cmd_top(struct args *a)
{
        char zbuf[PATH_MAX];
        struct top_options o = { .socket_path = cli_socket_path(a), .state_dir = a->state_dir,
                                 .tz = cli_local_zone(zbuf, sizeof(zbuf)) };
        int r = top_run(&o);
        return r < 0 ? cli_call_failed(a, r, NULL) : EXIT_OK;
}

static void print_scalars(struct json_object *res, const char *prefix)
{
        json_object_object_foreach(res, k, v)
                if (v && !json_object_is_type(v, json_type_object) &&
                    !json_object_is_type(v, json_type_array))
                        printf("%s%s: %s\n", prefix, k, json_object_get_string(v));
}

static int cmd_rescan(struct args *a)
{
        _cleanup_json_ struct json_object *res = NULL;
        int r = cli_call(a, "rescan", NULL, 30000, &res);

        if (r < 0)
                return -r;
        puts("agentmeterd: rescan requested");
        print_scalars(res, "  ");
        return EXIT_OK;
}

static int cmd_reprice(struct args *a)
{
        _cleanup_json_ struct json_object *res = NULL;
        char d[FMT_MAX], n[FMT_MAX];
        int r = cli_call(a, "reprice", NULL, 600000, &res);
        int64_t delta = jint_or(res, "cost_delta_nano", 0);

        if (r < 0)
                return -r;
        /* micro-dollars, as reports show them */
        long long micro = (long long)(((delta < 0 ? -delta : delta) + 500) / 1000);
        printf("agentmeterd: repriced with the table of %s%s: %s of %s rows changed, cost %s$%lld.%06lld\n",
               jstr(res, "table") ? jstr(res, "table") : "-",
               jbool(res, "override_loaded") ? " and the override" : "",
               fmt_i64(jint_or(res, "rows_changed", 0), d), fmt_i64(jint_or(res, "rows_seen", 0), n),
               delta < 0 ? "-" : "+", micro / 1000000, micro % 1000000);
        if (jstr(res, "override_error"))
                printf("warning: price override ignored: %s\n", jstr(res, "override_error"));
        return EXIT_OK;
}

static int cmd_version(struct args *a)
{
        _cleanup_json_ struct json_object *res = NULL;
        int r;

        printf("agentmeterctl %s\n", AM_VERSION);
        fflush(stdout);
        r = cli_call(a, "version", NULL, 5000, &res);
        if (r < 0)
                return -r;
        printf("agentmeterd %s\n", jstr(res, "version") ? jstr(res, "version") : "(unknown)");
        return EXIT_OK;
}

static int cmd_web(struct args *a)
{
        char zbuf[PATH_MAX];
        struct web_options o = { .listen = a->listen, .socket_path = cli_socket_path(a), .state_dir = a->state_dir,
                                 .tz = cli_local_zone(zbuf, sizeof(zbuf)), .team = a->seen & O_TEAM,
                                 .team_url = a->url, .print_url = a->seen & O_PRINT_URL };

        if (o.print_url && (a->seen & (O_TEAM | O_URL)))
                return cli_usage_error("%s", "web --url prints the page's address; it takes no --team");
        if ((a->seen & O_URL) && !(a->seen & O_TEAM))
                return cli_usage_error("%s", "web: --url URL names the team server: give --team too");
        return web_run(&o);
}

static int cmd_install(struct args *a)
{
        int r;

        if (a->metrics_dir && (a->metrics_dir[0] != '/' || strpbrk(a->metrics_dir, " \t\n\"'\\%$")))
                return cli_usage_error("--metrics-dir wants an absolute directory without blanks, quotes, "
                                   "%% or $, not '%s'", a->metrics_dir);
        if (a->listen && !(a->seen & O_WEB))
                return cli_usage_error("%s", "install: --listen applies to --web");
        if (a->seen & O_WEB) {
                struct web_listen l;
                char why[512];
                if (!a->listen)
                        a->listen = WEB_DEFAULT_LISTEN;
                if (web_listen_parse(a->listen, &l, why, sizeof(why)) < 0)
                        return cli_usage_error("%s", why);
        }
        r = service_install(a->seen & O_NOSTART, a->seen & O_FORCE, a->metrics_dir,
                            a->seen & O_WEB ? a->listen : NULL, stdout, stderr);
        return r < 0 ? EXIT_ERR : EXIT_OK;
}

static int cmd_uninstall(struct args *a)
{
        (void)a;
        return service_uninstall(stdout, stderr) < 0 ? EXIT_ERR : EXIT_OK;
}

static int cmd_metrics(struct args *a)
{
        _cleanup_json_ struct json_object *res = NULL;
        int r = cli_call(a, "metrics", NULL, 30000, &res);
        const char *text;

        if (r < 0)
                return -r;
        text = jstr(res, "text");
        if (!text) {
                fputs("agentmeterctl: the daemon's metrics answer has no \"text\"\n", stderr);
                return EXIT_ERR;
        }
        fputs(text, stdout);
        return EXIT_OK;
}

#define STATUSLINE_WAIT_MS 50

static int cmd_statusline(struct args *a)
{
        _cleanup_json_ struct json_object *input = NULL, *req = NULL, *answer = NULL;
        char zbuf[PATH_MAX], *detail = NULL;
        const char *why = NULL;
        int r;

        /* Claude Code pipes the JSON and closes stdin: the read is quick;
         * anything else (a terminal, garbage) gets the fallback line */
        r = statusline_read_input(STDIN_FILENO, STATUSLINE_WAIT_MS, &input);
        if (r == -EBADMSG || r == -E2BIG)
                why = "status input is not JSON";
        else if (r == -ETIMEDOUT)
                why = "no status input";
        if (!why) {
                req = statusline_request(input, a->tz ? a->tz : cli_local_zone(zbuf, sizeof(zbuf)));
                if (req && a->harness[0]) /* another harness's session and block */
                        json_object_object_add(req, "harness", json_object_new_string(a->harness));
                r = req ? client_call(cli_socket_path(a), "statusline", req, STATUSLINE_WAIT_MS, &answer,
                                      &detail)
                        : -ENOMEM;
                if (r < 0)
                        why = client_no_daemon(r) ? "agentmeterd is not running"
                              : r == -ETIMEDOUT   ? "agentmeterd is busy"
                              : r == -EREMOTEIO   ? "agentmeterd refused the request"
                                                  : "agentmeterd did not answer";
                free(detail);
        }
        if (a->seen & O_JSON)
                statusline_print_json(stdout, input, why ? NULL : answer, why);
        else
                statusline_print(stdout, a->format, input, why ? NULL : answer, why);
        return EXIT_OK; /* the status line shows what went wrong; Claude Code needs no status */
}

static int cmd_team(struct args *a)
{
        if (strcmp(a->pos[1], "init") == 0)
                return team_init(a->url, stdout, stderr);
        return cli_usage_error("unknown team command '%s' (init)", a->pos[1]);
}

static int cmd_help(struct args *a)
{
        (void)a;
        fputs(usage_text, stdout);
        return EXIT_OK;
}

static int cmd_completion(struct args *a);
static int cmd_complete(struct args *a);

static const struct command commands[] = {
        { "status", cmd_status, O_JSON, 0, CV_NONE, "daemon, ledger, scan progress, every harness root" },
        { "sources", cmd_sources, O_JSON, 0, CV_NONE, "every file the daemon reads" },
        { "report", cli_cmd_report, O_JSON | O_CSV | O_SINCE | O_UNTIL | O_TZ | O_HARNESS | O_COST | O_BREAKDOWN |
                                  O_WEEK_START | O_MERGE_WT | O_CHART | O_HTML | O_SESSION | O_PROJECT |
                                  O_TEAM | O_BY | O_MACHINE | O_USER | O_URL | O_LIMIT | O_ALL,
          1, CV_KIND, "token and cost report" },
        { "team", cmd_team, O_URL, 1, CV_TEAM, "the team ledger's schema" },
        { "tail", cmd_tail, O_JSON, 0, CV_NONE, "print rows as the daemon commits them" },
        { "top", cmd_top, 0, 0, CV_NONE, "live full-screen view" },
        { "metrics", cmd_metrics, 0, 0, CV_NONE, "the Prometheus metrics" },
        { "statusline", cmd_statusline, O_JSON | O_FORMAT | O_TZ | O_HARNESS, 0, CV_NONE,
          "one line for Claude Code's statusLine" },
        { "rescan", cmd_rescan, 0, 0, CV_NONE, "re-discover and reconcile" },
        { "reprice", cmd_reprice, 0, 0, CV_NONE, "reload the prices, re-price" },
        { "version", cmd_version, 0, 0, CV_NONE, "client and daemon versions" },
        { "web", cmd_web, O_LISTEN | O_TEAM | O_URL | O_PRINT_URL, 0, CV_NONE, "live dashboard in the browser" },
        { "install", cmd_install, O_NOSTART | O_FORCE | O_METRICS_DIR | O_WEB | O_LISTEN, 0, CV_NONE,
          "set up the systemd user unit" },
        { "uninstall", cmd_uninstall, 0, 0, CV_NONE, "stop, disable, remove what install wrote" },
        { "completion", cmd_completion, 0, 1, CV_SHELL, "print a shell's completion script" },
        { "help", cmd_help, 0, 0, CV_NONE, "usage" },
        /* the completion scripts' question: the rest of the line is words, not options */
        { "__complete", cmd_complete, ~0u, 0, CV_NONE, NULL },
};

/* Every option: getopt's table is made from this one, and completion
 * offers each where the command allows it (bit 0: everywhere). */
static const struct complete_option options[] = {
        { "json", no_argument, 'j', O_JSON, CV_NONE, "JSON output" },
        { "csv", no_argument, 'c', O_CSV, CV_NONE, "RFC 4180 CSV" },
        { "chart", no_argument, 'k', O_CHART, CV_NONE, "cost bars in the terminal" },
        { "html", no_argument, 'L', O_HTML, CV_NONE, "one self-contained HTML page" },
        { "since", required_argument, 's', O_SINCE, CV_TEXT, "first day, YYYY-MM-DD" },
        { "until", required_argument, 'u', O_UNTIL, CV_TEXT, "last day, YYYY-MM-DD" },
        { "tz", required_argument, 'z', O_TZ, CV_ZONE, "time zone of the days" },
        { "harness", required_argument, 'H', O_HARNESS, CV_HARNESS, "only these harnesses" },
        { "session", required_argument, 'I', O_SESSION, CV_SESSION, "only this session" },
        { "project", required_argument, 'P', O_PROJECT, CV_PROJECT, "only this project" },
        { "limit", required_argument, 'N', O_LIMIT, CV_TEXT, "session: the newest N sessions" },
        { "all", no_argument, 'A', O_ALL, CV_NONE, "session: every session, not the newest 50" },
        { "team", no_argument, 'T', O_TEAM, CV_NONE, "every machine's, from the team ledger" },
        { "by", required_argument, 'b', O_BY, CV_PARTY, "team rows per machine or user" },
        { "machine", required_argument, 'm', O_MACHINE, CV_TEXT, "team: only these machines" },
        { "user", required_argument, 'U', O_USER, CV_TEXT, "team: only these users" },
        { "url", required_argument, 'R', O_URL, CV_TEXT, "team: this server, not team.conf's" },
        { "cost", required_argument, 'C', O_COST, CV_COST, "which costs count" },
        { "breakdown", required_argument, 'B', O_BREAKDOWN, CV_BREAKDOWN, "rows per model or harness" },
        { "week-start", required_argument, 'W', O_WEEK_START, CV_WEEKDAY, "first day of a week" },
        { "merge-worktrees", no_argument, 'G', O_MERGE_WT, CV_NONE, "a git worktree counts as its checkout" },
        { "format", required_argument, 'F', O_FORMAT, CV_TEXT, "status line format" },
        { "listen", required_argument, 'l', O_LISTEN, CV_TEXT, "web: HOST:PORT to serve on" },
        { "print-url", no_argument, 'p', O_PRINT_URL, CV_NONE, "web: print the page's URL (also --url)" },
        { "web", no_argument, 'w', O_WEB, CV_NONE, "install: also the web dashboard's socket" },
        { "no-start", no_argument, 'n', O_NOSTART, CV_NONE, "enable, do not start" },
        { "force", no_argument, 'f', O_FORCE, CV_NONE, "overwrite files install did not write" },
        { "metrics-dir", required_argument, 'M', O_METRICS_DIR, CV_DIR, "node_exporter's textfile directory" },
        { "socket", required_argument, 'S', 0, CV_FILE, "the control socket" },
        { "state-dir", required_argument, 'D', 0, CV_DIR, "where the ledger is" },
        { "help", no_argument, 'h', 0, CV_NONE, "usage" },
        { "version", no_argument, 'V', 0, CV_NONE, "the client's version" },
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int cmd_completion(struct args *a)
{
        const char *script = complete_script(a->pos[1]);

        if (!script)
                return cli_usage_error("completion for bash, zsh or fish, not '%s'", a->pos[1]);
        fputs(script, stdout);
        return EXIT_OK;
}

/* Session ids and projects for completion, from the daemon's session
 * report; never the ledger itself (that may be slow), and never waiting
 * long: a daemon that does not answer in 300 ms completes nothing. */
#define COMPLETE_WAIT_MS 300
/* A candidate or its description must be one line of one field: a TAB
 * would cut it where the scripts split, a newline forge another candidate. */
static bool one_field(const char *s)
{
        for (; s && *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

static void complete_from_daemon(void *u, enum complete_value what, const char *prefix, FILE *out)
{
        struct args *a = u;
        _cleanup_json_ struct json_object *req = json_object_new_object(), *rep = NULL;
        struct json_object *rows;
        char *detail = NULL;

        if (!req)
                return;
        json_object_object_add(req, "report", json_object_new_string("session"));
        if (client_call(cli_socket_path(a), "report", req, COMPLETE_WAIT_MS, &rep, &detail) < 0) {
                free(detail);
                return;
        }
        rows = jfield(rep, "rows");
        for (size_t i = 0; rows && json_object_is_type(rows, json_type_array) &&
                           i < json_object_array_length(rows); i++) {
                struct json_object *row = json_object_array_get_idx(rows, i);
                const char *v = jstr(row, what == CV_SESSION ? "session" : "project");
                const char *harness = jstr(row, "harness"), *project = jstr(row, "project");
                bool dup = false;
                /* a value that cannot be one field is not offered at all */
                if (!v || !*v || strncmp(v, prefix, strlen(prefix)) != 0 || !one_field(v))
                        continue;
                for (size_t j = 0; what == CV_PROJECT && j < i && !dup; j++) /* projects once */
                        dup = jstr(json_object_array_get_idx(rows, j), "project") &&
                              strcmp(jstr(json_object_array_get_idx(rows, j), "project"), v) == 0;
                if (dup)
                        continue;
                /* the description only when every part of it is one line */
                if (what == CV_SESSION && one_field(harness) && one_field(project))
                        fprintf(out, "%s\t%s %s\n", v, harness ? harness : "", project ? project : "");
                else
                        fprintf(out, "%s\n", v);
        }
}

static int cmd_complete(struct args *a)
{
        struct complete_command cmds[N_COMMANDS];
        struct complete_spec spec = { .cmds = cmds, .n_cmds = N_COMMANDS, .opts = options,
                                      .n_opts = N_OPTIONS, .daemon_values = complete_from_daemon,
                                      .userdata = a };

        for (size_t i = 0; i < N_COMMANDS; i++)
                cmds[i] = (struct complete_command){ commands[i].name, commands[i].allowed, commands[i].n_pos,
                                                     commands[i].positional, commands[i].help };
        complete_words(stdout, &spec, a->n_words, a->words);
        return EXIT_OK;
}

static const char *opt_name(unsigned bit)
{
        static char buf[64];
        for (size_t i = 0; i < N_OPTIONS; i++)
                if (options[i].bit == bit) {
                        snprintf(buf, sizeof(buf), "--%s", options[i].name);
                        return buf;
                }
        return "?";
}

/* `web --url` alone prints the page's address, while --url URL elsewhere
 * (and `web --team --url URL`) names the team server: a --url with no
 * value after it, on a line whose command is web, is --print-url. */
static void web_url_flag(int argc, char **argv)
{
        bool web = false;

        for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "web") == 0 && (i == 1 || argv[i - 1][0] != '-' || strchr(argv[i - 1], '=') ||
                                                    strcmp(argv[i - 1], "--team") == 0))
                        web = true;
        for (int i = 1; web && i < argc; i++)
                if (strcmp(argv[i], "--url") == 0 && (i + 1 == argc || argv[i + 1][0] == '-'))
                        argv[i] = (char *)"--print-url";
}

/* Options may come before or after the command (getopt permutes). */
static int parse(int argc, char **argv, struct args *a, bool *ret_help, bool *ret_version)
{
        struct option longopts[N_OPTIONS + 1];
        int c;

        for (size_t i = 0; i < N_OPTIONS; i++)
                longopts[i] = (struct option){ options[i].name, options[i].has_arg, NULL, options[i].code };
        longopts[N_OPTIONS] = (struct option){ 0 };
        /* `__complete WORDS...`: the words are the line being completed */
        if (argc >= 2 && strcmp(argv[1], "__complete") == 0) {
                a->pos[a->n_pos++] = argv[1];
                a->words = argv + 2;
                a->n_words = argc - 2;
                return EXIT_OK;
        }
        web_url_flag(argc, argv);
        while ((c = getopt_long(argc, argv, "jhV", longopts, NULL)) != -1) {
                switch (c) {
                case 'j': a->seen |= O_JSON; break;
                case 'c': a->seen |= O_CSV; break;
                case 'k': a->seen |= O_CHART; break;
                case 'L': a->seen |= O_HTML; break;
                case 's': a->seen |= O_SINCE, a->since = optarg; break;
                case 'u': a->seen |= O_UNTIL, a->until = optarg; break;
                case 'z': a->seen |= O_TZ, a->tz = optarg; break;
                case 'I': a->seen |= O_SESSION, a->session = optarg; break;
                case 'T': a->seen |= O_TEAM; break;
                case 'b': a->seen |= O_BY, a->by = optarg; break;
                case 'R': a->seen |= O_URL, a->url = optarg; break;
                case 'm':
                case 'U': {
                        char *list = c == 'm' ? a->machines : a->users;
                        size_t l = strlen(list);
                        a->seen |= c == 'm' ? O_MACHINE : O_USER;
                        if (l + strlen(optarg) + 2 > sizeof(a->machines))
                                return cli_usage_error("%s", "--machine or --user list too long");
                        snprintf(list + l, sizeof(a->machines) - l, "%s%s", l ? "," : "", optarg);
                        break;
                }
                case 'P': a->seen |= O_PROJECT, a->project = optarg; break;
                case 'N': a->seen |= O_LIMIT, a->limit = optarg; break;
                case 'A': a->seen |= O_ALL; break;
                case 'C': a->seen |= O_COST, a->cost = optarg; break;
                case 'M': a->seen |= O_METRICS_DIR, a->metrics_dir = optarg; break;
                case 'B': a->seen |= O_BREAKDOWN, a->breakdown = optarg; break;
                case 'W': a->seen |= O_WEEK_START, a->week_start = optarg; break;
                case 'G': a->seen |= O_MERGE_WT; break;
                case 'F': a->seen |= O_FORMAT, a->format = optarg; break;
                case 'l': a->seen |= O_LISTEN, a->listen = optarg; break;
                case 'p': a->seen |= O_PRINT_URL; break;
                case 'w': a->seen |= O_WEB; break;
                case 'n': a->seen |= O_NOSTART; break;
                case 'f': a->seen |= O_FORCE; break;
                case 'S': a->socket = optarg; break;
                case 'D': a->state_dir = optarg; break;
                case 'h': *ret_help = true; break;
                case 'V': *ret_version = true; break;
                case 'H': {
                        size_t l = strlen(a->harness);
                        a->seen |= O_HARNESS;
                        if (l + strlen(optarg) + 2 > sizeof(a->harness))
                                return cli_usage_error("%s", "--harness list too long");
                        snprintf(a->harness + l, sizeof(a->harness) - l, "%s%s", l ? "," : "",
                                 optarg);
                        break;
                }
                default:
                        fputs("Try 'agentmeterctl help'.\n", stderr);
                        return EXIT_USAGE;
                }
        }
        for (int i = optind; i < argc; i++) {
                if (a->n_pos == (int)(sizeof(a->pos) / sizeof(a->pos[0])))
                        return cli_usage_error("unexpected argument '%s'", argv[i]);
                a->pos[a->n_pos++] = argv[i];
        }
        return EXIT_OK;
}

int main(int argc, char **argv)
{
        struct args a = { 0 };
        bool help = false, version = false;
        int r;

        signal(SIGPIPE, SIG_IGN);
        r = parse(argc, argv, &a, &help, &version);
        if (r != EXIT_OK)
                return r;
        if (help)
                return cmd_help(&a);
        if (version) {
                printf("agentmeterctl %s\n", AM_VERSION);
                return EXIT_OK;
        }
        if (a.n_pos == 0) {
                fputs(usage_text, stderr);
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                const struct command *cmd = &commands[i];
                unsigned extra = a.seen & ~cmd->allowed;

                if (strcmp(a.pos[0], cmd->name) != 0)
                        continue;
                if (extra)
                        return cli_usage_error("%s does not apply to this command",
                                           opt_name(extra & -extra));
                if (a.n_pos - 1 < cmd->n_pos)
                        return cli_usage_error("%s needs an argument (see 'agentmeterctl help')",
                                           cmd->name);
                if (a.n_pos - 1 > cmd->n_pos)
                        return cli_usage_error("unexpected argument '%s'", a.pos[cmd->n_pos + 1]);
                r = cmd->run(&a);
                if (fflush(stdout) != 0 && errno != EPIPE && r == EXIT_OK) {
                        fprintf(stderr, "agentmeterctl: writing output: %m\n");
                        r = EXIT_ERR;
                }
                return r;
        }
        return cli_usage_error("unknown command '%s'", a.pos[0]);
}
