/* Crush: where its databases are (each project's .crush/crush.db, the
 * projects listed in projects.json under $CRUSH_GLOBAL_DATA, else
 * $XDG_DATA_HOME/crush, else ~/.local/share/crush), which files count, and
 * what status shows of each (crush/db.c reads them). */
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "crush/crush.h"
#include "running-totals.h"
#include "ledger/ledger.h"

extern const struct adapter adapter_crush; /* defined at the end of this file */

#define PROJECTS_MAX 1024
#define PROJECTS_JSON_MAX (4u << 20)

static int crush_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *global = discover_env_get(env, "CRUSH_GLOBAL_DATA");
        const char *xdg = discover_env_get(env, "XDG_DATA_HOME");
        char dir[PATH_MAX], list[PATH_MAX], path[PATH_MAX];
        struct json_object *root = NULL, *arr;
        size_t n;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (global && adapt_resolve_path(global, home, home, dir, sizeof(dir)) == 0)
                ;
        else if (xdg && xdg[0] == '/' && snprintf(dir, sizeof(dir), "%s/crush", xdg) < (int)sizeof(dir))
                ;
        else if (!home || snprintf(dir, sizeof(dir), "%s/.local/share/crush", home) >= (int)sizeof(dir))
                return 0;
        if (snprintf(list, sizeof(list), "%s/projects.json", dir) >= (int)sizeof(list))
                return 0;
        /* no list (Crush before v0.25, or never run): no projects known */
        if (adapt_read_json(list, PROJECTS_JSON_MAX, &root) < 0)
                return 0;
        arr = adapt_get_type(root, "projects", json_type_array);
        n = arr ? json_object_array_length(arr) : 0;
        for (size_t i = 0; i < n && i < PROJECTS_MAX; i++) {
                struct json_object *p = json_object_array_get_idx(arr, i);
                char pdir[PATH_MAX], data[PATH_MAX], label[64];
                const char *base;

                if (adapt_json_str(p, "path", pdir, sizeof(pdir)) < 0 || pdir[0] != '/')
                        continue;
                if (adapt_json_str(p, "data_dir", data, sizeof(data)) == 0 && data[0]) {
                        if (adapt_resolve_path(data, home, pdir, path, sizeof(path)) < 0)
                                continue;
                } else if (snprintf(path, sizeof(path), "%s/.crush", pdir) >= (int)sizeof(path)) {
                        continue;
                }
                adapt_path_clean(path);
                base = strrchr(pdir, '/');
                base = base && base[1] ? base + 1 : pdir;
                memcpy(label, "project ", 8);
                row_set_str(label + 8, sizeof(label) - 8, base, strlen(base));
                r = adapt_add_root(out, &adapter_crush, path, label, ROOT_CONFIG, NULL, list, 0);
                if (r < 0) {
                        json_object_put(root);
                        return r;
                }
        }
        json_object_put(root);
        return 0;
}

/* crush.db in the data directory; never its sidecars or anything else. */
static enum classify_result crush_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return CLASS_IGNORE;
        return depth == 1 && strcmp(name, "crush.db") == 0 ? CLASS_TABLE : CLASS_IGNORE;
}

/* {"event": ..., "stores": [{path, calls, leftover_sessions,
 * leftover_tokens, root_sessions, cost_usd, sessions_refused}], "token_classes": why a call's
 * tokens are not split into cache classes, "notes": the same as text},
 * from the checkpoints alone. */
static struct json_object *crush_status(const struct adapter_status_ctx *ctx)
{
        json_object *arr = json_object_new_array(), *res = json_object_new_object();
        json_object *notes = json_object_new_array();
        struct adapter_source_view v;
        char line[PATH_MAX + 400];

        json_object_array_add(notes, json_object_new_string("an event is one call seen live (its tokens), or a "
                                                            "root session's cost as Crush accumulated it (tokens —)"));
        while (arr && res && ctx->next(ctx->it, &v)) {
                struct crush_figures f;
                struct parse_state ps;
                char path[PATH_MAX];
                json_object *d;

                if (v.kind != CLASS_TABLE || !v.cp || !v.cp->state_len ||
                    parse_state_decode(v.cp->state, v.cp->state_len, &ps) < 0 || crush_figures(&ps, &f) < 0)
                        continue;
                snprintf(path, sizeof(path), "%s", v.path);
                for (char *c = path; *c; c++)
                        if ((unsigned char)*c < 0x20 || *c == 0x7f)
                                *c = '?';
                d = json_object_new_object();
                json_object_object_add(d, "path", json_object_new_string(path));
                json_object_object_add(d, "calls", json_object_new_int64((int64_t)f.calls));
                json_object_object_add(d, "leftover_sessions", json_object_new_int64((int64_t)f.leftovers));
                json_object_object_add(d, "leftover_tokens", json_object_new_int64((int64_t)f.leftover_tokens));
                json_object_object_add(d, "root_sessions", json_object_new_int64((int64_t)f.roots));
                json_object_object_add(d, "cost_usd", json_object_new_double((double)f.cost_nano / 1e9));
                json_object_object_add(d, "sessions_refused", json_object_new_int64((int64_t)f.refused));
                json_object_array_add(arr, d);
                snprintf(line, sizeof(line),
                         "%s: %llu calls seen live; %llu root sessions, cost $%.6f as Crush wrote it; first scan: "
                         "the last call of %llu sessions (%llu tokens) kept apart, not their totals; "
                         "%llu sessions refused (a count or cost not a number in range)",
                         path, (unsigned long long)f.calls, (unsigned long long)f.roots, (double)f.cost_nano / 1e9,
                         (unsigned long long)f.leftovers, (unsigned long long)f.leftover_tokens,
                         (unsigned long long)f.refused);
                json_object_array_add(notes, json_object_new_string(line));
        }
        json_object_object_add(res, "event",
                               json_object_new_string("one call seen live (its tokens; cost 0), or a root "
                                                      "session's cost as Crush accumulated it (tokens —)"));
        json_object_object_add(res, "leftovers",
                               json_object_new_string("the last call of each session a first scan found, "
                                                      "tokens not counted: not the sessions' totals"));
        json_object_object_add(res, "token_classes", json_object_new_string(CRUSH_TOKEN_CLASSES));
        json_object_array_add(notes, json_object_new_string(CRUSH_TOKEN_CLASSES));
        json_object_object_add(res, "stores", arr);
        json_object_object_add(res, "notes", notes);
        return res;
}

static const char *const crush_env[] = {
        "CRUSH_GLOBAL_DATA",
        "XDG_DATA_HOME",
        NULL,
};

const struct adapter adapter_crush = {
        .id = "crush",
        .display_name = "Crush",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_NONE,
                .events = CAP_EVENTS_CALLS,
        },
        .env = crush_env,
        .discover = crush_discover,
        .classify = crush_classify,
        .source_of = tot_sqlite_source_of,
        .collect_rows = crush_collect_rows,
        .status_extra = crush_status,
};
