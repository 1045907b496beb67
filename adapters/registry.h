/* The list of adapters, and the discovery variables built from their own
 * `env` lists (plus HOME): every variable any adapter may read, so install
 * can record them all. Adding a harness is one line in registry.c. */
#pragma once

#include "adapter.h"

/* NULL-terminated list of all adapters. */
extern const struct adapter *const registry_adapters[];

/* NULL-terminated list of every discovery variable: HOME, then each
 * adapter's env list in registry order, each name once. */
const char *const *registry_env_vars(void);

/* The adapter id a variable belongs to (the first adapter that declares
 * it); NULL for HOME (every adapter) and for unknown names. */
const char *registry_env_owner(const char *name);

const struct adapter *registry_find(const char *id);
bool registry_env_known(const char *name);

/* Runs every adapter's discover into one list (sets root->adapter). Runs
 * them all; returns the first negative errno (the other adapters' roots
 * are still appended), else 0. */
int registry_discover(const struct discover_env *env, struct root_list *out);

/* A discover_env backed by the process environment; it answers only
 * declared variables. */
extern const struct discover_env registry_process_env;
