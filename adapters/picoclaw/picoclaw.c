/* PicoClaw (sipeed/picoclaw): which files are session transcripts, and each
 * assistant message as an activity row; PicoClaw writes no token or cost
 * figures to disk at all. Discovery and config.json: picoclaw/config.c. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "adapt-util.h"
#include "lines.h"
#include "picoclaw/picoclaw.h"
#include "timefmt.h"

/* Dedup-key format tag: bump when the key's fields change. */
#define PC_KEY_FORMAT "picoclaw-v1"

#define PC_META_MAX (1u << 20) /* a <key>.meta.json larger than this is ignored */

static const char *const picoclaw_env[] = {
        "PICOCLAW_HOME",
        "PICOCLAW_CONFIG",
        "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE",
        NULL,
};

/* ---- classification ------------------------------------------------------- */

/* sessions/<key>.jsonl only: not .tmp-<pid>-<ns> (atomic-write temp files),
 * <key>.meta.json, legacy <key>.json / *.json.migrated, seahorse.db*. */
static enum classify_result picoclaw_classify(const char *relpath, const char *name, int depth,
                                              bool is_dir)
{
        size_t n = strlen(name);

        (void)relpath;
        if (is_dir)
                return depth == 0 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth != 1 || strncmp(name, ".tmp-", 5) == 0)
                return CLASS_IGNORE;
        if (n > 6 && strcmp(name + n - 6, ".jsonl") == 0)
                return CLASS_LINES;
        return CLASS_IGNORE;
}

/* ---- parsing -------------------------------------------------------------- */

/* parse_state.priv holds the created_at of the previous line (persisted in
 * the checkpoint like the rest) for the bulk-stamp test in the dedup key
 * below. Layout: u8 PC_PRIV_FORMAT, then the string's bytes (no NUL, at most
 * PC_PREV_MAX - 1); priv_len 0 or anything else: no previous created_at. */
#define PC_PRIV_FORMAT 1
#define PC_PREV_MAX    64 /* a longer created_at is not kept: it never matches */

/* The previous line's created_at, NUL-terminated ("" when none). */
static void pc_prev_get(const struct parse_state *ps, char out[PC_PREV_MAX])
{
        size_t n = ps->priv_len > 0 ? ps->priv_len - 1 : 0;

        if (ps->priv_len == 0 || ps->priv[0] != PC_PRIV_FORMAT || n >= PC_PREV_MAX ||
            memchr(ps->priv + 1, 0, n))
                n = 0;
        memcpy(out, ps->priv + 1, n);
        out[n] = 0;
}

/* Keeps s (up to its first NUL) as the previous created_at; NULL or a
 * string of PC_PREV_MAX or more bytes keeps none. */
static void pc_prev_set(struct parse_state *ps, const char *s, size_t len)
{
        size_t n = s ? strnlen(s, len) : 0;

        ps->priv_len = 0;
        if (!s || len >= PC_PREV_MAX || n == 0)
                return;
        ps->priv[0] = PC_PRIV_FORMAT;
        memcpy(ps->priv + 1, s, n);
        ps->priv_len = (uint32_t)(1 + n);
}

/* A state of parse_state encoding 1 (before the private area) kept the
 * previous created_at in `provider`, which PicoClaw does not otherwise use:
 * move it where it belongs now. */
static void pc_state_upgrade(struct parse_state *ps)
{
        if (ps->priv_len == 0 && ps->provider[0]) {
                pc_prev_set(ps, ps->provider, strnlen(ps->provider, sizeof(ps->provider)));
                ps->provider[0] = 0;
        }
}

/* The session key is the file stem (<key>.jsonl); the project is the
 * workspace, the folder holding sessions/. */
static void pc_source_names(const char *path, struct parse_state *ps)
{
        const char *base = strrchr(path, '/');
        size_t n;
        char dir[PATH_MAX], ws[PATH_MAX];

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n > 6 && strcmp(base + n - 6, ".jsonl") == 0)
                n -= 6;
        row_set_str(ps->session, sizeof(ps->session), base, n);
        adapt_path_dirname(path, dir, sizeof(dir));
        adapt_path_dirname(dir, ws, sizeof(ws));
        row_set_str(ps->project, sizeof(ps->project), ws, strlen(ws));
}

/* updated_at of <dir>/<stem>.meta.json: the time of the last append. */
static int pc_meta_time(const char *path, int64_t *ret_ms)
{
        char meta[PATH_MAX];
        size_t n = strlen(path);
        json_object *obj = NULL;
        const char *s;
        size_t slen;
        int64_t ms;
        int r;

        if (n <= 6 || strcmp(path + n - 6, ".jsonl") != 0)
                return -EINVAL;
        if (snprintf(meta, sizeof(meta), "%.*s.meta.json", (int)(n - 6), path) >= (int)sizeof(meta))
                return -ENAMETOOLONG;
        r = adapt_read_json(meta, PC_META_MAX, &obj);
        if (r < 0)
                return r;
        s = adapt_get_str(obj, "updated_at", &slen);
        r = s && timefmt_parse_rfc3339(s, slen, &ms) == 0 && ms > 0 ? 0 : -ENODATA;
        json_object_put(obj);
        if (r == 0)
                *ret_ms = ms;
        return r;
}

