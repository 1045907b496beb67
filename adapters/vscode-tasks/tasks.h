/* The VS Code extensions Cline (saoudrizwan.claude-dev), Roo Code
 * (rooveterinaryinc.roo-cline) and Kilo Code (kilocode.kilo-code), and the
 * Cline CLI 2.x that embeds the same core: one task per directory,
 * <tasks>/<taskId>/ui_messages.json, a JSON array the extension rewrites
 * whole (tmp file + rename) 20-40 times per model call. Where the tasks
 * directories are (roots.c) and how the array becomes rows (ui-messages.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "adapter.h"

/* Every key of a task row begins with this format tag: (harness id, task
 * id, row ts). */
#define VT_KEY_FORMAT "vscode-task-row-v1"
/* The document's name in its task directory. */
#define VT_DOC_NAME "ui_messages.json"
/* The task's metadata beside it (the provider of rows without modelInfo). */
#define VT_META_NAME "task_metadata.json"
#define VT_META_MAX (8u << 20)

/* A settings.json read for a storage setting: at most this many bytes. */
#define VT_SETTINGS_MAX (1u << 20)

/* The custom storage path setting (e.g. "roo-cline.customStoragePath") of
 * the settings.json at path (JSONC: comments, trailing commas): 0 and the
 * absolute path in buf; -ENOENT when the file or the setting is missing,
 * null or "" (the extension then uses its global storage); -EINVAL when
 * the file cannot be read, is not a JSON object, or the value is not an
 * absolute path, with why it was not followed in why ("is not a JSON
 * object (...)"); -ENOMEM. */
int vt_read_storage_setting(const char *settings, const char *setting, char *buf, size_t cap, char *why,
                            size_t why_cap);

/* Appends <dir>/User/globalStorage/<extension>/tasks for every editor data
 * dir Linux has (desktop editors' config dirs, the Remote-SSH servers,
 * code-server) under HOME, each labelled with its editor and flagged
 * ROOT_F_ORIGIN; and, where the editor's settings.json (on a server also
 * Machine/settings.json, which wins) sets the extension's custom storage
 * path, <path>/tasks (ROOT_CONFIG, detail "<settings.json> <setting>").
 * The settings files are listed in out->files, a settings file that cannot
 * be used is a note in out->notes. 0 or -ENOMEM. */
int vt_add_editor_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                        struct root_list *out);

/* The same, one level up: roots at <dir>/User/globalStorage/<extension>
 * (max depth 2), for an adapter whose classify serves another layout too
 * and tells the tasks apart by their first component (vt_classify_tasks_below). */
int vt_add_extension_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                           struct root_list *out);

/* classify below an extension root: tasks/, tasks/<taskId>/ and
 * tasks/<taskId>/ui_messages.json; anything else CLASS_IGNORE. */
enum classify_result vt_classify_tasks_below(const char *relpath, const char *name, int depth, bool is_dir);

/* classify for a tasks root: <taskId>/ directories and their
 * ui_messages.json (never its *.tmp.* siblings). */
enum classify_result vt_classify(const char *relpath, const char *name, int depth, bool is_dir);

/* Whether path names a task's ui_messages.json. */
bool vt_is_doc(const char *path);

/* adapter.parse_document for <taskId>/ui_messages.json: one row per
 * say:"api_req_started" row with usage (not cancelled) and per
 * say:"deleted_api_reqs" row, keyed (harness, task, ts) and flagged
 * ROW_F_UPSERT (a row rewritten with its final usage raises the one read
 * before). The harness id is ctx->adapter's. */
int vt_parse_document(const struct source_ctx *ctx, struct parse_state *ps, const char *doc, size_t len,
                      size_t *io_known, struct row_batch *out);
