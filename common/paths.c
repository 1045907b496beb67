/* XDG / systemd directory resolution, shared by daemon, client and tests. */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

static int put(char *buf, size_t cap, const char *fmt, const char *a, const char *b)
{
        int n = snprintf(buf, cap, fmt, a, b);
        if (n < 0 || (size_t)n >= cap)
                return -ENAMETOOLONG;
        return 0;
}

int paths_join(char *buf, size_t cap, const char *a, const char *b)
{
        size_t la = strlen(a);
        if (la > 0 && a[la - 1] == '/')
                return put(buf, cap, "%s%s", a, b);
        return put(buf, cap, "%s/%s", a, b);
}

int paths_home(char *buf, size_t cap)
{
        const char *h = getenv("HOME");
        if (!h || h[0] != '/') {
                struct passwd *pw = getpwuid(getuid());
                h = pw ? pw->pw_dir : NULL;
        }
        if (!h || h[0] != '/')
                return -ENOENT;
        return put(buf, cap, "%s%s", h, "");
}

/* A systemd *_DIRECTORY variable may list several paths separated by ':'. */
static int first_of_list(char *buf, size_t cap, const char *list)
{
        size_t n = strcspn(list, ":");
        if (n == 0 || list[0] != '/')
                return -ENOENT;
        if (n >= cap)
                return -ENAMETOOLONG;
        memcpy(buf, list, n);
        buf[n] = 0;
        return 0;
}

static int xdg(char *buf, size_t cap, const char *var, const char *fallback, const char *leaf)
{
        char base[4096];
        const char *v = getenv(var);
        int r;

        if (v && v[0] == '/') {
                r = put(base, sizeof(base), "%s%s", v, "");
        } else {
                char home[4096];
                r = paths_home(home, sizeof(home));
                if (r < 0)
                        return r;
                r = put(base, sizeof(base), "%s/%s", home, fallback);
        }
        if (r < 0)
                return r;
        if (!leaf)
                return put(buf, cap, "%s%s", base, "");
        return paths_join(buf, cap, base, leaf);
}

int paths_state_dir(char *buf, size_t cap)
{
        const char *sd = getenv("STATE_DIRECTORY");
        if (sd && first_of_list(buf, cap, sd) == 0)
                return 0;
        return xdg(buf, cap, "XDG_STATE_HOME", ".local/state", "agentmeterd");
}

int paths_runtime_dir(char *buf, size_t cap)
{
        const char *rd = getenv("RUNTIME_DIRECTORY");
        const char *x = getenv("XDG_RUNTIME_DIR");
        if (rd && first_of_list(buf, cap, rd) == 0)
                return 0;
        if (x && x[0] == '/')
                return paths_join(buf, cap, x, "agentmeterd");
        /* No runtime dir (a plain ssh session without logind): a private
         * per-user directory under /tmp, created 0700 by the daemon. */
        char tmp[64];
        snprintf(tmp, sizeof(tmp), "/tmp/agentmeterd-%u", (unsigned)getuid());
        return put(buf, cap, "%s%s", tmp, "");
}

int paths_socket(char *buf, size_t cap)
{
        char dir[4096];
        int r = paths_runtime_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        return paths_join(buf, cap, dir, PATHS_SOCKET_NAME);
}

int paths_config_home(char *buf, size_t cap)
{
        return xdg(buf, cap, "XDG_CONFIG_HOME", ".config", NULL);
}

int paths_mkdir_p(const char *path, unsigned mode)
{
        char tmp[4096];
        size_t n = strlen(path);
        if (n == 0 || n >= sizeof(tmp))
                return -ENAMETOOLONG;
        memcpy(tmp, path, n + 1);
        for (char *p = tmp + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = 0;
                if (mkdir(tmp, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(tmp, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

static int socket_dir(const char *socket_path, char *buf, size_t cap)
{
        int n = snprintf(buf, cap, "%s", socket_path);
        if (n < 0 || (size_t)n >= cap)
                return -ENAMETOOLONG;
        char *slash = strrchr(buf, '/');
        if (!slash)
                snprintf(buf, cap, ".");
        else if (slash == buf)
                buf[1] = 0;
        else
                *slash = 0;
        return 0;
}

int paths_socket_dir_check(const char *socket_path)
{
        char dir[PATH_MAX];
        struct stat st;
        int r = socket_dir(socket_path, dir, sizeof(dir));

        if (r < 0)
                return r;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 0077) != 0)
                return -EPERM;
        return 0;
}

int paths_socket_dir_prepare(const char *socket_path)
{
        char dir[PATH_MAX];
        int r = socket_dir(socket_path, dir, sizeof(dir));

        if (r < 0)
                return r;
        /* a socket named directly in / or the working directory: nothing to
         * create, and no private directory to expect (as before) */
        if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0)
                return 0;
        r = paths_mkdir_p(dir, 0700);
        if (r < 0)
                return r;
        return paths_socket_dir_check(socket_path);
}

bool paths_within(const char *path, const char *dir, const char **ret_rel)
{
        size_t n = strlen(dir);
        const char *rest;

        while (n > 1 && dir[n - 1] == '/')
                n--;
        if (strncmp(path, dir, n) != 0)
                return false;
        rest = path + n;
        if (n == 1 && dir[0] == '/')
                rest = path[0] == '/' ? path + 1 : NULL; /* the root holds everything */
        else if (*rest == '/')
                rest++;
        else if (*rest != 0)
                rest = NULL;
        if (!rest)
                return false;
        if (ret_rel)
                *ret_rel = rest;
        return true;
}
