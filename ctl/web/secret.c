/* The access secret's file (secret.h): made once with O_EXCL and link(), so
 * two starts at once agree on one; checked for owner, type and mode. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "web/secret.h"

int web_secret_path(char *buf, size_t cap)
{
        const char *rt = getenv("XDG_RUNTIME_DIR");
        char dir[4096];
        int n;

        if (rt && rt[0] == '/')
                n = snprintf(buf, cap, "%s/agentmeterctl-web/secret", rt);
        else if (paths_state_dir(dir, sizeof(dir)) == 0)
                n = snprintf(buf, cap, "%s/web-secret", dir);
        else
                return -ENOENT;
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static bool all_hex(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* 1: read; 0: no file; < 0: refused (err set). */
static int read_secret(const char *path, char *out, char *err, size_t cap)
{
        char buf[WEB_SECRET_LEN + 2];
        struct stat st;
        ssize_t n;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                snprintf(err, cap, "cannot open the secret %s: %s", path, strerror(errno));
                return -errno;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
                close(fd);
                snprintf(err, cap, "refusing the secret %s: not a regular file of yours with mode 0600", path);
                return -EPERM;
        }
        n = read(fd, buf, sizeof(buf));
        close(fd);
        if (n == WEB_SECRET_LEN + 1 && buf[WEB_SECRET_LEN] == '\n')
                n--;
        if (n != WEB_SECRET_LEN || !all_hex(buf, WEB_SECRET_LEN)) {
                snprintf(err, cap, "refusing the secret %s: not %d hex digits (remove it to make a new one)",
                         path, WEB_SECRET_LEN);
                return -EBADMSG;
        }
        memcpy(out, buf, WEB_SECRET_LEN);
        out[WEB_SECRET_LEN] = 0;
        return 1;
}

static int make_secret(const char *path, char *err, size_t cap)
{
        unsigned char raw[WEB_SECRET_LEN / 2];
        char hex[WEB_SECRET_LEN + 1], tmp[4200];
        int fd, r = 0;

        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
                snprintf(err, cap, "getrandom: %s", strerror(errno));
                return -EIO;
        }
        for (size_t i = 0; i < sizeof(raw); i++)
                sprintf(hex + 2 * i, "%02x", raw[i]);
        hex[WEB_SECRET_LEN] = '\n';
        snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                snprintf(err, cap, "cannot write %s: %s", tmp, strerror(errno));
                return -errno;
        }
        if (write(fd, hex, sizeof(hex)) != (ssize_t)sizeof(hex) || fsync(fd) < 0)
                r = -EIO;
        close(fd);
        /* link, not rename: when two start at once, the first one's stays */
        if (r == 0 && link(tmp, path) < 0 && errno != EEXIST)
                r = -errno;
        unlink(tmp);
        if (r < 0)
                snprintf(err, cap, "cannot write the secret %s: %s", path, strerror(-r));
        return r;
}

int web_secret_load(const char *path, char ret_secret[WEB_SECRET_LEN + 1], char *err, size_t cap)
{
        char dir[4096], *slash;
        struct stat st;
        int r;

        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return -EINVAL;
        *slash = 0;
        r = paths_mkdir_p(dir, 0700);
        if (r < 0) {
                snprintf(err, cap, "cannot make %s: %s", dir, strerror(-r));
                return r;
        }
        if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
                snprintf(err, cap, "refusing %s: not a directory of yours with mode 0700", dir);
                return -EPERM;
        }
        for (int tries = 0; tries < 2; tries++) {
                r = read_secret(path, ret_secret, err, cap);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = make_secret(path, err, cap);
                if (r < 0)
                        return r;
        }
        snprintf(err, cap, "the secret %s vanished as it was made", path);
        return -EAGAIN;
}

bool web_secret_equal(const char *secret, const char *s)
{
        unsigned char d = 0;

        if (!s || strlen(s) != WEB_SECRET_LEN)
                return false;
        for (size_t i = 0; i < WEB_SECRET_LEN; i++)
                d |= (unsigned char)(secret[i] ^ s[i]);
        return d == 0;
}
