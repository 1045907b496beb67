/* The Pi coding agent: where its session files are (the env variables, the
 * settings.json sessionDir, the default agent dir) and which files count. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "pi/record.h"

#define SETTINGS_MAX (1u << 20)


extern const struct adapter adapter_pi; /* defined at the end of this file */

static const struct pi_flavor pi_flavor = {
        .tool = "pi",
        .skip_synthetic_openclaw = false,
        .model_snapshot = false,
};

/* sessionDir from <agentDir>/settings.json; -ENOENT when there is none
 * (missing file, unreadable, not JSON, no such key: pi then uses its
 * default, and so do we). */
static int read_session_dir(const char *settings, char *buf, size_t cap)
{
        struct json_object *root;
        char *text;
        size_t len;
        int r = adapt_read_file(settings, SETTINGS_MAX, &text, &len);

        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        root = json_tokener_parse(text);
        r = adapt_json_str(root, "sessionDir", buf, cap);
        json_object_put(root);
        free(text);
        return r;
}

static int add_root(struct root_list *out, const char *path, const char *label, uint8_t reason,
                    const char *env_var, const char *detail)
{
        /* <root>/x.jsonl and <root>/<encoded-cwd>/x.jsonl; the same directory
         * named twice (e.g. sessionDir = the default) is listed once */
        return adapt_add_root(out, &adapter_pi, path, label, reason, env_var, detail, 1);
}

/* Pi picks ONE sessions directory by precedence (--session-dir, then
 * PI_CODING_AGENT_SESSION_DIR, then settings.json sessionDir, then
 * <agentDir>/sessions). We list the env or config one, and always the
 * default too, because sessions written before the move stay there.
 * A relative value is resolved against HOME (env) or the agent dir
 * (sessionDir; pi itself would use its working directory, unknown here). */
static int pi_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *agent_env = discover_env_get(env, "PI_CODING_AGENT_DIR");
        const char *session_env = discover_env_get(env, "PI_CODING_AGENT_SESSION_DIR");
        char agent_dir[PATH_MAX], path[PATH_MAX], settings[PATH_MAX], value[PATH_MAX];
        bool have_agent = false;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (agent_env && adapt_resolve_path(agent_env, home, home, agent_dir, sizeof(agent_dir)) == 0) {
                have_agent = true;
        } else if (home) {
                r = snprintf(agent_dir, sizeof(agent_dir), "%s/.pi/agent", home);
                have_agent = r > 0 && (size_t)r < sizeof(agent_dir);
                agent_env = NULL;
        }

        if (session_env) {
                if (adapt_resolve_path(session_env, home, home, path, sizeof(path)) == 0) {
                        r = add_root(out, path, "session dir", ROOT_ENV,
                                     "PI_CODING_AGENT_SESSION_DIR", NULL);
                        if (r < 0)
                                return r;
                }
        } else if (have_agent &&
                   snprintf(settings, sizeof(settings), "%s/settings.json", agent_dir) <
                           (int)sizeof(settings)) {
                r = read_session_dir(settings, value, sizeof(value));
                if (r == -ENOMEM)
                        return r;
                if (r == 0 && adapt_resolve_path(value, home, agent_dir, path, sizeof(path)) == 0) {
                        r = add_root(out, path, "sessionDir", ROOT_CONFIG, NULL, settings);
                        if (r < 0)
                                return r;
                }
        }

        if (have_agent && snprintf(path, sizeof(path), "%s/sessions", agent_dir) < (int)sizeof(path)) {
                r = add_root(out, path, "sessions", agent_env ? ROOT_ENV : ROOT_DEFAULT,
                             agent_env ? "PI_CODING_AGENT_DIR" : NULL, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static enum classify_result pi_classify(const char *relpath, const char *name, int depth,
                                        bool is_dir)
{
        size_t n = strlen(name);

        (void)relpath;
        if (is_dir) {
                if (depth == 0)
                        return CLASS_DESCEND;
                if (depth == 1 && strcmp(name, "subagent-artifacts") != 0)
                        return CLASS_DESCEND;
                return CLASS_IGNORE;
        }
        if ((depth == 1 || depth == 2) && n > 6 && strcmp(name + n - 6, ".jsonl") == 0)
                return CLASS_LINES;
        return CLASS_IGNORE;
}

static int pi_parse_line_cb(const struct source_ctx *ctx, struct parse_state *ps,
                            const char *line, size_t len, struct row_batch *out)
{
        return pi_parse_line(&pi_flavor, ctx, ps, line, len, out);
}

static const char *const pi_env[] = {
        "PI_CODING_AGENT_DIR",
        "PI_CODING_AGENT_SESSION_DIR",
        NULL,
};

const struct adapter adapter_pi = {
        .id = "pi",
        .display_name = "Pi",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = pi_env,
        .discover = pi_discover,
        .load_config = NULL,
        .free_config = NULL,
        .classify = pi_classify,
        .parse_line = pi_parse_line_cb,
        .collect_rows = NULL,
};
