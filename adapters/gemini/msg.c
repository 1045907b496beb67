/* Gemini CLI records of both generations (session-*.jsonl lines and the
 * messages of an older session-*.json document): the message scanner, the
 * usage row of a `gemini` message, the file's session and project, and the
 * private parse state. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "binio.h"
#include "gemini/msg.h"
#include "hash/sha256.h"

_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "row fields fit jscan_span_set");

#define PROJECT_FILE_MAX (64u << 10)   /* .project_root: one path */
#define PROJECTS_JSON_MAX (4u << 20)   /* projects.json: a map of cwds */

/* ---- scanning ----------------------------------------------------------------- */

static bool tokens_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct gm_tokens_f *t = u;

        if (JSCAN_KEY_IS(k, "input"))
                return jscan_read_num(s, &t->input, depth);
        if (JSCAN_KEY_IS(k, "output"))
                return jscan_read_num(s, &t->output, depth);
        if (JSCAN_KEY_IS(k, "cached"))
                return jscan_read_num(s, &t->cached, depth);
        if (JSCAN_KEY_IS(k, "thoughts"))
                return jscan_read_num(s, &t->thoughts, depth);
        if (JSCAN_KEY_IS(k, "tool"))
                return jscan_read_num(s, &t->tool, depth);
        if (JSCAN_KEY_IS(k, "total"))
                return jscan_read_num(s, &t->total, depth);
        return jscan_skip(s, depth);
}

static bool call_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct gm_call_f *c = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &c->id, depth);
        if (JSCAN_KEY_IS(k, "name"))
                return jscan_read_str(s, &c->name, depth);
        return jscan_skip(s, depth); /* args, result, resultDisplay: big, not ours */
}

static bool call_elem(struct jscan *s, void *u, int depth)
{
        struct gm_msg_f *m = u;
        struct gm_call_f c = { 0 };

        if (!jscan_at(s, '{'))
                return jscan_skip(s, depth);
        if (!jscan_object(s, call_key, &c, depth + 1))
                return false;
        if (m->n_calls < ROW_CALLS_MAX)
                m->calls[m->n_calls] = c;
        m->n_calls++;
        return true;
}

static bool record_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct gm_msg_f *m = u;

        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &m->id, depth);
        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &m->type, depth);
        if (JSCAN_KEY_IS(k, "model"))
                return jscan_read_str(s, &m->model, depth);
        if (JSCAN_KEY_IS(k, "timestamp"))
                return jscan_read_time(s, &m->ts, depth);
        if (JSCAN_KEY_IS(k, "tokens")) {
                m->tok = (struct gm_tokens_f){ 0 };
                if (!jscan_at(s, '{'))
                        return jscan_skip(s, depth);
                m->tok.present = true;
                return jscan_object(s, tokens_key, &m->tok, depth + 1);
        }
        if (JSCAN_KEY_IS(k, "toolCalls")) {
                m->n_calls = 0;
                if (!jscan_at(s, '['))
                        return jscan_skip(s, depth);
                return jscan_array(s, call_elem, m, depth + 1);
        }
        if (JSCAN_KEY_IS(k, "sessionId"))
                return jscan_read_str(s, &m->session_id, depth);
        if (JSCAN_KEY_IS(k, "projectHash"))
                return jscan_read_str(s, &m->project_hash, depth);
        if (JSCAN_KEY_IS(k, "kind"))
                return jscan_read_str(s, &m->kind, depth);
        if (JSCAN_KEY_IS(k, "$set"))
                m->is_set = true;
        else if (JSCAN_KEY_IS(k, "$rewindTo"))
                m->is_rewind = true;
        return jscan_skip(s, depth); /* content, thoughts, displayContent, $set's lists */
}

bool gm_scan_record(struct jscan *s, struct gm_msg_f *m, int depth)
{
        memset(m, 0, offsetof(struct gm_msg_f, calls));
        memset(&m->session_id, 0, sizeof(*m) - offsetof(struct gm_msg_f, session_id));
        return jscan_object(s, record_key, m, depth);
}

/* ---- the private state ----------------------------------------------------------- *
 * priv, little-endian: u8 version (1) | u8 flags | with GM_REGION:
 * u64 region_start | u64 region_len | u64 region_hash | u32 region_msgs. */

#define GM_PRIV_VERSION 1

void gm_state_load(const struct parse_state *ps, struct gm_state *ret)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct gm_state st = { 0 };

        if (ps->priv_len == 0 || br_u8(&r) != GM_PRIV_VERSION) {
                *ret = st;
                return;
        }
        st.flags = br_u8(&r);
        if (st.flags & GM_REGION) {
                st.region_start = br_u64(&r);
                st.region_len = br_u64(&r);
                st.region_hash = br_u64(&r);
                st.region_msgs = br_u32(&r);
        }
        if (r.bad) /* a damaged state: only the region is worth nothing */
                st.flags &= (uint8_t)~GM_REGION;
        *ret = st;
}

