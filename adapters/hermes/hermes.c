/* Hermes Agent: where its databases are (${HERMES_HOME:-~/.hermes}/state.db
 * and profiles/<name>/state.db), which files count, and what status shows
 * of each (hermes/db.c reads them). */
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "hermes/hermes.h"
#include "running-totals.h"
#include "ledger/ledger.h"

extern const struct adapter adapter_hermes; /* defined at the end of this file */

static int hermes_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *dir_env = discover_env_get(env, "HERMES_HOME");
        char path[PATH_MAX];
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (dir_env && adapt_resolve_path(dir_env, home, home, path, sizeof(path)) == 0) {
                r = adapt_add_root(out, &adapter_hermes, path, "home", ROOT_ENV, "HERMES_HOME", NULL, 2);
                return r < 0 ? r : 0;
        }
        if (!home)
                return 0;
        r = snprintf(path, sizeof(path), "%s/.hermes", home);
        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_hermes, path, "home", ROOT_DEFAULT, NULL, NULL, 2);
        return r < 0 ? r : 0;
}

/* state.db at the top, profiles/<name>/state.db; never the sidecars, logs,
 * sessions/ transcripts or anything else. */
static enum classify_result hermes_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (is_dir) {
                if (depth == 1 && strcmp(name, "profiles") == 0)
                        return CLASS_DESCEND;
                if (depth == 2 && adapt_component_is(relpath, 0, "profiles"))
                        return CLASS_DESCEND;
                return CLASS_IGNORE;
        }
        if (strcmp(name, "state.db") != 0)
                return CLASS_IGNORE;
        if (depth == 1 || (depth == 3 && adapt_component_is(relpath, 0, "profiles")))
                return CLASS_TABLE;
        return CLASS_IGNORE;
}

static void safe_path(char *dst, size_t cap, const char *src)
{
        snprintf(dst, cap, "%s", src);
        for (char *c = dst; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        *c = '?';
}

/* {"event": what one row is, "stores": [{path, steps, calls, resets,
 * unmetered_changes, sessions_tracked, sessions_beyond, aux_steps,
 * aux_calls, sessions_refused}], "notes": the same as text}, from
 * each database's checkpoint alone (no database is opened for status). */
static struct json_object *hermes_status(const struct adapter_status_ctx *ctx)
{
        json_object *arr = json_object_new_array(), *res = json_object_new_object();
        json_object *notes = json_object_new_array();
        struct adapter_source_view v;
        char line[PATH_MAX + 512];

        json_object_array_add(notes, json_object_new_string("an event is the growth of one session's running "
                                                            "totals between two reads (one or more API calls), "
                                                            "or of one auxiliary model's totals in a session "
                                                            "(compression, title, vision: schema 22 on)"));
        while (arr && res && ctx->next(ctx->it, &v)) {
                struct hermes_figures f;
                struct parse_state ps;
                char path[PATH_MAX];
                json_object *d;

                if (v.kind != CLASS_TABLE || !v.cp || !v.cp->state_len ||
                    parse_state_decode(v.cp->state, v.cp->state_len, &ps) < 0 || hermes_figures(&ps, &f) < 0)
                        continue;
                safe_path(path, sizeof(path), v.path);
                d = json_object_new_object();
                json_object_object_add(d, "path", json_object_new_string(path));
                json_object_object_add(d, "steps", json_object_new_int64((int64_t)f.steps));
                json_object_object_add(d, "calls", json_object_new_int64((int64_t)f.calls));
                json_object_object_add(d, "resets", json_object_new_int64((int64_t)f.resets));
                json_object_object_add(d, "unmetered_changes", json_object_new_int64((int64_t)f.unmetered));
                json_object_object_add(d, "sessions_tracked", json_object_new_int64((int64_t)f.tracked));
                json_object_object_add(d, "sessions_beyond", json_object_new_int64((int64_t)f.beyond));
                json_object_object_add(d, "aux_steps", json_object_new_int64((int64_t)f.aux_steps));
                json_object_object_add(d, "aux_calls", json_object_new_int64((int64_t)f.aux_calls));
                json_object_object_add(d, "sessions_refused", json_object_new_int64((int64_t)f.refused));
                json_object_array_add(arr, d);
                snprintf(line, sizeof(line),
                         "%s: %llu steps folding %llu API calls, %llu resets, %llu changes not metered; "
                         "%llu sessions' snapshots kept, %llu past the bound of %d (metered once whole, "
                         "their later changes not); auxiliary calls: %llu steps folding %llu calls; "
                         "%llu refused (a counter that is text, negative or past its bound: their last "
                         "good totals stand)",
                         path, (unsigned long long)f.steps, (unsigned long long)f.calls,
                         (unsigned long long)f.resets, (unsigned long long)f.unmetered,
                         (unsigned long long)f.tracked, (unsigned long long)f.beyond, TOT_STORED_MAX,
                         (unsigned long long)f.aux_steps, (unsigned long long)f.aux_calls,
                         (unsigned long long)f.refused);
                json_object_array_add(notes, json_object_new_string(line));
        }
        json_object_object_add(res, "event",
                               json_object_new_string("the growth of one session's running totals between two "
                                                      "reads (one or more API calls: see calls), or of one "
                                                      "auxiliary model's in a session (see aux_calls)"));
        json_object_object_add(res, "stores", arr);
        json_object_object_add(res, "notes", notes);
        return res;
}

static const char *const hermes_env[] = {
        "HERMES_HOME",
        NULL,
};

const struct adapter adapter_hermes = {
        .id = "hermes",
        .display_name = "Hermes Agent",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_SUBSET,
                .events = CAP_EVENTS_SNAPSHOT_STEPS,
        },
        .env = hermes_env,
        .discover = hermes_discover,
        .classify = hermes_classify,
        .source_of = tot_sqlite_source_of,
        .collect_rows = hermes_collect_rows,
        .status_extra = hermes_status,
};
