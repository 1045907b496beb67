/* Walking an adapter's root: which directories to watch and which files are
 * sources, as the adapter's classify() says, to root->max_depth levels.
 * Symlinked directories are not followed (no loops); symlinked files are. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "adapter.h"

struct scan_visitor {
        /* a directory inside (or equal to) the root that should be watched */
        int (*on_dir)(void *u, const struct root *root, const char *path, int depth);
        /* a source file: kind is CLASS_LINES, CLASS_DOCUMENT or CLASS_TABLE;
         * st is what the walk's stat found there (a symlink's target's) */
        int (*on_source)(void *u, const struct root *root, const char *path, int kind,
                         const struct stat *st);
        void *u;
};

/* Walks root; a missing root is not an error (returns 0 having visited
 * nothing). Unreadable subdirectories are skipped. Returns the first
 * negative return of a visitor, or 0. */
int scan_root(const struct root *root, const struct scan_visitor *v);

/* Walks one directory below root (depth = its depth below the root), for a
 * directory that appeared while running. */
int scan_dir(const struct root *root, const char *dir, int depth, const struct scan_visitor *v);

/* Where path sits under root: 0 with its depth (0 = the root itself) and
 * classification, or -ENOENT when it is not under root. */
int scan_classify(const struct root *root, const char *path, bool is_dir, int *ret_depth,
                  int *ret_class);
