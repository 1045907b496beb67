/* Continue (the `cn` CLI and the IDE extensions): one JSON document per
 * session, ${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions/<id>.json,
 * rewritten whole after every turn. Every history[].message with role
 * "assistant" and a usage is one API call.
 *
 * Continue keeps no message id and no time per message, so:
 *
 *  - the key of a call is the conversation up to and including it: a hash
 *    chained over every message before it (role, content, tool calls and
 *    usage, as the document spells them), with the workspace. A --fork
 *    writes a new session whose history begins with a copy of the parent's
 *    messages: the copied calls have the same conversation before them, so
 *    they are the same rows and count once. A --resume appends to the same
 *    history, so a repeated prompt answered with the same text and usage
 *    has a longer conversation before it than the first: two rows. What
 *    cannot be told apart is two sessions, in one workspace, whose whole
 *    conversations up to a call are the same bytes (same prompts, replies,
 *    usage and tool-call ids): without an id that is indistinguishable from
 *    a fork's copy, and is counted once.
 *  - the time of a call is the mtime of the first version of the document
 *    the daemon read it in (live: when it was written; on a first scan,
 *    the session file's last write), marked approximate.
 *
 * What prompt_tokens means depends on the provider: with the Anthropic
 * provider prompt_tokens_details carries cache_read_tokens and
 * cache_write_tokens and prompt_tokens excludes both; otherwise (OpenAI and
 * its compatibles) prompt_tokens includes the cached_tokens it details.
 * completion_tokens includes reasoning. cost_cents is not a price (0 for
 * every model here): the price table prices the calls, or nothing does.
 * The session-level usage is a running sum with the wrong cached count:
 * never read. sessions.json is an index: not a source. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"

#define CONTINUE_KEY_FORMAT "continue-call-v1"

extern const struct adapter adapter_continue; /* defined at the end of this file */

static int continue_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *dir_env = discover_env_get(env, "CONTINUE_GLOBAL_DIR");
        char base[PATH_MAX], path[PATH_MAX];
        bool moved = false;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (dir_env && adapt_resolve_path(dir_env, home, home, base, sizeof(base)) == 0)
                moved = true;
        else if (!home || snprintf(base, sizeof(base), "%s/.continue", home) >= (int)sizeof(base))
                return 0;
        r = snprintf(path, sizeof(path), "%s/sessions", base);
        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_continue, path, "sessions", moved ? ROOT_ENV : ROOT_DEFAULT,
                           moved ? "CONTINUE_GLOBAL_DIR" : NULL, NULL, 0);
        return r < 0 ? r : 0;
}

/* sessions/<id>.json; sessions.json is the index, temp files are not ours */
static enum classify_result continue_classify(const char *relpath, const char *name, int depth,
                                              bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return depth == 0 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 1 && name[0] != '.' && strcmp(name, "sessions.json") != 0 &&
            adapt_ends_with(name, ".json"))
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

/* A token count as the document writes it: a non-negative integer, else 0
 * (the daemon refuses rows past its bounds). */
static uint64_t count_of(struct json_object *o, const char *key)
{
        struct json_object *v;
        int64_t n;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return 0;
        n = json_object_get_int64(v);
        return n > 0 ? (uint64_t)n : 0;
}

static bool has_key(struct json_object *o, const char *key)
{
        return o && json_object_object_get_ex(o, key, NULL);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a + b < a ? UINT64_MAX : a + b;
}

struct call_usage {
        uint64_t input, output, cache_read, cache_write, reasoning;
        bool anthropic;
};

static void read_usage(struct json_object *usage, struct call_usage *ret)
{
        struct json_object *pd = NULL, *cd = NULL;
        uint64_t prompt = count_of(usage, "prompt_tokens");

        json_object_object_get_ex(usage, "prompt_tokens_details", &pd);
        json_object_object_get_ex(usage, "completion_tokens_details", &cd);
        *ret = (struct call_usage){ .output = count_of(usage, "completion_tokens"),
                                    .reasoning = count_of(cd, "reasoning_tokens") };
        if (has_key(pd, "cache_read_tokens") || has_key(pd, "cache_write_tokens")) {
                ret->anthropic = true;
                ret->input = prompt;
                ret->cache_read = count_of(pd, "cache_read_tokens");
                ret->cache_write = count_of(pd, "cache_write_tokens");
        } else {
                uint64_t cached = count_of(pd, "cached_tokens");
                ret->cache_read = cached < prompt ? cached : prompt;
                ret->input = prompt - ret->cache_read;
        }
        if (ret->reasoning > ret->output)
                ret->reasoning = ret->output;
}

static void read_calls(struct json_object *msg, struct usage_row *row)
{
        struct json_object *calls;
        size_t n;

        row->n_calls = 0;
        if (!json_object_object_get_ex(msg, "toolCalls", &calls) || !json_object_is_type(calls, json_type_array))
                return;
        n = json_object_array_length(calls);
        for (size_t i = 0; i < n && row->n_calls < ROW_CALLS_MAX; i++) {
                struct json_object *c = json_object_array_get_idx(calls, i), *fn = NULL;
                const char *id = adapt_get_str(c, "id", NULL), *name = NULL;
                if (json_object_object_get_ex(c, "function", &fn))
                        name = adapt_get_str(fn, "name", NULL);
                if (!name)
                        continue;
                ROW_SET(row->calls[row->n_calls].id, id ? id : "");
                ROW_SET(row->calls[row->n_calls].name, name);
                row->n_calls++;
        }
}

