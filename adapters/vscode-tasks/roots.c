/* Where the extensions keep their tasks on Linux: the global storage of
 * every VS Code-family editor data dir, desktop and Remote-SSH server
 * alike, or where the extension's own custom storage path setting in that
 * editor's settings.json moves them. A missing directory is still listed:
 * the daemon watches for it, so an editor or server installed later is
 * picked up; the settings files are listed as files discovery read, so an
 * edited setting moves the root while the daemon runs. Each root is
 * labelled with its editor and flagged ROOT_F_ORIGIN: the editor is the
 * origin of its tasks' sessions in reports. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "vscode-tasks/tasks.h"

/* The editor data dirs, relative to HOME, and the label status and the
 * session report show. A server (Remote-SSH and the like) also has the
 * remote machine's own settings, Machine/settings.json, over User/. */
static const struct {
        const char *rel, *label;
        bool server;
} editor_dirs[] = {
        { ".config/Code", "Code", false },
        { ".config/Code - Insiders", "Code - Insiders", false },
        { ".config/VSCodium", "VSCodium", false },
        { ".config/Cursor", "Cursor", false },
        { ".config/Windsurf", "Windsurf", false },
        { ".vscode-server/data", "vscode-server", true },
        { ".vscode-server-insiders/data", "vscode-server-insiders", true },
        { ".cursor-server/data", "cursor-server", true },
        { ".windsurf-server/data", "windsurf-server", true },
        { ".local/share/code-server", "code-server", true },
        /* Flatpak: ~/.var/app/<app id>/config/<Editor> */
        { ".var/app/com.visualstudio.code/config/Code", "Code (Flatpak)", false },
        { ".var/app/com.vscodium.codium/config/VSCodium", "VSCodium (Flatpak)", false },
};

/* The extensions' "custom storage path" settings (their package.json
 * contributes.configuration): Roo Code's and Kilo Code's storage.ts put
 * tasks/<taskId>/ under it instead of the global storage. Cline's
 * extension has no such setting. */
static const struct {
        const char *extension, *setting;
} storage_settings[] = {
        { "rooveterinaryinc.roo-cline", "roo-cline.customStoragePath" },
        { "kilocode.kilo-code", "kilo-code.customStoragePath" },
};

static const char *storage_setting(const char *extension)
{
        for (size_t i = 0; i < sizeof(storage_settings) / sizeof(storage_settings[0]); i++)
                if (strcmp(storage_settings[i].extension, extension) == 0)
                        return storage_settings[i].setting;
        return NULL;
}

static int add_root(struct root_list *out, const struct adapter *adapter, const char *path, const char *label,
                    uint8_t reason, const char *detail, uint8_t max_depth)
{
        int r = adapt_add_root(out, adapter, path, label, reason, NULL, detail, max_depth);

        if (r > 0)
                out->v[out->n - 1].flags |= ROOT_F_ORIGIN;
        return r < 0 ? r : 0;
}

