/* OpenClaw adapter, JSONL era: discovery under each variable, classification
 * of every file kind OpenClaw leaves, the fixture state and profile dirs
 * walked by the real scanner (fixtures/openclaw/expected.json), and the real
 * samples/openclaw files against an independent count. */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"
#include "lines.h"
#include "registry.h"
#include "row.h"
#include "ingest/scan.h"
#include "tap.h"
#include "testutil.h"

static const struct adapter *A = &adapter_openclaw;
static char srcdir[PATH_MAX];

/* ---- helpers ------------------------------------------------------------------- */

static void discover(struct fenv *f, struct root_list *out)
{
        struct discover_env env = fenv_env(f);
        memset(out, 0, sizeof(*out));
        is_int(A->discover(&env, out), 0, "discover returns 0");
}

/* ---- metadata -------------------------------------------------------------------- */

static void test_metadata(void)
{
        static const char *const vars[] = { "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "OPENCLAW_PROFILE",
                                            "OPENCLAW_CONFIG_PATH", "OPENCLAW_AGENT_DIR" };
        size_t n = 0;

        is_str(A->id, "openclaw", "id");
        is_str(A->display_name, "OpenClaw", "display name");
        ok(registry_find("openclaw") == A, "registered");
        is_str(cap_tokens_name(A->caps.tokens), "exact", "tokens exact");
        is_str(cap_cost_name(A->caps.cost), "vendor-reported", "cost vendor-reported");
        is_str(cap_activity_name(A->caps.activity), "exact", "activity exact");
        is_str(cap_reasoning_name(A->caps.reasoning), "subset-of-output", "reasoning subset");
        ok(A->parse_line && A->collect_rows && A->classify && A->discover, "callbacks set");
        while (A->env[n])
                n++;
        is_int(n, 5, "five variables declared");
        for (size_t i = 0; i < 5; i++) {
                ok(n == 5 && strcmp(A->env[i], vars[i]) == 0, "env[%zu] = %s", i, vars[i]);
                ok(registry_env_known(vars[i]) && registry_env_owner(vars[i]) &&
                           strcmp(registry_env_owner(vars[i]), "openclaw") == 0,
                   "%s is openclaw's in the registry", vars[i]);
        }
}

/* ---- classify ----------------------------------------------------------------------- */

