/* Watching roots that may not exist yet: each root, or its deepest existing
 * ancestor, carries a directory watch, so a root created later is seen at
 * once; a created directory on the way to a missing root re-arms them. */
#pragma once

#include <stdbool.h>

#include "adapter.h"
#include "watch/watch.h"

/* Watches every root of rl, or for a missing root its deepest existing
 * ancestor (looking again until that ancestor stays put, so a directory
 * created in between is not missed); and the same for the directory of
 * every file discovery read (rl->files), so its change is seen. */
void watch_roots(struct watch *w, const struct root_list *rl);

/* Whether path is a root of rl or an ancestor of one, or of the directory
 * of a file discovery read (a created directory there may make a missing
 * root or settings file appear). */
bool roots_cover_path(const struct root_list *rl, const char *path);

/* Whether path is the directory of a file discovery read or an ancestor of
 * one (created with the file already in it: discovery must look again). */
bool roots_files_below(const struct root_list *rl, const char *path);
