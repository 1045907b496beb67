/* OpenClaw (pi's session manager inside a messaging gateway): where its state
 * dirs, profiles and agents are, and which of the files there are transcripts. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt-util.h"
#include "openclaw/openclaw.h"

#define NAMES_MAX   512
#define ARCHIVE_DIR "session-sqlite-import-archive"
#define DB_NAME     "openclaw-agent.sqlite"

const struct pi_flavor openclaw_flavor = {
        .tool = "openclaw",
        .skip_synthetic_openclaw = true,
        .model_snapshot = true,
};

/* ---- file names ------------------------------------------------------------ */


/* `openclaw doctor` archives an imported transcript as
 * <session-key slug>.<name>.imported-<ms>[.<n>]: back to <slug>.<name>. */
static void strip_imported(char *s)
{
        static const char digits[] = "0123456789";
        char *p = NULL;
        const char *d;
        size_t k;

        for (char *q = s; (q = strstr(q, ".imported-")); q++)
                p = q;
        if (!p)
                return;
        d = p + strlen(".imported-");
        k = strspn(d, digits);
        if (k == 0)
                return;
        d += k;
        if (*d == '.') {
                k = strspn(d + 1, digits);
                if (k == 0)
                        return;
                d += 1 + k;
        }
        if (*d == 0)
                *p = 0;
}

/* /new, /reset and deletion rename the primary: <name>.jsonl.reset.<ts>,
 * <name>.jsonl.deleted.<ts> (the timestamp itself holds dots). */
static void strip_archive(char *s)
{
        static const char *const tags[] = { ".jsonl.reset.", ".jsonl.deleted.", NULL };

        for (size_t i = 0; tags[i]; i++) {
                char *p = strstr(s, tags[i]);
                if (p && p[strlen(tags[i])]) {
                        p[strlen(".jsonl")] = 0;
                        return;
                }
        }
}

/* Transcripts: <id>.jsonl, <id>-topic-<n>.jsonl, pi-style <ts>_<uuid>.jsonl
 * and their .reset/.deleted/.imported archives. Never the store, temp and
 * backup files, locks, OpenClaw's cost cache, pre-compaction checkpoint
 * copies or trajectories (both repeat usage). */
static bool transcript_name(const char *name)
{
        char base[NAME_MAX + 1];
        size_t n = strlen(name);

        if (n == 0 || n > NAME_MAX || name[0] == '.') /* .fs-safe-*, .usage-cost-cache.json* */
                return false;
        if (strncmp(name, "sessions.json", strlen("sessions.json")) == 0 || adapt_ends_with(name, ".tmp") ||
            adapt_ends_with(name, ".zst") || /* compressed archives: archive_class() */
            adapt_ends_with(name, ".lock") || adapt_ends_with(name, ".bak") || strstr(name, ".bak."))
                return false;
        memcpy(base, name, n + 1);
        strip_imported(base);
        strip_archive(base);
        if (strlen(base) <= strlen(".jsonl") || !adapt_ends_with(base, ".jsonl"))
                return false;
        return !adapt_ends_with(base, ".trajectory.jsonl") && !strstr(base, ".checkpoint.");
}


static bool transcript_dir(const char *rel, int idx)
{
        return adapt_component_is(rel, idx, "sessions") || adapt_component_is(rel, idx, ARCHIVE_DIR);
}

/* A compressed archive, read whole (openclaw-file.c): a deleted or reset
 * session published as <name>.jsonl.deleted.<ts>.<generation>.zst beside
 * the transcripts, or a cold window in <transcripts>/cold/<sha256>.jsonl.zst. */
static bool archive_file(const char *relpath, const char *name, int depth)
{
        size_t n = strlen(name);

        if (name[0] == '.' || !adapt_ends_with(name, ".zst"))
                return false;
        if (depth >= 2 && adapt_component_is(relpath, depth - 2, "cold"))
                return n > strlen(".jsonl.zst") && adapt_ends_with(name, ".jsonl.zst") &&
                       (depth == 2 || (depth == 3 && transcript_dir(relpath, 0)) ||
                        (depth == 5 && adapt_component_is(relpath, 0, "agents") && adapt_component_is(relpath, 2, "sessions")));
        return (strstr(name, ".jsonl.deleted.") || strstr(name, ".jsonl.reset.")) &&
               (depth == 1 || (depth == 2 && transcript_dir(relpath, 0)) ||
                (depth == 4 && adapt_component_is(relpath, 0, "agents") && transcript_dir(relpath, 2)));
}

