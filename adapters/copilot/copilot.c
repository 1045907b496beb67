/* GitHub Copilot CLI: where its event logs are ($COPILOT_HOME, else
 * ~/.copilot: session-state/<id>/events.jsonl) and which files count. The
 * older history-session-state/ JSON files are found and shown in status,
 * not metered (see copilot_parse_legacy). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "adapt-util.h"
#include "adapter.h"
#include "copilot/copilot.h"
#include "copilot/record.h"

extern const struct adapter adapter_copilot; /* defined at the end of this file */

static bool is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <home>/session-state/<id>/events.jsonl and
 * <home>/history-session-state/<x>.json: two directory levels. */
static int add_home(struct root_list *out, const char *path, const char *label, uint8_t reason,
                    const char *env_var)
{
        return adapt_add_root(out, &adapter_copilot, path, label, reason, env_var, NULL, 2);
}

static int copilot_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *chome = discover_env_get(env, "COPILOT_HOME");
        char path[PATH_MAX], dflt[PATH_MAX] = "";
        int r = 0;

        if (home && home[0] != '/')
                home = NULL;
        if (home && snprintf(dflt, sizeof(dflt), "%s/.copilot", home) >= (int)sizeof(dflt))
                dflt[0] = 0;
        if (chome && adapt_resolve_path(chome, home, home, path, sizeof(path)) == 0) {
                r = add_home(out, path, "copilot home", ROOT_ENV, "COPILOT_HOME");
                /* sessions written before the move stay in the default home */
                if (r >= 0 && dflt[0] && strcmp(dflt, path) != 0 && is_dir(dflt))
                        r = add_home(out, dflt, "default", ROOT_DEFAULT, NULL);
        } else if (dflt[0]) {
                r = add_home(out, dflt, "copilot home", ROOT_DEFAULT, NULL);
        }
        return r < 0 ? r : 0;
}

bool copilot_is_legacy(const char *path)
{
        return path && strstr(path, "/history-session-state/") != NULL;
}

/* Never session-store.db (a mirror of the usage records: counting it too
 * would count every call twice), logs/, config, workspace.yaml,
 * checkpoints/ or the lock directories. */
static enum classify_result copilot_classify(const char *relpath, const char *name, int depth, bool is_dir_)
{
        bool in_state = strncmp(relpath, "session-state/", 14) == 0;
        bool in_legacy = strncmp(relpath, "history-session-state/", 22) == 0;
        size_t n = strlen(name);

        if (is_dir_) {
                if (depth == 0)
                        return CLASS_DESCEND;
                if (depth == 1 && (strcmp(name, "session-state") == 0 || strcmp(name, "history-session-state") == 0))
                        return CLASS_DESCEND;
                if (depth == 2 && in_state && name[0] != '.')
                        return CLASS_DESCEND; /* a session's directory */
                return CLASS_IGNORE;
        }
        if (depth == 3 && in_state && strcmp(name, "events.jsonl") == 0)
                return CLASS_LINES;
        if (depth == 2 && in_legacy && name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0)
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

/* A legacy history-session-state file: no public source says what its
 * usage fields mean (Copilot CLI 0.0.342 moved sessions to session-state/
 * and migrates an old one there when it is resumed), so it is read for no
 * rows; status counts these files as not metered. */
static int copilot_parse_legacy(const struct source_ctx *ctx, struct parse_state *ps, const char *doc,
                                size_t len, size_t *io_known, struct row_batch *out)
{
        (void)ctx;
        (void)ps;
        (void)doc;
        (void)len;
        (void)out;
        *io_known = 0;
        return PARSE_OK;
}

static const char *const copilot_env[] = {
        "COPILOT_HOME",
        NULL,
};

const struct adapter adapter_copilot = {
        .id = "copilot",
        .display_name = "GitHub Copilot CLI",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,     /* its cost field is a premium-request multiplier */
                .activity = CAP_ACTIVITY_EXACT, /* toolCounts sit in the record that paid for them */
                .reasoning = CAP_REASONING_SUBSET,
                .events = CAP_EVENTS_CALLS,
        },
        .env = copilot_env,
        .discover = copilot_discover,
        .classify = copilot_classify,
        .parse_line = copilot_parse_line,
        .parse_document = copilot_parse_legacy,
        .status_extra = copilot_status,
};
