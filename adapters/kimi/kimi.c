/* Kimi Code and the older Kimi CLI (Moonshot AI): wire.jsonl event logs,
 * appended to. Written from the public format facts
 * (../shared/reference/format-kimi.md): no file either wrote has been read
 * here, so status marks the adapter unverified.
 *
 * Kimi Code: ${KIMI_CODE_HOME:-~/.kimi-code}/sessions/wd_<dir>/session_<id>/
 * agents/<agent>/wire.jsonl, one file per agent (a sub-agent's usage is in
 * its own file only). A call is a `usage.record` {usage: {inputOther
 * (uncached), output, inputCacheRead, inputCacheCreation}, usageScope,
 * model (the config's alias), time (ms)}; the same counters repeated in a
 * `step.end` are never counted. The real model is on the `llm.request`
 * before it (carried in the parse state across reads). Records of both
 * scopes count: a `session` record is a provider call too (compaction,
 * titles), which only it reports (tokscale counts `turn` only, aiusage
 * both; the format says each record is one request's usage). All-zero
 * records (a provider that returned no usage) are no call. A record has no
 * id: it is keyed by its content with the agent and not the session,
 * because a fork copies a session's files, records and times included.
 *
 * Kimi CLI: ${KIMI_SHARE_DIR:-~/.kimi}/sessions/<hash>/<session>/wire.jsonl,
 * lines {timestamp (s), message: {type, payload}}; a call is a
 * `StatusUpdate` whose token_usage {input_other, output, input_cache_read,
 * input_cache_creation} is the step's usage, keyed by its message_id
 * (updates of one step keep their largest counts, as the ledger's upsert
 * does), else by its content. The model is not in the file (the peers
 * guess one): left empty, so such calls are unpriced. A sub-agent's
 * StatusUpdate nested in a SubagentEvent is not counted: whether the
 * parent's update already includes it is not known (no peer counts it). */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"

#define KIMI_KEY_FORMAT "kimi-call-v1"

extern const struct adapter adapter_kimi; /* defined at the end of this file */

/* var names the variable (read by the caller: every read names its
 * variable where it is read), dir_env its value or NULL */
static int add_root(const struct discover_env *env, struct root_list *out, const char *var, const char *dir_env,
                    const char *dflt, uint8_t levels)
{
        const char *home = discover_env_get(env, "HOME");
        char base[PATH_MAX], path[PATH_MAX];
        bool moved = false;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (dir_env && adapt_resolve_path(dir_env, home, home, base, sizeof(base)) == 0)
                moved = true;
        else if (!home || snprintf(base, sizeof(base), "%s/%s", home, dflt) >= (int)sizeof(base))
                return 0;
        r = snprintf(path, sizeof(path), "%s/sessions", base);
        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_kimi, path, "sessions", moved ? ROOT_ENV : ROOT_DEFAULT,
                           moved ? var : NULL, NULL, levels);
        return r < 0 ? r : 0;
}

static int kimi_discover(const struct discover_env *env, struct root_list *out)
{
        int r = add_root(env, out, "KIMI_CODE_HOME", discover_env_get(env, "KIMI_CODE_HOME"), ".kimi-code", 4);
        int r2 = add_root(env, out, "KIMI_SHARE_DIR", discover_env_get(env, "KIMI_SHARE_DIR"), ".kimi", 2);
        return r < 0 ? r : r2;
}

/* Kimi CLI <hash>/<session>/wire.jsonl (depth 3); Kimi Code
 * wd_<dir>/session_<id>/agents/<agent>/wire.jsonl (depth 5) */
static enum classify_result kimi_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (is_dir)
                return depth <= 4 ? CLASS_DESCEND : CLASS_IGNORE;
        if (strcmp(name, "wire.jsonl") != 0)
                return CLASS_IGNORE;
        if (depth == 3)
                return CLASS_LINES;
        if (depth == 5 && strncmp(relpath, "wd_", 3) == 0 && strstr(relpath, "/agents/"))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