void gm_state_save(const struct gm_state *st, struct parse_state *ps)
{
        struct bw w = { ps->priv, 0, PS_PRIV_MAX, false };

        bw_u8(&w, GM_PRIV_VERSION);
        bw_u8(&w, st->flags);
        if (st->flags & GM_REGION) {
                bw_u64(&w, st->region_start);
                bw_u64(&w, st->region_len);
                bw_u64(&w, st->region_hash);
                bw_u32(&w, st->region_msgs);
        }
        ps->priv_len = (uint32_t)w.len;
}

/* ---- session and project ------------------------------------------------------------ */

/* The last component of path[0, n) as [*ret_p, n'). */
static size_t last_component(const char *path, size_t n, const char **ret_p)
{
        size_t i = n;
        while (i > 0 && path[i - 1] != '/')
                i--;
        *ret_p = path + i;
        return n - i;
}

/* The length of the directory part of path[0, n) (0 when it has none). */
static size_t dir_len(const char *path, size_t n)
{
        while (n > 0 && path[n - 1] != '/')
                n--;
        return n > 0 ? n - 1 : 0;
}

/* The trimmed first line of a small file into buf: 0, or -errno. */
static int read_first_line(const char *path, char *buf, size_t cap)
{
        char *text;
        size_t len, n;
        const char *s;
        int r = adapt_read_file(path, PROJECT_FILE_MAX, &text, &len);

        if (r < 0)
                return r;
        n = strcspn(text, "\r\n");
        while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
                n--;
        s = text;
        while (n > 0 && (*s == ' ' || *s == '\t')) {
                s++;
                n--;
        }
        r = n > 0 && n < cap && !memchr(s, 0, n) ? 0 : -ENOENT;
        if (r == 0) {
                memcpy(buf, s, n);
                buf[n] = 0;
        }
        free(text);
        return r;
}

static bool sha256_is(const char *text, const char *hex)
{
        struct sha256 h;
        uint8_t d[SHA256_SIZE];
        char out[2 * SHA256_SIZE + 1];

        sha256_init(&h);
        sha256_update(&h, text, strlen(text));
        sha256_final(&h, d);
        sha256_hex(d, out);
        return strcmp(out, hex) == 0;
}

static bool is_sha256_hex(const char *s)
{
        size_t n = 0;
        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == 2 * SHA256_SIZE;
}

/* projects.json ({"projects": {cwd: shortName}}) beside tmp/: the cwd whose
 * short name is `name`, or, for a folder an older CLI named by the
 * project's sha256 (then also the header's projectHash), whose sha256 it
 * is. Hashing every cwd is paid only for such folders. */
