/* Amp (Sourcegraph's agent): one JSON document per thread,
 * ${AMP_DATA_DIR:-~/.local/share/amp}/threads/T-<uuid>.json, rewritten
 * whole as the thread grows. Written from the public format facts
 * (../shared/reference/format-amp.md): no file Amp itself wrote has been
 * read yet, so status marks the adapter unverified.
 *
 * A call is an assistant message's `usage` (inputTokens uncached,
 * outputTokens, cacheCreationInputTokens, cacheReadInputTokens, model,
 * timestamp, credits). Older threads also keep `usageLedger.events[]`, one
 * event per inference, naming its message by `toMessageId`. Both describe
 * the same inferences, so a message's usage and its ledger event are one
 * row, keyed by (thread, message id): the message's counts (it alone has
 * the cache split; the ledger's input is the same uncached input), the
 * larger of each where the event has one, the event's model and time where
 * the message has none. A message without usage is still counted from its
 * event, under the same key; an event that names no message, by its own id.
 * The peers disagree here (ccusage reads the ledger only when there is one,
 * agentsview only the messages, tokscale both, matched): the format says
 * the message usage is the per-inference record (it alone carries the
 * cache split and a time per inference) and that the ledger repeats it,
 * which this key follows without choosing one list over the other.
 *
 * OpenAI-family threads write `inputTokens: 0` and the uncached prompt as
 * cacheCreationInputTokens; the counts are kept as Amp writes them (cache
 * write), not moved. A usage of all zeros is no inference. The time of a
 * call is its `timestamp`, else the event's, else the thread's `created`
 * plus the message's position in seconds, marked approximate. Credits are
 * Amp's own charge, not a price: the price table prices the tokens. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "timefmt.h"

#define AMP_KEY_FORMAT "amp-message-v1"

extern const struct adapter adapter_amp; /* defined at the end of this file */

static int amp_discover(const struct discover_env *env, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *dir_env = discover_env_get(env, "AMP_DATA_DIR");
        char base[PATH_MAX], path[PATH_MAX];
        bool moved = false;
        int r;

        if (home && home[0] != '/')
                home = NULL;
        if (dir_env && adapt_resolve_path(dir_env, home, home, base, sizeof(base)) == 0)
                moved = true;
        else if (!home || snprintf(base, sizeof(base), "%s/.local/share/amp", home) >= (int)sizeof(base))
                return 0;
        r = snprintf(path, sizeof(path), "%s/threads", base);
        if (r < 0 || (size_t)r >= sizeof(path))
                return 0;
        r = adapt_add_root(out, &adapter_amp, path, "threads", moved ? ROOT_ENV : ROOT_DEFAULT,
                           moved ? "AMP_DATA_DIR" : NULL, NULL, 0);
        return r < 0 ? r : 0;
}

/* threads/T-<uuid>.json (a temporary file of a rewrite is not ours) */
static enum classify_result amp_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return depth == 0 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 1 && strncmp(name, "T-", 2) == 0 && adapt_ends_with(name, ".json"))
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

struct thread {
        const struct source_ctx *ctx;
        char id[ROW_SESSION_MAX];
        int64_t created_ms;
        struct row_batch *out;
};

struct call {
        const char *key_id;    /* message id (as text) or the event's own id */
        const char *model;
        const char *when;      /* ISO-8601 or NULL */
        int64_t position;      /* the message's number, for a time without one */
        uint64_t input, output, cache_read, cache_write;
};