static void test_classify(void)
{
        static const struct {
                const char *rel;
                int depth, dir, want;
        } t[] = {
                { "", 0, 1, CLASS_DESCEND },
                { "agents", 1, 1, CLASS_DESCEND },
                { "sessions", 1, 1, CLASS_DESCEND },
                { "agent", 1, 1, CLASS_DESCEND },
                { "session-sqlite-import-archive", 1, 1, CLASS_DESCEND },
                { "workspace", 1, 1, CLASS_IGNORE },
                { "state", 1, 1, CLASS_IGNORE },
                { "agents/main", 2, 1, CLASS_DESCEND },
                { "agents/.trash", 2, 1, CLASS_IGNORE },
                { "logs/x", 2, 1, CLASS_IGNORE },
                { "agents/main/sessions", 3, 1, CLASS_DESCEND },
                { "agents/main/agent", 3, 1, CLASS_DESCEND },
                { "agents/main/session-sqlite-import-archive", 3, 1, CLASS_DESCEND },
                { "agents/main/workspace", 3, 1, CLASS_IGNORE },
                { "agents/main/qmd", 3, 1, CLASS_IGNORE },
                /* transcripts */
                { "agents/main/sessions/1f0e9a52-3c4d-4b8e-9a10-5d2c7e8f0a11.jsonl", 4, 0, CLASS_LINES },
                { "agents/main/sessions/7c41d2e0-8b6a-4f3e-b2c1-0e9d8a7b6c52-topic-42.jsonl", 4, 0, CLASS_LINES },
                { "agents/main/sessions/2026-06-01T11-00-00-000Z_3e8f5a61-2b7d-4c9e-8f10-6a5b4c3d2e13.jsonl", 4, 0, CLASS_LINES },
                { "agents/main/sessions/abc.jsonl.reset.2026-03-09T07-41-35.691Z", 4, 0, CLASS_LINES },
                { "agents/main/sessions/abc.jsonl.deleted.2026-06-03T12-00-00.000Z", 4, 0, CLASS_LINES },
                { "agents/main/session-sqlite-import-archive/agent_main_main.abc.jsonl.imported-1795000000000", 4, 0, CLASS_LINES },
                { "agents/main/session-sqlite-import-archive/agent_main_main.abc.jsonl.imported-1795000000000.2", 4, 0, CLASS_LINES },
                { "agents/main/session-sqlite-import-archive/agent_main_main.abc.jsonl.reset.2026-03-09T07-41-35.691Z.imported-17", 4, 0, CLASS_LINES },
                { "sessions/abc.jsonl", 2, 0, CLASS_LINES },
                { "session-sqlite-import-archive/k.abc.jsonl.imported-1", 2, 0, CLASS_LINES },
                { "abc.jsonl", 1, 0, CLASS_LINES },
                { "agents/main/abc.jsonl", 3, 0, CLASS_IGNORE },
                { "agents/main/agent/abc.jsonl", 4, 0, CLASS_IGNORE },
                { "agents/main/workspace/abc.jsonl", 4, 0, CLASS_IGNORE },
                /* sidecars: never */
                { "agents/main/sessions/sessions.json", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/sessions.json.bak.1780300000000", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/sessions.json.1.6c3f0e2a-1b2c-4d3e-8f40-5a6b7c8d9e0f.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.jsonl.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.jsonl.3f9e.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.jsonl.bak.2026-06-01T12-00-00.000Z", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.checkpoint.6b0c2d4e-8f10-4a12-b314-c516d718e920.jsonl", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.trajectory.jsonl", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.trajectory-path.json", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.jsonl.lock", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.usage-cost-cache.json", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.usage-cost-cache.json.lock", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.fs-safe-4242-0d1e2f30-4152-4637-8899-aabbccddeeff.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.abc.jsonl.4242.0d1e2f30.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.jsonl", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.json", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.jsonl.reset.", 4, 0, CLASS_IGNORE },
                { "agents/main/session-sqlite-import-archive/k.abc.trajectory.jsonl.imported-1", 4, 0, CLASS_IGNORE },
                { "agents/main/session-sqlite-import-archive/k.abc.jsonl.imported-x", 4, 0, CLASS_IGNORE },
                /* the database, and never its siblings */
                { "agents/main/agent/openclaw-agent.sqlite", 4, 0, CLASS_TABLE },
                { "agents/main/agent/openclaw-agent.sqlite-wal", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite-shm", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite-journal", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.memory-reindex-4a65b883-abc2-40cb-a2e1-935d6a545b6f", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.memory-reindex-4a65b883-abc2-40cb-a2e1-935d6a545b6f-wal", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.reindex-lock.sqlite", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.reindex-lock.sqlite-journal", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.generation-lock.sqlite", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/openclaw-agent.sqlite.generation-writer.sqlite", 4, 0, CLASS_IGNORE },
                { "agents/main/agent/models.json", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/openclaw-agent.sqlite", 4, 0, CLASS_IGNORE },
                { "state/openclaw.sqlite", 2, 0, CLASS_IGNORE },
                { "agent/openclaw-agent.sqlite", 2, 0, CLASS_TABLE },
                { "openclaw-agent.sqlite", 1, 0, CLASS_TABLE },
                /* SQLite-era archives: zstd-compressed lines of their own formats */
                { "agents/main/sessions/abc.jsonl.deleted.2026-11-02T10-00-00.000Z.g7.zst", 4, 0, CLASS_LINES },
                { "agents/main/sessions/abc.jsonl.reset.2026-11-02T10-00-00.000Z.g7.zst", 4, 0, CLASS_LINES },
                { "sessions/abc.jsonl.deleted.2026-11-02T10-00-00.000Z.g7.zst", 2, 0, CLASS_LINES },
                { "abc.jsonl.deleted.2026-11-02T10-00-00.000Z.g7.zst", 1, 0, CLASS_LINES },
                { "agents/main/sessions/abc.jsonl.zst", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/.abc.jsonl.deleted.x.zst", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/abc.trajectory.jsonl.deleted.x.zst.tmp", 4, 0, CLASS_IGNORE },
                { "agents/main/sessions/cold", 4, 1, CLASS_DESCEND },
                { "agents/main/agent/cold", 4, 1, CLASS_IGNORE },
                { "sessions/cold", 2, 1, CLASS_DESCEND },
                { "cold", 1, 1, CLASS_DESCEND },
                { "agents/main/sessions/cold/0123abcd.jsonl.zst", 5, 0, CLASS_LINES },
                { "sessions/cold/0123abcd.jsonl.zst", 3, 0, CLASS_LINES },
                { "cold/0123abcd.jsonl.zst", 2, 0, CLASS_LINES },
                { "agents/main/sessions/cold/0123abcd.jsonl", 5, 0, CLASS_IGNORE },
                { "agents/main/sessions/cold/.jsonl.zst", 5, 0, CLASS_IGNORE },
                { "agents/main/sessions/cold/0123abcd.jsonl.zst.tmp", 5, 0, CLASS_IGNORE },
                { "agents/main/agent/cold/0123abcd.jsonl.zst", 5, 0, CLASS_IGNORE },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                const char *name = strrchr(t[i].rel, '/');
                name = name ? name + 1 : t[i].rel;
                int got = A->classify(t[i].rel, name, t[i].depth, t[i].dir);
                ok(got == t[i].want, "classify %s%s -> %d", t[i].rel, t[i].dir ? "/" : "", t[i].want);
                if (got != t[i].want)
                        printf("#   got %d\n", got);
        }
}

/* ---- discovery ------------------------------------------------------------------------ */

static void check_root(const struct root_list *l, const char *path, const char *label, int reason,
                       const char *env_var, int depth, const char *what)
{
        const struct root *r = find_root(l, path);
        ok(r != NULL, "%s: root %s", what, path);
        if (!r)
                return;
        is_str(r->label, label, "  label");
        is_int(r->reason, reason, "  reason");
        is_str(r->env_var, env_var ? env_var : "", "  env var");
        is_int(r->max_depth, depth, "  max depth");
        ok(r->adapter == A, "  adapter");
}

static void test_discovery(void)
{
        char *tmp = strdup(tap_tmpdir()), p[PATH_MAX], q[PATH_MAX], cfg[PATH_MAX];
        struct root_list l;
        struct fenv f;

        /* nothing at all */
        f = (struct fenv){ 0 };
        discover(&f, &l);
        is_int(l.n, 0, "no HOME, no variables: no roots");
        root_list_free(&l);

        /* HOME only, nothing on disk: the default state dir, watched for */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        discover(&f, &l);
        is_int(l.n, 1, "HOME only: one root");
        check_root(&l, pj(p, tmp, ".openclaw"), "state", ROOT_DEFAULT, NULL, 4, "HOME only");
        root_list_free(&l);

        /* legacy ~/.clawdbot alone is the state dir */
        mkdir_p(pj(p, tmp, ".clawdbot/agents/main/sessions"));
        discover(&f, &l);
        is_int(l.n, 2, "legacy only: state + its agent");
        check_root(&l, pj(p, tmp, ".clawdbot"), "state", ROOT_DEFAULT, NULL, 4, "legacy");
        check_root(&l, pj(p, tmp, ".clawdbot/agents/main"), "agent main", ROOT_DEFAULT, NULL, 2, "legacy agent");
        root_list_free(&l);

        /* ~/.openclaw wins; legacy still listed; every profile with its agents */
        mkdir_p(pj(p, tmp, ".openclaw/agents/main/sessions"));
        mkdir_p(pj(p, tmp, ".openclaw/agents/ops/agent"));
        mkdir_p(pj(p, tmp, ".openclaw-dev/agents/main"));
        mkdir_p(pj(p, tmp, ".openclaw-Work_2"));
        mkdir_p(pj(p, tmp, ".openclaw-bad name"));
        write_file(pj(p, tmp, ".openclaw-file"), "not a dir");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, ".openclaw"), "state", ROOT_DEFAULT, NULL, 4, "default");
        check_root(&l, pj(p, tmp, ".openclaw/agents/main"), "agent main", ROOT_DEFAULT, NULL, 2, "agent main");
        check_root(&l, pj(p, tmp, ".openclaw/agents/ops"), "agent ops", ROOT_DEFAULT, NULL, 2, "agent ops");
        check_root(&l, pj(p, tmp, ".clawdbot"), "legacy .clawdbot", ROOT_DEFAULT, NULL, 4, "legacy kept");
        check_root(&l, pj(p, tmp, ".openclaw-dev"), "profile dev", ROOT_PROFILE, NULL, 4, "profile dev");
        is_str(find_root(&l, p) ? find_root(&l, p)->detail : "", "dev", "  detail: the profile name");
        check_root(&l, pj(p, tmp, ".openclaw-dev/agents/main"), "profile dev: agent main", ROOT_PROFILE, NULL, 2,
                   "profile agent");
        check_root(&l, pj(p, tmp, ".openclaw-Work_2"), "profile Work_2", ROOT_PROFILE, NULL, 4, "profile Work_2");
        ok(!find_root(&l, pj(p, tmp, ".openclaw-bad name")), "invalid profile name skipped");
        ok(!find_root(&l, pj(p, tmp, ".openclaw-file")), "a file is no profile");
        is_int(l.n, 8, "eight roots");
        root_list_free(&l);

        /* OPENCLAW_STATE_DIR moves the state dir; the default stays listed */
        fenv_set(&f, "OPENCLAW_STATE_DIR", "~/moved/");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, "moved"), "state", ROOT_ENV, "OPENCLAW_STATE_DIR", 4, "STATE_DIR (~)");
        ok(l.n > 0 && strcmp(l.v[0].path, p) == 0, "the state dir is listed first");
        check_root(&l, pj(p, tmp, ".openclaw"), "default", ROOT_DEFAULT, NULL, 4, "default kept");
        root_list_free(&l);

        /* OPENCLAW_STATE_DIR naming a profile dir: one root, the env one */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        fenv_set(&f, "OPENCLAW_STATE_DIR", pj(q, tmp, ".openclaw-dev"));
        discover(&f, &l);
        check_root(&l, q, "state", ROOT_ENV, "OPENCLAW_STATE_DIR", 4, "STATE_DIR = profile dir");
        check_root(&l, pj(p, tmp, ".openclaw-dev/agents/main"), "agent main", ROOT_ENV, "OPENCLAW_STATE_DIR", 2,
                   "its agent");
        size_t dup = 0;
        for (size_t i = 0; i < l.n; i++)
                dup += strcmp(l.v[i].path, q) == 0;
        is_int(dup, 1, "listed once");
        root_list_free(&l);

        /* blank and "undefined" count as unset (as OpenClaw does) */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        fenv_set(&f, "OPENCLAW_STATE_DIR", "undefined");
        fenv_set(&f, "OPENCLAW_HOME", "  ");
        fenv_set(&f, "OPENCLAW_PROFILE", "null");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, ".openclaw"), "state", ROOT_DEFAULT, NULL, 4, "undefined = unset");
        root_list_free(&l);

        /* OPENCLAW_HOME replaces HOME for everything */
        mkdir_p(pj(p, tmp, "oh/.openclaw/agents/a1"));
        mkdir_p(pj(p, tmp, "oh/.openclaw-x"));
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        fenv_set(&f, "OPENCLAW_HOME", "~/oh");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, "oh/.openclaw"), "state", ROOT_ENV, "OPENCLAW_HOME", 4, "OPENCLAW_HOME");
        check_root(&l, pj(p, tmp, "oh/.openclaw/agents/a1"), "agent a1", ROOT_ENV, "OPENCLAW_HOME", 2, "its agent");
        check_root(&l, pj(p, tmp, "oh/.openclaw-x"), "profile x", ROOT_PROFILE, NULL, 4, "its profile");
        ok(!find_root(&l, pj(p, tmp, ".openclaw")), "HOME's dirs not used");
        root_list_free(&l);

        /* OPENCLAW_PROFILE: that profile even before it exists */
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        fenv_set(&f, "OPENCLAW_PROFILE", "night");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, ".openclaw-night"), "profile night", ROOT_ENV, "OPENCLAW_PROFILE", 4,
                   "OPENCLAW_PROFILE");
        root_list_free(&l);
        f.v[1] = "default";
        discover(&f, &l);
        ok(!find_root(&l, pj(p, tmp, ".openclaw-default")), "profile 'default' = no suffix");
        root_list_free(&l);

        /* OPENCLAW_CONFIG_PATH: JSON5-ish session.store with {agentId} */
        snprintf(cfg, sizeof(cfg), "%s/cfg/oc.json5", tmp);
        mkdir_p(pj(p, tmp, "cfg"));
        write_file(cfg, "// hand-written\n{\n  session: {\n    /* per agent */ store: '~/stores/{agentId}/sessions.json',\n"
                        "    reset: { mode: \"daily\", },\n  },\n  agents: [ 'a', \"b\", ],\n}\n");
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        fenv_set(&f, "OPENCLAW_CONFIG_PATH", cfg);
        discover(&f, &l);
        check_root(&l, pj(p, tmp, "stores/main"), "session store main", ROOT_CONFIG, NULL, 1, "store {agentId} main");
        is_str(find_root(&l, p) ? find_root(&l, p)->detail : "", cfg, "  detail: the config path");
        check_root(&l, pj(p, tmp, "stores/ops"), "session store ops", ROOT_CONFIG, NULL, 1, "store {agentId} ops");
        check_root(&l, pj(p, tmp, "stores/session-sqlite-import-archive"), "session import archive", ROOT_CONFIG,
                   NULL, 0, "its import archive");
        root_list_free(&l);

        /* a store in the standard place adds nothing; relative paths are the config's */
        write_file(cfg, "{\"session\":{\"store\":\"" "~/.openclaw/agents/{agentId}/sessions/sessions.json\"}}");
        discover(&f, &l);
        size_t cfgroots = 0;
        for (size_t i = 0; i < l.n; i++)
                cfgroots += l.v[i].reason == ROOT_CONFIG;
        is_int(cfgroots, 0, "store inside the state dir: covered, no extra root");
        root_list_free(&l);
        write_file(cfg, "{\"session\":{\"store\":\"rel/s.json\"}}");
        discover(&f, &l);
        check_root(&l, pj(p, tmp, "cfg/rel"), "session store", ROOT_CONFIG, NULL, 1, "relative store");
        root_list_free(&l);

        /* broken configs: ignored, never a crash */
        static const char *const bad[] = { "{{{", "", "[1,2]", "{\"session\":{\"store\":5}}", "{\"session\":\"x\"}",
                                           "{ session: { store: \"unterminated", "/* open comment" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                write_file(cfg, bad[i]);
                discover(&f, &l);
                cfgroots = 0;
                for (size_t j = 0; j < l.n; j++)
                        cfgroots += l.v[j].reason == ROOT_CONFIG;
                is_int(cfgroots, 0, "broken config ignored");
                root_list_free(&l);
        }
        f.v[1] = tmp; /* a directory */
        discover(&f, &l);
        root_list_free(&l);

        /* without OPENCLAW_CONFIG_PATH: <state>/openclaw.json */
        write_file(pj(p, tmp, ".openclaw/openclaw.json"), "{ session: { store: \"/srv/oc/{agentId}/s.json\" } }");
        f = (struct fenv){ 0 };
        fenv_set(&f, "HOME", tmp);
        discover(&f, &l);
        check_root(&l, "/srv/oc/main", "session store main", ROOT_CONFIG, NULL, 1, "state's openclaw.json");
        check_root(&l, "/srv/oc/ops", "session store ops", ROOT_CONFIG, NULL, 1, "state's openclaw.json, ops");
        root_list_free(&l);
        unlink(pj(p, tmp, ".openclaw/openclaw.json"));

        /* OPENCLAW_AGENT_DIR: its database, unless it is an agent dir we scan */
        fenv_set(&f, "OPENCLAW_AGENT_DIR", "/srv/agentdir");
        discover(&f, &l);
        check_root(&l, "/srv/agentdir", "agent dir", ROOT_ENV, "OPENCLAW_AGENT_DIR", 0, "OPENCLAW_AGENT_DIR");
        root_list_free(&l);
        f.v[1] = pj(q, tmp, ".openclaw/agents/ops/agent");
        discover(&f, &l);
        ok(!find_root(&l, q), "agent dir inside the state dir: covered");
        root_list_free(&l);

        struct discover_env env = { fenv_get, &f };
        ok(discover_env_get(&env, "CLAWDBOT_STATE_DIR") == NULL, "unknown variable refused");
        snprintf(p, sizeof(p), "rm -rf '%s'", tmp);
        (void)!system(p);
        free(tmp);
}

