/* team.conf: parsing, defaults from the system (host name, login name,
 * /etc/machine-id) and the password rule. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "hash/sha256.h"
#include "team-ledger/conf.h"

int team_conf_path(char *buf, size_t cap)
{
        char dir[4096];
        int r = paths_config_home(dir, sizeof(dir));
        if (r < 0)
                return r;
        if (strlen(dir) + strlen("/agentmeterd/" TEAM_CONF_FILE) >= cap)
                return -ENAMETOOLONG;
        snprintf(buf, cap, "%s/agentmeterd/" TEAM_CONF_FILE, dir);
        return 0;
}

static void set_error(struct team_conf *c, unsigned line, const char *why)
{
        if (!c->error[0])
                snprintf(c->error, sizeof(c->error), "%s line %u: %s", TEAM_CONF_FILE, line, why);
}

static char *trim(char *s)
{
        char *e;
        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                *--e = 0;
        return s;
}

static bool name_ok(const char *v)
{
        if (!*v || strlen(v) >= TEAM_NAME_MAX)
                return false;
        for (const char *p = v; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

static bool seconds(const char *v, unsigned *ret)
{
        char *end;
        unsigned long n;

        errno = 0;
        n = strtoul(v, &end, 10);
        if (errno || *end || end == v || n == 0 || n > 3600)
                return false;
        *ret = (unsigned)n;
        return true;
}

static void parse_line(struct team_conf *c, char *s, unsigned line)
{
        char *eq, *key, *val;

        s = trim(s);
        if (!*s || *s == '#')
                return;
        eq = strchr(s, '=');
        if (!eq) {
                set_error(c, line, "expected 'key = value'");
                return;
        }
        *eq = 0;
        key = trim(s);
        val = trim(eq + 1);
        if (strcmp(key, "url") == 0) {
                if (!*val || strlen(val) >= sizeof(c->url))
                        set_error(c, line, "url is empty or too long");
                else
                        memcpy(c->url, val, strlen(val) + 1);
        } else if (strcmp(key, "machine") == 0) {
                if (!name_ok(val))
                        set_error(c, line, "machine wants a name of 1 to 63 printable bytes");
                else {
                        memcpy(c->machine, val, strlen(val) + 1);
                        c->machine_set = true;
                }
        } else if (strcmp(key, "user") == 0) {
                if (!name_ok(val))
                        set_error(c, line, "user wants a name of 1 to 63 printable bytes");
                else
                        memcpy(c->user, val, strlen(val) + 1);
        } else if (strcmp(key, "connect_timeout") == 0) {
                if (!seconds(val, &c->connect_timeout_s))
                        set_error(c, line, "connect_timeout wants seconds (1..3600)");
        } else if (strcmp(key, "query_timeout") == 0) {
                if (!seconds(val, &c->query_timeout_s))
                        set_error(c, line, "query_timeout wants seconds (1..3600)");
        } else {
                set_error(c, line, "unknown key (url, machine, user, connect_timeout, query_timeout)");
        }
}

int team_conf_parse(const char *text, size_t len, struct team_conf *c)
{
        char *buf = malloc(len + 1), *p, *nl;
        unsigned line = 0;

        if (!buf)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len] = 0;
        if (memchr(text, 0, len))
                snprintf(c->error, sizeof(c->error), "%s holds a NUL byte", TEAM_CONF_FILE);
        c->connect_timeout_s = 10;
        c->query_timeout_s = 60;
        for (p = buf; p; p = nl) {
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = 0;
                parse_line(c, p, ++line);
        }
        if (!c->error[0] && !c->url[0])
                snprintf(c->error, sizeof(c->error), "%s has no 'url =' line", TEAM_CONF_FILE);
        free(buf);
        return 0;
}

void team_machine_key(const char *machine_id, const char *name, char ret_hex[TEAM_KEY_HEX + 1])
{
        static const char tag[] = "agentmeterd team machine\n";
        struct sha256 s;
        uint8_t d[SHA256_SIZE];
        char hex[2 * SHA256_SIZE + 1];

        sha256_init(&s);
        sha256_update(&s, tag, sizeof(tag) - 1);
        sha256_update(&s, machine_id, strlen(machine_id));
        if (name) {
                sha256_update(&s, "\n", 1);
                sha256_update(&s, name, strlen(name));
        }
        sha256_final(&s, d);
        sha256_hex(d, hex);
        memcpy(ret_hex, hex, TEAM_KEY_HEX);
        ret_hex[TEAM_KEY_HEX] = 0;
}

/* /etc/machine-id (or dbus's copy); without one, the host name stands in. */
static void machine_id(char *buf, size_t cap, const char *host)
{
        static const char *const files[] = { "/etc/machine-id", "/var/lib/dbus/machine-id" };

        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                FILE *f = fopen(files[i], "re");
                if (!f)
                        continue;
                bool got = fgets(buf, (int)cap, f) != NULL;
                fclose(f);
                buf[strcspn(buf, "\r\n")] = 0;
                if (got && strlen(buf) >= 16)
                        return;
        }
        snprintf(buf, cap, "host:%.100s", host);
}

static void defaults(struct team_conf *c)
{
        char host[256] = "", id[128];

        if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                snprintf(host, sizeof(host), "localhost");
        if (!c->machine[0])
                snprintf(c->machine, sizeof(c->machine), "%.*s", TEAM_NAME_MAX - 1, host);
        if (!c->user[0]) {
                struct passwd *pw = getpwuid(getuid());
                if (pw && pw->pw_name && pw->pw_name[0])
                        snprintf(c->user, sizeof(c->user), "%.*s", TEAM_NAME_MAX - 1, pw->pw_name);
                else
                        snprintf(c->user, sizeof(c->user), "uid%u", (unsigned)getuid());
        }
        machine_id(id, sizeof(id), host);
        team_machine_key(id, c->machine_set ? c->machine : NULL, c->machine_key);
}

int team_conf_load(const char *path, struct team_conf *ret_conf)
{
        struct team_conf *c = calloc(1, sizeof(*c));
        struct stat st;
        char *buf = NULL;
        size_t got = 0;
        int fd, r = 0;

        if (!c)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else if (st.st_size > (off_t)TEAM_CONF_MAX)
                r = -EFBIG;
        else if (!(buf = malloc((size_t)st.st_size + 1)))
                r = -ENOMEM;
        while (r == 0 && got < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : 0;
                        break;
                }
                got += (size_t)k;
        }
        close(fd);
        if (r == 0)
                r = team_conf_parse(buf, got, c);
        if (r == 0) {
                c->mode = (unsigned)(st.st_mode & 07777);
                c->private_file = (st.st_mode & 077) == 0 && st.st_uid == getuid();
                defaults(c);
                *ret_conf = *c;
        }
out:
        free(buf);
        free(c);
        return r;
}

const char *team_conf_password_refusal(const struct team_conf *c, bool url_has_password,
                                       char *buf, size_t cap)
{
        if (!url_has_password || c->private_file)
                return NULL;
        if ((c->mode & 077) == 0)
                snprintf(buf, cap, "%s holds a password in its url but belongs to another user: "
                                   "keep the password in ~/.pgpass instead", TEAM_CONF_FILE);
        else
                snprintf(buf, cap, "%s holds a password in its url but others may read it (mode "
                                   "%04o): chmod 600 it, or keep the password in ~/.pgpass",
                         TEAM_CONF_FILE, c->mode);
        return buf;
}
