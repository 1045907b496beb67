/* The list of adapters, and the discovery variables built from their own
 * `env` lists (plus HOME): every variable any adapter may read, so install
 * can record them all. Adding a harness is one line below. */
#pragma once

#include "adapter.h"

/* Every adapter, one line each: X(name) names adapter_<name>, defined in
 * that adapter's own file. The order is the order of status and reports. */
#define REGISTRY_ADAPTERS(X) \
        X(pi)                \
        X(openclaw)          \
        X(picoclaw)          \
        X(claude)            \
        X(codex)             \
        X(gemini)            \
        X(qwen)              \
        X(opencode)          \
        X(kilo)              \
        X(cline)             \
        X(copilot)           \
        X(droid)             \
        X(letta)             \
        X(continue)          \
        X(hermes)            \
        X(crush)             \
        X(goose)             \
        X(amp)               \
        X(kimi)              \
        X(roo)

#define REGISTRY_COUNT_ONE_(name) +1
/* How many adapters there are: a constant, for arrays indexed by adapter. */
enum { REGISTRY_COUNT = 0 REGISTRY_ADAPTERS(REGISTRY_COUNT_ONE_) };

/* NULL-terminated list of all adapters (REGISTRY_COUNT of them). */
extern const struct adapter *const registry_adapters[REGISTRY_COUNT + 1];

/* The index of a in registry_adapters, or -1 when it is not listed there. */
int registry_index(const struct adapter *a);

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