/* ---- fixtures through the real scanner ----------------------------------------------- */

/* The totals of the sources a scan visits, each file name once. */
struct found {
        struct totals t;
        char names[64][256];
        size_t nnames;
};

static int on_source(void *u, const struct root *root, const char *path, int kind,
                     const struct stat *st)
{
        struct found *fd = u;
        struct row_batch b = { 0 };
        const char *name = strrchr(path, '/') + 1;
        (void)root;
        (void)st;
        for (size_t i = 0; i < fd->nnames; i++)
                if (strcmp(fd->names[i], name) == 0)
                        return 0; /* found through two roots (state dir and agent) */
        if (fd->nnames < 64)
                snprintf(fd->names[fd->nnames++], sizeof(fd->names[0]), "%s", name);
        ok(kind == CLASS_LINES, "%s is a line source", name);
        ok(read_lines(A, path, &b) == 0, "read %s", name);
        add_rows(&fd->t, &b);
        row_batch_free(&b);
        return 0;
}

static void fixture_case(struct json_object *cases, const char *name, const char *state,
                         const char *profile, const char *const *want, size_t nwant)
{
        char *home = strdup(tap_tmpdir()), p[PATH_MAX], cmd[PATH_MAX + 16];
        struct scan_visitor v = { .on_source = on_source };
        struct found fd = { 0 };
        struct json_object *c;
        struct root_list l;
        struct fenv f = { 0 };

        v.u = &fd;
        fenv_set(&f, "HOME", home);
        if (state)
                fenv_set(&f, "OPENCLAW_STATE_DIR", state);
        if (profile)
                ok(symlink(profile, pj(p, home, ".openclaw-dev")) == 0, "profile dir linked");
        discover(&f, &l);
        for (size_t i = 0; i < l.n; i++)
                scan_root(&l.v[i], &v);
        is_int(fd.nnames, nwant, "sources found");
        for (size_t i = 0; i < nwant; i++) {
                bool seen = false;
                for (size_t k = 0; k < fd.nnames; k++)
                        seen = seen || strcmp(fd.names[k], want[i]) == 0;
                ok(seen, "found %s", want[i]);
        }
        is_int(fd.t.synthetic, 0, "no synthetic openclaw rows");
        ok(json_object_object_get_ex(cases, name, &c), "expected.json has %s", name);
        printf("# %s\n", name);
        totals_check(&fd.t, c, NULL, false);
        root_list_free(&l);
        free(fd.t.keys);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
        (void)!system(cmd);
        free(home);
}

