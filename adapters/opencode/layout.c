/* Where OpenCode and Kilo keep their data, and which files there are
 * sources. The data directory is ${XDG_DATA_HOME:-~/.local/share}/<name>
 * (OpenCode's xdg-basedir data path): its databases <name>.db and
 * <name>-<channel>.db (a release channel other than latest; Kilo's own dev
 * channels fall back to an older opencode-<channel>.db there), and, before
 * the database (OpenCode up to 1.1), storage/message/<session>/<msg>.json.
 * $OPENCODE_DB / $KILO_DB names the database instead: an absolute path as
 * it is, a relative one inside the data directory, ":memory:" nothing on
 * disk. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "adapt-util.h"
#include "opencode/opencode.h"

#define DATA_DEPTH 3 /* storage/message/<session>/ */

const struct ocode_flavor ocode_flavor_opencode = {
        .tool = "opencode",
        .data_name = "opencode",
        .fork_cost_zero = false,
};

const struct ocode_flavor ocode_flavor_kilo = {
        .tool = "kilo",
        .data_name = "kilo",
        .legacy_stem = "opencode",
        .fork_cost_zero = true,
};

int ocode_add_roots(const struct adapter *a, const struct ocode_flavor *fl, const char *home,
                    const char *xdg_data, const char *db_env_name, const char *db_env, struct root_list *out)
{
        char data[PATH_MAX], db[PATH_MAX], dir[PATH_MAX];
        bool from_xdg = xdg_data && xdg_data[0] == '/'; /* XDG: a relative value is ignored */
        int r, n;

        if (from_xdg)
                n = snprintf(data, sizeof(data), "%s/%s", xdg_data, fl->data_name);
        else if (home && home[0] == '/')
                n = snprintf(data, sizeof(data), "%s/.local/share/%s", home, fl->data_name);
        else
                return 0;
        if (n < 0 || (size_t)n >= sizeof(data))
                return 0;
        adapt_path_clean(data);
        r = adapt_add_root(out, a, data, "data", from_xdg ? ROOT_ENV : ROOT_DEFAULT,
                           from_xdg ? "XDG_DATA_HOME" : NULL, NULL, DATA_DEPTH);
        if (r < 0)
                return r;
        if (!db_env || !db_env[0] || strcmp(db_env, ":memory:") == 0)
                return 0;
        /* as OpenCode resolves it: absolute, or joined to the data directory */
        n = db_env[0] == '/' ? snprintf(db, sizeof(db), "%s", db_env) : snprintf(db, sizeof(db), "%s/%s", data, db_env);
        if (n < 0 || (size_t)n >= sizeof(db))
                return 0;
        adapt_path_clean(db);
        adapt_path_dirname(db, dir, sizeof(dir));
        if (strcmp(dir, data) == 0)
                return 0; /* the data directory's own */
        r = adapt_add_root(out, a, dir, "database", ROOT_ENV, db_env_name, db, 0);
        return r < 0 ? r : 0;
}

enum classify_result ocode_classify(const char *relpath, const char *name, int depth, bool is_dir)
{
        if (name[0] == '.' && depth > 0)
                return CLASS_IGNORE;
        if (is_dir) {
                if (depth == 0)
                        return CLASS_DESCEND;
                if (depth == 1 && strcmp(name, "storage") == 0)
                        return CLASS_DESCEND;
                if (depth == 2 && adapt_component_is(relpath, 0, "storage") && strcmp(name, "message") == 0)
                        return CLASS_DESCEND;
                if (depth == 3 && adapt_component_is(relpath, 0, "storage") && adapt_component_is(relpath, 1, "message"))
                        return CLASS_DESCEND;
                return CLASS_IGNORE;
        }
        /* the database; never its -wal/-shm/-journal */
        if (depth == 1 && adapt_ends_with(name, ".db"))
                return CLASS_TABLE;
        /* storage/message/<session>/<message>.json, rewritten in place */
        if (depth == 4 && adapt_component_is(relpath, 0, "storage") && adapt_component_is(relpath, 1, "message") &&
            adapt_ends_with(name, ".json"))
                return CLASS_DOCUMENT;
        return CLASS_IGNORE;
}

/* SQLite sidecars: a write to db-wal or db-journal is a change of the
 * database; our own read-only opens touch -shm, which is nobody's change. */
enum source_of_result ocode_source_of(const char *path, bool content_changed, char *ret_source, size_t cap)
{
        static const char *const sidecars[] = { "-wal", "-journal", "-shm", NULL };
        size_t n = strlen(path);

        for (size_t i = 0; sidecars[i]; i++) {
                size_t k = strlen(sidecars[i]);
                if (n <= k || strcmp(path + n - k, sidecars[i]) != 0)
                        continue;
                if (strcmp(sidecars[i], "-shm") == 0 || !content_changed || n - k >= cap)
                        return SOURCE_NONE;
                memcpy(ret_source, path, n - k);
                ret_source[n - k] = 0;
                return SOURCE_OTHER;
        }
        return SOURCE_SELF;
}

/* name is stem.db or stem-<something>.db */
static bool stem_db(const char *name, const char *stem)
{
        size_t n = strlen(name), k = strlen(stem);

        if (n < k + 3 || strncmp(name, stem, k) != 0 || strcmp(name + n - 3, ".db") != 0)
                return false;
        return n == k + 3 || (name[k] == '-' && n > k + 4);
}

bool ocode_db_name_known(const struct ocode_flavor *fl, const char *path)
{
        const char *name = strrchr(path, '/');

        name = name ? name + 1 : path;
        if (stem_db(name, fl->data_name))
                return true;
        /* the legacy name only with a channel: Kilo never wrote <legacy>.db */
        return fl->legacy_stem && stem_db(name, fl->legacy_stem) && strlen(name) > strlen(fl->legacy_stem) + 3;
}
