/* `status` and `sources` for people: daemon, ledger, scan progress, every
 * harness root and why it is there, and environment mismatches. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <time.h>

#include "termtext.h"
#include "fmt.h"
#include "jfield.h"
#include "render/budget.h"
#include "render/status.h"
#include "table.h"

/* Text from the daemon (paths, names, values from users' files) is
 * escaped before it reaches the terminal. */
static const char *or_dash(const char *s)
{
        return s && *s ? termtext_tmp(s) : FMT_DASH;
}

static void scan_progress(FILE *f, struct json_object *ingest)
{
        int64_t done = jint_or(ingest, "bytes_done", 0), known = jint_or(ingest, "bytes_known", 0);
        int64_t files = jint_or(ingest, "files", 0);
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!ingest) {
                fputs("initial scan  unknown\n", f);
                return;
        }
        if (jbool(ingest, "initial_scan_done")) {
                fprintf(f, "initial scan  done: %s in %s files\n", fmt_bytes((uint64_t)done, a),
                        fmt_i64(files, c));
                return;
        }
        double pct = known > 0 ? 100.0 * (double)done / (double)known : 0.0;
        if (pct > 100.0)
                pct = 100.0;
        fprintf(f, "initial scan  %.1f%% (%s of %s, %s files so far)\n", pct,
                fmt_bytes((uint64_t)done, a), fmt_bytes((uint64_t)known, b), fmt_i64(files, c));
}

static void install_record(FILE *f, struct json_object *st)
{
        struct json_object *rec = jfield(st, "install_record");
        struct json_object *vars = jfield(rec, "vars");
        const char *at = jstr(rec, "recorded_at");

        if (!at) {
                fputs("install record  none (run `agentmeterctl install` to record your shell's "
                      "discovery variables)\n", f);
                return;
        }
        fprintf(f, "install record  %s:", at);
        if (!vars || json_object_object_length(vars) == 0) {
                fputs(" no discovery variables were set\n", f);
                return;
        }
        json_object_object_foreach(vars, name, val)
                fprintf(f, " %s=%s", termtext_tmp(name), termtext_tmp(val ? json_object_get_string(val) : ""));
        fputc('\n', f);
}

static void root_reason(FILE *f, struct json_object *root)
{
        const char *reason = jstr(root, "reason"), *var = jstr(root, "env_var"),
                   *detail = jstr(root, "detail");

        if (reason && strcmp(reason, "env") == 0)
                fprintf(f, "moved by %s%s", or_dash(var),
                        jbool(root, "from_install_record") ? " (from install record)" : "");
        else if (reason && strcmp(reason, "config") == 0)
                fprintf(f, "from config %s", or_dash(termtext_tmp(detail)));
        else if (reason && strcmp(reason, "profile") == 0)
                fprintf(f, "profile %s", or_dash(detail));
        else
                fputs(or_dash(reason), f);
        if (detail && !(reason && (strcmp(reason, "config") == 0 || strcmp(reason, "profile") == 0)))
                fprintf(f, ", %s", detail);
}

static void unmetered(FILE *f, struct json_object *u)
{
        struct json_object *sessions = jfield(u, "sessions");
        char a[FMT_MAX], b[FMT_MAX];
        int64_t runs = jint_or(u, "runs", 0);

        if (runs <= 0)
                return;
        fprintf(f, "  unmetered  %s cost-state differences (%s tokens) seen only in the harness's "
                   "own cost totals, not in the reports; sessions:",
                fmt_i64(runs, a), fmt_i64(jint_or(u, "tokens", 0), b));
        for (size_t i = 0; sessions && i < json_object_array_length(sessions); i++) {
                fputc(' ', f);
                (void)termtext_fputs(json_object_get_string(json_object_array_get_idx(sessions, i)), f);
        }
        fputc('\n', f);
}

