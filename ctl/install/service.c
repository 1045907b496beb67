/* install/uninstall orchestration: search path, binary location, systemctl
 * --user via fork+execvp, and what the user is told at each step. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "install/install.h"
#include "paths.h"
#include "registry.h"
#include "install/service.h"
#include "install/web-units.h"

int service_run(FILE *log, const char *const *argv)
{
        int status;
        pid_t pid;

        fputs("+", log);
        for (size_t i = 0; argv[i]; i++)
                fprintf(log, " %s", argv[i]);
        fputc('\n', log);
        fflush(log);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execvp(argv[0], (char *const *)argv);
                fprintf(stderr, "agentmeterctl: cannot run %s: %m\n", argv[0]);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

bool service_from_package(const char *path)
{
        char out[256] = "";
        int fds[2], status;
        ssize_t n = 0, k;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return false;
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                close(fds[0]);
                close(fds[1]);
                return false;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (dup2(fds[1], STDOUT_FILENO) < 0 || (null >= 0 && dup2(null, STDERR_FILENO) < 0))
                        _exit(127);
                execlp("dpkg-query", "dpkg-query", "-S", path, (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        while ((size_t)n < sizeof(out) - 1 && (k = read(fds[0], out + n, sizeof(out) - 1 - (size_t)n)) != 0) {
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        break;
                n += k;
        }
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return false;
        /* "agentmeterd: /usr/lib/systemd/user/agentmeterd.service" */
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 && strncmp(out, "agentmeterd: ", 13) == 0;
}

static const char *process_get(void *u, const char *name)
{
        (void)u;
        return getenv(name);
}

/* agentmeterd next to this agentmeterctl, or NULL. */
static char *daemon_next_to_me(FILE *err)
{
        char self[PATH_MAX], *slash, *path = NULL;
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (n <= 0) {
                fprintf(err, "agentmeterctl: cannot read /proc/self/exe: %m\n");
                return NULL;
        }
        self[n] = 0;
        slash = strrchr(self, '/');
        if (!slash)
                return NULL;
        *slash = 0;
        if (asprintf(&path, "%s/agentmeterd", self) < 0)
                return NULL;
        if (access(path, X_OK) < 0) {
                fprintf(err, "agentmeterctl: %s: %m (install expects agentmeterd next to "
                             "agentmeterctl)\n", path);
                free(path);
                return NULL;
        }
        return path;
}

/* The user unit search path after the config home (see systemd.unit(5)):
 * where a packaged agentmeterd.service would be. */
static int unit_dirs(char bufs[][PATH_MAX], const char *dirs[], size_t max)
{
        static const char *const fixed[] = { "/etc/systemd/user", "/usr/local/lib/systemd/user",
                                             "/usr/lib/systemd/user", "/lib/systemd/user" };
        const char *data = getenv("XDG_DATA_HOME");
        size_t n = 0;
        char home[PATH_MAX];
        int r;

        if (data && data[0] == '/')
                r = paths_join(bufs[n], PATH_MAX, data, "systemd/user");
        else if ((r = paths_home(home, sizeof(home))) >= 0)
                r = paths_join(bufs[n], PATH_MAX, home, ".local/share/systemd/user");
        if (r < 0)
                return r;
        dirs[n] = bufs[n], n++;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && n + 1 < max; i++)
                dirs[n++] = fixed[i];
        dirs[n] = NULL;
        return 0;
}

static const char *const unit_actions[] = {
        [INSTALL_UNIT_WRITTEN] = "wrote",
        [INSTALL_UNIT_UPDATED] = "updated",
        [INSTALL_UNIT_UNCHANGED] = "unit up to date:",
        [INSTALL_UNIT_REPLACED] = "replaced (--force)",
        [INSTALL_UNIT_PACKAGED] = "using the installed unit",
};

/* systemctl --user VERB [agentmeterd.service]; complains when it fails. */
static int systemctl(FILE *out, FILE *err, const char *verb, bool with_unit)
{
        const char *argv[] = { "systemctl", "--user", verb, with_unit ? INSTALL_UNIT_NAME : NULL,
                               NULL };
        int r = service_run(out, argv);

        if (r != 0)
                fprintf(err, "agentmeterctl: `systemctl --user %s` failed (%s %d)\n", verb,
                        r < 0 ? "error" : "exit status", r < 0 ? -r : r);
        return r;
}

/* agentmeterctl itself, for the web service's ExecStart=. */
static int self_path(char *buf, size_t cap)
{
        ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
        if (n <= 0)
                return -errno;
        buf[n] = 0;
        return 0;
}

/* install --web: the socket and service units, then the socket enabled and
 * started (the service starts with the first connection). */
