/* PicoClaw internals shared by its two files: discovery and the config.json
 * model map (picoclaw/config.c), classification and parsing (picoclaw.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"
#include "row.h"

/* The adapter itself (picoclaw.c); the registry lists it. */
extern const struct adapter adapter_picoclaw;

struct pc_model {
        char alias[ROW_MODEL_MAX];
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        bool conflict; /* several entries share the alias and disagree */
};

/* What parse_line needs from config.json (source_ctx.config). */
struct picoclaw_config {
        size_t n;
        struct pc_model *v;
};

/* The adapter's discover, load_config and free_config (picoclaw/config.c). */
int picoclaw_discover(const struct discover_env *env, struct root_list *out);
int picoclaw_load_config(const struct discover_env *env, void **ret_config, const char **ret_warning);
void picoclaw_free_config(void *config);

/* The model_list entry for an alias; NULL when there is none, or several
 * that disagree (c may be NULL). */
const struct pc_model *pc_models_find(const struct picoclaw_config *c, const char *alias);

