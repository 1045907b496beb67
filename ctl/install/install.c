/* install/uninstall file work: unit text from the template, the drop-in
 * that records the shell's discovery variables, atomic writes, and removal
 * of only what carries the install marker. No systemctl here (service.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "install/install.h"
#include "paths.h"

const char install_unit_template[] =
        "# agentmeterd as a systemd user service: `systemctl --user enable --now agentmeterd`.\n"
        "# Sandbox: in a user unit the mount options below apply only because\n"
        "# PrivateUsers=yes gives the service its own user namespace. It reads the\n"
        "# harnesses' files anywhere under $HOME (and wherever their variables point)\n"
        "# and writes only the ledger directory and its RuntimeDirectory (the control\n"
        "# socket). No PrivateTmp=: a harness directory may live under /tmp.\n"
        "# The ledger directory is spelled out, not StateDirectory=: systemd before\n"
        "# 254 puts a user unit's StateDirectory under ~/.config, not ~/.local/state.\n"
        "# The two helper commands run unsandboxed (\"+\"): a control process cannot\n"
        "# join the main process's network namespace from a user namespace of its own.\n"
        "[Unit]\n"
        "Description=agentmeterd, the exact token and cost meter for AI coding agents\n"
        "Documentation=man:agentmeterd(8) man:agentmeterctl(1)\n"
        "\n"
        "[Service]\n"
        "Type=notify\n"
        "NotifyAccess=main\n"
        "ExecStartPre=+/bin/mkdir -p -m 0700 %h/.local/state/agentmeterd\n"
        "ExecStart=@BINDIR@/agentmeterd\n"
        "ExecReload=+/bin/kill -HUP $MAINPID\n"
        "Restart=on-failure\n"
        "RestartSec=1s\n"
        "WatchdogSec=10s\n"
        "TimeoutStopSec=15s\n"
        "Environment=STATE_DIRECTORY=%h/.local/state/agentmeterd\n"
        "ReadWritePaths=%h/.local/state/agentmeterd\n"
        "RuntimeDirectory=agentmeterd\n"
        "RuntimeDirectoryMode=0700\n"
        "UMask=0077\n"
        "\n"
        "PrivateUsers=yes\n"
        "ProtectSystem=strict\n"
        "ProtectHome=read-only\n"
        "PrivateDevices=yes\n"
        "PrivateNetwork=yes\n"
        "PrivateIPC=yes\n"
        "ProtectKernelTunables=yes\n"
        "ProtectKernelModules=yes\n"
        "ProtectKernelLogs=yes\n"
        "ProtectControlGroups=yes\n"
        "ProtectClock=yes\n"
        "ProtectHostname=yes\n"
        "ProtectProc=invisible\n"
        "ProcSubset=pid\n"
        "NoNewPrivileges=yes\n"
        "CapabilityBoundingSet=\n"
        "RestrictAddressFamilies=AF_UNIX\n"
        "RestrictNamespaces=yes\n"
        "RestrictRealtime=yes\n"
        "RestrictSUIDSGID=yes\n"
        "LockPersonality=yes\n"
        "MemoryDenyWriteExecute=yes\n"
        "SystemCallArchitectures=native\n"
        "SystemCallFilter=@system-service\n"
        "SystemCallFilter=~@privileged @resources\n"
        "# but for the one call of @resources the daemon makes: each read worker\n"
        "# lowers its own priority (setpriority on its thread) to give way to the\n"
        "# ledger's writer, which a scan waits for\n"
        "SystemCallFilter=setpriority\n"
        "SystemCallErrorNumber=EPERM\n"
        "KeyringMode=private\n"
        "RemoveIPC=yes\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n";


int install_quote(const char *s, bool exec, char **ret)
{
        bool quote = !exec || strpbrk(s, " \t\"'\\") != NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '%')
                        fputs("%%", f);
                else if (*p == '$' && exec)
                        fputs("$$", f);
                else if (quote && (*p == '\\' || *p == '"'))
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        if (exec && quote) {
                char *q = NULL;
                int r = asprintf(&q, "\"%s\"", buf);
                free(buf);
                if (r < 0)
                        return -ENOMEM;
                buf = q;
        }
        *ret = buf;
        return 0;
}

int install_unit_text(const char *daemon_path, char **ret_text)
{
        static const char placeholder[] = "@BINDIR@/agentmeterd";
        _cleanup_free_ char *exec = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;
        int r;

        r = install_quote(daemon_path, true, &exec);
        if (r < 0)
                return r;
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs(INSTALL_MARKER "\n", f);
        for (const char *p = install_unit_template; *p;) {
                const char *hit = strstr(p, placeholder);
                if (!hit) {
                        fputs(p, f);
                        break;
                }
                fwrite(p, 1, (size_t)(hit - p), f);
                fputs(exec, f);
                p = hit + sizeof(placeholder) - 1;
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret_text = buf;
        return 0;
}

static const char *lookup(const struct install_config *c, const char *name)
{
        const char *v = c->get ? c->get(c->userdata, name) : NULL;
        return v && *v ? v : NULL;
}

int install_dropin_text(const struct install_config *c, char **ret_text, unsigned *ret_n)
{
        char *buf = NULL, when[32];
        size_t len = 0;
        unsigned n = 0;
        struct tm tm;
        time_t now = (time_t)c->now_s;
        int r = 0;
        FILE *f;

        if (!gmtime_r(&now, &tm) || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return -EINVAL;
        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs(INSTALL_MARKER "\n"
              "# The discovery variables that were set in the shell that ran `agentmeterctl\n"
              "# install` (a user unit does not inherit that shell's environment).\n"
              "[Service]\n", f);
        for (size_t i = 0; c->vars && c->vars[i] && r >= 0; i++) {
                const char *v = lookup(c, c->vars[i]);
                _cleanup_free_ char *q = NULL;

                if (strcmp(c->vars[i], "HOME") == 0 || !v)
                        continue;
                r = install_quote(v, false, &q);
                if (r >= 0)
                        fprintf(f, "Environment=\"%s=%s\"\n", c->vars[i], q);
                n++;
        }
        fputs("Environment=\"AGENTMETER_INSTALL_VARS=", f);
        for (size_t i = 0, k = 0; c->vars && c->vars[i]; i++)
                if (strcmp(c->vars[i], "HOME") != 0 && lookup(c, c->vars[i]))
                        fprintf(f, "%s%s", k++ ? "," : "", c->vars[i]);
        fprintf(f, "\"\nEnvironment=\"AGENTMETER_INSTALL_TIME=%s\"\n", when);
        for (size_t i = 0; c->config_roots && c->config_roots[i]; i++) {
                if (i == 0)
                        fputs("# Roots the harnesses' own settings named when install ran (the daemon reads\n"
                              "# those files itself and follows their changes; listed for reference):\n", f);
                fputs("#   ", f);
                for (const char *p = c->config_roots[i]; *p; p++) /* one comment line */
                        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
                fputc('\n', f);
        }
        if (c->metrics_file && r >= 0) {
                _cleanup_free_ char *q = NULL, *dir = strdup(c->metrics_file);
                char *slash = dir ? strrchr(dir, '/') : NULL;
                r = slash && slash != dir ? install_quote(c->metrics_file, false, &q) : -EINVAL;
                if (r >= 0) {
                        *slash = 0;
                        /* "-": a missing directory does not stop the unit (the daemon
                         * logs that it cannot write there) */
                        fprintf(f, "# The Prometheus textfile for node_exporter (--metrics-dir).\n"
                                   "Environment=\"AGENTMETER_METRICS_FILE=%s\"\n"
                                   "ReadWritePaths=-%s\n", q, dir);
                }
        }
        if (c->config_home && r >= 0) {
                /* a team ledger (docs/team.md) needs the network the unit's
                 * sandbox otherwise takes away */
                char team[PATH_MAX];
                struct stat st;
                if (snprintf(team, sizeof(team), "%s/agentmeterd/team.conf", c->config_home) < (int)sizeof(team) &&
                    stat(team, &st) == 0)
                        fputs("# team.conf exists: the push to the team's PostgreSQL needs the network.\n"
                              "PrivateNetwork=no\n"
                              "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n", f);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret_text = buf;
        if (ret_n)
                *ret_n = n;
        return 0;
}