static int install_web(const char *cfg, const char *listen, bool no_start, bool force, FILE *out, FILE *err)
{
        const char *enable_now[] = { "systemctl", "--user", "enable", "--now", WEB_SOCKET_UNIT, NULL };
        const char *enable_only[] = { "systemctl", "--user", "enable", WEB_SOCKET_UNIT, NULL };
        const char *const *enable = no_start ? enable_only : enable_now;
        char self[PATH_MAX], conflict[PATH_MAX] = "";
        int r = self_path(self, sizeof(self));

        if (r >= 0)
                r = web_units_write(cfg, self, listen, force, conflict);
        if (r == -EEXIST) {
                fprintf(err, "agentmeterctl: %s exists and was not written by agentmeterctl; refusing to "
                             "overwrite it (--force replaces it)\n", conflict);
                return r;
        }
        if (r < 0) {
                fprintf(err, "agentmeterctl: cannot write the web units: %s\n", strerror(-r));
                return r;
        }
        fprintf(out, "web: wrote %s/systemd/user/%s and %s (on %s)\n", cfg, WEB_SOCKET_UNIT, WEB_SERVICE_UNIT,
                listen);
        if (systemctl(out, err, "daemon-reload", false) != 0 || service_run(out, enable) != 0) {
                fputs("agentmeterctl: the web socket could not be enabled\n", err);
                return -EIO;
        }
        fputs("web: the dashboard starts on the first connection; its address with the secret: "
              "agentmeterctl web --url\n", out);
        return 0;
}


/* Frees a NULL-terminated list of malloc'd lines (a cleanup). */
static void free_lines(const char ***p)
{
        for (size_t i = 0; *p && (*p)[i]; i++)
                free((void *)(*p)[i]);
        free((void *)*p);
}

int service_install(bool no_start, bool force, const char *metrics_dir, const char *web_listen, FILE *out,
                    FILE *err)
{
        char metrics_file[PATH_MAX] = "";
        char cfg[PATH_MAX], bufs[1][PATH_MAX];
        const char *dirs[8];
        struct install_result res;
        char *daemon = NULL;
        int r;

        r = paths_config_home(cfg, sizeof(cfg));
        if (r >= 0)
                r = unit_dirs(bufs, dirs, 8);
        if (r < 0) {
                fprintf(err, "agentmeterctl: cannot find your config directory: %s\n", strerror(-r));
                return r;
        }
        if (metrics_dir) {
                struct passwd *pw = getpwuid(getuid());
                r = snprintf(metrics_file, sizeof(metrics_file), "%s/agentmeterd-%s.prom", metrics_dir,
                             pw && pw->pw_name ? pw->pw_name : "user");
                if (r < 0 || (size_t)r >= sizeof(metrics_file)) {
                        fprintf(err, "agentmeterctl: --metrics-dir is too long\n");
                        return -ENAMETOOLONG;
                }
        }
        daemon = daemon_next_to_me(err);
        /* the roots the harnesses' own settings name (an editor's
         * settings.json custom storage path), as this shell finds them */
        struct root_list roots = { 0 };
        __attribute__((cleanup(free_lines))) const char **config_roots = NULL;
        size_t n_config = 0;
        (void)registry_discover(&registry_process_env, &roots);
        config_roots = calloc(roots.n + 1, sizeof(*config_roots));
        for (size_t i = 0; config_roots && i < roots.n; i++) {
                const struct root *rt = &roots.v[i];
                char *line = NULL;
                if (rt->reason != ROOT_CONFIG)
                        continue;
                if (asprintf(&line, "%s %s from config %s [%s]", rt->adapter ? rt->adapter->id : "?", rt->path,
                             rt->detail, rt->label) >= 0)
                        config_roots[n_config++] = line;
        }
        struct install_config c = {
                .config_home = cfg, .unit_dirs = dirs, .daemon_path = daemon,
                .vars = registry_env_vars(), .get = process_get, .now_s = time(NULL), .force = force,
                .metrics_file = metrics_dir ? metrics_file : NULL, .from_package = service_from_package,
                .config_roots = config_roots,
        };
        r = install_files(&c, &res);
        free(daemon);
        root_list_free(&roots);
        if (r == -EEXIST) {
                fprintf(err, "agentmeterctl: %s exists and was not written by agentmeterctl "
                             "(no marker line); refusing to overwrite it. Move it away, or run "
                             "`agentmeterctl install --force` to replace it.\n", res.conflict);
                return r;
        }
        if (r == -ENOENT)
                fprintf(err, "agentmeterctl: no unit installed and no agentmeterd binary to point "
                             "one at\n");
        else if (r < 0)
                fprintf(err, "agentmeterctl: install failed: %s\n", strerror(-r));
        if (r < 0)
                return r;

        if (res.removed[0])
                fprintf(out, "unit: removed %s (an earlier install's), the package's unit serves\n",
                        res.removed);
        if (res.from_package)
                fprintf(out, "unit: using the unit of the Debian package agentmeterd: %s "
                             "(only the environment record is written)\n", res.unit_path);
        else
                fprintf(out, "unit: %s %s\n", unit_actions[res.unit_action], res.unit_path);
        fprintf(out, "environment record: wrote %s\n", res.dropin_path);
        if (metrics_dir)
                fprintf(out, "metrics: the daemon keeps %s current for node_exporter\n", metrics_file);
        for (size_t i = 0; registry_env_vars()[i]; i++) {
                const char *v = getenv(registry_env_vars()[i]);
                if (strcmp(registry_env_vars()[i], "HOME") != 0 && v && *v)
                        fprintf(out, "  recorded %s=%s\n", registry_env_vars()[i], v);
        }
        if (res.n_recorded == 0)
                fputs("  no discovery variables are set in this shell: the daemon uses the "
                      "default locations under $HOME\n", out);
        for (size_t i = 0; i < n_config; i++)
                fprintf(out, "  noted %s (the daemon reads that file itself)\n", config_roots[i]);
        fflush(out);

        if (systemctl(out, err, "daemon-reload", false) != 0 ||
            systemctl(out, err, "enable", true) != 0)
                goto manager;
        if (no_start) {
                fputs("not started (--no-start); start it with: systemctl --user start "
                      "agentmeterd\n", out);
                return web_listen ? install_web(cfg, web_listen, true, force, out, err) : 0;
        }
        /* restart, not start: a running daemon must pick up the new environment */
        if (systemctl(out, err, "restart", true) != 0) {
                fputs("agentmeterctl: agentmeterd did not start; see `systemctl --user status "
                      "agentmeterd` and `journalctl --user -u agentmeterd`\n", err);
                return -EIO;
        }
        fputs("agentmeterd is running; try: agentmeterctl status\n", out);
        return web_listen ? install_web(cfg, web_listen, false, force, out, err) : 0;
manager:
        fputs("agentmeterctl: the files are in place, but the user service manager did not do "
              "its part; is `systemd --user` running for you (a login session, or `loginctl "
              "enable-linger`)?\n", err);
        return -EIO;
}