/* A line without created_at: the source's fallback time when the caller set
 * one, else the meta sidecar's updated_at, else the file's mtime. */
static int64_t pc_fallback_time(const struct source_ctx *ctx, const struct parse_state *ps)
{
        struct stat st;
        int64_t ms;

        if (ps->fallback_time_ms != 0)
                return ps->fallback_time_ms;
        if (ctx && ctx->path && pc_meta_time(ctx->path, &ms) == 0)
                return ms;
        if (ctx && (ctx->st.st_mtim.tv_sec != 0 || ctx->st.st_mtim.tv_nsec != 0))
                st = ctx->st;
        else if (!ctx || !ctx->path || stat(ctx->path, &st) < 0)
                return 0;
        return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* A JSON value's bytes for hashing: a string's content, any other value's
 * serialization, "" when absent. */
static const char *pc_text(json_object *obj, const char *key, size_t *ret_len)
{
        json_object *v;

        *ret_len = 0;
        if (!obj || !json_object_object_get_ex(obj, key, &v) || !v)
                return "";
        if (json_object_is_type(v, json_type_string)) {
                *ret_len = (size_t)json_object_get_string_len(v);
                return json_object_get_string(v);
        }
        const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        *ret_len = s ? strlen(s) : 0;
        return s ? s : "";
}

struct pc_parse {
        const struct source_ctx *ctx;
        struct parse_state *ps;
        struct row_batch *out;
        bool malformed;
};

/* The dedup key, "picoclaw-v1" (content only: never offset, path or
 * session, so a compaction or rollback rewrite, a re-read after a new inode,
 * and the alias-promotion copy of the same messages into another file all
 * land on the keys already counted):
 *
 *   role, created_at as written, model_name, content, reasoning_content,
 *   the number of tool calls and each call's id, name and arguments.
 *
 * created_at is what tells apart two identical replies ("OK.") in one or
 * several sessions, so it is in the key when the line has one of its own.
 * But PicoClaw's SetHistory (forced compression, rollback of an aborted
 * turn, restore) stamps every line that lacked created_at with ONE shared
 * time.Now(); keyed naively, such a rewrite of an old-build (<= v0.2.9) file
 * would count each of those turns a second time. Appends stamp each line
 * with its own nanosecond clock reading, so two consecutive lines with the
 * byte-identical created_at are the mark of that bulk stamp: such a line is
 * keyed as if it had no created_at (and its time is marked approximate),
 * which is exactly the key its pre-rewrite version had. Cost of the choice:
 * two identical replies that both lack an own created_at collapse into one
 * (old builds only, and only with identical content, reasoning and calls);
 * the first line of a re-stamped file has no predecessor to compare with
 * and, if it is an assistant reply, counts once more. */
static int pc_key(json_object *obj, const char *role, const char *created, const char *model_name,
                  json_object *calls, struct row_key *ret_key)
{
        struct keyhash h;
        const char *s;
        size_t n, ncalls = calls ? json_object_array_length(calls) : 0;
        int r;

        r = keyhash_begin(&h, PC_KEY_FORMAT);
        if (r < 0)
                return r;
        keyhash_str(&h, role);
        keyhash_str(&h, created);
        keyhash_str(&h, model_name);
        s = pc_text(obj, "content", &n);
        keyhash_bytes(&h, s, n);
        s = pc_text(obj, "reasoning_content", &n);
        keyhash_bytes(&h, s, n);
        keyhash_u64(&h, ncalls);
        for (size_t i = 0; i < ncalls; i++) {
                json_object *c = json_object_array_get_idx(calls, i);
                json_object *fn = adapt_get_type(c, "function", json_type_object);

                keyhash_str(&h, adapt_get_str(c, "id", NULL));
                keyhash_str(&h, adapt_get_str(fn ? fn : c, "name", NULL));
                s = pc_text(fn ? fn : c, "arguments", &n);
                keyhash_bytes(&h, s, n);
        }
        keyhash_end(&h, ret_key);
        return 0;
}

static int pc_on_object(json_object *obj, void *u)
{
        struct pc_parse *p = u;
        struct parse_state *ps = p->ps;
        const struct picoclaw_config *cfg = p->ctx ? p->ctx->config : NULL;
        const struct pc_model *map;
        struct usage_row *row;
        json_object *calls;
        const char *role, *created, *model_name;
        char prev[PC_PREV_MAX];
        size_t created_len = 0;
        int64_t ms = 0;
        bool bulk, have_time;
        struct row_key key;
        int r;

        if (!json_object_is_type(obj, json_type_object)) {
                p->malformed = true;
                return 1; /* stop: the rest of the line is not ours either */
        }
        created = adapt_get_str(obj, "created_at", &created_len);
        if (created && created_len == 0)
                created = NULL;
        pc_prev_get(ps, prev);
        bulk = created && prev[0] && strcmp(prev, created) == 0;
        pc_prev_set(ps, created, created_len);
        have_time = created && timefmt_parse_rfc3339(created, created_len, &ms) == 0;
        if (have_time)
                ps->last_time_ms = ms;

        role = adapt_get_str(obj, "role", NULL);
        if (!role || strcmp(role, "assistant") != 0)
                return 0; /* user, tool, system, unknown: no row */

        model_name = adapt_get_str(obj, "model_name", NULL);
        calls = adapt_get_type(obj, "tool_calls", json_type_array);
        r = pc_key(obj, role, created && !bulk ? created : "", model_name ? model_name : "", calls,
                   &key);
        if (r < 0)
                return r;
        r = row_batch_push(p->out, &row);
        if (r < 0)
                return r;
        row->key = key;
        row->kind = ROW_KIND_TURN;
        row->cost_source = COST_NONE; /* unpriced, and tokens unknown: no ROW_F_TOKENS_KNOWN */
        if (!have_time) {
                ms = pc_fallback_time(p->ctx, ps);
                row->flags |= ROW_F_TIME_APPROX;
        } else if (bulk) {
                row->flags |= ROW_F_TIME_APPROX; /* the rewrite's time, not the turn's */
        }
        row->time_ms = ms;
        row->source_hash = p->ctx ? p->ctx->source_hash : 0;
        ROW_SET(row->tool, "picoclaw");
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        if (model_name) {
                ROW_SET(row->model_alias, model_name);
                map = pc_models_find(cfg, model_name);
                if (map) {
                        ROW_SET(row->provider, map->provider);
                        ROW_SET(row->model, map->model);
                } else {
                        ROW_SET(row->model, model_name);
                }
        }
        /* tool_calls[] = {id, type, function:{name, arguments}}; the flat
         * {id, name, arguments} shape is accepted too */
        for (size_t i = 0; calls && i < json_object_array_length(calls); i++) {
                json_object *c = json_object_array_get_idx(calls, i), *fn;
                const char *id, *name;
                struct tool_call *tc;

                if (!json_object_is_type(c, json_type_object))
                        continue;
                if (row->n_calls >= ROW_CALLS_MAX)
                        break;
                fn = adapt_get_type(c, "function", json_type_object);
                id = adapt_get_str(c, "id", NULL);
                name = adapt_get_str(fn ? fn : c, "name", NULL);
                tc = &row->calls[row->n_calls++];
                ROW_SET(tc->id, id);
                ROW_SET(tc->name, name);
        }
        return 0;
}

/* One line: one flat providers.Message (no type field, no header). Only
 * role "assistant" makes a row (ROW_KIND_TURN, tokens and cost unknown).
 * Several objects glued on one line all count; something that is not a JSON
 * object makes the line PARSE_MALFORMED (rows of the objects before it are
 * appended). Blank lines: PARSE_OK. */
static int picoclaw_parse_line(const struct source_ctx *ctx, struct parse_state *ps,
                               const char *line, size_t len, struct row_batch *out)
{
        struct pc_parse p = { ctx, ps, out, false };
        int r;

        pc_state_upgrade(ps);
        if (!(ps->flags & PS_HEADER_SEEN) || !ps->session[0]) {
                if (ctx && ctx->path)
                        pc_source_names(ctx->path, ps);
                ps->flags |= PS_HEADER_SEEN;
        }
        len = lines_trim(line, len, &line);
        if (len == 0)
                return PARSE_OK;
        r = lines_json_foreach(line, len, pc_on_object, &p, NULL);
        if (r < 0)
                return r;
        return r != 0 || p.malformed ? PARSE_MALFORMED : PARSE_OK;
}

const struct adapter adapter_picoclaw = {
        .id = "picoclaw",
        .display_name = "PicoClaw",
        .caps = {
                .tokens = CAP_TOKENS_NONE,
                .cost = CAP_COST_NONE,
                .activity = CAP_ACTIVITY_RECORDED,
                .reasoning = CAP_REASONING_NONE,
        },
        .env = picoclaw_env,
        .discover = picoclaw_discover,
        .load_config = picoclaw_load_config,
        .free_config = picoclaw_free_config,
        .classify = picoclaw_classify,
        .parse_line = picoclaw_parse_line,
        .collect_rows = NULL,
};
