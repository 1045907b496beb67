/* Gemini CLI (Google's CLI): where its session files are
 * ($GEMINI_CLI_HOME or ~, then .gemini/tmp/<project>/chats/), which of them
 * are append-only JSONL (0.5x and later) and which whole documents rewritten
 * in place (older .json), and the JSONL lines. Records: gemini/msg.c;
 * documents: gemini/doc.c. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "json/bytescan.h"
#include "gemini/doc.h"
#include "gemini/msg.h"

/* tmp/<project>/chats/<parent session>/<sub-agent>.jsonl: three directory levels */
#define GEMINI_MAX_DEPTH 3

extern const struct adapter adapter_gemini; /* defined at the end of this file */

static int add_tmp(struct root_list *out, const char *home, uint8_t reason, const char *env_var)
{
        char path[PATH_MAX];
        int r = snprintf(path, sizeof(path), "%s/.gemini/tmp", strcmp(home, "/") ? home : "");

        if (r < 0 || (size_t)r >= sizeof(path))
                return 0; /* too long to be a directory we could read */
        r = adapt_add_root(out, &adapter_gemini, path, "chats", reason, env_var, NULL, GEMINI_MAX_DEPTH);
        return r < 0 ? r : 0;
}

/* The CLI puts .gemini in $GEMINI_CLI_HOME when set (used as it is: a
 * relative value is taken against HOME, as the CLI's working directory is
 * not known here), else in the home directory. With the variable set, the
 * default stays listed when it exists: sessions written before stay there. */
static int gemini_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *moved = discover_env_get(env, "GEMINI_CLI_HOME");
        char dir[PATH_MAX], def[PATH_MAX];
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (moved && adapt_resolve_path(moved, home, home, dir, sizeof(dir)) == 0) {
                r = add_tmp(out, dir, ROOT_ENV, "GEMINI_CLI_HOME");
                if (r < 0)
                        return r;
                if (!home || snprintf(def, sizeof(def), "%s/.gemini", home) >= (int)sizeof(def) ||
                    !adapt_is_dir(def))
                        return 0;
        }
        return home ? add_tmp(out, home, ROOT_DEFAULT, NULL) : 0;
}

/* Under tmp/: <project>/chats/session-*.jsonl (lines) or session-*.json (a
 * document), and a sub-agent's <project>/chats/<parent>/<id>.jsonl. Not
 * checkpoints, logs, shell history or anything else of a project folder. */
static enum classify_result gemini_classify(const char *relpath, const char *name, int depth,
                                            bool is_dir)
{
        if (is_dir) {
                switch (depth) {
                case 0:
                case 1:
                        return CLASS_DESCEND;
                case 2:
                        return strcmp(name, "chats") == 0 ? CLASS_DESCEND : CLASS_IGNORE;
                case 3:
                        return adapt_component_is(relpath, 1, "chats") ? CLASS_DESCEND : CLASS_IGNORE;
                default:
                        return CLASS_IGNORE;
                }
        }
        if (!adapt_component_is(relpath, 1, "chats"))
                return CLASS_IGNORE;
        if (depth == 3 && strncmp(name, "session-", 8) == 0) {
                if (adapt_ends_with(name, ".jsonl"))
                        return CLASS_LINES;
                if (adapt_ends_with(name, ".json"))
                        return CLASS_DOCUMENT;
        }
        if (depth == 4 && adapt_ends_with(name, ".jsonl"))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

/* Whether a line can hold usage: not a {"$set": ...} (a replaced message
 * list, without tokens, often the largest line of the file), and a
 * "tokens" member somewhere (a quoted needle: text inside strings has its
 * quotes escaped). */
static bool may_matter(const char *p, size_t n, const void *u)
{
        (void)u;
        if (n >= 7 && memcmp(p, "{\"$set\"", 7) == 0)
                return false;
        return bytescan_find(p, n, "\"tokens\"", 8) != NULL;
}

static int gemini_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                             size_t len, struct row_batch *out)
{
        struct gm_msg_f m;
        struct gm_state st;
        struct jscan s;
        int r;

        if (!adapt_line_begin(ps, &line, &len, may_matter, NULL, &r))
                return r;
        gm_state_load(ps, &st);
        s = (struct jscan){ line, line + len };
        if (!jscan_at(&s, '{') || !gm_scan_record(&s, &m, 0)) {
                if (!(ps->flags & PS_HEADER_SEEN)) {
                        ps->flags |= PS_HEADER_SEEN | PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                return PARSE_MALFORMED;
        }
        jscan_ws(&s);
        if (!(ps->flags & PS_HEADER_SEEN)) {
                /* the first line: the header {sessionId, projectHash, ...}
                 * (a file may also begin with a message) */
                ps->flags |= PS_HEADER_SEEN;
                if (!(m.session_id.p && m.project_hash.p) && !(m.id.p && m.type.p)) {
                        ps->flags |= PS_NOT_SOURCE;
                        return PARSE_NOT_SOURCE;
                }
                gm_identify(ctx, ps, &st, &m.session_id, &m.project_hash, &m.kind);
                gm_state_save(&st, ps);
        }
        /* $set (metadata, or a whole replaced message list: no tokens,
         * never a call), $rewindTo (the calls after it were still made),
         * a header again on resume: nothing to count */
        if (!m.is_set && !m.is_rewind && m.id.p) {
                r = gm_emit(ctx, ps, &st, &m, out);
                if (r < 0)
                        return r;
        }
        return s.p == s.end ? PARSE_OK : PARSE_MALFORMED;
}

static const char *const gemini_env[] = {
        "GEMINI_CLI_HOME",
        NULL,
};

const struct adapter adapter_gemini = {
        .id = "gemini",
        .display_name = "Gemini CLI",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = gemini_env,
        .discover = gemini_discover,
        .classify = gemini_classify,
        .parse_line = gemini_parse_line,
        .parse_document = gemini_parse_document,
};