struct doc_ctx {
        const struct source_ctx *ctx;
        const char *session, *project;
        int64_t time_ms;
        struct row_batch *out;
};

static int emit(const struct doc_ctx *d, struct json_object *msg, struct json_object *usage, uint64_t chain)
{
        struct call_usage u;
        struct usage_row *row;
        struct keyhash h;
        const char *model = adapt_get_str(usage, "model", NULL);
        int r;

        if (!model)
                model = adapt_get_str(msg, "model", NULL);
        read_usage(usage, &u);
        r = row_batch_push(d->out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_TIME_APPROX;
        row->kind = ROW_KIND_MESSAGE;
        row->time_ms = d->time_ms;
        row->input = u.input;
        row->output = u.output;
        row->cache_read = u.cache_read;
        row->cache_write = u.cache_write;
        row->reasoning = u.reasoning;
        row->total = sat_add(sat_add(u.input, u.output), sat_add(u.cache_read, u.cache_write));
        row->cost_source = COST_NONE;
        row->source_hash = d->ctx ? d->ctx->source_hash : 0;
        ROW_SET(row->tool, "continue");
        ROW_SET(row->session, d->session);
        ROW_SET(row->project, d->project);
        ROW_SET(row->provider, u.anthropic ? "anthropic" : "openai");
        ROW_SET(row->model, model ? model : "");
        read_calls(msg, row);
        r = keyhash_begin(&h, CONTINUE_KEY_FORMAT);
        if (r < 0)
                return r;
        keyhash_str(&h, d->project);
        keyhash_u64(&h, chain);
        keyhash_end(&h, &row->key);
        return 0;
}

/* The document's name without .json, when its JSON names no sessionId. */
static void name_of(const char *path, char *ret, size_t cap)
{
        const char *base = path ? strrchr(path, '/') : NULL;
        size_t n;

        base = base ? base + 1 : (path ? path : "");
        n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
                n -= 5;
        row_set_str(ret, cap, base, n);
}

static int continue_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc,
                                   size_t len, size_t *io_known, struct row_batch *out)
{
        struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
        struct json_object *root, *history;
        char session[ROW_SESSION_MAX], project[ROW_PROJECT_MAX];
        uint64_t chain = 0;
        size_t n, before = out->n;
        int r = PARSE_OK;

        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, doc, (int)(len > INT32_MAX ? INT32_MAX : len));
        if (!root) {
                /* cut short (a torn write): read again shortly; anything else is not JSON */
                r = json_tokener_get_error(tok) == json_tokener_continue ? PARSE_INCOMPLETE : PARSE_MALFORMED;
                json_tokener_free(tok);
                return r;
        }
        json_tokener_free(tok);
        if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "history", &history) ||
            !json_object_is_type(history, json_type_array)) {
                json_object_put(root);
                return PARSE_NOT_SOURCE;
        }
        if (adapt_json_str(root, "sessionId", session, sizeof(session)) < 0)
                name_of(ctx ? ctx->path : NULL, session, sizeof(session));
        if (adapt_json_str(root, "workspaceDirectory", project, sizeof(project)) < 0)
                project[0] = '\0';
        struct doc_ctx d = {
                .ctx = ctx, .session = session, .project = project, .out = out,
                .time_ms = ctx ? (int64_t)ctx->st.st_mtim.tv_sec * 1000 + ctx->st.st_mtim.tv_nsec / 1000000 : 0,
        };
        n = json_object_array_length(history);
        for (size_t i = 0; i < n && r == PARSE_OK; i++) {
                struct json_object *item = json_object_array_get_idx(history, i), *msg, *usage;
                const char *role, *text;

                if (!json_object_object_get_ex(item, "message", &msg) || !json_object_is_type(msg, json_type_object))
                        continue;
                /* the chain takes the message as written, before this call is keyed by it */
                text = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                uint64_t h[2] = { chain, hash64(text, strlen(text)) };
                chain = hash64(h, sizeof(h));
                role = adapt_get_str(msg, "role", NULL);
                if (!role || strcmp(role, "assistant") != 0 || !json_object_object_get_ex(msg, "usage", &usage) ||
                    !json_object_is_type(usage, json_type_object))
                        continue;
                r = emit(&d, msg, usage, chain);
        }
        json_object_put(root);
        if (r < 0) {
                out->n = before;
                return r;
        }
        row_set_str(ps->session, sizeof(ps->session), session, strlen(session));
        row_set_str(ps->project, sizeof(ps->project), project, strlen(project));
        /* every version is read whole: its keys make a re-read harmless */
        *io_known = 0;
        return PARSE_OK;
}

static const char *const continue_env[] = {
        "CONTINUE_GLOBAL_DIR",
        NULL,
};

const struct adapter adapter_continue = {
        .id = "continue",
        .display_name = "Continue",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = continue_env,
        .discover = continue_discover,
        .classify = continue_classify,
        .parse_document = continue_parse_document,
};
