/* The OpenAI Codex CLI: where its rollouts are ($CODEX_HOME or ~/.codex,
 * and the Codex homes OpenClaw's agents embed) and which files count. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adapt-util.h"
#include "adapter.h"
#include "codex/record.h"

#define AGENTS_MAX 256 /* agent directories looked at per OpenClaw state dir */


extern const struct adapter adapter_codex; /* defined at the end of this file */



/* <home>/sessions/YYYY/MM/DD/rollout-*.jsonl, <home>/archived_sessions/
 * rollout-*.jsonl: four directory levels at most. */
static int add_home(struct root_list *out, const char *path, const char *label, uint8_t reason,
                    const char *env_var, const char *detail)
{
        return adapt_add_root(out, &adapter_codex, path, label, reason, env_var, detail, 4);
}

/* OpenClaw's Codex harness keeps a Codex home per agent:
 * <state>/agents/<id>/agent/codex-home. Each is its own root, labelled with
 * the agent. Their rollouts are parsed for the rate-limit windows but make
 * no usage rows: those calls are OpenClaw's, and OpenClaw's transcript (read
 * by the openclaw adapter, keyed by its own pi-format message key, which can
 * never equal a Codex response key) already counts them. Counting both would
 * count each call twice; see codex/record.h (CX_EMBEDDED). Agents created
 * after discovery are found by the next rescan. */
static int add_openclaw_homes(struct root_list *out, const char *state)
{
        char agents[PATH_MAX], path[PATH_MAX], label[64];
        struct dirent *de;
        size_t seen = 0;
        DIR *d;
        int r = 0;

        if (snprintf(agents, sizeof(agents), "%s/agents", state) >= (int)sizeof(agents))
                return 0;
        d = opendir(agents);
        if (!d)
                return 0;
        while ((de = readdir(d)) && seen < AGENTS_MAX) {
                if (de->d_name[0] == '.')
                        continue;
                seen++;
                if (snprintf(path, sizeof(path), "%s/%s/agent/codex-home", agents, de->d_name) >=
                            (int)sizeof(path) ||
                    !adapt_is_dir(path))
                        continue;
                snprintf(label, sizeof(label), "openclaw agent %.40s", de->d_name);
                r = add_home(out, path, label, ROOT_PROFILE, NULL, path);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r < 0 ? r : 0;
}

static int codex_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *chome = discover_env_get(env, "CODEX_HOME");
        const char *sdir = discover_env_get(env, "OPENCLAW_STATE_DIR");
        char path[PATH_MAX], dflt[PATH_MAX] = "", state[PATH_MAX];
        int r = 0;

        if (home && home[0] != '/')
                home = NULL;
        if (home && snprintf(dflt, sizeof(dflt), "%s/.codex", home) >= (int)sizeof(dflt))
                dflt[0] = 0;
        if (chome && adapt_resolve_path(chome, home, home, path, sizeof(path)) == 0) {
                r = add_home(out, path, "codex home", ROOT_ENV, "CODEX_HOME", NULL);
                /* rollouts written before the move stay in the default home */
                if (r >= 0 && dflt[0] && adapt_is_dir(dflt))
                        r = add_home(out, dflt, "default", ROOT_DEFAULT, NULL, NULL);
        } else if (dflt[0]) {
                r = add_home(out, dflt, "codex home", ROOT_DEFAULT, NULL, NULL);
        }
        if (r < 0)
                return r;

        if (sdir && adapt_resolve_path(sdir, home, home, state, sizeof(state)) == 0) {
                r = add_openclaw_homes(out, state);
                if (r < 0)
                        return r;
        }
        if (home && snprintf(state, sizeof(state), "%s/.openclaw", home) < (int)sizeof(state))
                r = add_openclaw_homes(out, state);
        return r < 0 ? r : 0;
}

/* rollout-<ts>-<uuid>.jsonl, and .jsonl.zst (compressed after a week idle).
 * Never rollout-compress-*.tmp, history.jsonl, session_index.jsonl or the
 * SQLite state (not usage sources). */
static enum classify_result codex_classify(const char *relpath, const char *name, int depth,
                                           bool is_dir)
{
        bool in_sessions = strncmp(relpath, "sessions/", 9) == 0;
        bool in_archived = strncmp(relpath, "archived_sessions/", 18) == 0;

        if (is_dir) {
                if (depth == 0)
                        return CLASS_DESCEND;
                if (name[0] == '.')
                        return CLASS_IGNORE;
                if (depth == 1 && (strcmp(name, "sessions") == 0 || strcmp(name, "archived_sessions") == 0))
                        return CLASS_DESCEND;
                if (depth >= 2 && depth <= 4 && in_sessions)
                        return CLASS_DESCEND; /* YYYY/MM/DD */
                return CLASS_IGNORE;
        }
        if (!(in_sessions && depth >= 2 && depth <= 5) && !(in_archived && depth == 2))
                return CLASS_IGNORE;
        if (strncmp(name, "rollout-", 8) != 0 || strstr(name, ".tmp"))
                return CLASS_IGNORE;
        if (adapt_ends_with(name, ".jsonl"))
                return CLASS_LINES;
        if (adapt_ends_with(name, ".jsonl.zst"))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

static const char *const codex_env[] = {
        "CODEX_HOME",
        "OPENCLAW_STATE_DIR", /* where OpenClaw's agents keep their Codex homes */
        NULL,
};

const struct adapter adapter_codex = {
        .id = "codex",
        .display_name = "Codex CLI",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_UNATTRIBUTED,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = codex_env,
        .discover = codex_discover,
        .load_config = NULL,
        .free_config = NULL,
        .classify = codex_classify,
        .source_of = NULL,
        .sibling_of = adapt_zst_sibling, /* an idle rollout is compressed in place */
        .parse_line = codex_parse_line,
        .collect_rows = NULL,
};
