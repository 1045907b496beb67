/* What the PicoClaw unit tests share: a temp tree removed, the adapter's
 * discovery and config run over a table environment. */
#pragma once

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "testutil.h"

extern const struct adapter adapter_picoclaw;


static inline void rm_rf(const char *path)
{
        char cmd[PATH_MAX + 32];
        if (strncmp(path, "/tmp/", 5) != 0 && !getenv("TMPDIR"))
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", path);
}

struct disc {
        struct root_list roots;
        void *config;
        const char *warning;
        int rc_discover, rc_config;
};

static inline void disc_run(struct fenv *f, struct disc *d)
{
        struct discover_env env = fenv_env(f);
        memset(d, 0, sizeof(*d));
        d->rc_discover = adapter_picoclaw.discover(&env, &d->roots);
        d->warning = "(unset)";
        d->rc_config = adapter_picoclaw.load_config(&env, &d->config, &d->warning);
}

static inline void disc_free(struct disc *d)
{
        root_list_free(&d->roots);
        adapter_picoclaw.free_config(d->config);
}

static inline void load_cfg_text(const char *tmp, const char *text, void **ret)
{
        char cfg[PATH_MAX];
        struct fenv f;
        struct discover_env env;
        const char *w = NULL;

        memset(&f, 0, sizeof(f));
        pj(cfg, tmp, "config.json");
        write_file(cfg, text);
        fenv_set(&f, "PICOCLAW_CONFIG", cfg);
        env = fenv_env(&f);
        *ret = NULL;
        if (adapter_picoclaw.load_config(&env, ret, &w) != 0)
                *ret = NULL;
}

/* Parses one line as the daemon would, with a source_ctx for path. */
struct src {
        struct source_ctx ctx;
        struct parse_state ps;
        char path[PATH_MAX], root[PATH_MAX];
};

static inline void src_init(struct src *s, const char *path, const void *config)
{
        memset(s, 0, sizeof(*s));
        snprintf(s->path, sizeof(s->path), "%s", path);
        snprintf(s->root, sizeof(s->root), "%s", path);
        dirname(s->root);
        s->ctx.adapter = &adapter_picoclaw;
        s->ctx.path = s->path;
        s->ctx.root_path = s->root;
        stat(path, &s->ctx.st); /* may not exist: st stays zero */
        s->ctx.config = config;
        s->ctx.source_hash = hash64(path, strlen(path));
}

static inline int parse_str(struct src *s, const char *line, struct row_batch *b)
{
        return adapter_picoclaw.parse_line(&s->ctx, &s->ps, line, strlen(line), b);
}