int service_uninstall(FILE *out, FILE *err)
{
        const char *disable[] = { "systemctl", "--user", "disable", "--now", INSTALL_UNIT_NAME,
                                  NULL };
        char cfg[PATH_MAX], state[PATH_MAX];
        struct uninstall_result res;
        int r;

        r = paths_config_home(cfg, sizeof(cfg));
        if (r < 0) {
                fprintf(err, "agentmeterctl: cannot find your config directory: %s\n", strerror(-r));
                return r;
        }
        char web[2][PATH_MAX];
        int n_web;

        if (service_run(out, disable) != 0)
                fputs("  (not loaded or not enabled; going on)\n", out);
        if (web_units_listen(cfg, web[0], sizeof(web[0])) == 0) {
                const char *web_disable[] = { "systemctl", "--user", "disable", "--now", WEB_SOCKET_UNIT,
                                              WEB_SERVICE_UNIT, NULL };
                if (service_run(out, web_disable) != 0)
                        fputs("  (the web units were not loaded or not enabled; going on)\n", out);
        }
        n_web = web_units_remove(cfg, web);
        for (int i = 0; i < n_web; i++)
                fprintf(out, "removed %s\n", web[i]);
        r = uninstall_files(cfg, &res);
        if (r < 0) {
                fprintf(err, "agentmeterctl: uninstall failed: %s\n", strerror(-r));
                return r;
        }
        for (unsigned i = 0; i < res.n_removed; i++)
                fprintf(out, "removed %s\n", res.removed[i]);
        for (unsigned i = 0; i < res.n_kept; i++)
                fprintf(out, "kept %s (not written by agentmeterctl install)\n", res.kept[i]);
        if (res.n_removed == 0 && res.n_kept == 0)
                fputs("nothing of agentmeterctl install's was there\n", out);
        if (service_from_package("/usr/lib/systemd/user/" INSTALL_UNIT_NAME))
                fputs("the unit of the Debian package agentmeterd stays, disabled (apt remove "
                      "agentmeterd removes it)\n", out);
        systemctl(out, err, "daemon-reload", false);
        if (paths_state_dir(state, sizeof(state)) >= 0)
                fprintf(out, "left the ledger in %s alone (remove it yourself if you want the "
                             "history gone)\n", state);
        return 0;
}
