/* PicoClaw discovery and config: every workspace's sessions/ folder from the
 * environment and config.json, and the model_list map the parser uses. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adapt-util.h"
#include "paths.h"
#include "picoclaw/picoclaw.h"

#define PC_CONFIG_MAX (4u << 20) /* a config.json larger than this is refused */
#define PC_AGENT_ID_MAX 64       /* routing.MaxAgentIDLength */

/* ---- paths ---------------------------------------------------------------- */

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
        adapt_path_clean(out);
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
                adapt_path_clean(w->user_home);
        }
        if (ph && pc_resolve(w, ph, w->user_home, w->home) == 0)
                w->home_var = "PICOCLAW_HOME";
        else if (w->user_home[0] && paths_join(w->home, sizeof(w->home), w->user_home, ".picoclaw") < 0)
                w->home[0] = 0;
        if (pc && pc_resolve(w, pc, w->home, w->config) == 0) {
                w->config_var = "PICOCLAW_CONFIG";
                w->config_from_env = true;
        } else if (w->home[0]) {
                if (paths_join(w->config, sizeof(w->config), w->home, "config.json") < 0)
                        w->config[0] = 0;
                w->config_var = w->home_var;
        }
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

        r = paths_join(path, sizeof(path), dir, "sessions");
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
                if (paths_join(dir, sizeof(dir), parent, de->d_name) < 0 ||
                    paths_join(sess, sizeof(sess), dir, "sessions") < 0)
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

                if (paths_join(dir, sizeof(dir), parent, names[i]) < 0)
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
int picoclaw_discover(const struct discover_env *env, struct root_list *out)
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
        if (w.config[0] && adapt_read_json(w.config, PC_CONFIG_MAX, &cfg) == 0 &&
            !json_object_is_type(cfg, json_type_object)) {
                json_object_put(cfg);
                cfg = NULL;
        }
        cfg_why = (struct pc_why){ ROOT_CONFIG, w.config_var, w.config };
        agents = adapt_get_type(cfg, "agents", json_type_object);
        cfg_ws = adapt_get_str(adapt_get_type(agents, "defaults", json_type_object), "workspace", NULL);

        if (env_ws && pc_resolve(&w, env_ws, w.home, ws) == 0) {
                why = (struct pc_why){ ROOT_ENV, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", NULL };
        } else if (!pc_blank(cfg_ws) && pc_resolve(&w, cfg_ws, w.home, ws) == 0) {
                why = cfg_why;
        } else if (w.home[0] && paths_join(ws, sizeof(ws), w.home, "workspace") == 0) {
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
        adapt_path_dirname(ws, parent, sizeof(parent));

        list = adapt_get_type(agents, "list", json_type_array);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *a = json_object_array_get_idx(list, i), *def;
                const char *id = adapt_get_str(a, "id", NULL), *aws = adapt_get_str(a, "workspace", NULL);
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
                def = adapt_get_type(a, "default", json_type_boolean);
                is_default = (def && json_object_get_boolean(def)) || pc_blank(id) ||
                             strcmp(norm, "main") == 0;
                if (is_default || !ws[0])
                        continue;
                /* filepath.Join(defaults.workspace, "..", "workspace-"+id) */
                char sub[PC_AGENT_ID_MAX + 16];
                snprintf(sub, sizeof(sub), "workspace-%s", norm);
                if (paths_join(dir, sizeof(dir), parent, sub) < 0)
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
        json_object *list = adapt_get_type(cfg, "model_list", json_type_array);
        size_t n = list ? json_object_array_length(list) : 0;

        if (n == 0)
                return 0;
        c->v = calloc(n, sizeof(*c->v));
        if (!c->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                size_t alen, plen = 0, mlen = 0;
                const char *alias = adapt_get_str(e, "model_name", &alen);
                const char *prov = adapt_get_str(e, "provider", &plen);
                const char *model = adapt_get_str(e, "model", &mlen);
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

const struct pc_model *pc_models_find(const struct picoclaw_config *c, const char *alias)
{
        if (!c || !alias || !alias[0])
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->v[i].alias, alias) == 0)
                        return c->v[i].conflict ? NULL : &c->v[i];
        return NULL;
}

void picoclaw_free_config(void *config)
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
int picoclaw_load_config(const struct discover_env *env, void **ret_config,
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
        r = adapt_read_json(w.config, PC_CONFIG_MAX, &cfg);
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
