/* Directory walking for discovery and reconcile: which directories to
 * watch and which files are sources, as the roots' adapters classify them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "ingest/scan.h"

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

/* A directory's entries in name order (strcmp, not the locale's). */
static int name_order(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

/* A directory's entries are visited in name order, not readdir's (a hash
 * order on ext4): a scan queues a directory's sessions as their names sort,
 * which for most harnesses (a time stamp first) is the order they were
 * made in, so one group commit's files touch neighbouring checkpoints,
 * inodes and rollups instead of leaves all over each B-tree; and two scans
 * of one tree queue it alike. */
static int walk(const struct root *root, const char *dir, int depth, const struct scan_visitor *v)
{
        struct dirent **names = NULL;
        int dfd, n, r = 0;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return 0; /* vanished or unreadable: the watch/reconcile reports it */
        if (v->on_dir) {
                r = v->on_dir(v->u, root, dir, depth);
                if (r < 0)
                        goto out;
        }
        n = scandirat(dfd, ".", &names, NULL, name_order);
        for (int i = 0; i < n && r >= 0; i++) {
                const char *name = names[i]->d_name;
                char path[PATH_MAX];
                struct stat st;
                bool is_dir;
                int cls, cdepth;

                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
                        continue;
                /* directories only when really directories (no symlink loops);
                 * files through symlinks are fine */
                if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        if (stat(path, &st) < 0 || S_ISDIR(st.st_mode))
                                continue; /* dangling, or a link to a directory */
                }
                is_dir = S_ISDIR(st.st_mode);
                if (scan_classify(root, path, is_dir, &cdepth, &cls) < 0)
                        continue;
                if (is_dir && cls == CLASS_DESCEND)
                        r = walk(root, path, cdepth, v);
                else if (!is_dir && class_is_source(cls) && v->on_source)
                        r = v->on_source(v->u, root, path, cls, &st);
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
out:
        close(dfd);
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