/* Roots are state dirs (agents/<id>/{sessions,agent,session-sqlite-import-
 * archive}/, very old sessions/), single agents (<id>/: those three), or a
 * directory holding transcripts or the database itself (session.store's
 * dir, OPENCLAW_AGENT_DIR): one rule set serves all, by relative path. */
static enum classify_result oc_classify(const char *relpath, const char *name, int depth,
                                        bool is_dir)
{
        if (is_dir) {
                if (depth == 0)
                        return CLASS_DESCEND;
                if (name[0] == '.')
                        return CLASS_IGNORE;
                if (depth == 1 && (strcmp(name, "agents") == 0 || strcmp(name, "sessions") == 0 ||
                                   strcmp(name, "agent") == 0 || strcmp(name, ARCHIVE_DIR) == 0))
                        return CLASS_DESCEND;
                if (depth == 2 && adapt_component_is(relpath, 0, "agents"))
                        return CLASS_DESCEND;
                if (depth == 3 && adapt_component_is(relpath, 0, "agents") &&
                    (strcmp(name, "sessions") == 0 || strcmp(name, "agent") == 0 ||
                     strcmp(name, ARCHIVE_DIR) == 0))
                        return CLASS_DESCEND;
                /* cold storage inside a transcripts directory */
                if (strcmp(name, "cold") == 0 &&
                    (depth == 1 || (depth == 2 && adapt_component_is(relpath, 0, "sessions")) ||
                     (depth == 4 && adapt_component_is(relpath, 0, "agents") && adapt_component_is(relpath, 2, "sessions"))))
                        return CLASS_DESCEND;
                return CLASS_IGNORE;
        }
        /* the agent database; never its -wal/-shm/-journal, memory-reindex,
         * reindex-lock or generation-* siblings */
        if (strcmp(name, DB_NAME) == 0) {
                if (depth == 1 || (depth == 2 && adapt_component_is(relpath, 0, "agent")) ||
                    (depth == 4 && adapt_component_is(relpath, 0, "agents") && adapt_component_is(relpath, 2, "agent")))
                        return CLASS_TABLE;
                return CLASS_IGNORE;
        }
        if (archive_file(relpath, name, depth))
                return CLASS_LINES; /* zstd-compressed lines of an archive format */
        if (!transcript_name(name))
                return CLASS_IGNORE;
        if (depth == 1 || (depth == 2 && transcript_dir(relpath, 0)) ||
            (depth == 4 && adapt_component_is(relpath, 0, "agents") && transcript_dir(relpath, 2)))
                return CLASS_LINES;
        return CLASS_IGNORE;
}

bool openclaw_is_archive_file(const char *path, enum oc_archive_format *ret_format)
{
        const char *name = strrchr(path, '/');
        size_t dn;

        name = name ? name + 1 : path;
        if (name[0] == '.' || !adapt_ends_with(name, ".zst"))
                return false;
        dn = (size_t)(name - path);
        if (dn >= 6 && memcmp(name - 6, "/cold/", 6) == 0) {
                if (!adapt_ends_with(name, ".jsonl.zst") || strlen(name) == strlen(".jsonl.zst"))
                        return false;
                *ret_format = OC_ARCHIVE_COLD;
                return true;
        }
        if (strstr(name, ".jsonl.deleted.") || strstr(name, ".jsonl.reset.")) {
                *ret_format = OC_ARCHIVE_JSONL;
                return true;
        }
        return false;
}

/* Transcripts are pi lines; the archive .zst files hold lines of their own
 * formats (openclaw/archive.c). */
static int oc_parse_line(const struct source_ctx *ctx, struct parse_state *ps, const char *line,
                         size_t len, struct row_batch *out)
{
        enum oc_archive_format format;

        if (openclaw_is_archive_file(ctx->path, &format))
                return openclaw_archive_line(ctx, ps, format, line, len, out);
        return pi_parse_line(&openclaw_flavor, ctx, ps, line, len, out);
}

/* ---- discovery ------------------------------------------------------------- */

/* OpenClaw treats blank values and the strings "undefined"/"null" as unset. */
static bool unset(const char *v)
{
        if (!v)
                return true;
        while (isspace((unsigned char)*v))
                v++;
        return !*v || strcmp(v, "undefined") == 0 || strcmp(v, "null") == 0;
}

static bool join(char *buf, size_t cap, const char *dir, const char *name)
{
        int n = snprintf(buf, cap, "%s/%s", dir, name);
        return n > 0 && (size_t)n < cap;
}


/* 1 added, 0 already listed (same path), -ENOMEM */
static int add_root(struct root_list *out, const char *path, const char *label, uint8_t reason,
                    const char *env_var, const char *detail, uint8_t max_depth)
{
        return adapt_add_root(out, &adapter_openclaw, path, label, reason, env_var, detail, max_depth);
}

