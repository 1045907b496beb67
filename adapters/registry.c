/* The list of adapters, and the discovery-variable table built from their
 * own env lists, so install can record every variable that moves a root. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define DECLARE_ADAPTER(name) extern const struct adapter adapter_##name;
#define LIST_ADAPTER(name) &adapter_##name,

REGISTRY_ADAPTERS(DECLARE_ADAPTER)

const struct adapter *const registry_adapters[REGISTRY_COUNT + 1] = {
        REGISTRY_ADAPTERS(LIST_ADAPTER)
        NULL,
};

int registry_index(const struct adapter *a)
{
        for (int i = 0; i < REGISTRY_COUNT; i++)
                if (registry_adapters[i] == a)
                        return i;
        return -1;
}

/* HOME, then every adapter's own list, first declaration wins. Built once:
 * the lists are constant. */
#define REGISTRY_ENV_MAX 128

static const char *env_names[REGISTRY_ENV_MAX + 1];
static const char *env_owners[REGISTRY_ENV_MAX + 1];

static void env_table_build(void)
{
        size_t n = 0;

        if (env_names[0])
                return;
        env_names[n] = "HOME";
        env_owners[n++] = NULL;
        for (size_t i = 0; registry_adapters[i]; i++) {
                const char *const *env = registry_adapters[i]->env;
                for (size_t j = 0; env && env[j] && n < REGISTRY_ENV_MAX; j++) {
                        bool seen = false;
                        for (size_t k = 0; k < n && !seen; k++)
                                seen = strcmp(env_names[k], env[j]) == 0;
                        if (seen)
                                continue;
                        env_names[n] = env[j];
                        env_owners[n++] = registry_adapters[i]->id;
                }
        }
        env_names[n] = NULL;
}

const char *const *registry_env_vars(void)
{
        env_table_build();
        return env_names;
}

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
        env_table_build();
        for (size_t i = 0; env_names[i]; i++)
                if (strcmp(env_names[i], name) == 0)
                        return true;
        return false;
}

const char *registry_env_owner(const char *name)
{
        if (!name)
                return NULL;
        env_table_build();
        for (size_t i = 0; env_names[i]; i++)
                if (strcmp(env_names[i], name) == 0)
                        return env_owners[i];
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