/* The n-th directory above the file (1: its own), into ret. */
static void dir_up(const char *path, int n, char *ret, size_t cap)
{
        const char *end = path ? strrchr(path, '/') : NULL;

        ret[0] = '\0';
        while (end && end > path && --n > 0) {
                const char *p = end - 1;
                while (p > path && *p != '/')
                        p--;
                if (*p != '/')
                        return;
                end = p;
        }
        if (!end || end == path)
                return;
        const char *start = end - 1;
        while (start > path && *start != '/')
                start--;
        if (*start == '/')
                start++;
        row_set_str(ret, cap, start, (size_t)(end - start));
}

struct call {
        uint64_t input, output, cache_read, cache_write;
        int64_t time_ms;
        const char *model;
};

static int emit(const struct source_ctx *ctx, struct parse_state *ps, const struct call *c,
                const struct keyhash *h_in, struct row_batch *out)
{
        struct usage_row *row;
        struct keyhash h = *h_in;
        int r = row_batch_push(out, &row);

        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN;
        row->kind = ROW_KIND_MESSAGE;
        row->time_ms = c->time_ms;
        row->input = c->input;
        row->output = c->output;
        row->cache_read = c->cache_read;
        row->cache_write = c->cache_write;
        row->total = adapt_sat_add(adapt_sat_add(c->input, c->output), adapt_sat_add(c->cache_read, c->cache_write));
        row->cost_source = COST_NONE;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "kimi");
        row_set_str(row->session, sizeof(row->session), ps->session, strlen(ps->session));
        row_set_str(row->project, sizeof(row->project), ps->project, strlen(ps->project));
        ROW_SET(row->provider, "moonshot");
        row_set_str(row->model, sizeof(row->model), c->model ? c->model : "", c->model ? strlen(c->model) : 0);
        keyhash_end(&h, &row->key);
        ps->last_time_ms = c->time_ms;
        return 0;
}

/* A model name that is a config alias placeholder (__kimi_env_model__). */
static bool symbolic(const char *m)
{
        size_t n = m ? strlen(m) : 0;
        return n >= 4 && m[0] == '_' && m[1] == '_' && m[n - 1] == '_' && m[n - 2] == '_';
}

static int code_record(const struct source_ctx *ctx, struct parse_state *ps, struct json_object *o,
                       const char *type, struct row_batch *out)
{
        struct json_object *u, *t;
        struct keyhash h;
        char agent[ROW_SESSION_MAX];
        int r;

        if (strcmp(type, "llm.request") == 0) {
                const char *m = adapt_get_str(o, "model", NULL);
                if (!m || !*m)
                        m = adapt_get_str(o, "modelAlias", NULL);
                if (m)
                        row_set_str(ps->model, sizeof(ps->model), m, strlen(m));
                return PARSE_OK;
        }
        if (strcmp(type, "usage.record") != 0 || !json_object_object_get_ex(o, "usage", &u) ||
            !json_object_is_type(u, json_type_object))
                return PARSE_OK; /* step.end repeats a record: never counted; the rest carry no usage */
        const char *alias = adapt_get_str(o, "model", NULL), *scope = adapt_get_str(o, "usageScope", NULL);
        struct call c = {
                .input = adapt_get_count(u, "inputOther"), .output = adapt_get_count(u, "output"),
                .cache_read = adapt_get_count(u, "inputCacheRead"), .cache_write = adapt_get_count(u, "inputCacheCreation"),
                .time_ms = json_object_object_get_ex(o, "time", &t) && json_object_is_type(t, json_type_int)
                                   ? json_object_get_int64(t) : ps->last_time_ms,
                .model = ps->model[0] ? ps->model : (alias && !symbolic(alias) ? alias : NULL),
        };
        if (!c.input && !c.output && !c.cache_read && !c.cache_write)
                return PARSE_OK; /* the provider returned no usage */
        dir_up(ctx ? ctx->path : NULL, 1, agent, sizeof(agent));
        r = keyhash_begin(&h, KIMI_KEY_FORMAT);
        if (r < 0)
                return r;
        keyhash_str(&h, "code");
        keyhash_str(&h, agent);
        keyhash_u64(&h, (uint64_t)c.time_ms);
        keyhash_str(&h, scope ? scope : "");
        keyhash_str(&h, alias ? alias : "");
        keyhash_str(&h, ps->model);
        keyhash_u64(&h, c.input);
        keyhash_u64(&h, c.output);
        keyhash_u64(&h, c.cache_read);
        keyhash_u64(&h, c.cache_write);
        r = emit(ctx, ps, &c, &h, out);
        return r < 0 ? r : PARSE_OK;
}

