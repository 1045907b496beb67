/* The list of adapters and the discovery-environment table: every variable
 * any adapter may read, so install can record them all. */
#pragma once

#include "adapter.h"

extern const struct adapter adapter_pi;
extern const struct adapter adapter_openclaw;
extern const struct adapter adapter_picoclaw;
extern const struct adapter adapter_codex;

/* NULL-terminated list of all adapters. */
extern const struct adapter *const registry_adapters[];

/* NULL-terminated list of every discovery variable (union of all adapters'
 * env lists plus HOME). */
extern const char *const registry_env_vars[];

/* The same table with the adapter id each variable belongs to (NULL: every
 * adapter, e.g. HOME); ends with { NULL, NULL }. */
struct registry_env_var {
        const char *name;
        const char *adapter_id;
};
extern const struct registry_env_var registry_env_table[];
/* The adapter id a variable belongs to; NULL for shared or unknown names. */
const char *registry_env_owner(const char *name);

const struct adapter *registry_find(const char *id);
bool registry_env_known(const char *name);

/* Runs every adapter's discover into one list (sets root->adapter). Runs
 * them all; returns the first negative errno (the other adapters' roots
 * are still appended), else 0. */
int registry_discover(const struct discover_env *env, struct root_list *out);

/* A discover_env backed by the process environment. */
extern const struct discover_env registry_process_env;