int vt_read_storage_setting(const char *settings, const char *setting, char *buf, size_t cap, char *why,
                            size_t why_cap)
{
        enum json_tokener_error jerr = json_tokener_success;
        struct json_object *root, *v;
        char *text = NULL;
        size_t len;
        int r = adapt_read_file(settings, VT_SETTINGS_MAX, &text, &len);

        if (r == -ENOENT || r == -ENOTDIR)
                return -ENOENT;
        if (r < 0) {
                snprintf(why, why_cap, "cannot be read (%s)", r == -EFBIG ? "over 1 MiB" : strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        /* JSONC: json-c takes // and block comments and trailing commas */
        bool has_nul = strlen(text) != len;
        root = has_nul ? NULL : json_tokener_parse_verbose(text, &jerr);
        free(text);
        if (!root || !json_object_is_type(root, json_type_object)) {
                snprintf(why, why_cap, "is not a JSON object (%s)",
                         has_nul ? "a NUL byte" : root ? "another value" : json_tokener_error_desc(jerr));
                json_object_put(root);
                return -EINVAL;
        }
        if (!json_object_object_get_ex(root, setting, &v) || json_object_is_type(v, json_type_null)) {
                json_object_put(root);
                return -ENOENT;
        }
        if (!json_object_is_type(v, json_type_string)) {
                snprintf(why, why_cap, "has %s set to a %s, not a path", setting,
                         json_type_to_name(json_object_get_type(v)));
                json_object_put(root);
                return -EINVAL;
        }
        const char *s = json_object_get_string(v);
        if (!*s) { /* "" is the extension's default: the global storage */
                json_object_put(root);
                return -ENOENT;
        }
        /* the extension takes the value as it is (mkdir, no ~); its prompt
         * only accepts an absolute path */
        r = adapt_resolve_path(s, NULL, NULL, buf, cap);
        if (r < 0)
                snprintf(why, why_cap, "has %s set to %s", setting,
                         r == -ENAMETOOLONG ? "a path too long" : "a path that is not absolute: not followed");
        json_object_put(root);
        return r < 0 ? -EINVAL : 0;
}

/* The setting's root for one editor, when its settings.json sets it (the
 * remote machine's settings over the user's on a server); a settings file
 * that cannot be used becomes a note. */
static int add_setting_root(struct root_list *out, const struct adapter *adapter, const char *editor_dir,
                            size_t i, const char *setting, const char *tail, uint8_t max_depth)
{
        static const char *const scopes[] = { "Machine", "User" };
        char settings[PATH_MAX], value[PATH_MAX], path[PATH_MAX], why[384], detail[256];
        int r, w;

        for (size_t k = editor_dirs[i].server ? 0 : 1; k < 2; k++) {
                w = snprintf(settings, sizeof(settings), "%s/%s/settings.json", editor_dir, scopes[k]);
                if (w < 0 || (size_t)w >= sizeof(settings))
                        continue;
                r = root_list_add_file(out, settings);
                if (r < 0)
                        return r;
                why[0] = 0;
                r = vt_read_storage_setting(settings, setting, value, sizeof(value), why, sizeof(why));
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        r = root_list_note(out, adapter, "%s: %s %s; its tasks are looked for in the global "
                                           "storage only", editor_dirs[i].label, settings, why);
                        if (r < 0)
                                return r;
                        continue;
                }
                w = snprintf(path, sizeof(path), "%s%s", strcmp(value, "/") ? value : "", tail);
                if (w < 0 || (size_t)w >= sizeof(path))
                        continue;
                w = snprintf(detail, sizeof(detail), "%.*s %s", (int)(sizeof(detail) - 48), settings, setting);
                (void)w;
                return add_root(out, adapter, path, editor_dirs[i].label, ROOT_CONFIG, detail, max_depth);
        }
        return 0;
}

static int add_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                     const char *tail, uint8_t max_depth, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        const char *setting = storage_setting(extension);
        char dir[PATH_MAX], path[PATH_MAX];
        int w;

        if (!home || home[0] != '/')
                return 0;
        if (strcmp(home, "/") == 0)
                home = "";
        for (size_t i = 0; i < sizeof(editor_dirs) / sizeof(editor_dirs[0]); i++) {
                w = snprintf(dir, sizeof(dir), "%s/%s", home, editor_dirs[i].rel);
                if (w < 0 || (size_t)w >= sizeof(dir))
                        continue;
                w = snprintf(path, sizeof(path), "%s/User/globalStorage/%s%s", dir, extension, tail);
                if (w < 0 || (size_t)w >= sizeof(path))
                        continue;
                /* the global storage stays a root when the setting moves the
                 * tasks: those written before the move stay there */
                w = add_root(out, adapter, path, editor_dirs[i].label, ROOT_DEFAULT, NULL, max_depth);
                if (w == 0 && setting)
                        w = add_setting_root(out, adapter, dir, i, setting, tail, max_depth);
                if (w < 0)
                        return w;
        }
        return 0;
}

int vt_add_editor_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                        struct root_list *out)
{
        return add_roots(env, adapter, extension, "/tasks", 1, out);
}

int vt_add_extension_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                           struct root_list *out)
{
        return add_roots(env, adapter, extension, "", 2, out);
}

enum classify_result vt_classify_tasks_below(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (!adapt_component_is(relpath, 0, "tasks"))
                return CLASS_IGNORE;
        if (is_dir)
                return depth <= 2 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 3 && strcmp(name, VT_DOC_NAME) == 0)
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

enum classify_result vt_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        (void)relpath;
        if (is_dir)
                return depth <= 1 ? CLASS_DESCEND : CLASS_IGNORE;
        if (depth == 2 && strcmp(name, VT_DOC_NAME) == 0)
                return CLASS_DOCUMENT; /* not ui_messages.json.tmp.<ms>.<rand>.json */
        return CLASS_IGNORE;
}

bool vt_is_doc(const char *path)
{
        const char *slash = strrchr(path, '/');

        return strcmp(slash ? slash + 1 : path, VT_DOC_NAME) == 0;
}
