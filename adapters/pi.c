/* The Pi coding agent: where its session files are (the env variables, the
 * settings.json sessionDir, the default agent dir) and which files count. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "pi_lines.h"
#include "registry.h"

#define SETTINGS_MAX (1u << 20)

static const struct pi_flavor pi_flavor = {
        .tool = "pi",
        .skip_synthetic_openclaw = false,
        .model_snapshot = false,
};

/* `~` and `~/x` against HOME (as pi does; `~user` is not expanded); a
 * relative result is resolved against `base` (NULL: refused). Trailing
 * slashes are dropped. -EINVAL when no absolute path results. */
static int resolve_path(const char *value, const char *home, const char *base, char *buf,
                        size_t cap)
{
        int n;

        if (value[0] == '~' && (value[1] == 0 || value[1] == '/')) {
                if (!home || home[0] != '/')
                        return -EINVAL;
                n = snprintf(buf, cap, "%s%s", home, value + 1);
        } else if (value[0] == '/') {
                n = snprintf(buf, cap, "%s", value);
        } else {
                if (!base || base[0] != '/')
                        return -EINVAL;
                n = snprintf(buf, cap, "%s/%s", base, value);
        }
        if (n < 0 || (size_t)n >= cap)
                return -ENAMETOOLONG;
        while (n > 1 && buf[n - 1] == '/')
                buf[--n] = 0;
        return 0;
}

/* sessionDir from <agentDir>/settings.json; -ENOENT when there is none
 * (missing file, unreadable, not JSON, no such key: pi then uses its
 * default, and so do we). */
static int read_session_dir(const char *settings, char *buf, size_t cap)
{
        struct json_object *root = NULL, *v;
        struct stat st;
        char *text = NULL;
        ssize_t got = 0;
        int fd, r = -ENOENT;

        fd = open(settings, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -ENOENT;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
            (uint64_t)st.st_size > SETTINGS_MAX)
                goto out;
        text = malloc((size_t)st.st_size + 1);
        if (!text) {
                r = -ENOMEM;
                goto out;
        }
        while (got < st.st_size) {
                ssize_t k = read(fd, text + got, (size_t)(st.st_size - got));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                got += k;
        }
        text[got] = 0;
        root = json_tokener_parse(text);
        if (root && json_object_object_get_ex(root, "sessionDir", &v) &&
            json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0) {
                size_t n = (size_t)json_object_get_string_len(v);
                if (n < cap && !memchr(json_object_get_string(v), 0, n)) {
                        memcpy(buf, json_object_get_string(v), n + 1);
                        r = 0;
                }
        }
out:
        json_object_put(root);
        free(text);
        close(fd);
        return r;
}

static int add_root(struct root_list *out, const char *path, const char *label, uint8_t reason,
                    const char *env_var, const char *detail)
{
        struct root *rt;
        int r;

        /* the same directory named twice (e.g. sessionDir = the default) */
        for (size_t i = 0; i < out->n; i++)
                if (out->v[i].adapter == &adapter_pi && strcmp(out->v[i].path, path) == 0)
                        return 0;
        r = root_list_push(out, &rt);
        if (r < 0)
                return r;
        snprintf(rt->path, sizeof(rt->path), "%s", path);
        snprintf(rt->label, sizeof(rt->label), "%s", label);
        rt->reason = reason;
        if (env_var)
                snprintf(rt->env_var, sizeof(rt->env_var), "%s", env_var);
        if (detail)
                snprintf(rt->detail, sizeof(rt->detail), "%s", detail);
        rt->max_depth = 1; /* <root>/x.jsonl and <root>/<encoded-cwd>/x.jsonl */
        rt->adapter = &adapter_pi;
        return 0;
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
        if (agent_env && resolve_path(agent_env, home, home, agent_dir, sizeof(agent_dir)) == 0) {
                have_agent = true;
        } else if (home) {
                r = snprintf(agent_dir, sizeof(agent_dir), "%s/.pi/agent", home);
                have_agent = r > 0 && (size_t)r < sizeof(agent_dir);
                agent_env = NULL;
        }

        if (session_env) {
                if (resolve_path(session_env, home, home, path, sizeof(path)) == 0) {
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
                if (r == 0 && resolve_path(value, home, agent_dir, path, sizeof(path)) == 0) {
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
        .collect_db = NULL,
};
