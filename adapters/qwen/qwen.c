/* Qwen Code (a Gemini CLI fork): where its chats are (<runtime
 * dir>/projects/<cwd>/chats/<session>.jsonl; the runtime dir is
 * $QWEN_RUNTIME_DIR, else settings.json advanced.runtimeOutputDir, else the
 * Qwen home, $QWEN_HOME or ~/.qwen) and which files count. Lines:
 * qwen/record.c. usage_record.jsonl (cumulative per session) is never read. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "qwen/record.h"

#define SETTINGS_MAX (1u << 20)
/* projects/<cwd>/chats/<session>.jsonl: two directory levels */
#define QWEN_MAX_DEPTH 2

extern const struct adapter adapter_qwen; /* defined at the end of this file */

static int add_projects(struct root_list *out, const char *dir, uint8_t reason, const char *env_var,
                        const char *detail)
{
        char path[PATH_MAX];
        int r = snprintf(path, sizeof(path), "%s/projects", strcmp(dir, "/") ? dir : "");

        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_qwen, path, "projects", reason, env_var, detail, QWEN_MAX_DEPTH);
        return r < 0 ? r : 0;
}

/* advanced.runtimeOutputDir of <home>/settings.json, `~` expanded; a
 * relative value is per project (the CLI takes it against each project's
 * root), so it names no one directory: -ENOENT as when it is absent. */
static int runtime_from_settings(const char *qwen_home, const char *home, char *settings, size_t scap,
                                 char *buf, size_t cap)
{
        struct json_object *root = NULL, *adv;
        char value[PATH_MAX];
        int r;

        if (snprintf(settings, scap, "%s/settings.json", qwen_home) >= (int)scap)
                return -ENOENT;
        r = adapt_read_json(settings, SETTINGS_MAX, &root);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        adv = adapt_get_type(root, "advanced", json_type_object);
        r = adapt_json_str(adv, "runtimeOutputDir", value, sizeof(value));
        json_object_put(root);
        if (r < 0 || (value[0] != '/' && value[0] != '~'))
                return -ENOENT;
        return adapt_resolve_path(value, home, NULL, buf, cap) == 0 ? 0 : -ENOENT;
}

static int qwen_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *home_env = discover_env_get(env, "QWEN_HOME");
        const char *runtime_env = discover_env_get(env, "QWEN_RUNTIME_DIR");
        char qwen_home[PATH_MAX], dir[PATH_MAX], settings[PATH_MAX];
        bool have_home = false;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (home_env && adapt_resolve_path(home_env, home, home, qwen_home, sizeof(qwen_home)) == 0)
                have_home = true;
        else if (home && snprintf(qwen_home, sizeof(qwen_home), "%s/.qwen", strcmp(home, "/") ? home : "") <
                                 (int)sizeof(qwen_home)) {
                have_home = true;
                home_env = NULL;
        }

        /* where the chats go now */
        if (runtime_env && adapt_resolve_path(runtime_env, home, home, dir, sizeof(dir)) == 0) {
                r = add_projects(out, dir, ROOT_ENV, "QWEN_RUNTIME_DIR", NULL);
                if (r < 0)
                        return r;
        } else if (have_home) {
                r = runtime_from_settings(qwen_home, home, settings, sizeof(settings), dir, sizeof(dir));
                if (r == -ENOMEM)
                        return r;
                if (r == 0) {
                        r = add_projects(out, dir, ROOT_CONFIG, NULL, settings);
                        if (r < 0)
                                return r;
                }
        }
        /* and the home's own projects/, where they went before any move */
        if (have_home) {
                r = add_projects(out, qwen_home, home_env ? ROOT_ENV : ROOT_DEFAULT, home_env ? "QWEN_HOME" : NULL,
                                 NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Under projects/: <cwd>/chats/<session>.jsonl only (not meta.json,
 * extract-cursor.json, memory/ or anything else of a project folder). */
static enum classify_result qwen_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (is_dir) {
                if (depth <= 1)
                        return CLASS_DESCEND;
                return depth == 2 && strcmp(name, "chats") == 0 ? CLASS_DESCEND : CLASS_IGNORE;
        }
        if (depth == 3 && adapt_component_is(relpath, 1, "chats") && adapt_ends_with(name, ".jsonl"))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

static const char *const qwen_env[] = {
        "QWEN_HOME",
        "QWEN_RUNTIME_DIR",
        NULL,
};

const struct adapter adapter_qwen = {
        .id = "qwen",
        .display_name = "Qwen Code",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = qwen_env,
        .discover = qwen_discover,
        .classify = qwen_classify,
        .parse_line = qwen_parse_line,
};