/* Whether a scan of some listed root already reaches files named probe in
 * dir (so a config-named directory is not listed twice). */
static bool covered(const struct root_list *out, const char *dir, const char *probe)
{
        for (size_t i = 0; i < out->n; i++) {
                const struct root *rt = &out->v[i];
                size_t rl = strlen(rt->path), pos = 0;
                char rel[PATH_MAX], name[NAME_MAX + 1];
                int depth = 0;
                bool reach = true;

                if (rt->adapter != &adapter_openclaw || strncmp(dir, rt->path, rl) != 0 ||
                    (dir[rl] && dir[rl] != '/'))
                        continue;
                for (const char *p = dir + rl; *p && reach;) {
                        size_t n = strcspn(p, "/");
                        if (n == 0) {
                                p++;
                                continue;
                        }
                        if (n > NAME_MAX || pos + n + 2 >= sizeof(rel))
                                return false;
                        memcpy(name, p, n);
                        name[n] = 0;
                        pos += (size_t)snprintf(rel + pos, sizeof(rel) - pos, "%s%s", pos ? "/" : "", name);
                        depth++;
                        reach = depth <= rt->max_depth &&
                                oc_classify(rel, name, depth, true) == CLASS_DESCEND;
                        p += n;
                }
                if (!reach || pos + strlen(probe) + 2 >= sizeof(rel))
                        continue;
                snprintf(rel + pos, sizeof(rel) - pos, "%s%s", pos ? "/" : "", probe);
                depth++;
                if (depth <= rt->max_depth + 1 && oc_classify(rel, probe, depth, false) != CLASS_IGNORE)
                        return true;
        }
        return false;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the subdirectories of dir starting with prefix (the
 * prefix stripped), at most NAMES_MAX; free with free_names. */
static int list_dirs(const char *dir, const char *prefix, char ***ret, size_t *ret_n)
{
        size_t n = 0, k = strlen(prefix);
        char **v = NULL, path[PATH_MAX];
        struct dirent *de;
        DIR *d = opendir(dir);

        *ret = NULL;
        *ret_n = 0;
        if (!d)
                return 0;
        while ((de = readdir(d)) && n < NAMES_MAX) {
                const char *nm = de->d_name;
                if (strncmp(nm, prefix, k) != 0 || !nm[k] || (k == 0 && nm[0] == '.') ||
                    !join(path, sizeof(path), dir, nm) || !adapt_is_dir(path))
                        continue;
                if (!v && !(v = calloc(NAMES_MAX, sizeof(*v))))
                        break;
                if (!(v[n] = strdup(nm + k)))
                        break;
                n++;
        }
        closedir(d);
        if (n)
                qsort(v, n, sizeof(*v), cmp_names);
        *ret = v;
        *ret_n = n;
        return 0;
}

static void free_names(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

/* A state dir (max depth 4: agents/<id>/sessions/cold/<file>) and each agent
 * it has now as a root of its own (its status line); agents created later
 * are found live through the state dir's root. */
static int add_state(struct root_list *out, const char *path, const char *label, uint8_t reason,
                     const char *env_var, const char *detail)
{
        char agents[PATH_MAX], p[PATH_MAX], lab[sizeof(((struct root *)0)->label)];
        char **ids;
        size_t n;
        int r = add_root(out, path, label, reason, env_var, detail, 4);

        if (r <= 0 || !join(agents, sizeof(agents), path, "agents"))
                return r;
        list_dirs(agents, "", &ids, &n);
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!join(p, sizeof(p), agents, ids[i]))
                        continue;
                if (strcmp(label, "state") == 0)
                        snprintf(lab, sizeof(lab), "agent %.50s", ids[i]);
                else
                        snprintf(lab, sizeof(lab), "%.30s: agent %.24s", label, ids[i]);
                r = add_root(out, p, lab, reason, env_var, detail, 2);
        }
        free_names(ids, n);
        return r < 0 ? r : 0;
}