static int emit(const struct thread *t, const struct call *c)
{
        struct usage_row *row;
        struct keyhash h;
        int64_t ms = 0;
        int r;

        if (!c->input && !c->output && !c->cache_read && !c->cache_write)
                return 0; /* no inference */
        r = row_batch_push(t->out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT; /* a rewrite may grow a message's usage */
        if (!c->when || timefmt_parse_rfc3339(c->when, strlen(c->when), &ms) < 0) {
                ms = t->created_ms + (c->position > 0 ? c->position : 0) * 1000;
                row->flags |= ROW_F_TIME_APPROX;
        }
        row->kind = ROW_KIND_MESSAGE;
        row->time_ms = ms;
        row->input = c->input;
        row->output = c->output;
        row->cache_read = c->cache_read;
        row->cache_write = c->cache_write;
        row->total = adapt_sat_add(adapt_sat_add(c->input, c->output), adapt_sat_add(c->cache_read, c->cache_write));
        row->cost_source = COST_NONE;
        row->source_hash = t->ctx ? t->ctx->source_hash : 0;
        ROW_SET(row->tool, "amp");
        row_set_str(row->session, sizeof(row->session), t->id, strlen(t->id));
        ROW_SET(row->provider, "amp");
        row_set_str(row->model, sizeof(row->model), c->model ? c->model : "", c->model ? strlen(c->model) : 0);
        r = keyhash_begin(&h, AMP_KEY_FORMAT);
        if (r < 0)
                return r;
        keyhash_str(&h, t->id);
        keyhash_str(&h, c->key_id);
        keyhash_end(&h, &row->key);
        return 0;
}

/* The message id as text: Amp numbers messages (messageId), older ones may
 * name them; "" when there is none. */
static const char *id_text(struct json_object *o, const char *key, char *buf, size_t cap)
{
        struct json_object *v;

        if (!o || !json_object_object_get_ex(o, key, &v))
                return "";
        if (json_object_is_type(v, json_type_int)) {
                snprintf(buf, cap, "#%lld", (long long)json_object_get_int64(v));
                return buf;
        }
        if (json_object_is_type(v, json_type_string)) {
                snprintf(buf, cap, "#%s", json_object_get_string(v));
                return buf;
        }
        return "";
}

/* The ledger event that paid for message id (as id_text spells it), NULL
 * when there is none. */
static struct json_object *event_for(struct json_object *events, const char *id)
{
        size_t n = events ? json_object_array_length(events) : 0;
        char buf[64];

        for (size_t i = 0; i < n; i++) {
                struct json_object *e = json_object_array_get_idx(events, i);
                if (strcmp(id_text(e, "toMessageId", buf, sizeof(buf)), id) == 0)
                        return e;
        }
        return NULL;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
        return a > b ? a : b;
}

static int read_messages(const struct thread *t, struct json_object *messages, struct json_object *events)
{
        size_t n = json_object_array_length(messages);
        int r = 0;

        for (size_t i = 0; i < n && r == 0; i++) {
                struct json_object *m = json_object_array_get_idx(messages, i), *u;
                const char *role = adapt_get_str(m, "role", NULL);
                char idbuf[64], posbuf[32];
                if (!role || strcmp(role, "assistant") != 0 || !json_object_object_get_ex(m, "usage", &u) ||
                    !json_object_is_type(u, json_type_object))
                        continue;
                const char *id = id_text(m, "messageId", idbuf, sizeof(idbuf));
                if (!id[0]) { /* no number: its place in the thread */
                        snprintf(posbuf, sizeof(posbuf), "@%zu", i);
                        id = posbuf;
                }
                struct json_object *mid;
                int64_t pos = json_object_object_get_ex(m, "messageId", &mid) && json_object_is_type(mid, json_type_int)
                                      ? json_object_get_int64(mid) : (int64_t)i;
                struct call c = {
                        .key_id = id, .model = adapt_get_str(u, "model", NULL),
                        .when = adapt_get_str(u, "timestamp", NULL), .position = pos,
                        .input = adapt_get_count(u, "inputTokens"), .output = adapt_get_count(u, "outputTokens"),
                        .cache_read = adapt_get_count(u, "cacheReadInputTokens"),
                        .cache_write = adapt_get_count(u, "cacheCreationInputTokens"),
                };
                /* its ledger event, in an older thread: the same inference */
                struct json_object *e = event_for(events, id), *tok = NULL;
                if (e) {
                        json_object_object_get_ex(e, "tokens", &tok);
                        if (!c.model)
                                c.model = adapt_get_str(e, "model", NULL);
                        if (!c.when)
                                c.when = adapt_get_str(e, "timestamp", NULL);
                        c.input = max64(c.input, adapt_get_count(tok, "input"));
                        c.output = max64(c.output, adapt_get_count(tok, "output"));
                }
                r = emit(t, &c);
        }
        return r;
}

/* Whether message id carries a usage of its own (its event was read with it). */
static bool message_has_usage(struct json_object *messages, const char *id)
{
        size_t n = messages ? json_object_array_length(messages) : 0;
        char buf[64];

        for (size_t i = 0; i < n; i++) {
                struct json_object *m = json_object_array_get_idx(messages, i), *u;
                const char *role = adapt_get_str(m, "role", NULL);
                if (role && strcmp(role, "assistant") == 0 && json_object_object_get_ex(m, "usage", &u) &&
                    json_object_is_type(u, json_type_object) && strcmp(id_text(m, "messageId", buf, sizeof(buf)), id) == 0)
                        return true;
        }
        return false;
}

/* usageLedger.events[]: each keyed by the message it paid for (the same row
 * as that message's usage), else by its own id. */
static int read_ledger(const struct thread *t, struct json_object *events, struct json_object *messages)
{
        size_t n;
        int r = 0;

        if (!events)
                return 0;
        n = json_object_array_length(events);
        for (size_t i = 0; i < n && r == 0; i++) {
                struct json_object *e = json_object_array_get_idx(events, i), *tok = NULL, *to;
                char idbuf[64], own[80];
                const char *op = adapt_get_str(e, "operationType", NULL);
                if (!json_object_is_type(e, json_type_object) || (op && strcmp(op, "inference") != 0))
                        continue;
                json_object_object_get_ex(e, "tokens", &tok);
                const char *id = id_text(e, "toMessageId", idbuf, sizeof(idbuf));
                int64_t pos = json_object_object_get_ex(e, "toMessageId", &to) && json_object_is_type(to, json_type_int)
                                      ? json_object_get_int64(to) : 0;
                if (id[0] && message_has_usage(messages, id))
                        continue; /* read with its message */
                if (!id[0]) {
                        const char *eid = adapt_get_str(e, "id", NULL);
                        if (!eid)
                                continue; /* neither a message nor an id: nothing to key it by */
                        snprintf(own, sizeof(own), "event:%.70s", eid);
                        id = own;
                }
                struct call c = {
                        .key_id = id, .model = adapt_get_str(e, "model", NULL),
                        .when = adapt_get_str(e, "timestamp", NULL), .position = pos,
                        .input = adapt_get_count(tok, "input"), .output = adapt_get_count(tok, "output"),
                        .cache_read = adapt_get_count(tok, "cacheReadInputTokens"),
                        .cache_write = adapt_get_count(tok, "cacheCreationInputTokens"),
                };
                r = emit(t, &c);
        }
        return r;
}

/* The file's name without .json, when the JSON names no id. */
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

static int amp_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                              size_t *io_known, struct row_batch *out)
{
        struct json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
        struct json_object *root, *messages = NULL, *created;
        size_t before = out->n;
        struct thread t = { .ctx = ctx, .out = out };
        int r;

        if (!tok)
                return -ENOMEM;
        root = json_tokener_parse_ex(tok, doc, (int)(len > INT32_MAX ? INT32_MAX : len));
        if (!root) {
                r = json_tokener_get_error(tok) == json_tokener_continue ? PARSE_INCOMPLETE : PARSE_MALFORMED;
                json_tokener_free(tok);
                return r;
        }
        json_tokener_free(tok);
        if (!json_object_is_type(root, json_type_object) ||
            (!json_object_object_get_ex(root, "messages", &messages) &&
             !json_object_object_get_ex(root, "usageLedger", NULL))) {
                json_object_put(root);
                return PARSE_NOT_SOURCE;
        }
        if (adapt_json_str(root, "id", t.id, sizeof(t.id)) < 0)
                name_of(ctx ? ctx->path : NULL, t.id, sizeof(t.id));
        if (json_object_object_get_ex(root, "created", &created) && json_object_is_type(created, json_type_int))
                t.created_ms = json_object_get_int64(created);
        if (t.created_ms <= 0 && ctx)
                t.created_ms = (int64_t)ctx->st.st_mtim.tv_sec * 1000;
        struct json_object *ledger, *events = NULL;
        if (json_object_object_get_ex(root, "usageLedger", &ledger) &&
            (!json_object_object_get_ex(ledger, "events", &events) || !json_object_is_type(events, json_type_array)))
                events = NULL;
        if (messages && !json_object_is_type(messages, json_type_array))
                messages = NULL;
        r = messages ? read_messages(&t, messages, events) : 0;
        if (r == 0)
                r = read_ledger(&t, events, messages);
        json_object_put(root);
        if (r < 0) {
                out->n = before;
                return r;
        }
        row_set_str(ps->session, sizeof(ps->session), t.id, strlen(t.id));
        /* every version is read whole: its keys make a re-read harmless */
        *io_known = 0;
        return PARSE_OK;
}

static const char *const amp_env[] = {
        "AMP_DATA_DIR",
        NULL,
};

const struct adapter adapter_amp = {
        .id = "amp",
        .display_name = "Amp",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_COMPUTED,
                .activity = CAP_ACTIVITY_NONE,
                .reasoning = CAP_REASONING_NONE,
        },
        .env = amp_env,
        .unverified = "written from public format facts (the peers' parsers); no thread file Amp wrote has been read",
        .discover = amp_discover,
        .classify = amp_classify,
        .parse_document = amp_parse_document,
};
