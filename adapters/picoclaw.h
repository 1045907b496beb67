/* PicoClaw internals shared by its two files: discovery and the config.json
 * model map (picoclaw-config.c), classification and parsing (picoclaw.c). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"
#include "row.h"

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

/* The adapter's discover, load_config and free_config (picoclaw-config.c). */
int picoclaw_discover(const struct discover_env *env, struct root_list *out);
int picoclaw_load_config(const struct discover_env *env, void **ret_config, const char **ret_warning);
void picoclaw_free_config(void *config);

/* The model_list entry for an alias; NULL when there is none, or several
 * that disagree (c may be NULL). */
const struct pc_model *pc_models_find(const struct picoclaw_config *c, const char *alias);

/* A whole file as one JSON value (see picoclaw-config.c). */
int pc_read_json(const char *path, size_t max, json_object **ret);
/* A member that is a string (*ret_len its length), else NULL; obj may be NULL. */
const char *pc_get_str(json_object *obj, const char *key, size_t *ret_len);
/* A member of the given type, else NULL; obj may be NULL. */
json_object *pc_get_type(json_object *obj, const char *key, json_type type);
