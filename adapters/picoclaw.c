/* PicoClaw (sipeed/picoclaw): finds every workspace's sessions/ folder from the
 * environment and config.json, and turns each assistant message into an
 * activity row; PicoClaw writes no token or cost figures to disk at all. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "lines.h"
#include "registry.h"
#include "row.h"
#include "timefmt.h"

/* Dedup-key format tag: bump when the key's fields change. */
#define PC_KEY_FORMAT "picoclaw-v1"

#define PC_CONFIG_MAX (4u << 20) /* a config.json larger than this is refused */
#define PC_META_MAX (1u << 20)   /* a <key>.meta.json larger than this is ignored */
#define PC_AGENT_ID_MAX 64       /* routing.MaxAgentIDLength */

static const char *const picoclaw_env[] = {
        "PICOCLAW_HOME",
        "PICOCLAW_CONFIG",
        "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE",
        NULL,
};

/* ---- paths ---------------------------------------------------------------- */

/* Lexical clean of an absolute path, as Go's filepath.Clean: no "//", "."
 * or "..", no trailing '/'. */
static void path_clean(char *p)
{
        size_t n = strlen(p), o = 0;
        char *out = p; /* in place: the output never outruns the input */

        if (n == 0 || p[0] != '/')
                return;
        for (size_t i = 0; i < n;) {
                size_t s, len;

                while (i < n && p[i] == '/')
                        i++;
                s = i;
                while (i < n && p[i] != '/')
                        i++;
                len = i - s;
                if (len == 0 || (len == 1 && p[s] == '.'))
                        continue;
                if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--; /* the '/' before the dropped component */
                        continue;
                }
                out[o++] = '/';
                memmove(out + o, p + s, len);
                o += len;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = 0;
}

