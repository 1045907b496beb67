/* Letta Code's local backend: where its conversations are
 * ($LETTA_LOCAL_BACKEND_DIR, else ~/.letta/lc-local-backend) and which files
 * count. Each conversation's messages.jsonl is appended in pi's session
 * format, so THE pi line parser reads it; what is Letta's own is the root,
 * the tool id and the session name (a sub-agent's conversations are all
 * called "default" in their header: the folder's key names the agent). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "pi/record.h"

extern const struct adapter adapter_letta; /* defined at the end of this file */

static const struct pi_flavor letta_flavor = {
        .tool = "letta",
        .skip_synthetic_openclaw = false,
        .model_snapshot = false,
};

static int letta_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *dir_env = discover_env_get(env, "LETTA_LOCAL_BACKEND_DIR");
        char base[PATH_MAX], path[PATH_MAX];
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (dir_env && adapt_resolve_path(dir_env, home, home, base, sizeof(base)) == 0) {
                r = snprintf(path, sizeof(path), "%s/conversations", base);
                if (r < 0 || (size_t)r >= sizeof(path))
                        return 0;
                r = adapt_add_root(out, &adapter_letta, path, "conversations", ROOT_ENV,
                                   "LETTA_LOCAL_BACKEND_DIR", NULL, 1);
                return r < 0 ? r : 0;
        }
        if (!home)
                return 0;
        r = snprintf(path, sizeof(path), "%s/.letta/lc-local-backend/conversations", home);
        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_letta, path, "conversations", ROOT_DEFAULT, NULL, NULL, 1);
        return r < 0 ? r : 0;
}

/* conversations/<base64url key>/messages.jsonl; conversation.json,
 * manifest.json and system-prompt.json beside it hold no usage. */
static enum classify_result letta_classify(const char *relpath, const char *name, int depth,
                                           bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return depth <= 1 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 2 && strcmp(name, "messages.jsonl") == 0)
                return CLASS_LINES;
        return CLASS_IGNORE;
}

static int b64url_value(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '-' || c == '+')
                return 62;
        if (c == '_' || c == '/')
                return 63;
        return -1;
}

/* The conversation key the folder name encodes (base64url, unpadded), as
 * printable text: 0, or -EINVAL when it is not one. */
static int folder_key(const char *path, char *ret, size_t cap)
{
        const char *end = strrchr(path, '/'), *start;
        uint32_t acc = 0;
        int bits = 0;
        size_t n = 0;

        if (!end || end == path)
                return -EINVAL;
        for (start = end; start > path && start[-1] != '/'; start--)
                ;
        for (const char *p = start; p < end && *p != '='; p++) {
                int v = b64url_value(*p);
                if (v < 0)
                        return -EINVAL;
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        unsigned char c = (unsigned char)(acc >> bits);
                        if (c < 0x20 || c == 0x7f || n + 1 >= cap)
                                return -EINVAL;
                        ret[n++] = (char)c;
                }
        }
        if (n == 0)
                return -EINVAL;
        ret[n] = '\0';
        return 0;
}

static int letta_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                            size_t len, struct row_batch *out)
{
        bool had_header = ps->flags & PS_HEADER_SEEN;
        int r = pi_parse_line(&letta_flavor, ctx, ps, line, len, out);
        char key[ROW_SESSION_MAX + 16];

        /* The header names the session; a sub-agent's "default" conversation
         * takes its agent's id from the folder ("default:<agent id>"). The
         * header is the first line, so no row carries the old name. */
        if (!had_header && (ps->flags & PS_HEADER_SEEN) && !(ps->flags & PS_NOT_SOURCE) && ctx &&
            strcmp(ps->session, "default") == 0 && folder_key(ctx->path, key, sizeof(key)) == 0 &&
            strncmp(key, "default:", 8) == 0 && strlen(key + 8) < sizeof(ps->session))
                row_set_str(ps->session, sizeof(ps->session), key + 8, strlen(key + 8));
        return r;
}

static const char *const letta_env[] = {
        "LETTA_LOCAL_BACKEND_DIR",
        NULL,
};

const struct adapter adapter_letta = {
        .id = "letta",
        .display_name = "Letta Code",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = letta_env,
        .discover = letta_discover,
        .classify = letta_classify,
        .parse_line = letta_parse_line,
};