static void test_fixtures(void)
{
        static const char *const state_files[] = {
                "1f0e9a52-3c4d-4b8e-9a10-5d2c7e8f0a11.jsonl",
                "7c41d2e0-8b6a-4f3e-b2c1-0e9d8a7b6c52-topic-42.jsonl",
                "2026-06-01T11-00-00-000Z_3e8f5a61-2b7d-4c9e-8f10-6a5b4c3d2e13.jsonl",
                "9a7b6c5d-4e3f-4a2b-9c1d-8e7f6a5b4c14.jsonl.reset.2026-06-02T08-00-00.000Z",
                "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b15.jsonl",
                "2b1a0f9e-8d7c-4b6a-9e5d-4c3b2a1f0e16.jsonl.deleted.2026-06-03T12-00-00.000Z",
                "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c17.jsonl",
        };
        static const char *const dev_files[] = {
                "4f3e2d1c-0b9a-4877-a665-544332211018.jsonl",
                "6e5d4c3b-2a19-4087-9f6e-5d4c3b2a1019.jsonl",
        };
        const char *all[9];
        char fx[PATH_MAX], state[PATH_MAX], dev[PATH_MAX], a[PATH_MAX];
        struct json_object *root, *cases;
        struct row_batch b = { 0 };

        xsnprintf(fx, sizeof(fx), "%s/fixtures/openclaw", srcdir);
        root = json_object_from_file(pj(a, fx, "expected.json"));
        ok(root && json_object_object_get_ex(root, "cases", &cases), "fixtures/openclaw/expected.json loads");
        if (!root)
                return;
        pj(state, fx, "state");
        pj(dev, fx, "profile-dev");
        fixture_case(cases, "state", state, NULL, state_files, 7);
        fixture_case(cases, "profile-dev", NULL, dev, dev_files, 2);
        memcpy(all, state_files, sizeof(state_files));
        memcpy(all + 7, dev_files, sizeof(dev_files));
        fixture_case(cases, "state+profile", state, dev, all, 9);

        /* the main transcript alone: synthetic rows, reasoningTokens, the
         * carried model after them, the re-append collapsing */
        ok(read_lines(A, pj(a, state, "agents/main/sessions/1f0e9a52-3c4d-4b8e-9a10-5d2c7e8f0a11.jsonl"), &b) == 0,
           "main transcript read");
        is_int(b.n, 6, "six rows before dedup (one re-appended)");
        struct totals t = { 0 };
        add_rows(&t, &b);
        is_int(t.rows, 5, "five distinct calls");
        is_int(t.synthetic, 0, "delivery-mirror and gateway-injected skipped");
        is_int(t.reasoning, 90, "reasoningTokens read as reasoning");
        bool comp = false;
        for (size_t i = 0; i < b.n; i++)
                if (b.rows[i].kind == ROW_KIND_COMPACTION)
                        comp = strcmp(b.rows[i].model, "us.anthropic.claude-opus-4-6-v1") == 0 &&
                               strcmp(b.rows[i].provider, "amazon-bedrock") == 0 &&
                               strcmp(b.rows[i].tool, "openclaw") == 0 &&
                               strcmp(b.rows[i].session, "1f0e9a52-3c4d-4b8e-9a10-5d2c7e8f0a11") == 0;
        ok(comp, "compaction after synthetic rows: the real model, tool openclaw, session from the header");
        ok(b.rows[0].n_calls == 1 && strcmp(b.rows[0].calls[0].name, "exec") == 0, "exec call in its record");
        free(t.keys);
        row_batch_free(&b);
        json_object_put(root);
}

