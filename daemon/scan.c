/* Directory walking for discovery and reconcile: which directories to
 * watch and which files are sources, as the roots' adapters classify them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "scan.h"

int scan_classify(const struct root *root, const char *path, bool is_dir, int *ret_depth,
                  int *ret_class)
{
        const char *rel, *name;
        int depth = 0;

        if (!paths_within(path, root->path, &rel))
                return -ENOENT;
        if (*rel == 0) {
                *ret_depth = 0;
                *ret_class = CLASS_DESCEND;
                return 0;
        }
        for (const char *p = rel; *p; p++)
                if (*p == '/')
                        depth++;
        depth++;
        name = strrchr(rel, '/');
        name = name ? name + 1 : rel;
        if (is_dir && depth > root->max_depth) {
                *ret_depth = depth;
                *ret_class = CLASS_IGNORE;
                return 0;
        }
        if (!is_dir && depth > root->max_depth + 1) {
                *ret_depth = depth;
                *ret_class = CLASS_IGNORE;
                return 0;
        }
        *ret_depth = depth;
        *ret_class = root->adapter->classify(rel, name, depth, is_dir);
        return 0;
}

static int walk(const struct root *root, const char *dir, int depth, const struct scan_visitor *v)
{
        DIR *d;
        struct dirent *de;
        int r = 0;

        d = opendir(dir);
        if (!d)
                return 0; /* vanished or unreadable: the watch/reconcile reports it */
        if (v->on_dir) {
                r = v->on_dir(v->u, root, dir, depth);
                if (r < 0)
                        goto out;
        }
        while ((de = readdir(d))) {
                char path[PATH_MAX];
                struct stat st;
                bool is_dir;
                int cls, cdepth;

                if (de->d_name[0] == '.' && (de->d_name[1] == 0 ||
                                             (de->d_name[1] == '.' && de->d_name[2] == 0)))
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
                        continue;
                /* directories only when really directories (no symlink loops);
                 * files through symlinks are fine */
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        if (stat(path, &st) < 0 || S_ISDIR(st.st_mode))
                                continue; /* dangling, or a link to a directory */
                }
                is_dir = S_ISDIR(st.st_mode);
                if (scan_classify(root, path, is_dir, &cdepth, &cls) < 0)
                        continue;
                if (is_dir && cls == CLASS_DESCEND) {
                        r = walk(root, path, cdepth, v);
                        if (r < 0)
                                break;
                } else if (!is_dir && class_is_source(cls) && v->on_source) {
                        r = v->on_source(v->u, root, path, cls, &st);
                        if (r < 0)
                                break;
                }
        }
out:
        closedir(d);
        return r;
}

int scan_dir(const struct root *root, const char *dir, int depth, const struct scan_visitor *v)
{
        return walk(root, dir, depth, v);
}

int scan_root(const struct root *root, const struct scan_visitor *v)
{
        struct stat st;
        if (stat(root->path, &st) < 0 || !S_ISDIR(st.st_mode))
                return 0;
        return walk(root, root->path, 0, v);
}
