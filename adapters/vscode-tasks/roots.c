/* Where the extensions keep their tasks on Linux: the global storage of
 * every VS Code-family editor data dir, desktop and Remote-SSH server
 * alike. A missing directory is still listed: the daemon watches for it,
 * so an editor or server installed later is picked up. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "vscode-tasks/tasks.h"

/* The editor data dirs, relative to HOME, and the label status shows. */
static const struct {
        const char *rel, *label;
} editor_dirs[] = {
        { ".config/Code", "Code" },
        { ".config/Code - Insiders", "Code - Insiders" },
        { ".config/VSCodium", "VSCodium" },
        { ".config/Cursor", "Cursor" },
        { ".config/Windsurf", "Windsurf" },
        { ".vscode-server/data", "vscode-server" },
        { ".vscode-server-insiders/data", "vscode-server-insiders" },
        { ".cursor-server/data", "cursor-server" },
        { ".windsurf-server/data", "windsurf-server" },
        { ".local/share/code-server", "code-server" },
        /* Flatpak: ~/.var/app/<app id>/config/<Editor> */
        { ".var/app/com.visualstudio.code/config/Code", "Code (Flatpak)" },
        { ".var/app/com.vscodium.codium/config/VSCodium", "VSCodium (Flatpak)" },
};

static int add_roots(const struct discover_env *env, const struct adapter *adapter, const char *extension,
                     const char *tail, uint8_t max_depth, struct root_list *out)
{
        const char *home = discover_env_get(env, "HOME");
        char path[PATH_MAX];
        int w;

        if (!home || home[0] != '/')
                return 0;
        if (strcmp(home, "/") == 0)
                home = "";
        for (size_t i = 0; i < sizeof(editor_dirs) / sizeof(editor_dirs[0]); i++) {
                w = snprintf(path, sizeof(path), "%s/%s/User/globalStorage/%s%s", home, editor_dirs[i].rel,
                             extension, tail);
                if (w < 0 || (size_t)w >= sizeof(path))
                        continue;
                w = adapt_add_root(out, adapter, path, editor_dirs[i].label, ROOT_DEFAULT, NULL, NULL,
                                   max_depth);
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