static int project_from_map(const char *gemini_dir, const char *name, const char *hash, char *buf,
                            size_t cap)
{
        char path[PATH_MAX];
        struct json_object *root = NULL, *projects;
        int r = -ENOENT;

        if (snprintf(path, sizeof(path), "%s/projects.json", gemini_dir) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        if (adapt_read_json(path, PROJECTS_JSON_MAX, &root) < 0)
                return -ENOENT;
        projects = adapt_get_type(root, "projects", json_type_object);
        bool hashed = is_sha256_hex(name);
        if (projects) {
                json_object_object_foreach(projects, cwd, v) {
                        const char *shortname = json_object_is_type(v, json_type_string)
                                                        ? json_object_get_string(v)
                                                        : NULL;
                        if ((shortname && strcmp(shortname, name) == 0) ||
                            (hashed && (sha256_is(cwd, name) || (hash[0] && sha256_is(cwd, hash))))) {
                                if (strlen(cwd) < cap) {
                                        snprintf(buf, cap, "%s", cwd);
                                        r = 0;
                                }
                                break;
                        }
                }
        }
        json_object_put(root);
        return r;
}

void gm_identify(const struct source_ctx *ctx, struct parse_state *ps, struct gm_state *st,
                 const struct jscan_span *session_id, const struct jscan_span *project_hash,
                 const struct jscan_span *kind)
{
        const char *path = ctx && ctx->path ? ctx->path : "", *c, *c2;
        size_t n = strlen(path), d1, d2 = 0, k, k2;
        char proj_dir[PATH_MAX], name[256], hash[80], file[PATH_MAX], cwd[ROW_PROJECT_MAX];

        if (jscan_span_eq(kind, "subagent"))
                st->flags |= GM_SUBAGENT;
        /* <tmp>/<project>/chats/<file>, or .../chats/<parent session>/<file> */
        d1 = dir_len(path, n);
        k = last_component(path, d1, &c);
        if (k == 5 && memcmp(c, "chats", 5) == 0) {
                d2 = dir_len(path, d1);
        } else if ((k2 = last_component(path, dir_len(path, d1), &c2)) == 5 && memcmp(c2, "chats", 5) == 0) {
                /* a sub-agent: its calls belong to the parent session */
                st->flags |= GM_SUBAGENT;
                row_set_str(ps->session, sizeof(ps->session), c, k);
                d2 = dir_len(path, dir_len(path, d1));
        }
        if (!ps->session[0] && session_id->p)
                jscan_span_set(ps->session, sizeof(ps->session), session_id);
        if (st->flags & GM_PROJECT_SET)
                return;
        st->flags |= GM_PROJECT_SET;
        if (d2 == 0 || d2 >= sizeof(proj_dir))
                return;
        memcpy(proj_dir, path, d2);
        proj_dir[d2] = 0;
        k = last_component(proj_dir, d2, &c);
        if (k == 0 || k >= sizeof(name))
                return;
        memcpy(name, c, k);
        name[k] = 0;
        jscan_span_set(hash, sizeof(hash), project_hash);
        if (snprintf(file, sizeof(file), "%s/.project_root", proj_dir) < (int)sizeof(file) &&
            read_first_line(file, cwd, sizeof(cwd)) == 0) {
                row_set_str(ps->project, sizeof(ps->project), cwd, strlen(cwd));
                return;
        }
        /* <gemini>/tmp/<project>: projects.json is in <gemini> */
        d1 = dir_len(proj_dir, d2);
        d1 = dir_len(proj_dir, d1);
        if (d1 == 0)
                return;
        proj_dir[d1] = 0;
        if (project_from_map(proj_dir, name, hash, cwd, sizeof(cwd)) == 0)
                row_set_str(ps->project, sizeof(ps->project), cwd, strlen(cwd));
}

/* ---- rows -------------------------------------------------------------------------- */

/* A token count: a non-negative integer; absent 0; anything else (negative,
 * fractional beyond int64, NaN) UINT64_MAX, which row_check_bounds refuses. */
static uint64_t tok(const struct jscan_num *n)
{
        int64_t v;
        if (!n->present)
                return 0;
        if (!jscan_num_i64(n, &v) || v < 0)
                return UINT64_MAX;
        return (uint64_t)v;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int64_t fallback_time(const struct parse_state *ps)
{
        return ps->last_time_ms ? ps->last_time_ms : ps->fallback_time_ms;
}

int gm_emit(const struct source_ctx *ctx, struct parse_state *ps, const struct gm_state *st,
            const struct gm_msg_f *m, struct row_batch *out)
{
        uint64_t in, cached, o, thoughts, tool, total;
        struct usage_row *row;
        struct keyhash h;
        char id[512];
        size_t idn;
        int r;

        if (m->model.p && m->model.n)
                jscan_span_set(ps->model, sizeof(ps->model), &m->model);
        if (m->ts.present)
                ps->last_time_ms = m->ts.ms;
        if (!jscan_span_eq(&m->type, "gemini") || !m->tok.present || !m->id.p || m->id.n == 0)
                return PARSE_OK;
        in = tok(&m->tok.input);
        cached = tok(&m->tok.cached);
        o = tok(&m->tok.output);
        thoughts = tok(&m->tok.thoughts);
        tool = tok(&m->tok.tool);
        if ((in | cached | o | thoughts | tool) == 0)
                return PARSE_OK; /* no usage came back */
        r = row_batch_push(out, &row);
        if (r < 0)
                return r;
        row->flags = ROW_F_TOKENS_KNOWN | ROW_F_UPSERT | (st->flags & GM_SUBAGENT ? ROW_F_SIDECHAIN : 0) |
                     (m->ts.present ? 0 : ROW_F_TIME_APPROX);
        row->kind = ROW_KIND_MESSAGE;
        row->cost_source = COST_NONE;
        row->time_ms = m->ts.present ? m->ts.ms : fallback_time(ps);
        /* input counts the cached tokens, tool-use prompt tokens are apart;
         * output leaves out the thoughts, which are billed as output */
        row->input = in == UINT64_MAX ? in : sat_add(in > cached ? in - cached : 0, tool);
        row->cache_read = cached;
        row->output = sat_add(o, thoughts);
        row->reasoning = thoughts;
        total = m->tok.total.present ? tok(&m->tok.total) : sat_add(sat_add(in, o), sat_add(thoughts, tool));
        row->total = total;
        row->source_hash = ctx ? ctx->source_hash : 0;
        ROW_SET(row->tool, "gemini");
        ROW_SET(row->provider, "google");
        ROW_SET(row->model, ps->model);
        ROW_SET(row->session, ps->session);
        ROW_SET(row->project, ps->project);
        row->n_calls = m->n_calls < ROW_CALLS_MAX ? m->n_calls : ROW_CALLS_MAX;
        for (uint32_t i = 0; i < row->n_calls; i++) {
                jscan_span_set(row->calls[i].id, sizeof(row->calls[i].id), &m->calls[i].id);
                jscan_span_set(row->calls[i].name, sizeof(row->calls[i].name), &m->calls[i].name);
        }
        /* The message id alone: the CLI makes it (a UUID) once per message;
         * the same message appended again when its tools finish, copied into
         * a resumed file, migrated from .json to .jsonl or found in a second
         * file of the session keeps it. Never the file or the session. */
        idn = jscan_span_decode(&m->id, id, sizeof(id) - 1);
        id[idn] = 0;
        r = keyhash_begin(&h, GEMINI_KEY_MSG);
        if (r < 0) {
                out->n--;
                return r;
        }
        keyhash_str(&h, id);
        keyhash_end(&h, &row->key);
        return PARSE_OK;
}