static int cli_record(const struct source_ctx *ctx, struct parse_state *ps, struct json_object *o,
                      struct json_object *msg, struct row_batch *out)
{
        struct json_object *payload, *u, *ts;
        struct keyhash h;
        const char *type = adapt_get_str(msg, "type", NULL);
        int r;

        if (!type || strcmp(type, "StatusUpdate") != 0 || !json_object_object_get_ex(msg, "payload", &payload) ||
            !json_object_object_get_ex(payload, "token_usage", &u) || !json_object_is_type(u, json_type_object))
                return PARSE_OK;
        double sec = json_object_object_get_ex(o, "timestamp", &ts) ? json_object_get_double(ts) : 0;
        struct call c = {
                .input = adapt_get_count(u, "input_other"), .output = adapt_get_count(u, "output"),
                .cache_read = adapt_get_count(u, "input_cache_read"), .cache_write = adapt_get_count(u, "input_cache_creation"),
                .time_ms = isfinite(sec) && sec > 0 && sec < 9.2e15 ? (int64_t)llround(sec * 1000) : ps->last_time_ms,
        };
        if (!c.input && !c.output && !c.cache_read && !c.cache_write)
                return PARSE_OK;
        const char *mid = adapt_get_str(payload, "message_id", NULL);
        r = keyhash_begin(&h, KIMI_KEY_FORMAT);
        if (r < 0)
                return r;
        keyhash_str(&h, "cli");
        keyhash_str(&h, ps->session);
        if (mid && *mid) {
                keyhash_str(&h, mid); /* a step's updates: one row, its largest counts */
        } else {
                keyhash_u64(&h, (uint64_t)c.time_ms);
                keyhash_u64(&h, c.input);
                keyhash_u64(&h, c.output);
                keyhash_u64(&h, c.cache_read);
                keyhash_u64(&h, c.cache_write);
        }
        r = emit(ctx, ps, &c, &h, out);
        if (r == 0 && mid && *mid)
                out->rows[out->n - 1].flags |= ROW_F_UPSERT; /* a later update of the step grows it */
        return r < 0 ? r : PARSE_OK;
}

static int kimi_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line, size_t len,
                           struct row_batch *out)
{
        struct json_tokener *tok;
        struct json_object *o, *msg;
        const char *type;
        int r = PARSE_OK;

        if (!(ps->flags & PS_HEADER_SEEN)) {
                /* the session: Kimi Code's session_<id> two levels above the
                 * agent's dir, Kimi CLI's <session> dir; the project: the
                 * workspace dir Kimi Code names after the working directory */
                const char *path = ctx ? ctx->path : NULL;
                char agents[16];
                dir_up(path, 2, agents, sizeof(agents));
                if (strcmp(agents, "agents") == 0) {
                        dir_up(path, 3, ps->session, sizeof(ps->session));
                        dir_up(path, 4, ps->project, sizeof(ps->project));
                } else {
                        dir_up(path, 1, ps->session, sizeof(ps->session));
                }
                ps->flags |= PS_HEADER_SEEN;
        }
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, line, (int)(len > INT32_MAX ? INT32_MAX : len));
        json_tokener_free(tok);
        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return PARSE_MALFORMED;
        }
        if ((type = adapt_get_str(o, "type", NULL)))
                r = code_record(ctx, ps, o, type, out);
        else if (json_object_object_get_ex(o, "message", &msg) && json_object_is_type(msg, json_type_object))
                r = cli_record(ctx, ps, o, msg, out);
        json_object_put(o);
        return r;
}

static const char *const kimi_env[] = {
        "KIMI_CODE_HOME",
        "KIMI_SHARE_DIR",
        NULL,
};

const struct adapter adapter_kimi = {
        .id = "kimi",
        .display_name = "Kimi Code / Kimi CLI",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_NONE,
        },
        .env = kimi_env,
        .unverified = "written from public format facts (the peers' parsers); no wire.jsonl Kimi wrote has been read",
        .discover = kimi_discover,
        .classify = kimi_classify,
        .parse_line = kimi_parse_line,
};
