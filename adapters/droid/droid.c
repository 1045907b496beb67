/* Factory Droid: where its session snapshots are (~/.factory/sessions/
 * <cwd slug>/<id>.settings.json), which files count (never the .bak of
 * the previous snapshot, nor the transcripts, which hold no usage), the
 * customModels map of ~/.factory/settings.json, and its status figures. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "adapter.h"
#include "droid/snapshot.h"
#include "ledger/ledger.h"

#define SETTINGS_MAX (4u << 20)

extern const struct adapter adapter_droid; /* defined at the end of this file */

static int factory_dir(const struct discover_env *env, char *buf, size_t cap)
{
        const char *home = discover_env_get(env, "HOME");

        if (!home || home[0] != '/' || snprintf(buf, cap, "%s/.factory", home) >= (int)cap)
                return -ENOENT;
        return 0;
}

/* Droid reads no variable that moves ~/.factory (its own are feature
 * switches: FACTORY_AIRGAP_ENABLED, ...); DROID_SESSIONS_DIR is a peer
 * tool's convention, not Droid's, so it is not followed. */
static int droid_discover(const struct discover_env *env, struct root_list *out)
{
        char dir[PATH_MAX], path[PATH_MAX];
        int r;

        if (factory_dir(env, dir, sizeof(dir)) < 0 ||
            snprintf(path, sizeof(path), "%s/sessions", dir) >= (int)sizeof(path))
                return 0;
        /* <root>/<slug>/<id>.settings.json (and <root>/<id>.settings.json) */
        r = adapt_add_root(out, &adapter_droid, path, "sessions", ROOT_DEFAULT, NULL, NULL, 1);
        return r < 0 ? r : 0;
}

static enum classify_result droid_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        static const char sfx[] = ".settings.json";
        size_t n = strlen(name);

        (void)relpath;
        if (is_dir)
                return depth == 0 || (depth == 1 && name[0] != '.') ? CLASS_DESCEND : CLASS_IGNORE;
        /* <id>.settings.json only: .bak (the previous snapshot), the
         * transcript <id>.jsonl and temp files of the replace are not ours */
        if ((depth == 1 || depth == 2) && name[0] != '.' && n > sizeof(sfx) - 1 &&
            strcmp(name + n - (sizeof(sfx) - 1), sfx) == 0)
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

/* ---- ~/.factory/settings.json customModels -------------------------------------------- */

/* "Fake GPT" -> "Fake-GPT": each run of blanks as one '-', as Droid names
 * the model (custom:Fake-GPT-0); cut to cap - 1 bytes. */
static void slug_of(char *dst, size_t cap, const char *s, size_t n)
{
        size_t o = 0;

        for (size_t i = 0; i < n && o + 1 < cap; i++) {
                bool blank = s[i] == ' ' || s[i] == '\t';
                if (blank && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
                        continue;
                dst[o++] = blank ? '-' : s[i];
        }
        dst[o] = 0;
}

static int droid_load_config(const struct discover_env *env, void **ret_config, const char **ret_warning)
{
        struct droid_config *c;
        json_object *root = NULL, *models;
        char dir[PATH_MAX], path[PATH_MAX];
        size_t n;
        int r;

        *ret_config = NULL;
        if (factory_dir(env, dir, sizeof(dir)) < 0 ||
            snprintf(path, sizeof(path), "%s/settings.json", dir) >= (int)sizeof(path))
                return 0;
        r = adapt_read_json(path, SETTINGS_MAX, &root);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (r != -ENOENT)
                        *ret_warning = "~/.factory/settings.json is unreadable or not JSON: custom models stay unpriced";
                return 0;
        }
        models = adapt_get_type(root, "customModels", json_type_array);
        n = models ? json_object_array_length(models) : 0;
        if (n > DROID_MODELS_MAX)
                n = DROID_MODELS_MAX;
        c = calloc(1, sizeof(*c) + n * sizeof(c->v[0]));
        if (!c) {
                json_object_put(root);
                return -ENOMEM;
        }
        c->n = n;
        for (size_t i = 0; i < n; i++) {
                json_object *m = json_object_array_get_idx(models, i);
                size_t k;
                const char *s = adapt_get_str(m, "model", &k);

                /* an entry without a model keeps its index, priced as nothing */
                if (s)
                        row_set_str(c->v[i].model, sizeof(c->v[i].model), s, k);
                if ((s = adapt_get_str(m, "provider", &k)))
                        row_set_str(c->v[i].provider, sizeof(c->v[i].provider), s, k);
                if ((s = adapt_get_str(m, "displayName", &k)))
                        slug_of(c->v[i].slug, sizeof(c->v[i].slug), s, k);
        }
        json_object_put(root);
        *ret_config = c;
        return 0;
}

static void droid_free_config(void *config)
{
        free(config);
}

/* ---- status ----------------------------------------------------------------------------- */

/* The rollbacks seen over all sessions (a snapshot whose totals went down:
 * an older one written back, adding nothing). */
static struct json_object *droid_status(const struct adapter_status_ctx *ctx)
{
        struct adapter_source_view v;
        uint64_t rollbacks = 0, sessions = 0;
        json_object *res = json_object_new_object(), *notes;
        char buf[256];

        if (!res)
                return NULL;
        while (ctx->next(ctx->it, &v)) {
                struct parse_state ps;
                uint32_t k;

                if (v.cp && v.cp->state_len && parse_state_decode(v.cp->state, v.cp->state_len, &ps) == 0 &&
                    droid_rollbacks(&ps, &k) == 0) {
                        sessions++;
                        rollbacks += k;
                }
        }
        json_object_object_add(res, "snapshot_sessions", json_object_new_int64((int64_t)sessions));
        json_object_object_add(res, "snapshot_rollbacks", json_object_new_int64((int64_t)rollbacks));
        notes = json_object_new_array();
        snprintf(buf, sizeof(buf),
                 "%llu sessions with usage; rows are snapshot steps, not calls; %llu rollbacks (a session's "
                 "total went down: an older snapshot written back, counting only what rises above the highest)",
                 (unsigned long long)sessions, (unsigned long long)rollbacks);
        json_object_array_add(notes, json_object_new_string(buf));
        json_object_object_add(res, "notes", notes);
        return res;
}

const struct adapter adapter_droid = {
        .id = "droid",
        .display_name = "Factory Droid",
        .caps = {
                .tokens = CAP_TOKENS_EXACT,      /* the session totals are exact; calls are not told apart */
                .cost = CAP_COST_COMPUTED,       /* no dollars on disk (factoryCredits are not) */
                .activity = CAP_ACTIVITY_NONE,   /* a snapshot names no tool calls */
                .reasoning = CAP_REASONING_SUBSET, /* thinkingTokens (estimated on the Anthropic wire) */
                .events = CAP_EVENTS_SNAPSHOT_STEPS,
        },
        .env = NULL,
        .discover = droid_discover,
        .load_config = droid_load_config,
        .free_config = droid_free_config,
        .classify = droid_classify,
        .parse_document = droid_parse_document,
        .status_extra = droid_status,
};