bool install_has_marker(const char *path)
{
        _cleanup_fclose_ FILE *f = NULL;
        char line[sizeof(INSTALL_MARKER) + 2];
        struct stat st;
        int fd;

        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return false;
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return false;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !fgets(line, sizeof(line), f))
                return false;
        line[strcspn(line, "\n")] = 0;
        return strcmp(line, INSTALL_MARKER) == 0;
}

static bool same_content(const char *path, const char *text)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        size_t n = strlen(text);
        _cleanup_free_ char *buf = NULL;

        if (!f)
                return false;
        buf = malloc(n + 1);
        if (!buf)
                return false;
        return fread(buf, 1, n + 1, f) == n && memcmp(buf, text, n) == 0;
}

/* Writes text to path through a temporary file and rename(), mode 0644. */
static int write_atomic(const char *dir, const char *path, const char *text)
{
        _cleanup_free_ char *tmp = NULL;
        size_t len = strlen(text);
        int fd, r;

        r = paths_mkdir_p(dir, 0755);
        if (r < 0)
                return r;
        if (asprintf(&tmp, "%s.tmp-XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (size_t off = 0; off < len;) {
                ssize_t w = write(fd, text + off, len - off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        r = -errno;
                        goto fail;
                }
                off += (size_t)w;
        }
        if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (close(fd) < 0) {
                fd = -1;
                r = -errno;
                goto fail;
        }
        fd = -1;
        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        unlink(tmp);
        return r;
}

static int join(char *buf, const char *a, const char *b)
{
        return paths_join(buf, PATH_MAX, a, b);
}

/* The first agentmeterd.service in the search path after the config home. */
static bool find_packaged(const struct install_config *c, char packaged[PATH_MAX])
{
        struct stat st;

        for (size_t i = 0; c->unit_dirs && c->unit_dirs[i]; i++)
                if (join(packaged, c->unit_dirs[i], INSTALL_UNIT_NAME) == 0 && stat(packaged, &st) == 0 &&
                    S_ISREG(st.st_mode))
                        return true;
        return false;
}

int install_files(const struct install_config *c, struct install_result *ret)
{
        char dir[PATH_MAX], unit[PATH_MAX], ddir[PATH_MAX], dropin[PATH_MAX], packaged[PATH_MAX];
        _cleanup_free_ char *unit_text = NULL, *dropin_text = NULL;
        bool have_packaged = false, cfg_exists, cfg_ours;
        struct stat st;
        int r;

        memset(ret, 0, sizeof(*ret));
        if ((r = join(dir, c->config_home, "systemd/user")) < 0 ||
            (r = join(unit, dir, INSTALL_UNIT_NAME)) < 0 ||
            (r = join(ddir, dir, INSTALL_DROPIN_DIR)) < 0 ||
            (r = join(dropin, ddir, INSTALL_DROPIN_NAME)) < 0)
                return r;

        /* Never overwrite a file install did not write, unless forced. */
        cfg_exists = lstat(unit, &st) == 0;
        cfg_ours = cfg_exists && install_has_marker(unit);
        if (cfg_exists && !cfg_ours && !c->force) {
                snprintf(ret->conflict, sizeof(ret->conflict), "%s", unit);
                return -EEXIST;
        }
        if (lstat(dropin, &st) == 0 && !install_has_marker(dropin) && !c->force) {
                snprintf(ret->conflict, sizeof(ret->conflict), "%s", dropin);
                return -EEXIST;
        }

        have_packaged = find_packaged(c, packaged);
        ret->from_package = have_packaged && c->from_package && c->from_package(packaged);
        /* the package's unit is hidden by one of ours in the config home:
         * ours goes, so that the package's (and its updates) apply */
        if (cfg_ours && ret->from_package) {
                if (unlink(unit) < 0)
                        return -errno;
                snprintf(ret->removed, sizeof(ret->removed), "%s", unit);
                cfg_exists = cfg_ours = false;
        }
        if (have_packaged && !cfg_exists) {
                ret->unit_action = INSTALL_UNIT_PACKAGED;
                snprintf(ret->unit_path, sizeof(ret->unit_path), "%s", packaged);
        } else {
                if (!c->daemon_path)
                        return -ENOENT;
                r = install_unit_text(c->daemon_path, &unit_text);
                if (r < 0)
                        return r;
                snprintf(ret->unit_path, sizeof(ret->unit_path), "%s", unit);
                if (cfg_ours && same_content(unit, unit_text)) {
                        ret->unit_action = INSTALL_UNIT_UNCHANGED;
                } else {
                        r = write_atomic(dir, unit, unit_text);
                        if (r < 0)
                                return r;
                        ret->unit_action = !cfg_exists ? INSTALL_UNIT_WRITTEN
                                           : cfg_ours  ? INSTALL_UNIT_UPDATED
                                                       : INSTALL_UNIT_REPLACED;
                }
        }

        r = install_dropin_text(c, &dropin_text, &ret->n_recorded);
        if (r < 0)
                return r;
        r = write_atomic(ddir, dropin, dropin_text);
        if (r < 0)
                return r;
        snprintf(ret->dropin_path, sizeof(ret->dropin_path), "%s", dropin);
        return 0;
}

static void note(char list[][PATH_MAX], unsigned *n, unsigned max, const char *path)
{
        if (*n < max)
                snprintf(list[(*n)++], PATH_MAX, "%s", path);
}

/* Removes path when it carries the marker; notes it as kept otherwise. */
static int remove_marked(const char *path, struct uninstall_result *ret)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!install_has_marker(path)) {
                note(ret->kept, &ret->n_kept, 2, path);
                return 0;
        }
        if (unlink(path) < 0)
                return -errno;
        note(ret->removed, &ret->n_removed, 4, path);
        return 1;
}