static void limit_window(FILE *f, const char *what, struct json_object *w)
{
        int64_t minutes = jint_or(w, "window_minutes", 0), resets = jint_or(w, "resets_at", 0);
        struct json_object *used = jfield(w, "used_percent");
        char when[32] = FMT_DASH;
        time_t t = (time_t)resets;
        struct tm tm;

        if (!w)
                return;
        if (resets > 0 && gmtime_r(&t, &tm))
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(f, "    %s", what);
        if (minutes > 0)
                fprintf(f, " (%lld min)", (long long)minutes);
        fprintf(f, ": %.1f%% used, resets %s\n", used ? json_object_get_double(used) : 0.0, when);
}

/* The authoritative limit windows a harness reported for this root. */
static void root_limits(FILE *f, struct json_object *rl)
{
        char seen[FMT_MAX];
        const char *plan = jstr(rl, "plan_type"), *id = jstr(rl, "limit_id");
        int64_t ms = jint_or(rl, "observed_ms", 0);
        time_t t = (time_t)(ms / 1000);
        struct tm tm;

        if (!rl)
                return;
        snprintf(seen, sizeof(seen), "%s", FMT_DASH);
        if (ms > 0 && gmtime_r(&t, &tm))
                strftime(seen, sizeof(seen), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(f, "    rate limits %s, plan %s, as of %s\n", or_dash(id), or_dash(plan), seen);
        limit_window(f, "primary", jfield(rl, "primary"));
        limit_window(f, "secondary", jfield(rl, "secondary"));
}

/* Sentences a harness adds about its own figures (status_extra "notes"). */
static void notes(FILE *f, struct json_object *ns)
{
        for (size_t i = 0; ns && json_object_is_type(ns, json_type_array) && i < json_object_array_length(ns); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(ns, i));
                if (s)
                        fprintf(f, "  note  %s\n", termtext_tmp(s));
        }
}

/* OpenClaw: per agent, the calls that only archives and cold storage held */
static void agents_archives(FILE *f, struct json_object *agents)
{
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        for (size_t i = 0; agents && i < json_object_array_length(agents); i++) {
                struct json_object *ag = json_object_array_get_idx(agents, i);
                int64_t faults = jint_or(ag, "archive_faults", 0);

                fprintf(f, "  agent %s  calls from archives %s, from cold storage %s", or_dash(jstr(ag, "agent")),
                        fmt_i64(jint_or(ag, "archive_calls", 0), a), fmt_i64(jint_or(ag, "cold_calls", 0), b));
                if (faults > 0)
                        fprintf(f, ", %s archive%s not readable (see `agentmeterctl sources`)",
                                fmt_i64(faults, c), faults == 1 ? "" : "s");
                fputc('\n', f);
        }
}

/* OpenCode, Kilo: per database, the rows read, the rows waiting for their
 * final tokens and the watermarks, and why its last read failed */
static void databases(FILE *f, struct json_object *dbs)
{
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX];

        for (size_t i = 0; dbs && i < json_object_array_length(dbs); i++) {
                struct json_object *db = json_object_array_get_idx(dbs, i);

                fprintf(f, "  database %s  rows read %s, waiting for final tokens %s%s, watermark rowid %s, "
                           "events read to %s\n",
                        or_dash(jstr(db, "path")), fmt_i64(jint_or(db, "rows_read", 0), a),
                        fmt_i64(jint_or(db, "waiting", 0), b), jbool(db, "waiting_more") ? "+" : "",
                        fmt_i64(jint_or(db, "watermark", 0), c), fmt_i64(jint_or(db, "event_watermark", 0), d));
                if (jstr(db, "error"))
                        fprintf(f, "    error: %s\n", termtext_tmp(jstr(db, "error")));
        }
}

