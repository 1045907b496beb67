/* The list of adapters and the discovery-environment table: the one place
 * that knows every variable an adapter may read, so install can record them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* Add an adapter here (one line each). */
const struct adapter *const registry_adapters[] = {
        &adapter_pi,
        &adapter_openclaw,
        &adapter_picoclaw,
        &adapter_codex,
        NULL,
};

/* Every discovery variable with the adapter that reads it (NULL: all).
 * PI_CODING_AGENT_DIR is pi's; OpenClaw 2026.7 also falls back to it for
 * its agent dir (auth/models only, not sessions). */
#define REGISTRY_ENV_TABLE(X)                                   \
        X("HOME", NULL)                                         \
        X("PI_CODING_AGENT_DIR", "pi")                          \
        X("PI_CODING_AGENT_SESSION_DIR", "pi")                  \
        X("OPENCLAW_STATE_DIR", "openclaw")                     \
        X("OPENCLAW_HOME", "openclaw")                          \
        X("OPENCLAW_PROFILE", "openclaw")                       \
        X("OPENCLAW_CONFIG_PATH", "openclaw")                   \
        X("OPENCLAW_AGENT_DIR", "openclaw")                     \
        X("PICOCLAW_HOME", "picoclaw")                          \
        X("PICOCLAW_CONFIG", "picoclaw")                        \
        X("PICOCLAW_AGENTS_DEFAULTS_WORKSPACE", "picoclaw")     \
        X("CODEX_HOME", "codex")

#define ENV_NAME(name, owner) name,
#define ENV_ENTRY(name, owner) { name, owner },

const char *const registry_env_vars[] = {
        REGISTRY_ENV_TABLE(ENV_NAME)
        NULL,
};

const struct registry_env_var registry_env_table[] = {
        REGISTRY_ENV_TABLE(ENV_ENTRY)
        { NULL, NULL },
};

const struct adapter *registry_find(const char *id)
{
        if (!id)
                return NULL;
        for (size_t i = 0; registry_adapters[i]; i++)
                if (strcmp(registry_adapters[i]->id, id) == 0)
                        return registry_adapters[i];
        return NULL;
}

bool registry_env_known(const char *name)
{
        if (!name)
                return false;
        for (size_t i = 0; registry_env_vars[i]; i++)
                if (strcmp(registry_env_vars[i], name) == 0)
                        return true;
        return false;
}

const char *registry_env_owner(const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; registry_env_table[i].name; i++)
                if (strcmp(registry_env_table[i].name, name) == 0)
                        return registry_env_table[i].adapter_id;
        return NULL;
}

int registry_discover(const struct discover_env *env, struct root_list *out)
{
        int first_err = 0;

        for (size_t i = 0; registry_adapters[i]; i++) {
                const struct adapter *a = registry_adapters[i];
                size_t before = out->n;
                int r;

                if (!a->discover)
                        continue;
                r = a->discover(env, out);
                if (r < 0 && first_err == 0)
                        first_err = r;
                for (size_t j = before; j < out->n; j++)
                        if (!out->v[j].adapter)
                                out->v[j].adapter = a;
        }
        return first_err;
}

/* The one getenv in adapters/: only for names in the table. */
static const char *process_env_get(void *userdata, const char *name)
{
        const char *v;

        (void)userdata;
        if (!registry_env_known(name))
                return NULL;
        v = getenv(name);
        return v && *v ? v : NULL;
}

const struct discover_env registry_process_env = {
        .get = process_env_get,
        .userdata = NULL,
};
