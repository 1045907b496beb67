/* Claude Code (Anthropic's CLI): where its transcripts are ($CLAUDE_CONFIG_DIR,
 * ~/.claude, ~/.config/claude) and which files under projects/ are
 * transcripts (sessions, sub-agents, workflows). Lines: claude/record.c. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "claude/acct.h"
#include "claude/record.h"

/* projects/<key>/<session>/subagents/workflows/<wf>/: five directory levels */
#define CLAUDE_MAX_DEPTH 5


extern const struct adapter adapter_claude; /* defined at the end of this file */

static int add_projects(struct root_list *out, const char *config_dir, uint8_t reason,
                        const char *env_var)
{
        char path[PATH_MAX];
        int r = snprintf(path, sizeof(path), "%s/projects", strcmp(config_dir, "/") ? config_dir : "");

        if (r < 0 || (size_t)r >= sizeof(path))
                return 0; /* too long to be a directory we could read */
        r = adapt_add_root(out, &adapter_claude, path, "projects", reason, env_var, NULL,
                           CLAUDE_MAX_DEPTH);
        return r < 0 ? r : 0;
}

/* CLAUDE_CONFIG_DIR names one directory; like other meters we also take a
 * comma-separated list (blanks around each entry dropped, empty entries
 * skipped). `~` is expanded, a relative entry is taken against HOME. When
 * it is set the defaults are not read: Claude Code does not read them
 * either. */
static int claude_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *list = discover_env_get(env, "CLAUDE_CONFIG_DIR");
        char entry[PATH_MAX], dir[PATH_MAX];
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (list) {
                for (const char *p = list; *p;) {
                        size_t k = strcspn(p, ",");
                        const char *s = p, *e = p + k;

                        p = *e ? e + 1 : e;
                        while (s < e && (*s == ' ' || *s == '\t'))
                                s++;
                        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                                e--;
                        if (e == s || (size_t)(e - s) >= sizeof(entry))
                                continue;
                        memcpy(entry, s, (size_t)(e - s));
                        entry[e - s] = 0;
                        if (adapt_resolve_path(entry, home, home, dir, sizeof(dir)) < 0)
                                continue;
                        r = add_projects(out, dir, ROOT_ENV, "CLAUDE_CONFIG_DIR");
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (!home)
                return 0;
        static const char *const defaults[] = { ".claude", ".config/claude" };
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
                r = snprintf(dir, sizeof(dir), "%s/%s", strcmp(home, "/") ? home : "", defaults[i]);
                if (r < 0 || (size_t)r >= sizeof(dir))
                        continue;
                r = add_projects(out, dir, ROOT_DEFAULT, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}



/* Under projects/: <key>/<session>.jsonl (and the older flat
 * <key>/agent-<id>.jsonl), <key>/<session>/subagents/<agent>.jsonl and
 * <key>/<session>/subagents/workflows/<wf>/<agent>.jsonl. Not journal.jsonl,
 * *.meta.json, memory/, tool results or anything else. */
static enum classify_result claude_classify(const char *relpath, const char *name, int depth,
                                            bool is_dir)
{
        if (is_dir) {
                switch (depth) {
                case 0:
                case 1:
                        return CLASS_DESCEND;
                case 2:
                        return strcmp(name, "memory") == 0 ? CLASS_IGNORE : CLASS_DESCEND;
                case 3:
                        return strcmp(name, "subagents") == 0 ? CLASS_DESCEND : CLASS_IGNORE;
                case 4:
                        return strcmp(name, "workflows") == 0 && adapt_component_is(relpath, 2, "subagents")
                                       ? CLASS_DESCEND
                                       : CLASS_IGNORE;
                case 5:
                        return adapt_component_is(relpath, 3, "workflows") ? CLASS_DESCEND : CLASS_IGNORE;
                default:
                        return CLASS_IGNORE;
                }
        }
        if (!adapt_ends_with(name, ".jsonl") || strcmp(name, "journal.jsonl") == 0)
                return CLASS_IGNORE;
        if (depth == 2)
                return CLASS_LINES;
        if (depth == 4 && adapt_component_is(relpath, 2, "subagents"))
                return CLASS_LINES;
        if (depth == 6 && adapt_component_is(relpath, 2, "subagents") && adapt_component_is(relpath, 3, "workflows"))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

static const char *const claude_env[] = {
        "CLAUDE_CONFIG_DIR",
        NULL,
};

const struct adapter adapter_claude = {
        .id = "claude",
        .display_name = "Claude Code",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = claude_env,
        .statusline_host = true, /* its statusLine command */
        .discover = claude_discover,
        .load_config = NULL,
        .free_config = NULL,
        .classify = claude_classify,
        .source_of = NULL,
        .parse_line = claude_parse_line,
        .collect_rows = NULL,
        .unmetered = cl_acct_unmetered,
};