/* ---- real samples ------------------------------------------------------------------------ */

/* An independent count: assistant usage that is not OpenClaw's own
 * synthetic rows and not all zero, summed straight from the JSON. */
static void independent(struct json_object *e, void *ut)
{
        struct totals *t = ut;
        struct json_object *m, *u, *v, *c;
        const char *prov = "", *model = "";
        int64_t in = 0, out = 0, cr = 0, cw = 0, tot = 0;
        double cost = 0;

        if (!e || !json_object_object_get_ex(e, "message", &m) ||
            !json_object_object_get_ex(m, "usage", &u) || !json_object_object_get_ex(m, "role", &v) ||
            strcmp(json_object_get_string(v), "assistant") != 0)
                return;
        if (json_object_object_get_ex(m, "provider", &v))
                prov = json_object_get_string(v);
        if (json_object_object_get_ex(m, "model", &v))
                model = json_object_get_string(v);
        if (strcmp(prov, "openclaw") == 0)
                return;
        (void)model;
        if (json_object_object_get_ex(u, "input", &v)) in = json_object_get_int64(v);
        if (json_object_object_get_ex(u, "output", &v)) out = json_object_get_int64(v);
        if (json_object_object_get_ex(u, "cacheRead", &v)) cr = json_object_get_int64(v);
        if (json_object_object_get_ex(u, "cacheWrite", &v)) cw = json_object_get_int64(v);
        tot = json_object_object_get_ex(u, "totalTokens", &v) ? json_object_get_int64(v) : in + out + cr + cw;
        if (json_object_object_get_ex(u, "cost", &c) && json_object_object_get_ex(c, "total", &v))
                cost = json_object_get_double(v);
        if (!in && !out && !cr && !cw && !tot && cost == 0)
                return;
        t->rows++;
        t->input += (uint64_t)in;
        t->output += (uint64_t)out;
        t->cache_read += (uint64_t)cr;
        t->cache_write += (uint64_t)cw;
        t->total += (uint64_t)tot;
        t->cost_nano += llround(cost * 1e9);
}