static void harness(FILE *f, struct json_object *h)
{
        struct json_object *caps = jfield(h, "capabilities"), *roots = jfield(h, "roots");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX], e[FMT_MAX], g[FMT_MAX], k[FMT_MAX],
                l[FMT_MAX];

        fprintf(f, "\n%s (%s)\n", or_dash(jstr(h, "name")), or_dash(jstr(h, "id")));
        fprintf(f, "  capabilities  tokens %s, cost %s, activity %s, reasoning %s",
                or_dash(jstr(caps, "tokens")), or_dash(jstr(caps, "cost")),
                or_dash(jstr(caps, "activity")), or_dash(jstr(caps, "reasoning")));
        if (jstr(caps, "events") && strcmp(jstr(caps, "events"), "calls") != 0)
                fprintf(f, ", events %s", jstr(caps, "events"));
        fputc('\n', f);
        if (jstr(h, "unverified"))
                fprintf(f, "  unverified  %s\n", jstr(h, "unverified"));
        for (size_t i = 0; roots && i < json_object_array_length(roots); i++) {
                struct json_object *r = json_object_array_get_idx(roots, i);
                const char *label = jstr(r, "label");

                fprintf(f, "  root  %s  %s  ", or_dash(termtext_tmp(jstr(r, "path"))),
                        jbool(r, "exists") ? "exists" : "missing");
                root_reason(f, r);
                if (label && *label)
                        fprintf(f, " [%s]", termtext_tmp(label));
                /* what was found under it: per editor, for the VS Code extensions */
                if (jint_or(r, "files", 0) > 0)
                        fprintf(f, "  files %s, rows %s", fmt_i64(jint_or(r, "files", 0), a),
                                fmt_i64(jint_or(r, "rows", 0), b));
                fputc('\n', f);
                root_limits(f, jfield(r, "rate_limits"));
        }
        fprintf(f, "  files %s, read %s, lines %s (malformed %s, oversized %s), rows %s, "
                   "errors %s\n",
                fmt_i64(jint_or(h, "files", 0), a), fmt_bytes((uint64_t)jint_or(h, "bytes_read", 0), b),
                fmt_i64(jint_or(h, "lines", 0), c), fmt_i64(jint_or(h, "malformed", 0), d),
                fmt_i64(jint_or(h, "oversized", 0), e), fmt_i64(jint_or(h, "rows", 0), g),
                fmt_i64(jint_or(h, "errors", 0), k));
        fprintf(f, "  last commit %s\n", fmt_time(h, "last_commit", l));
        unmetered(f, jfield(h, "unmetered"));
        agents_archives(f, jfield(h, "agents"));
        databases(f, jfield(h, "databases"));
        notes(f, jfield(h, "notes"));
}

/* The price table, the user's override and what is left unpriced. */
static void prices(FILE *f, struct json_object *p)
{
        struct json_object *ov = jfield(p, "override"), *um = jfield(p, "unpriced_by_model");
        char a[FMT_MAX];

        if (!p)
                return;
        fprintf(f, "prices        table of %s, %s models", or_dash(jstr(p, "table")),
                fmt_i64(jint_or(p, "models", 0), a));
        if (jbool(ov, "loaded"))
                fprintf(f, "; override %s (%lld entries)", or_dash(jstr(ov, "path")),
                        (long long)jint_or(ov, "entries", 0));
        fputc('\n', f);
        if (jstr(ov, "error"))
                fprintf(f, "  override %s ignored: %s\n", or_dash(jstr(ov, "path")), jstr(ov, "error"));
        fprintf(f, "  unpriced rows %s", fmt_i64(jint_or(p, "unpriced_rows", 0), a));
        for (size_t i = 0; um && i < json_object_array_length(um) && i < 8; i++) {
                struct json_object *m = json_object_array_get_idx(um, i);
                fprintf(f, "%s%s %s/%s %lld", i ? ", " : ": ", or_dash(jstr(m, "harness")),
                        or_dash(jstr(m, "provider")), or_dash(jstr(m, "model")),
                        (long long)jint_or(m, "rows", 0));
        }
        if (um && json_object_array_length(um) > 8)
                fputs(", ...", f);
        fputc('\n', f);
}