/* ^[a-z0-9][a-z0-9_-]{0,63}$, case-insensitive (OpenClaw's profile names) */
static bool valid_profile(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 64 || !isalnum((unsigned char)s[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

/* Profiles run with OPENCLAW_STATE_DIR=<home>/.openclaw-<name>: the one
 * OPENCLAW_PROFILE names (even before it exists) and every one on disk. */
static int add_profiles(struct root_list *out, const char *home, const char *profile)
{
        char path[PATH_MAX], label[64], name[80];
        char **v;
        size_t n;
        int r = 0;

        if (profile && valid_profile(profile) && strcasecmp(profile, "default") != 0) {
                snprintf(name, sizeof(name), ".openclaw-%s", profile);
                snprintf(label, sizeof(label), "profile %s", profile);
                if (join(path, sizeof(path), home, name))
                        r = add_state(out, path, label, ROOT_ENV, "OPENCLAW_PROFILE", profile);
        }
        list_dirs(home, ".openclaw-", &v, &n);
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!valid_profile(v[i]))
                        continue;
                snprintf(name, sizeof(name), ".openclaw-%s", v[i]);
                snprintf(label, sizeof(label), "profile %s", v[i]);
                if (join(path, sizeof(path), home, name))
                        r = add_state(out, path, label, ROOT_PROFILE, NULL, v[i]);
        }
        free_names(v, n);
        return r;
}

/* ---- the config's session.store ---------------------------------------- */

/* Replaces every {agentId} in tmpl by id. */
static bool subst_agent(const char *tmpl, const char *id, char *buf, size_t cap)
{
        static const char tag[] = "{agentId}";
        size_t k = 0;

        for (const char *p = tmpl; *p;) {
                const char *q = strstr(p, tag);
                size_t n = q ? (size_t)(q - p) : strlen(p), m = q ? strlen(id) : 0;
                if (k + n + m >= cap)
                        return false;
                memcpy(buf + k, p, n);
                memcpy(buf + k + n, id, m);
                k += n + m;
                p += n + (q ? sizeof(tag) - 1 : 0);
        }
        buf[k] = 0;
        return true;
}

/* session.store moves sessions.json and the transcripts beside it (and the
 * doctor's import archive beside that directory). `{agentId}` is expanded
 * for the agents the state dir has now (else "main"). */
static int add_config(struct root_list *out, const char *cfg, const char *home, const char *state)
{
        char store[PATH_MAX], cfgdir[PATH_MAX], agents[PATH_MAX], one[PATH_MAX], dir[PATH_MAX];
        char label[64];
        char **ids = NULL;
        size_t n = 0;
        int r;

        r = openclaw_config_store(cfg, store, sizeof(store));
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        snprintf(cfgdir, sizeof(cfgdir), "%s", cfg);
        *strrchr(cfgdir, '/') = 0; /* cfg is absolute */
        if (strstr(store, "{agentId}") && state[0] && join(agents, sizeof(agents), state, "agents"))
                list_dirs(agents, "", &ids, &n);
        r = 0;
        for (size_t i = 0; i < (n ? n : 1) && r >= 0; i++) {
                const char *id = n ? ids[i] : "main";
                char *slash;
                if (!subst_agent(store, id, one, sizeof(one)) ||
                    adapt_resolve_path(one, home[0] ? home : NULL, cfgdir, dir, sizeof(dir)) < 0 ||
                    !(slash = strrchr(dir, '/')) || slash == dir)
                        continue;
                *slash = 0; /* the store file's directory */
                if (strstr(store, "{agentId}"))
                        snprintf(label, sizeof(label), "session store %.40s", id);
                else
                        snprintf(label, sizeof(label), "session store");
                if (!covered(out, dir, "x.jsonl"))
                        r = add_root(out, dir, label, ROOT_CONFIG, NULL, cfg, 1);
                if (r >= 0 && (slash = strrchr(dir, '/')) && slash != dir) {
                        *slash = 0;
                        if (join(one, sizeof(one), dir, ARCHIVE_DIR) && !covered(out, one, "x.jsonl"))
                                r = add_root(out, one, "session import archive", ROOT_CONFIG, NULL,
                                             cfg, 0);
                }
        }
        free_names(ids, n);
        return r < 0 ? r : 0;
}

/* The state dir as OpenClaw resolves it ($OPENCLAW_STATE_DIR, else
 * <home>/.openclaw if it exists, else legacy <home>/.clawdbot if it exists,
 * else <home>/.openclaw; home = $OPENCLAW_HOME or $HOME); the default and
 * legacy dirs too when they hold older sessions; every profile dir; the
 * config's session.store; OPENCLAW_AGENT_DIR (the agent dir with its
 * database, if moved). */
static int oc_discover(const struct discover_env *env, struct root_list *out)
{
        const char *hvar = discover_env_get(env, "HOME");
        const char *ohome = discover_env_get(env, "OPENCLAW_HOME");
        const char *sdir = discover_env_get(env, "OPENCLAW_STATE_DIR");
        const char *prof = discover_env_get(env, "OPENCLAW_PROFILE");
        const char *cfg = discover_env_get(env, "OPENCLAW_CONFIG_PATH");
        const char *adir = discover_env_get(env, "OPENCLAW_AGENT_DIR");
        char home[PATH_MAX] = "", state[PATH_MAX] = "", dflt[PATH_MAX], legacy[PATH_MAX];
        char path[PATH_MAX];
        const char *hv = NULL, *sv = NULL;
        uint8_t sreason = ROOT_DEFAULT;
        int r = 0;

        if (unset(hvar) || hvar[0] != '/')
                hvar = NULL;
        if (!unset(ohome) && adapt_resolve_path(ohome, hvar, NULL, home, sizeof(home)) == 0)
                hv = "OPENCLAW_HOME";
        else if (!hvar || adapt_resolve_path(hvar, NULL, NULL, home, sizeof(home)) < 0)
                home[0] = 0;
        if (home[0] && (!join(dflt, sizeof(dflt), home, ".openclaw") ||
                        !join(legacy, sizeof(legacy), home, ".clawdbot")))
                home[0] = 0;

        if (!unset(sdir) &&
            adapt_resolve_path(sdir, home[0] ? home : NULL, NULL, state, sizeof(state)) == 0) {
                sreason = ROOT_ENV;
                sv = "OPENCLAW_STATE_DIR";
        } else if (home[0]) {
                snprintf(state, sizeof(state), "%s", adapt_is_dir(dflt) || !adapt_is_dir(legacy) ? dflt : legacy);
                sreason = hv ? ROOT_ENV : ROOT_DEFAULT;
                sv = hv;
        }
        if (state[0])
                r = add_state(out, state, "state", sreason, sv, NULL);
        if (r >= 0 && home[0]) {
                /* sessions written before a move stay where they were */
                if (adapt_is_dir(dflt))
                        r = add_state(out, dflt, "default", hv ? ROOT_ENV : ROOT_DEFAULT, hv, NULL);
                if (r >= 0 && adapt_is_dir(legacy))
                        r = add_state(out, legacy, "legacy .clawdbot", hv ? ROOT_ENV : ROOT_DEFAULT, hv,
                                      NULL);
                if (r >= 0)
                        r = add_profiles(out, home, unset(prof) ? NULL : prof);
        }
        if (r >= 0) {
                if (!unset(cfg) &&
                    adapt_resolve_path(cfg, home[0] ? home : NULL, NULL, path, sizeof(path)) == 0)
                        r = add_config(out, path, home, state);
                else if (state[0] && join(path, sizeof(path), state, "openclaw.json"))
                        r = add_config(out, path, home, state);
        }
        if (r >= 0 && !unset(adir) &&
            adapt_resolve_path(adir, home[0] ? home : NULL, NULL, path, sizeof(path)) == 0 &&
            !covered(out, path, DB_NAME))
                r = add_root(out, path, "agent dir", ROOT_ENV, "OPENCLAW_AGENT_DIR", NULL, 0);
        return r < 0 ? r : 0;
}

/* SQLite sidecars: a write to db-wal or db-journal means the database
 * changed; our own read-only opens touch -shm (and the -wal's atime and
 * close), so those are nobody's change. */
static enum source_of_result oc_source_of(const char *path, bool content_changed, char *ret_source,
                                          size_t cap)
{
        static const char *const sidecars[] = { "-wal", "-journal", "-shm", NULL };
        size_t n = strlen(path);

        for (size_t i = 0; sidecars[i]; i++) {
                size_t k = strlen(sidecars[i]);
                if (n <= k || strcmp(path + n - k, sidecars[i]) != 0)
                        continue;
                if (strcmp(sidecars[i], "-shm") == 0 || !content_changed || n - k >= cap)
                        return SOURCE_NONE;
                memcpy(ret_source, path, n - k);
                ret_source[n - k] = 0;
                return SOURCE_OTHER;
        }
        return SOURCE_SELF;
}

static const char *const openclaw_env[] = {
        "OPENCLAW_STATE_DIR",
        "OPENCLAW_HOME",
        "OPENCLAW_PROFILE",
        "OPENCLAW_CONFIG_PATH",
        "OPENCLAW_AGENT_DIR",
        NULL,
};

const struct adapter adapter_openclaw = {
        .id = "openclaw",
        .display_name = "OpenClaw",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,
                .cost = CAP_COST_VENDOR,
                .activity = CAP_ACTIVITY_EXACT,
                .reasoning = CAP_REASONING_SUBSET,
        },
        .env = openclaw_env,
        .discover = oc_discover,
        .load_config = NULL,
        .free_config = NULL,
        .classify = oc_classify,
        .source_of = oc_source_of,
        .parse_line = oc_parse_line,
        .collect_rows = openclaw_collect_db,
        .status_extra = openclaw_status,
};