static void test_samples(void)
{
        const char *env = getenv("AM_SAMPLES");
        char dir[PATH_MAX], p[PATH_MAX * 2], rel[PATH_MAX];
        struct totals mine = { 0 }, ref = { 0 };
        struct dirent **names;
        int n, lines = 0;

        snprintf(dir, sizeof(dir), "%s/openclaw", env && *env ? env : "../shared/samples");
        if (env == NULL || !*env) {
                char alt[PATH_MAX];
                xsnprintf(alt, sizeof(alt), "%s/../shared/samples/openclaw", srcdir);
                if (access(dir, R_OK) != 0)
                        snprintf(dir, sizeof(dir), "%s", alt);
        }
        n = scandir(dir, &names, NULL, alphasort);
        if (n < 0) {
                printf("# samples/openclaw not found (%s): skipped\n", dir);
                return;
        }
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                /* the samples are named <repo>_[<agent>_]<file>: classify the file part */
                const char *base = strrchr(name, '_');
                if (name[0] == '.' || !base)
                        goto next;
                base++;
                snprintf(rel, sizeof(rel), "agents/main/sessions/%s", base);
                snprintf(p, sizeof(p), "%s/%s", dir, name);
                int c = A->classify(rel, base, 4, false);
                if (strstr(base, ".lock")) {
                        ok(c == CLASS_IGNORE, "sample %s: ignored", base);
                } else {
                        struct row_batch b = { 0 };
                        ok(c == CLASS_LINES, "sample %s: a transcript", base);
                        ok(read_lines(A, p, &b) == 0, "sample %s read", base);
                        add_rows(&mine, &b);
                        row_batch_free(&b);
                        json_lines(p, independent, &ref);
                        lines++;
                }
        next:
                free(names[i]);
        }
        free(names);
        ok(lines >= 2, "sample transcripts read");
        ok(mine.rows > 0, "sample rows found");
        is_int(mine.synthetic, 0, "no synthetic rows counted");
        is_int(mine.rows, ref.rows, "samples: rows = independent count");
        is_int(mine.input, ref.input, "samples: input");
        is_int(mine.output, ref.output, "samples: output");
        is_int(mine.cache_read, ref.cache_read, "samples: cache read");
        is_int(mine.cache_write, ref.cache_write, "samples: cache write");
        is_int(mine.total, ref.total, "samples: total");
        is_int(mine.cost_nano, ref.cost_nano, "samples: cost");
        free(mine.keys);
}

int main(void)
{
        if (!realpath(am_srcdir(), srcdir))
                return 99;
        test_metadata();
        test_classify();
        test_discovery();
        test_fixtures();
        test_samples();
        return tap_done();
}