/* The team ledger: where to, how far behind, what went wrong last. */
static void team(FILE *f, struct json_object *t)
{
        const char *state = jstr(t, "state"), *err = jstr(t, "last_error");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX];

        if (!t || !jbool(t, "configured"))
                return;
        fprintf(f, "team          %s", or_dash(state));
        if (jstr(t, "server"))
                fprintf(f, "%s %s", state && strcmp(state, "connected") == 0 ? " to" : "",
                        termtext_tmp(jstr(t, "server")));
        if (jstr(t, "machine"))
                fprintf(f, " as machine %s", termtext_tmp(jstr(t, "machine")));
        if (jstr(t, "user"))
                fprintf(f, ", user %s", termtext_tmp(jstr(t, "user")));
        fprintf(f, ": backlog %s%s, %s rows sent, last push %s\n", fmt_i64(jint_or(t, "backlog", 0), a),
                jbool(t, "filling") ? " (queuing the history)" : "", fmt_i64(jint_or(t, "rows_sent", 0), b),
                fmt_time(t, "last_push", c));
        if (err)
                fprintf(f, "  last error %s: %s%s%s\n", fmt_time(t, "last_error_at", a), termtext_tmp(err),
                        jstr(t, "next_retry") ? "; next try " : "",
                        jstr(t, "next_retry") ? fmt_time(t, "next_retry", b) : "");
}