static int path_join(char *buf, size_t cap, const char *a, const char *b)
{
        int n = snprintf(buf, cap, "%s%s%s", a, a[0] && a[strlen(a) - 1] == '/' ? "" : "/", b);
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static void path_dirname(const char *path, char *out, size_t cap)
{
        const char *slash = strrchr(path, '/');
        size_t n;

        if (!slash) {
                snprintf(out, cap, ".");
                return;
        }
        n = slash == path ? 1 : (size_t)(slash - path);
        if (n >= cap)
                n = cap - 1;
        memcpy(out, path, n);
        out[n] = 0;
}

/* Where PicoClaw's files are, from the environment only. */
struct pc_where {
        char user_home[PATH_MAX]; /* $HOME ("" unknown) */
        char home[PATH_MAX];      /* PicoClaw home ("" unknown) */
        char config[PATH_MAX];    /* config.json ("" unknown) */
        const char *home_var;     /* "PICOCLAW_HOME" when it moved home */
        const char *config_var;   /* the variable that moved config.json */
        bool config_from_env;     /* PICOCLAW_CONFIG named it */
};

/* A user-written path to an absolute one: "~" and "~/x" use $HOME (any
 * other "~..." is $HOME too, as PicoClaw's expandHome does); a relative path
 * is taken relative to base. PicoClaw itself resolves relative paths against
 * its process cwd, which a daemon cannot know: base is the closest stable
 * stand-in (the PicoClaw home for config values, $HOME for PICOCLAW_HOME). */
static int pc_resolve(const struct pc_where *w, const char *raw, const char *base,
                      char out[PATH_MAX])
{
        size_t n;
        int r;

        while (*raw && isspace((unsigned char)*raw))
                raw++;
        n = strlen(raw);
        while (n > 0 && isspace((unsigned char)raw[n - 1]))
                n--;
        if (n == 0)
                return -EINVAL;
        if (n >= PATH_MAX)
                return -ENAMETOOLONG;
        if (raw[0] == '~') {
                if (!w->user_home[0])
                        return -ENOENT;
                if (n > 1 && raw[1] == '/')
                        r = snprintf(out, PATH_MAX, "%s%.*s", w->user_home, (int)(n - 1), raw + 1);
                else
                        r = snprintf(out, PATH_MAX, "%s", w->user_home);
        } else if (raw[0] == '/') {
                r = snprintf(out, PATH_MAX, "%.*s", (int)n, raw);
        } else {
                if (!base || !base[0])
                        return -ENOENT;
                r = snprintf(out, PATH_MAX, "%s/%.*s", base, (int)n, raw);
        }
        if (r < 0 || r >= PATH_MAX)
                return -ENAMETOOLONG;
        path_clean(out);
        return 0;
}

static void pc_locate(const struct discover_env *env, struct pc_where *w)
{
        const char *home = discover_env_get(env, "HOME");
        const char *ph = discover_env_get(env, "PICOCLAW_HOME");
        const char *pc = discover_env_get(env, "PICOCLAW_CONFIG");

        memset(w, 0, sizeof(*w));
        if (home && home[0] == '/' && strlen(home) < PATH_MAX) {
                snprintf(w->user_home, sizeof(w->user_home), "%s", home);
                path_clean(w->user_home);
        }
        if (ph && pc_resolve(w, ph, w->user_home, w->home) == 0)
                w->home_var = "PICOCLAW_HOME";
        else if (w->user_home[0] && path_join(w->home, sizeof(w->home), w->user_home, ".picoclaw") < 0)
                w->home[0] = 0;
        if (pc && pc_resolve(w, pc, w->home, w->config) == 0) {
                w->config_var = "PICOCLAW_CONFIG";
                w->config_from_env = true;
        } else if (w->home[0]) {
                if (path_join(w->config, sizeof(w->config), w->home, "config.json") < 0)
                        w->config[0] = 0;
                w->config_var = w->home_var;
        }
}

/* ---- JSON files ----------------------------------------------------------- */

/* Reads a whole file as one JSON value: 0 and *ret, -ENOENT/-EACCES/...,
 * -EFBIG (over max), -EBADMSG (not JSON), -ENOMEM. */
static int pc_read_json(const char *path, size_t max, json_object **ret)
{
        struct stat st;
        char *buf = NULL;
        size_t len = 0;
        json_tokener *tok;
        json_object *obj;
        int fd, r = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (S_ISDIR(st.st_mode)) {
                r = -EISDIR;
                goto out;
        }
        buf = malloc(max + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        for (;;) {
                ssize_t k = read(fd, buf + len, max + 1 - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto out;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
                if (len > max) {
                        r = -EFBIG;
                        goto out;
                }
        }
        tok = json_tokener_new();
        if (!tok) {
                r = -ENOMEM;
                goto out;
        }
        obj = json_tokener_parse_ex(tok, buf, (int)len);
        if (obj) {
                size_t end = json_tokener_get_parse_end(tok);
                for (; end < len; end++)
                        if (!isspace((unsigned char)buf[end]))
                                break;
                if (end < len) {
                        json_object_put(obj);
                        obj = NULL;
                }
        }
        json_tokener_free(tok);
        if (!obj) {
                r = -EBADMSG;
                goto out;
        }
        *ret = obj;
out:
        free(buf);
        close(fd);
        return r;
}

static const char *pc_get_str(json_object *obj, const char *key, size_t *ret_len)
{
        json_object *v;

        if (!obj || !json_object_object_get_ex(obj, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        if (ret_len)
                *ret_len = (size_t)json_object_get_string_len(v);
        return json_object_get_string(v);
}

static json_object *pc_get_type(json_object *obj, const char *key, json_type type)
{
        json_object *v;

        if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

static bool pc_blank(const char *s)
{
        if (!s)
                return true;
        for (; *s; s++)
                if (!isspace((unsigned char)*s))
                        return false;
        return true;
}

/* ---- discovery ------------------------------------------------------------ */

/* routing.NormalizeAgentID: [a-z0-9][a-z0-9_-]{0,63}; runs of other bytes
 * become '-', leading/trailing '-' go, empty is "main". */
static void pc_normalize_agent_id(const char *id, char out[PC_AGENT_ID_MAX + 1])
{
        char lower[256];
        size_t n = 0, o = 0;
        bool valid;

        while (*id && isspace((unsigned char)*id))
                id++;
        for (; id[n] && n < sizeof(lower) - 1; n++)
                lower[n] = (char)tolower((unsigned char)id[n]);
        while (n > 0 && isspace((unsigned char)lower[n - 1]))
                n--;
        lower[n] = 0;
        if (n == 0) {
                strcpy(out, "main");
                return;
        }
#define PC_ID_CHAR(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') || (c) == '_' || (c) == '-')
        valid = n <= PC_AGENT_ID_MAX && ((lower[0] >= 'a' && lower[0] <= 'z') ||
                                          (lower[0] >= '0' && lower[0] <= '9'));
        for (size_t i = 0; valid && i < n; i++)
                valid = PC_ID_CHAR(lower[i]);
        if (valid) {
                memcpy(out, lower, n + 1);
                return;
        }
        char tmp[256];
        for (size_t i = 0; i < n;) {
                if (PC_ID_CHAR(lower[i])) {
                        tmp[o++] = lower[i++];
                        continue;
                }
                while (i < n && !PC_ID_CHAR(lower[i]))
                        i++;
                tmp[o++] = '-';
        }
#undef PC_ID_CHAR
        tmp[o] = 0;
        size_t s = 0;
        while (tmp[s] == '-')
                s++;
        while (o > s && tmp[o - 1] == '-')
                o--;
        if (o - s > PC_AGENT_ID_MAX)
                o = s + PC_AGENT_ID_MAX;
        if (o == s) {
                strcpy(out, "main");
                return;
        }
        memcpy(out, tmp + s, o - s);
        out[o - s] = 0;
}

/* How a root came to be where it is. */
struct pc_why {
        uint8_t reason;
        const char *env_var; /* may be NULL */
        const char *detail;  /* may be NULL */
};

/* Appends <dir>/sessions unless that path is already listed. */
static int pc_push(struct root_list *out, const char *dir, const char *label,
                   const struct pc_why *why)
{
        char path[PATH_MAX];
        struct root *root;
        int r;

        r = path_join(path, sizeof(path), dir, "sessions");
        if (r < 0)
                return 0; /* a path we cannot hold is not a root: skip it */
        for (size_t i = 0; i < out->n; i++)
                if (out->v[i].adapter == &adapter_picoclaw && strcmp(out->v[i].path, path) == 0)
                        return 0;
        r = root_list_push(out, &root);
        if (r < 0)
                return r;
        row_set_str(root->path, sizeof(root->path), path, strlen(path));
        ROW_SET(root->label, label);
        root->reason = why->reason;
        ROW_SET(root->env_var, why->env_var);
        ROW_SET(root->detail, why->detail);
        root->max_depth = 0; /* sessions/<key>.jsonl, nothing below */
        root->adapter = &adapter_picoclaw;
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every existing <parent>/workspace-<id>/sessions: agents that are no longer
 * (or not yet) in config.json still have their history there. */
static int pc_push_siblings(struct root_list *out, const char *parent, const struct pc_why *why)
{
        DIR *d = opendir(parent);
        struct dirent *de;
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char dir[PATH_MAX], sess[PATH_MAX];
                struct stat st;

                if (strncmp(de->d_name, "workspace-", 10) != 0 || de->d_name[10] == 0)
                        continue;
                if (path_join(dir, sizeof(dir), parent, de->d_name) < 0 ||
                    path_join(sess, sizeof(sess), dir, "sessions") < 0)
                        continue;
                if (stat(sess, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 8;
                        char **nv = reallocarray(names, nc, sizeof(*nv));
                        if (!nv) {
                                r = -ENOMEM;
                                goto out;
                        }
                        names = nv;
                        cap = nc;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        r = -ENOMEM;
                        goto out;
                }
                n++;
        }
        if (n > 1)
                qsort(names, n, sizeof(*names), cmp_str);
        for (size_t i = 0; i < n && r == 0; i++) {
                char dir[PATH_MAX], label[NAME_MAX + 8];

                if (path_join(dir, sizeof(dir), parent, names[i]) < 0)
                        continue;
                snprintf(label, sizeof(label), "agent %s", names[i] + 10);
                r = pc_push(out, dir, label, why);
        }
out:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        closedir(d);
        return r;
}

/* Roots, in this order: the default workspace's sessions/ (moved by
 * PICOCLAW_AGENTS_DEFAULTS_WORKSPACE, agents.defaults.workspace, or
 * PICOCLAW_HOME); each agents.list[] entry with its own workspace, or for a
 * named non-default agent <dirname(default)>/workspace-<id> (listed even
 * before it exists); then every other existing <dirname(default)>/workspace-*
 * /sessions. A missing or broken config.json means PicoClaw's defaults (the
 * warning comes from load_config, which reads the same file). */
static int picoclaw_discover(const struct discover_env *env, struct root_list *out)
{
        const char *env_ws = discover_env_get(env, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE");
        struct pc_where w;
        json_object *cfg = NULL, *agents, *list;
        char ws[PATH_MAX] = "", parent[PATH_MAX];
        struct pc_why why = { ROOT_DEFAULT, NULL, NULL };
        struct pc_why cfg_why;
        const char *cfg_ws;
        int r = 0;

        pc_locate(env, &w);
        if (w.config[0] && pc_read_json(w.config, PC_CONFIG_MAX, &cfg) == 0 &&
            !json_object_is_type(cfg, json_type_object)) {
                json_object_put(cfg);
                cfg = NULL;
        }
        cfg_why = (struct pc_why){ ROOT_CONFIG, w.config_var, w.config };
        agents = pc_get_type(cfg, "agents", json_type_object);
        cfg_ws = pc_get_str(pc_get_type(agents, "defaults", json_type_object), "workspace", NULL);

        if (env_ws && pc_resolve(&w, env_ws, w.home, ws) == 0) {
                why = (struct pc_why){ ROOT_ENV, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", NULL };
        } else if (!pc_blank(cfg_ws) && pc_resolve(&w, cfg_ws, w.home, ws) == 0) {
                why = cfg_why;
        } else if (w.home[0] && path_join(ws, sizeof(ws), w.home, "workspace") == 0) {
                why = w.home_var ? (struct pc_why){ ROOT_ENV, w.home_var, NULL }
                                 : (struct pc_why){ ROOT_DEFAULT, NULL, NULL };
        } else {
                ws[0] = 0;
        }

        if (ws[0]) {
                r = pc_push(out, ws, "sessions", &why);
                if (r < 0)
                        goto out;
        }
        path_dirname(ws, parent, sizeof(parent));

        list = pc_get_type(agents, "list", json_type_array);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *a = json_object_array_get_idx(list, i), *def;
                const char *id = pc_get_str(a, "id", NULL), *aws = pc_get_str(a, "workspace", NULL);
                char norm[PC_AGENT_ID_MAX + 1], label[PC_AGENT_ID_MAX + 8], dir[PATH_MAX];
                bool is_default;

                if (!json_object_is_type(a, json_type_object))
                        continue;
                pc_normalize_agent_id(id ? id : "", norm);
                snprintf(label, sizeof(label), "agent %s", norm);
                if (!pc_blank(aws)) {
                        if (pc_resolve(&w, aws, w.home, dir) == 0) {
                                r = pc_push(out, dir, label, &cfg_why);
                                if (r < 0)
                                        goto out;
                        }
                        continue;
                }
                def = pc_get_type(a, "default", json_type_boolean);
                is_default = (def && json_object_get_boolean(def)) || pc_blank(id) ||
                             strcmp(norm, "main") == 0;
                if (is_default || !ws[0])
                        continue;
                /* filepath.Join(defaults.workspace, "..", "workspace-"+id) */
                char sub[PC_AGENT_ID_MAX + 16];
                snprintf(sub, sizeof(sub), "workspace-%s", norm);
                if (path_join(dir, sizeof(dir), parent, sub) < 0)
                        continue;
                struct pc_why named = { ROOT_CONFIG, why.env_var ? why.env_var : w.config_var, w.config };
                r = pc_push(out, dir, label, &named);
                if (r < 0)
                        goto out;
        }
        if (ws[0])
                r = pc_push_siblings(out, parent, &why);
out:
        if (cfg)
                json_object_put(cfg);
        return r;
}

/* ---- config: the model map ------------------------------------------------ */

struct pc_model {
        char alias[ROW_MODEL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        bool conflict; /* several entries share the alias and disagree */
};

/* What parse_line needs from config.json (source_ctx.config). */
struct picoclaw_config {
        size_t n;
        struct pc_model *v;
};

static void pc_set(char *dst, size_t cap, const char *s, size_t n)
{
        while (n > 0 && isspace((unsigned char)*s)) {
                s++;
                n--;
        }
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                n--;
        row_set_str(dst, cap, s, n);
}

/* model_list[] {model_name, provider?, model}: PicoClaw's ExtractProtocol.
 * An explicit provider wins; else the part of model before the first '/'
 * (lower-cased) is the provider and the rest the model; no '/' leaves the
 * provider empty (PicoClaw would assume "openai"; we do not guess). Several
 * entries with one alias are load-balanced by PicoClaw: they map only when
 * they agree. */
static int pc_models_load(struct picoclaw_config *c, json_object *cfg)
{
        json_object *list = pc_get_type(cfg, "model_list", json_type_array);
        size_t n = list ? json_object_array_length(list) : 0;

        if (n == 0)
                return 0;
        c->v = calloc(n, sizeof(*c->v));
        if (!c->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                size_t alen, plen = 0, mlen = 0;
                const char *alias = pc_get_str(e, "model_name", &alen);
                const char *prov = pc_get_str(e, "provider", &plen);
                const char *model = pc_get_str(e, "model", &mlen);
                struct pc_model m;

                if (pc_blank(alias) || pc_blank(model))
                        continue;
                memset(&m, 0, sizeof(m));
                row_set_str(m.alias, sizeof(m.alias), alias, alen); /* matched exactly, as PicoClaw does */
                if (!pc_blank(prov)) {
                        pc_set(m.provider, sizeof(m.provider), prov, plen);
                        pc_set(m.model, sizeof(m.model), model, mlen);
                } else {
                        const char *slash = memchr(model, '/', mlen);
                        if (slash) {
                                pc_set(m.provider, sizeof(m.provider), model, (size_t)(slash - model));
                                pc_set(m.model, sizeof(m.model), slash + 1,
                                       mlen - (size_t)(slash - model) - 1);
                        } else {
                                pc_set(m.model, sizeof(m.model), model, mlen);
                        }
                }
                for (char *p = m.provider; *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                if (!m.model[0])
                        continue;
                bool merged = false;
                for (size_t j = 0; j < c->n; j++) {
                        struct pc_model *o = &c->v[j];
                        if (strcmp(o->alias, m.alias) != 0)
                                continue;
                        if (strcmp(o->provider, m.provider) != 0 || strcmp(o->model, m.model) != 0)
                                o->conflict = true;
                        merged = true;
                        break;
                }
                if (!merged)
                        c->v[c->n++] = m;
        }
        return 0;
}

static const struct pc_model *pc_models_find(const struct picoclaw_config *c, const char *alias)
{
        if (!c || !alias || !alias[0])
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->v[i].alias, alias) == 0)
                        return c->v[i].conflict ? NULL : &c->v[i];
        return NULL;
}

static void picoclaw_free_config(void *config)
{
        struct picoclaw_config *c = config;

        if (!c)
                return;
        free(c->v);
        free(c);
}

/* Always returns a config (maybe with no models) unless out of memory. The
 * warnings are static strings that name the problem only (the caller adds
 * that defaults are used: the default workspace, models by their alias).
 * A missing config.json is only worth a warning when PICOCLAW_CONFIG names
 * it or the PicoClaw home exists (PicoClaw in use but not onboarded); with
 * no home at all PicoClaw is simply not installed. */
static int picoclaw_load_config(const struct discover_env *env, void **ret_config,
                                const char **ret_warning)
{
        struct picoclaw_config *c;
        struct pc_where w;
        json_object *cfg = NULL;
        const char *warn = NULL;
        struct stat st;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        pc_locate(env, &w);
        if (!w.config[0]) {
                if (discover_env_get(env, "PICOCLAW_CONFIG"))
                        warn = "PicoClaw: PICOCLAW_CONFIG cannot be resolved to a path (no HOME?)";
                goto done;
        }
        r = pc_read_json(w.config, PC_CONFIG_MAX, &cfg);
        if (r == -ENOENT) {
                if (w.config_from_env || (w.home[0] && stat(w.home, &st) == 0))
                        warn = "PicoClaw config.json not found";
        } else if (r == -ENOMEM) {
                free(c);
                return r;
        } else if (r == -EBADMSG) {
                warn = "PicoClaw config.json is not valid JSON";
        } else if (r == -EFBIG) {
                warn = "PicoClaw config.json is too large (over 4 MiB)";
        } else if (r < 0) {
                warn = "PicoClaw config.json cannot be read";
        } else if (!json_object_is_type(cfg, json_type_object)) {
                warn = "PicoClaw config.json is not a JSON object";
        } else {
                json_object *ml;
                if (json_object_object_get_ex(cfg, "model_list", &ml) &&
                    !json_object_is_type(ml, json_type_array) && !json_object_is_type(ml, json_type_null))
                        warn = "PicoClaw config.json: model_list is not an array (models are "
                               "shown by their alias)";
                r = pc_models_load(c, cfg);
                if (r < 0) {
                        json_object_put(cfg);
                        picoclaw_free_config(c);
                        return r;
                }
        }
done:
        if (cfg)
                json_object_put(cfg);
        *ret_config = c;
        if (ret_warning)
                *ret_warning = warn;
        return 0;
}

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

/* PicoClaw names the model on every line, so parse_state's carried-model
 * field `provider` is free: it holds the created_at string of the previous
 * line (persisted in the checkpoint like the rest), for the bulk-stamp test
 * in the dedup key below. */
#define PC_PREV_CREATED(ps) ((ps)->provider)

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
        path_dirname(path, dir, sizeof(dir));
        path_dirname(dir, ws, sizeof(ws));
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
        r = pc_read_json(meta, PC_META_MAX, &obj);
        if (r < 0)
                return r;
        s = pc_get_str(obj, "updated_at", &slen);
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
                json_object *fn = pc_get_type(c, "function", json_type_object);

                keyhash_str(&h, pc_get_str(c, "id", NULL));
                keyhash_str(&h, pc_get_str(fn ? fn : c, "name", NULL));
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
        size_t created_len = 0;
        int64_t ms = 0;
        bool bulk, have_time;
        struct row_key key;
        int r;

        if (!json_object_is_type(obj, json_type_object)) {
                p->malformed = true;
                return 1; /* stop: the rest of the line is not ours either */
        }
        created = pc_get_str(obj, "created_at", &created_len);
        if (created && created_len == 0)
                created = NULL;
        bulk = created && PC_PREV_CREATED(ps)[0] && strcmp(PC_PREV_CREATED(ps), created) == 0;
        if (created && created_len < sizeof(PC_PREV_CREATED(ps)))
                memcpy(PC_PREV_CREATED(ps), created, created_len + 1);
        else
                PC_PREV_CREATED(ps)[0] = 0;
        have_time = created && timefmt_parse_rfc3339(created, created_len, &ms) == 0;
        if (have_time)
                ps->last_time_ms = ms;

        role = pc_get_str(obj, "role", NULL);
        if (!role || strcmp(role, "assistant") != 0)
                return 0; /* user, tool, system, unknown: no row */

        model_name = pc_get_str(obj, "model_name", NULL);
        calls = pc_get_type(obj, "tool_calls", json_type_array);
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
                fn = pc_get_type(c, "function", json_type_object);
                id = pc_get_str(c, "id", NULL);
                name = pc_get_str(fn ? fn : c, "name", NULL);
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
        .collect_db = NULL,
};