int uninstall_files(const char *config_home, struct uninstall_result *ret)
{
        char dir[PATH_MAX], unit[PATH_MAX], ddir[PATH_MAX], dropin[PATH_MAX], wants[PATH_MAX],
                target[PATH_MAX];
        ssize_t n;
        int r;

        memset(ret, 0, sizeof(*ret));
        if ((r = join(dir, config_home, "systemd/user")) < 0 ||
            (r = join(unit, dir, INSTALL_UNIT_NAME)) < 0 ||
            (r = join(ddir, dir, INSTALL_DROPIN_DIR)) < 0 ||
            (r = join(dropin, ddir, INSTALL_DROPIN_NAME)) < 0 ||
            (r = join(wants, dir, "default.target.wants/" INSTALL_UNIT_NAME)) < 0)
                return r;

        r = remove_marked(dropin, ret);
        if (r < 0)
                return r;
        if (rmdir(ddir) == 0)
                note(ret->removed, &ret->n_removed, 4, ddir);
        else if (errno != ENOENT && errno != ENOTEMPTY && errno != ENOTDIR)
                return -errno;

        r = remove_marked(unit, ret);
        if (r < 0)
                return r;
        /* `systemctl disable` removes the enable link; when the manager did
         * not answer, a link to the unit just removed would dangle. */
        n = readlink(wants, target, sizeof(target) - 1);
        if (r > 0 && n > 0) {
                target[n] = 0;
                if (strcmp(target, unit) == 0 && unlink(wants) == 0)
                        note(ret->removed, &ret->n_removed, 4, wants);
        }
        return 0;
}

int install_write_file(const char *dir, const char *path, const char *text)
{
        return write_atomic(dir, path, text);
}