int render_status(FILE *f, struct json_object *st)
{
        struct json_object *ledger = jfield(st, "ledger"), *hs = jfield(st, "harnesses"),
                           *warn = jfield(st, "warnings"), *env = jfield(st, "env");
        char a[FMT_MAX], b[FMT_MAX], c[FMT_MAX], d[FMT_MAX], e[FMT_MAX], g[FMT_MAX];

        fprintf(f, "agentmeterd %s, pid %lld, up %s\n", or_dash(jstr(st, "version")),
                (long long)jint_or(st, "pid", 0),
                fmt_duration((uint64_t)jint_or(st, "uptime_s", 0), b));
        fprintf(f, "state dir     %s\n", or_dash(jstr(st, "state_dir")));
        fprintf(f, "socket        %s\n", or_dash(jstr(st, "socket")));
        fprintf(f, "ledger        %s (%s): %s rows, %s sessions, %s sources, %s tool calls\n",
                or_dash(jstr(ledger, "path")), fmt_bytes((uint64_t)jint_or(ledger, "bytes", 0), a),
                fmt_i64(jint_or(ledger, "rows", 0), b), fmt_i64(jint_or(ledger, "sessions", 0), c),
                fmt_i64(jint_or(ledger, "sources", 0), d), fmt_i64(jint_or(ledger, "calls", 0), e));
        struct json_object *ref = jfield(ledger, "rows_refused");
        if (jint_or(ref, "total", 0) > 0)
                fprintf(f, "refused rows  %s (numbers out of bounds: tokens %s, cost %s, time %s)\n",
                        fmt_i64(jint_or(ref, "total", 0), a), fmt_i64(jint_or(ref, "tokens", 0), b),
                        fmt_i64(jint_or(ref, "cost", 0), c), fmt_i64(jint_or(ref, "time", 0), d));
        if (jstr(ledger, "write_error"))
                fprintf(f, "              CANNOT WRITE: %s; reading is paused and resumes by itself "
                           "as soon as a commit succeeds (nothing is lost)\n",
                        jstr(ledger, "write_error"));
        fprintf(f, "last commit   %s\n", fmt_time(st, "last_commit", g));
        scan_progress(f, jfield(st, "ingest"));
        prices(f, jfield(st, "prices"));
        team(f, jfield(st, "team"));
        install_record(f, st);
        if (env && json_object_object_length(env) > 0) {
                fputs("environment  ", f);
                json_object_object_foreach(env, name, val)
                        fprintf(f, " %s=%s", termtext_tmp(name), termtext_tmp(val ? json_object_get_string(val) : ""));
                fputc('\n', f);
        }
        for (size_t i = 0; hs && i < json_object_array_length(hs); i++)
                harness(f, json_object_array_get_idx(hs, i));
        render_budgets(f, jfield(st, "budgets"));
        if (warn && json_object_array_length(warn) > 0) {
                fputc('\n', f);
                for (size_t i = 0; i < json_object_array_length(warn); i++)
                        fprintf(f, "warning: %s\n",
                                json_object_get_string(json_object_array_get_idx(warn, i)));
        }
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

int render_env_mismatch(FILE *f, struct json_object *st, const char *const *vars,
                        const char *(*get)(void *userdata, const char *name), void *userdata)
{
        struct json_object *env = jfield(st, "env");
        int n = 0;

        for (size_t i = 0; vars && vars[i]; i++) {
                const char *mine, *theirs;

                if (strcmp(vars[i], "HOME") == 0)
                        continue;
                mine = get(userdata, vars[i]);
                theirs = jstr(env, vars[i]);
                if (mine && !*mine)
                        mine = NULL;
                if (theirs && !*theirs)
                        theirs = NULL;
                if (!mine && !theirs)
                        continue;
                if (mine && theirs && strcmp(mine, theirs) == 0)
                        continue;
                n++;
                fputs("warning: your shell ", f);
                if (mine)
                        fprintf(f, "sets %s=%s", vars[i], mine);
                else
                        fprintf(f, "does not set %s", vars[i]);
                fputs(" but the daemon sees ", f);
                if (theirs)
                        fprintf(f, "%s=%s", vars[i], theirs);
                else
                        fputs("<unset>", f);
                fputs(": the daemon reads a different directory. Fix: run `agentmeterctl install "
                      "--force` from this shell (records the variable in the unit's environment) "
                      "and the daemon restarts with it.\n", f);
        }
        fflush(f);
        return n;
}

int render_sources(FILE *f, struct json_object *res)
{
        static const char *const head[] = { "harness", "kind", "size", "read", "lines",
                                            "malformed", "oversized", "rows", "resets",
                                            "last commit", "path" };
        static const enum table_align al[] = { TABLE_LEFT, TABLE_LEFT, TABLE_RIGHT, TABLE_RIGHT,
                                               TABLE_RIGHT, TABLE_RIGHT, TABLE_RIGHT, TABLE_RIGHT,
                                               TABLE_RIGHT, TABLE_LEFT, TABLE_LEFT };
        struct json_object *src = jfield(res, "sources");
        _cleanup_table_ struct table *t = NULL;
        size_t n, errors = 0;
        int r;

        if (!src || !json_object_is_type(src, json_type_array))
                return -EINVAL;
        n = json_object_array_length(src);
        if (n == 0) {
                fputs("no sources yet: no harness files found under the roots `agentmeterctl "
                      "status` lists\n", f);
                return fflush(f) != 0 ? -EIO : 0;
        }
        r = table_new(11, head, al, &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                struct json_object *s = json_object_array_get_idx(src, i);
                char b[11][FMT_MAX];
                const char *c[11] = {
                        or_dash(jstr(s, "harness")),
                        or_dash(jstr(s, "kind")),
                        fmt_bytes((uint64_t)jint_or(s, "size", 0), b[2]),
                        fmt_bytes((uint64_t)jint_or(s, "bytes_read", 0), b[3]),
                        fmt_i64(jint_or(s, "lines", 0), b[4]),
                        fmt_i64(jint_or(s, "malformed", 0), b[5]),
                        fmt_i64(jint_or(s, "oversized", 0), b[6]),
                        fmt_i64(jint_or(s, "rows_added", 0), b[7]),
                        fmt_i64(jint_or(s, "resets", 0), b[8]),
                        fmt_time(s, "last_commit", b[9]),
                        or_dash(jstr(s, "path")),
                };
                if (jstr(s, "error"))
                        errors++;
                r = table_add(t, c);
                if (r < 0)
                        return r;
        }
        r = table_print(t, f);
        if (r < 0)
                return r;
        if (errors > 0) {
                fputc('\n', f);
                for (size_t i = 0; i < n; i++) {
                        struct json_object *s = json_object_array_get_idx(src, i);
                        if (jstr(s, "error"))
                                fprintf(f, "error: %s: %s\n", or_dash(jstr(s, "path")),
                                        jstr(s, "error"));
                }
        }
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
