/* Root and root-ancestor watches (see watch/roots.h): the part of watching
 * that knows about roots rather than single directories. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"
#include "watch/roots.h"

/* The deepest existing directory on the way to path (path itself if it
 * exists) into p. */
static void deepest_existing(const char *path, char *p, size_t cap)
{
        snprintf(p, cap, "%s", path);
        for (;;) {
                struct stat st;
                if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
                        return;
                char *slash = strrchr(p, '/');
                if (!slash || slash == p) {
                        snprintf(p, cap, "/");
                        return;
                }
                *slash = 0;
        }
}

/* Watches dir, or its deepest existing ancestor. */
static void watch_dir_or_ancestor(struct watch *w, const char *dir)
{
        char p[PATH_MAX], again[PATH_MAX];

        deepest_existing(dir, p, sizeof(p));
        for (int tries = 0; tries < 64; tries++) {
                if (!watch_has(w, p))
                        (void)watch_add(w, p);
                deepest_existing(dir, again, sizeof(again));
                if (strcmp(again, p) == 0)
                        break;
                snprintf(p, sizeof(p), "%s", again);
        }
}

/* The directory of a file discovery read, into dir. */
static void file_dir(const char *path, char *dir, size_t cap)
{
        const char *slash = strrchr(path, '/');
        int n = slash && slash != path ? (int)(slash - path) : 1;

        snprintf(dir, cap, "%.*s", n, path);
}

void watch_roots(struct watch *w, const struct root_list *rl)
{
        char dir[PATH_MAX];

        for (size_t i = 0; i < rl->n; i++)
                watch_dir_or_ancestor(w, rl->v[i].path);
        for (size_t i = 0; i < rl->n_files; i++) {
                file_dir(rl->files[i].path, dir, sizeof(dir));
                watch_dir_or_ancestor(w, dir);
        }
}

bool roots_files_below(const struct root_list *rl, const char *path)
{
        char dir[PATH_MAX];

        for (size_t i = 0; i < rl->n_files; i++) {
                file_dir(rl->files[i].path, dir, sizeof(dir));
                if (paths_within(dir, path, NULL))
                        return true;
        }
        return false;
}

bool roots_cover_path(const struct root_list *rl, const char *path)
{
        for (size_t i = 0; i < rl->n; i++)
                if (paths_within(rl->v[i].path, path, NULL))
                        return true;
        return roots_files_below(rl, path);
}
