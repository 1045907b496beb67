/* Cline CLI 3.x (npm `cline`, the SDK rewrite) and, since issue 46, the
 * extension core's tasks/ layout (Cline CLI 2.x and the VS Code extension:
 * vscode-tasks/): where its sessions are and which files count. The usage
 * is in <sessions>/<id>/<id>.messages.json (and a sub-agent's or team
 * task's <id>/<stem>.messages.json beside it), documents its hub rewrites
 * whole: cline/doc.c. The manifest, sessions.db and the hub's event log
 * repeat the same calls as totals and are not read for rows. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "cline/cline.h"
#include "vscode-tasks/tasks.h"

extern const struct adapter adapter_cline; /* defined at the end of this file */

/* A variable's value without the blanks around it (Cline trims them, and
 * takes a blank value as unset): NULL when nothing is left. */
static const char *trimmed(const char *v, char *buf, size_t cap)
{
        const char *e;

        if (!v)
                return NULL;
        while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
                v++;
        e = v + strlen(v);
        while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                e--;
        if (e == v || (size_t)(e - v) >= cap)
                return NULL;
        memcpy(buf, v, (size_t)(e - v));
        buf[e - v] = 0;
        return buf;
}

/* As Cline's own resolvers (@cline/shared storage/paths.ts): the sessions
 * directory is $CLINE_SESSION_DATA_DIR, else <data>/sessions with data
 * $CLINE_DATA_DIR, else $CLINE_DIR/data, else ~/.cline/data. One directory:
 * Cline reads no other. A relative value is taken against HOME (Cline
 * would take its working directory, unknown here). */
static int sessions_discover(const struct discover_env *env, struct root_list *out)
{
        const struct {
                const char *var, *value, *suffix;
        } order[] = {
                { "CLINE_SESSION_DATA_DIR", discover_env_get(env, "CLINE_SESSION_DATA_DIR"), "" },
                { "CLINE_DATA_DIR", discover_env_get(env, "CLINE_DATA_DIR"), "/sessions" },
                { "CLINE_DIR", discover_env_get(env, "CLINE_DIR"), "/data/sessions" },
        };
        const char *home = discover_env_get(env, "HOME");
        char value[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
        int w;

        if (home && home[0] != '/')
                home = NULL;
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
                const char *v = trimmed(order[i].value, value, sizeof(value));
                if (!v)
                        continue;
                if (adapt_resolve_path(v, home, home, dir, sizeof(dir)) < 0)
                        return 0; /* set, so Cline looks nowhere else; nor do we */
                w = snprintf(path, sizeof(path), "%s%s", strcmp(dir, "/") || !*order[i].suffix ? dir : "",
                             order[i].suffix);
                if (w < 0 || (size_t)w >= sizeof(path))
                        return 0;
                w = adapt_add_root(out, &adapter_cline, path, "sessions", ROOT_ENV, order[i].var, NULL, 1);
                return w < 0 ? w : 0;
        }
        if (!home)
                return 0;
        w = snprintf(path, sizeof(path), "%s/.cline/data/sessions", strcmp(home, "/") ? home : "");
        if (w < 0 || (size_t)w >= sizeof(path))
                return 0;
        w = adapt_add_root(out, &adapter_cline, path, "sessions", ROOT_DEFAULT, NULL, NULL, 1);
        return w < 0 ? w : 0;
}

/* The extension core's tasks (vscode-tasks/): Cline CLI 2.x's
 * $CLINE_DIR/data/tasks, else ~/.cline/data/tasks, and the VS Code
 * extension's in every editor data dir. One adapter reads both layouts:
 * classify and parse_document tell them apart by the file's name
 * (<id>.messages.json, ui_messages.json). */
static int tasks_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        char value[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
        const char *v = trimmed(discover_env_get(env, "CLINE_DIR"), value, sizeof(value));
        int w;

        if (home && home[0] != '/')
                home = NULL;
        if (v) {
                if (adapt_resolve_path(v, home, home, dir, sizeof(dir)) == 0) {
                        w = snprintf(path, sizeof(path), "%s/data/tasks", strcmp(dir, "/") ? dir : "");
                        if (w > 0 && (size_t)w < sizeof(path)) {
                                w = adapt_add_root(out, &adapter_cline, path, "tasks", ROOT_ENV, "CLINE_DIR",
                                                   NULL, 1);
                                if (w < 0)
                                        return w;
                        }
                }
        } else if (home) {
                w = snprintf(path, sizeof(path), "%s/.cline/data/tasks", strcmp(home, "/") ? home : "");
                if (w > 0 && (size_t)w < sizeof(path)) {
                        w = adapt_add_root(out, &adapter_cline, path, "tasks", ROOT_DEFAULT, NULL, NULL, 1);
                        if (w < 0)
                                return w;
                }
        }
        return vt_add_editor_roots(env, &adapter_cline, "saoudrizwan.claude-dev", out);
}

static int cline_discover(const struct discover_env *env, struct root_list *out)
{
        int r = sessions_discover(env, out);

        return r < 0 ? r : tasks_discover(env, out);
}

/* Either layout's document, by its name. */
static int cline_parse_any(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                           size_t *io_known, struct row_batch *out)
{
        if (ctx && ctx->path && vt_is_doc(ctx->path))
                return vt_parse_document(ctx, ps, doc, len, io_known, out);
        return cline_parse_document(ctx, ps, doc, len, io_known, out);
}

/* <id>/ directories, and in them the *.messages.json documents; not the
 * manifest <id>.json, the transcript log, hooks, compaction state or
 * anything else. */
static enum classify_result cline_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return depth <= 1 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 2 && adapt_ends_with(name, ".messages.json"))
                return CLASS_DOCUMENT;
        return vt_classify(relpath, name, depth, is_dir); /* <taskId>/ui_messages.json */
}

static const char *const cline_env[] = {
        "CLINE_SESSION_DATA_DIR",
        "CLINE_DATA_DIR",
        "CLINE_DIR",
        NULL,
};

const struct adapter adapter_cline = {
        .id = "cline",
        .display_name = "Cline",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,            /* metrics.cost where Cline knows a price */
                .activity = CAP_ACTIVITY_EXACT,     /* tool_use blocks of the same message */
                .reasoning = CAP_REASONING_NONE,    /* inside outputTokens, not written apart */
        },
        .env = cline_env,
        .discover = cline_discover,
        .load_config = NULL,
        .free_config = NULL,
        .classify = cline_classify,
        .source_of = NULL,
        .parse_document = cline_parse_any,
        .collect_rows = NULL,
};
