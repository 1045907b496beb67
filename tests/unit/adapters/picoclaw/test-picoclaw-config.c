/* Unit tests of PicoClaw's home, workspace and config: discovery from the
 * environment and config.json, and the model map (picoclaw/config.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "testutil.h"
#include "picoclaw-test.h"

#include "adapter.h"
#include "lines.h"
#include "registry.h"
#include "row.h"
#include "timefmt.h"

/* Test paths are short temp and fixture paths; a truncated one fails a test. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

static const struct adapter *A = &adapter_picoclaw;

/* ---- discovery -------------------------------------------------------------- */

static void test_discovery(void)
{
        char *tmp = strdup(tap_tmpdir());
        char home[PATH_MAX], p[PATH_MAX], q[PATH_MAX], cfg[PATH_MAX];
        struct fenv f;
        struct disc d;
        const struct root *r;

        pj(home, tmp, "home");
        mkdir_p(home);

        /* 1. only HOME, PicoClaw never installed: the default, no warning */
        memset(&f, 0, sizeof(f));
        fenv_set(&f, "HOME", home);
        disc_run(&f, &d);
        is_int(d.rc_discover, 0, "default: discover ok");
        is_int(d.roots.n, 1, "default: one root");
        r = d.roots.n ? &d.roots.v[0] : NULL;
        is_str(r ? r->path : NULL, pj(p, home, ".picoclaw/workspace/sessions"), "default: ~/.picoclaw/workspace/sessions");
        ok(r && r->reason == ROOT_DEFAULT && !r->env_var[0], "default: reason default");
        is_str(r ? r->label : NULL, "sessions", "default: label");
        ok(r && r->max_depth == 0 && r->adapter == A, "default: max_depth 0, adapter set");
        ok(d.rc_config == 0 && d.config != NULL, "default: load_config gives a config");
        ok(d.warning == NULL, "default: no warning when PicoClaw is not installed");
        for (size_t i = 0; i < f.n_asked; i++)
                if (!registry_env_known(f.asked[i]) || (strcmp(f.asked[i], "HOME") != 0 &&
                                                        strncmp(f.asked[i], "PICOCLAW_", 9) != 0))
                        ok(0, "asked for an unexpected variable %s", f.asked[i]);
        ok(f.n_asked >= 4, "env is read through discover_env (HOME and PICOCLAW_*)");
        disc_free(&d);

        /* 2. home exists but no config.json: defaults and a warning */
        mkdir_p(pj(p, home, ".picoclaw"));
        disc_run(&f, &d);
        is_int(d.roots.n, 1, "no config: one root");
        ok(d.warning && strstr(d.warning, "not found"), "no config: warning (%s)", d.warning ? d.warning : "none");
        disc_free(&d);

        /* 3. PICOCLAW_HOME moves the home (trailing slash cleaned) */
        char ph[PATH_MAX], phs[PATH_MAX];
        pj(ph, tmp, "ph");
        snprintf(phs, sizeof(phs), "%s/", ph);
        fenv_set(&f, "PICOCLAW_HOME", phs);
        disc_run(&f, &d);
        is_int(d.roots.n, 1, "PICOCLAW_HOME: one root");
        r = d.roots.n ? &d.roots.v[0] : NULL;
        is_str(r ? r->path : NULL, pj(p, ph, "workspace/sessions"), "PICOCLAW_HOME: <home>/workspace/sessions");
        ok(r && r->reason == ROOT_ENV, "PICOCLAW_HOME: reason env");
        is_str(r ? r->env_var : NULL, "PICOCLAW_HOME", "PICOCLAW_HOME: env_var");
        ok(d.warning == NULL, "PICOCLAW_HOME missing dir: no warning");
        disc_free(&d);

        /* 4. config in PICOCLAW_HOME with a ~ workspace */
        pj(cfg, ph, "config.json");
        write_file(cfg, "{\"agents\":{\"defaults\":{\"workspace\":\"~/pico/ws/\"}}}");
        disc_run(&f, &d);
        r = d.roots.n ? &d.roots.v[0] : NULL;
        is_str(r ? r->path : NULL, pj(p, home, "pico/ws/sessions"), "config ~ workspace expanded");
        ok(r && r->reason == ROOT_CONFIG, "config workspace: reason config");
        is_str(r ? r->detail : NULL, cfg, "config workspace: detail is the config path");
        is_str(r ? r->env_var : NULL, "PICOCLAW_HOME", "config workspace: env_var names what moved the config");
        ok(d.warning == NULL, "valid config: no warning");
        disc_free(&d);

        /* 5. "~" alone, and a relative workspace (relative to the PicoClaw home) */
        write_file(cfg, "{\"agents\":{\"defaults\":{\"workspace\":\"~\"}}}");
        disc_run(&f, &d);
        is_str(d.roots.n ? d.roots.v[0].path : NULL, pj(p, home, "sessions"), "workspace \"~\" is $HOME");
        disc_free(&d);
        write_file(cfg, "{\"agents\":{\"defaults\":{\"workspace\":\"./rel/../ws2\"}}}");
        disc_run(&f, &d);
        is_str(d.roots.n ? d.roots.v[0].path : NULL, pj(p, ph, "ws2/sessions"),
               "relative workspace resolves against the PicoClaw home, cleaned");
        disc_free(&d);
        write_file(cfg, "{\"agents\":{\"defaults\":{\"workspace\":\"   \"}}}");
        disc_run(&f, &d);
        is_str(d.roots.n ? d.roots.v[0].path : NULL, pj(p, ph, "workspace/sessions"),
               "blank workspace: <home>/workspace");
        disc_free(&d);

        /* 6. PICOCLAW_CONFIG elsewhere */
        char cfg2[PATH_MAX];
        pj(cfg2, tmp, "etc/pico.json");
        write_file(cfg2, "{\"agents\":{\"defaults\":{\"workspace\":\"rel/ws\"}}}");
        fenv_set(&f, "PICOCLAW_CONFIG", cfg2);
        disc_run(&f, &d);
        r = d.roots.n ? &d.roots.v[0] : NULL;
        is_str(r ? r->path : NULL, pj(p, ph, "rel/ws/sessions"), "PICOCLAW_CONFIG: its workspace");
        ok(r && r->reason == ROOT_CONFIG, "PICOCLAW_CONFIG: reason config");
        is_str(r ? r->detail : NULL, cfg2, "PICOCLAW_CONFIG: detail");
        is_str(r ? r->env_var : NULL, "PICOCLAW_CONFIG", "PICOCLAW_CONFIG: env_var");
        disc_free(&d);

        /* 7. PICOCLAW_AGENTS_DEFAULTS_WORKSPACE beats the config */
        char ews[PATH_MAX];
        pj(ews, tmp, "envws/main");
        fenv_set(&f, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", ews);
        disc_run(&f, &d);
        r = d.roots.n ? &d.roots.v[0] : NULL;
        is_str(r ? r->path : NULL, pj(p, ews, "sessions"), "workspace env beats config");
        ok(r && r->reason == ROOT_ENV, "workspace env: reason env");
        is_str(r ? r->env_var : NULL, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", "workspace env: env_var");
        disc_free(&d);

        /* 8. agents.list: explicit, default, main, empty id, named (missing dir),
         *    siblings found on disk, duplicates */
        char base[PATH_MAX];
        pj(base, tmp, "envws");
        mkdir_p(pj(p, base, "workspace-ops-team/sessions"));
        mkdir_p(pj(p, base, "workspace-old/sessions"));
        mkdir_p(pj(p, base, "workspace-nosess"));
        mkdir_p(pj(p, base, "workspace-/sessions"));
        mkdir_p(pj(p, base, "other/sessions"));
        snprintf(q, sizeof(q),
                 "{\"agents\":{\"defaults\":{\"workspace\":\"/ignored\"},\"list\":["
                 "{\"id\":\"main\"},{\"id\":\"\"},{\"id\":\"boss\",\"default\":true},"
                 "{\"id\":\"Ops Team\"},{\"id\":\"--Night__Shift!!\"},"
                 "{\"id\":\"res\",\"workspace\":\"~/research\"},"
                 "{\"id\":\"dup\",\"workspace\":\"%s\"},"
                 "{\"id\":\"main\",\"workspace\":\"%s/explicit-main\"},"
                 "7,{\"id\":5}]},\"model_list\":[]}",
                 ews, base);
        write_file(cfg2, q);
        disc_run(&f, &d);
        is_int(d.rc_discover, 0, "agents: discover ok");
        ok(d.warning == NULL, "agents: no warning");
        is_str(d.roots.n > 0 ? d.roots.v[0].path : NULL, pj(p, ews, "sessions"), "agents: default first");
        r = find_root(&d.roots, pj(p, home, "research/sessions"));
        ok(r && r->reason == ROOT_CONFIG && strcmp(r->label, "agent res") == 0 &&
           strcmp(r->detail, cfg2) == 0, "agents: explicit workspace (config, label, detail)");
        r = find_root(&d.roots, pj(p, base, "explicit-main/sessions"));
        ok(r && r->reason == ROOT_CONFIG, "agents: main with an explicit workspace");
        r = find_root(&d.roots, pj(p, base, "workspace-ops-team/sessions"));
        ok(r && r->reason == ROOT_CONFIG && strcmp(r->label, "agent ops-team") == 0,
           "agents: named agent -> workspace-<normalized id>");
        r = find_root(&d.roots, pj(p, base, "workspace-night__shift/sessions"));
        ok(r && r->reason == ROOT_CONFIG, "agents: named agent listed before its folder exists");
        is_str(r ? r->env_var : NULL, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE",
               "agents: named agent moved with the default workspace");
        r = find_root(&d.roots, pj(p, base, "workspace-old/sessions"));
        ok(r && r->reason == ROOT_ENV && strcmp(r->label, "agent old") == 0,
           "agents: existing sibling workspace-old found (reason of the default)");
        ok(!find_root(&d.roots, pj(p, base, "workspace-nosess/sessions")), "sibling without sessions/ skipped");
        ok(!find_root(&d.roots, pj(p, base, "workspace-/sessions")), "bare workspace- skipped");
        ok(!find_root(&d.roots, pj(p, base, "other/sessions")), "non-workspace sibling skipped");
        ok(!find_root(&d.roots, pj(p, base, "workspace-main/sessions")) &&
           !find_root(&d.roots, pj(p, base, "workspace-boss/sessions")) &&
           !find_root(&d.roots, pj(p, base, "workspace-5/sessions")),
           "default/main/empty-id agents use the default workspace");
        is_int(d.roots.n, 6, "agents: six distinct roots (duplicates merged)");
        bool uniq = true;
        for (size_t i = 0; i < d.roots.n; i++)
                for (size_t j = i + 1; j < d.roots.n; j++)
                        uniq = uniq && strcmp(d.roots.v[i].path, d.roots.v[j].path) != 0;
        ok(uniq, "no root listed twice");
        disc_free(&d);

        /* 9. broken configs: defaults and a warning, never a crash */
        static const struct {
                const char *text, *want;
        } bad[] = {
                { "{\"agents\": {\"defaults\": {\"workspace\": \"/x\"", "not valid JSON" },
                { "", "not valid JSON" },
                { "[1,2,3]", "not a JSON object" },
                { "{} trailing", "not valid JSON" },
                { "{\"model_list\": {\"a\": 1}, \"agents\": 3}", "model_list" },
        };
        memset(&f, 0, sizeof(f));
        fenv_set(&f, "HOME", home);
        fenv_set(&f, "PICOCLAW_HOME", ph);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                write_file(cfg, bad[i].text);
                disc_run(&f, &d);
                ok(d.rc_discover == 0 && d.roots.n == 1 &&
                   strcmp(d.roots.v[0].path, pj(p, ph, "workspace/sessions")) == 0,
                   "broken config %zu: default workspace", i);
                ok(d.rc_config == 0 && d.config && d.warning && strstr(d.warning, bad[i].want),
                   "broken config %zu: warning (%s)", i, d.warning ? d.warning : "none");
                disc_free(&d);
        }
        /* a directory where the config should be */
        unlink(cfg);
        mkdir_p(cfg);
        disc_run(&f, &d);
        ok(d.rc_config == 0 && d.warning && strstr(d.warning, "cannot be read"),
           "config is a directory: warning");
        ok(d.roots.n == 1, "config is a directory: default root");
        disc_free(&d);
        rmdir(cfg);
        /* unreadable (only meaningful when not root) */
        write_file(cfg, "{}");
        chmod(cfg, 0);
        if (geteuid() != 0) {
                disc_run(&f, &d);
                ok(d.warning && strstr(d.warning, "cannot be read"), "unreadable config: warning");
                disc_free(&d);
        } else {
                printf("ok %d # skip unreadable config: running as root\n", ++tap_n);
        }
        chmod(cfg, 0644);
        /* PICOCLAW_CONFIG naming a missing file */
        fenv_set(&f, "PICOCLAW_CONFIG", "/nonexistent/picoclaw.json");
        disc_run(&f, &d);
        ok(d.warning && strstr(d.warning, "not found"), "PICOCLAW_CONFIG missing: warning");
        is_int(d.roots.n, 1, "PICOCLAW_CONFIG missing: default root");
        disc_free(&d);

        /* 10. no HOME at all */
        memset(&f, 0, sizeof(f));
        disc_run(&f, &d);
        ok(d.rc_discover == 0 && d.roots.n == 0, "no HOME, no PICOCLAW_HOME: no roots, no error");
        ok(d.rc_config == 0 && d.config && d.warning == NULL, "no HOME: empty config, no warning");
        disc_free(&d);
        memset(&f, 0, sizeof(f));
        fenv_set(&f, "PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", ews);
        disc_run(&f, &d);
        ok(d.roots.n >= 1 && strcmp(d.roots.v[0].path, pj(p, ews, "sessions")) == 0,
           "no HOME: an absolute workspace env still works");
        disc_free(&d);
        /* relative PICOCLAW_HOME: relative to $HOME; relative HOME ignored */
        memset(&f, 0, sizeof(f));
        fenv_set(&f, "HOME", home);
        fenv_set(&f, "PICOCLAW_HOME", "pc-rel");
        disc_run(&f, &d);
        is_str(d.roots.n ? d.roots.v[0].path : NULL, pj(p, home, "pc-rel/workspace/sessions"),
               "relative PICOCLAW_HOME resolves against $HOME");
        disc_free(&d);
        memset(&f, 0, sizeof(f));
        fenv_set(&f, "HOME", "relative/home");
        disc_run(&f, &d);
        is_int(d.roots.n, 0, "relative HOME is not trusted");
        disc_free(&d);

        rm_rf(tmp);
        free(tmp);
}

/* ---- model map ------------------------------------------------------------ */


/* The model/provider a line with model_name alias gets under config. */
static void map_alias(const void *config, const char *alias, char *prov, char *model)
{
        struct src s;
        struct row_batch b = { 0 };
        char line[256];

        src_init(&s, "/nonexistent/ws/sessions/x.jsonl", config);
        snprintf(line, sizeof(line),
                 "{\"role\":\"assistant\",\"content\":\"x\",\"model_name\":\"%s\",\"created_at\":\"2026-01-01T00:00:00Z\"}",
                 alias);
        prov[0] = model[0] = 0;
        if (parse_str(&s, line, &b) == PARSE_OK && b.n == 1) {
                strcpy(prov, b.rows[0].provider);
                strcpy(model, b.rows[0].model);
                if (strcmp(b.rows[0].model_alias, alias) != 0)
                        strcpy(model, "(alias lost)");
        }
        row_batch_free(&b);
}

static void test_models(void)
{
        char *tmp = strdup(tap_tmpdir());
        void *cfg;
        char prov[ROW_PROVIDER_MAX], model[ROW_MODEL_MAX];

        load_cfg_text(tmp,
                      "{\"model_list\":["
                      "{\"model_name\":\"llama3\",\"model\":\"ollama/llama3.2\"},"
                      "{\"model_name\":\"fast\",\"provider\":\"Groq\",\"model\":\"llama-3.1-8b\"},"
                      "{\"model_name\":\"deep\",\"model\":\"openrouter/anthropic/claude-sonnet-4\"},"
                      "{\"model_name\":\"bare\",\"model\":\"gpt-4o-mini\"},"
                      "{\"model_name\":\"lb\",\"model\":\"openai/gpt-4o\"},"
                      "{\"model_name\":\"lb\",\"model\":\"openai/gpt-4o\"},"
                      "{\"model_name\":\"mix\",\"model\":\"openai/gpt-4o\"},"
                      "{\"model_name\":\"mix\",\"model\":\"anthropic/claude\"},"
                      "{\"model_name\":\"nomodel\"},"
                      "{\"model_name\":\" Spaced \",\"model\":\" OLLAMA/qwen3 \"},"
                      "42]}",
                      &cfg);
        ok(cfg != NULL, "model map loaded");
        map_alias(cfg, "llama3", prov, model);
        ok(!strcmp(prov, "ollama") && !strcmp(model, "llama3.2"), "alias -> provider/model (%s/%s)", prov, model);
        map_alias(cfg, "fast", prov, model);
        ok(!strcmp(prov, "groq") && !strcmp(model, "llama-3.1-8b"), "explicit provider wins (%s/%s)", prov, model);
        map_alias(cfg, "deep", prov, model);
        ok(!strcmp(prov, "openrouter") && !strcmp(model, "anthropic/claude-sonnet-4"),
           "split at the first '/' (%s/%s)", prov, model);
        map_alias(cfg, "bare", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "gpt-4o-mini"), "no '/': provider empty (%s/%s)", prov, model);
        map_alias(cfg, "lb", prov, model);
        ok(!strcmp(prov, "openai") && !strcmp(model, "gpt-4o"), "load-balanced entries that agree map");
        map_alias(cfg, "mix", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "mix"), "entries that disagree: alias only (%s/%s)", prov, model);
        map_alias(cfg, "nomodel", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "nomodel"), "entry without model: alias only");
        map_alias(cfg, "unknown", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "unknown"), "unmapped alias: model = alias");
        map_alias(cfg, " Spaced ", prov, model);
        ok(!strcmp(prov, "ollama") && !strcmp(model, "qwen3"),
           "alias matched exactly; provider lower-cased, blanks trimmed (%s/%s)", prov, model);
        map_alias(cfg, "Spaced", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "Spaced"), "alias match is exact (no trimming)");
        A->free_config(cfg);
        map_alias(NULL, "llama3", prov, model);
        ok(!strcmp(prov, "") && !strcmp(model, "llama3"), "no config: model = alias");
        A->free_config(NULL); /* NULL-safe: a crash here fails the test program */
        rm_rf(tmp);
        free(tmp);
}

int main(void)
{
        test_discovery();
        test_models();
        return tap_done();
}
