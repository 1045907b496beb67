/* The walk of a root (daemon/ingest/scan.c) against a real directory tree: every
 * directory to watch and every source, each directory's entries in name
 * order (strcmp, not the order readdir returns them in, nor the locale's),
 * subdirectories entered where they sort, and each source with the stat
 * the walk took of it (a symlink's target's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "registry.h"
#include "ingest/scan.h"
#include "tap.h"
#include "testutil.h"

#define NAMES_MAX 128

struct visits {
        char paths[NAMES_MAX][PATH_MAX];
        struct stat st[NAMES_MAX];
        size_t n;
        int dirs;
};

static int on_dir(void *u, const struct root *root, const char *path, int depth)
{
        struct visits *v = u;
        (void)root;
        (void)path;
        (void)depth;
        v->dirs++;
        return 0;
}

static int on_source(void *u, const struct root *root, const char *path, int kind, const struct stat *st)
{
        struct visits *v = u;
        (void)root;
        (void)kind;
        if (v->n < NAMES_MAX) {
                snprintf(v->paths[v->n], sizeof(v->paths[0]), "%s", path);
                v->st[v->n++] = *st;
        }
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
        char *tmp = tap_tmpdir(), top[PATH_MAX], d1[PATH_MAX], d2[PATH_MAX], p[PATH_MAX], target[PATH_MAX];
        static struct visits v;
        struct scan_visitor sv = {.on_dir = on_dir, .on_source = on_source, .u = &v};
        struct root root = {.max_depth = 1, .adapter = &adapter_pi};
        char *want[NAMES_MAX];
        size_t nwant = 0;

        pj(top, tmp, "sessions");
        snprintf(root.path, sizeof(root.path), "%s", top);
        /* made in an order that is neither the names' nor (by chance) readdir's */
        pj(d2, top, "--b--");
        pj(d1, top, "--a--");
        mkdir_p(d2);
        mkdir_p(d1);
        const char *dirs[] = {d2, d1};
        for (int d = 0; d < 2; d++)
                for (int i = 29; i >= 0; i--) {
                        char name[64];
                        /* ten before 9 by strcmp, a time stamp's order */
                        snprintf(name, sizeof(name), "%d_%08x.jsonl", (i * 7919) % 31, (unsigned)(i * 2654435761u));
                        pj(p, dirs[d], name);
                        write_file(p, "{}\n");
                        want[nwant++] = strdup(p);
                }
        pj(p, top, "top-level.jsonl"); /* a source beside the directories */
        write_file(p, "{\"x\":1}\n");
        want[nwant++] = strdup(p);
        pj(target, tmp, "elsewhere.jsonl"); /* a link to a file outside the root */
        write_file(target, "{\"type\":\"session\"}\n");
        pj(p, d1, "zz-link.jsonl");
        ok(symlink(target, p) == 0, "a symlinked source");
        want[nwant++] = strdup(p);
        pj(p, d1, "notes.txt"); /* not a source */
        write_file(p, "x");
        qsort(want, nwant, sizeof(*want), cmp_str);

        is_int(scan_root(&root, &sv), 0, "the walk");
        is_int(v.dirs, 3, "  the root and its two directories to watch");
        is_int((int)v.n, (int)nwant, "  every source once, no other file");
        bool in_order = v.n == nwant;
        for (size_t i = 0; in_order && i < nwant; i++)
                in_order = strcmp(v.paths[i], want[i]) == 0;
        ok(in_order, "  in name order (strcmp of the whole path: --a-- before --b--, 10_ before 9_)");
        if (!in_order)
                for (size_t i = 0; i < v.n && i < nwant; i++)
                        if (strcmp(v.paths[i], want[i]) != 0) {
                                printf("# first difference at %zu: %s, wanted %s\n", i, v.paths[i], want[i]);
                                break;
                        }

        bool same = true;
        size_t link = NAMES_MAX;
        for (size_t i = 0; i < v.n; i++) {
                struct stat st;
                same = same && stat(v.paths[i], &st) == 0 && st.st_dev == v.st[i].st_dev &&
                       st.st_ino == v.st[i].st_ino && st.st_size == v.st[i].st_size &&
                       st.st_mtim.tv_sec == v.st[i].st_mtim.tv_sec &&
                       st.st_mtim.tv_nsec == v.st[i].st_mtim.tv_nsec && S_ISREG(v.st[i].st_mode);
                if (strstr(v.paths[i], "zz-link"))
                        link = i;
        }
        ok(same, "  each with the walk's stat: its inode, size and mtime, a regular file");
        struct stat ts;
        stat(target, &ts);
        ok(link < v.n && v.st[link].st_ino == ts.st_ino && v.st[link].st_size == ts.st_size,
           "  the link's stat is its target's");

        for (size_t i = 0; i < nwant; i++)
                free(want[i]);
        return tap_done();
}
