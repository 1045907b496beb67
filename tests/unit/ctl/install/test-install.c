/* Unit tests for `agentmeterctl install`'s file work: systemd quoting, the
 * drop-in from a fake environment, the unit from the template, refusal to
 * overwrite files without the marker, and an uninstall that removes only
 * what install wrote. No systemctl runs here (tests/systemd does that). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "install/install.h"
#include "registry.h"
#include "tap.h"
#include "testutil.h"

/* snprintf into a PATH_MAX buffer (vsnprintf: no truncation warnings). */
static void pathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *buf, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, PATH_MAX, fmt, ap);
        va_end(ap);
}

static bool exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

static const char *const vars[] = { "HOME", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR",
                                    "OPENCLAW_HOME", "PICOCLAW_HOME", NULL };

static void test_quote(void)
{
        char *q = NULL;

        is_int(install_quote("/a%b\"c\\d", false, &q), 0, "quote ok");
        is_str(q, "/a%%b\\\"c\\\\d", "Environment value: % doubled, \" and \\ escaped");
        free(q);
        install_quote("line1\nline2\ttab\x01", false, &q);
        is_str(q, "line1\\nline2\\ttab\\x01", "Environment value: control characters escaped");
        free(q);
        install_quote("/usr/local/bin/agentmeterd", true, &q);
        is_str(q, "/usr/local/bin/agentmeterd", "ExecStart: a plain path stays bare");
        free(q);
        install_quote("/opt/my dir/100%/$x/agentmeterd", true, &q);
        is_str(q, "\"/opt/my dir/100%%/$$x/agentmeterd\"",
               "ExecStart: blanks quoted, % and $ doubled");
        free(q);
}

static void test_dropin_text(void)
{
        const char *const env[] = { "HOME", "/home/u", "PI_CODING_AGENT_DIR", "/x/100%\"q\"\\b",
                                    "OPENCLAW_HOME", "", "PICOCLAW_HOME", "/pc", NULL };
        struct install_config c = { .vars = vars, .get = kv_get, .userdata = (void *)env,
                                    .now_s = 1796009291 };
        char *text = NULL;
        unsigned n = 0;

        is_int(install_dropin_text(&c, &text, &n), 0, "drop-in text built");
        is_int(n, 2, "two variables recorded (HOME and empty ones not)");
        ok(strncmp(text, INSTALL_MARKER "\n", strlen(INSTALL_MARKER) + 1) == 0,
           "drop-in starts with the marker");
        ok(strstr(text, "\n[Service]\n") != NULL, "drop-in has [Service]");
        ok(strstr(text, "\nEnvironment=\"PI_CODING_AGENT_DIR=/x/100%%\\\"q\\\"\\\\b\"\n") != NULL,
           "PI_CODING_AGENT_DIR quoted for systemd");
        ok(strstr(text, "\nEnvironment=\"PICOCLAW_HOME=/pc\"\n") != NULL, "PICOCLAW_HOME recorded");
        ok(!strstr(text, "HOME=/home/u") && !strstr(text, "OPENCLAW_HOME="),
           "HOME and an empty variable are not recorded");
        ok(strstr(text, "\nEnvironment=\"AGENTMETER_INSTALL_VARS=PI_CODING_AGENT_DIR,PICOCLAW_HOME\"\n") !=
                   NULL,
           "AGENTMETER_INSTALL_VARS lists the recorded names");
        ok(strstr(text, "\nEnvironment=\"AGENTMETER_INSTALL_TIME=2026-11-30T03:28:11Z\"\n") != NULL,
           "AGENTMETER_INSTALL_TIME in RFC 3339 UTC");
        free(text);

        const char *const none[] = { "HOME", "/home/u", NULL };
        c.userdata = (void *)none;
        install_dropin_text(&c, &text, &n);
        ok(n == 0 && strstr(text, "\nEnvironment=\"AGENTMETER_INSTALL_VARS=\"\n"),
           "nothing set: an empty AGENTMETER_INSTALL_VARS still records the install");
        ok(!strstr(text, "AGENTMETER_METRICS_FILE") && !strstr(text, "ReadWritePaths"),
           "no --metrics-dir: no metrics file recorded");
        free(text);

        /* install --metrics-dir: the file and a write permission for the sandbox */
        c.metrics_file = "/var/lib/prometheus/node-exporter/agentmeterd-u.prom";
        is_int(install_dropin_text(&c, &text, &n), 0, "drop-in with a metrics file built");
        ok(strstr(text, "\nEnvironment=\"AGENTMETER_METRICS_FILE=/var/lib/prometheus/node-exporter/agentmeterd-u.prom\"\n") != NULL,
           "metrics file recorded as AGENTMETER_METRICS_FILE");
        ok(strstr(text, "\nReadWritePaths=-/var/lib/prometheus/node-exporter\n") != NULL,
           "its directory made writable (optional: a missing one does not stop the unit)");
        free(text);
        c.metrics_file = "relative.prom";
        is_int(install_dropin_text(&c, &text, &n), -EINVAL, "a metrics file without a directory: -EINVAL");
        c.metrics_file = NULL;

        /* the roots an editor's settings.json named: comments, one line each */
        const char *const config_roots[] = {
                "roo /data/roo/tasks from config /home/u/.config/Code/User/settings.json "
                "roo-cline.customStoragePath [Code]",
                "kilo /x\nEnvironment=EVIL=1 from config /s k [Cursor]", NULL };
        c.config_roots = config_roots;
        is_int(install_dropin_text(&c, &text, &n), 0, "drop-in with roots from settings built");
        ok(strstr(text, "\n#   roo /data/roo/tasks from config /home/u/.config/Code/User/settings.json "
                        "roo-cline.customStoragePath [Code]\n") != NULL,
           "a settings-derived root noted as a comment");
        ok(strstr(text, "\n#   kilo /x Environment=EVIL=1 from") != NULL && !strstr(text, "\nEnvironment=EVIL"),
           "a newline in it cannot end the comment");
        free(text);
        c.config_roots = NULL;
}

/* With the registry's real table: every adapter's relocating variable set
 * in the installing shell is recorded (issues: OPENCLAW_STATE_DIR=<x> and
 * PICOCLAW_HOME=<x> agentmeterctl install). */
static void test_dropin_registry(void)
{
        const char *const env[] = { "HOME", "/home/u", "OPENCLAW_STATE_DIR", "/srv/oc-state",
                                    "PICOCLAW_HOME", "/srv/pico", "PI_CODING_AGENT_SESSION_DIR",
                                    "/srv/pi-flat", NULL };
        struct install_config c = { .vars = registry_env_vars(), .get = kv_get,
                                    .userdata = (void *)env, .now_s = 1796009291 };
        char *text = NULL;
        unsigned n = 0;

        is_int(install_dropin_text(&c, &text, &n), 0, "registry drop-in built");
        is_int(n, 3, "three discovery variables recorded");
        ok(text && strstr(text, "\nEnvironment=\"OPENCLAW_STATE_DIR=/srv/oc-state\"\n"),
           "OPENCLAW_STATE_DIR recorded");
        ok(text && strstr(text, "\nEnvironment=\"PICOCLAW_HOME=/srv/pico\"\n"), "PICOCLAW_HOME recorded");
        ok(text && strstr(text, "\nEnvironment=\"PI_CODING_AGENT_SESSION_DIR=/srv/pi-flat\"\n"),
           "PI_CODING_AGENT_SESSION_DIR recorded");
        ok(text && strstr(text, "AGENTMETER_INSTALL_VARS=") && strstr(text, "OPENCLAW_STATE_DIR") &&
           strstr(text, "PICOCLAW_HOME"), "the names are listed for the daemon");
        free(text);
}

static void test_unit_text(void)
{
        char *text = NULL, path[PATH_MAX];

        is_int(install_unit_text("/opt/am/bin/agentmeterd", &text), 0, "unit text built");
        ok(strncmp(text, INSTALL_MARKER "\n#", strlen(INSTALL_MARKER) + 2) == 0,
           "unit: marker first, then the template");
        ok(strstr(text, "\nExecStart=/opt/am/bin/agentmeterd\n") && !strstr(text, "@BINDIR@"),
           "unit: ExecStart is the given binary");
        ok(strstr(text, "\nExecReload=+/bin/kill -HUP $MAINPID\n") && strstr(text, " %h/.local/state/agentmeterd\n"),
           "unit: $MAINPID and %%h kept as they are");
        ok(strstr(text, "\nType=notify\n") && strstr(text, "\nWatchdogSec=") &&
                   strstr(text, "\nReadWritePaths=%h/.local/state/agentmeterd\n") &&
                   strstr(text, "\nRuntimeDirectory=agentmeterd\n") &&
                   strstr(text, "\nPrivateUsers=yes\n") && strstr(text, "\nWantedBy=default.target\n"),
           "unit: notify, watchdog, directories, sandbox, install section");
        free(text);

        /* The embedded template is the file in systemd/, byte for byte. */
        pathf(path, "%s/systemd/agentmeterd.service.in", am_srcdir());
        text = slurp(path, NULL);
        if (!text) {
                printf("ok %d - # SKIP %s not found (set AM_SRCDIR)\n", ++tap_n, path);
                return;
        }
        ok(strcmp(text, install_unit_template) == 0,
           "install_unit_template equals systemd/agentmeterd.service.in");
        free(text);
}

struct fixture {
        char root[PATH_MAX], cfg[PATH_MAX], pkg[PATH_MAX], unit[PATH_MAX], ddir[PATH_MAX],
                dropin[PATH_MAX], wants[PATH_MAX];
};

static void fixture(struct fixture *fx)
{
        pathf(fx->root, "%s", tap_tmpdir());
        pathf(fx->cfg, "%s/config", fx->root);
        pathf(fx->pkg, "%s/usr-lib-systemd-user", fx->root);
        pathf(fx->unit, "%s/systemd/user/agentmeterd.service", fx->cfg);
        pathf(fx->ddir, "%s/systemd/user/agentmeterd.service.d", fx->cfg);
        pathf(fx->dropin, "%s/50-environment.conf", fx->ddir);
        pathf(fx->wants, "%s/systemd/user/default.target.wants", fx->cfg);
        mkdir(fx->pkg, 0755);
}

static void cleanup(struct fixture *fx)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->root);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", fx->root);
}

/* The package owns exactly this path. */
static const char *package_owns;
static bool owned_by_package(const char *path)
{
        return package_owns && strcmp(package_owns, path) == 0;
}

static void test_install_files(void)
{
        const char *const env[] = { "PI_CODING_AGENT_DIR", "/custom/pi", NULL };
        struct fixture fx;
        struct install_result res;
        const char *dirs[2];
        char *text, path[PATH_MAX];

        fixture(&fx);
        dirs[0] = fx.pkg, dirs[1] = NULL;
        struct install_config c = { .config_home = fx.cfg, .unit_dirs = dirs,
                                    .daemon_path = "/opt/am/bin/agentmeterd", .vars = vars,
                                    .get = kv_get, .userdata = (void *)env, .now_s = 0 };

        is_int(install_files(&c, &res), 0, "install into an empty config home");
        is_int(res.unit_action, INSTALL_UNIT_WRITTEN, "unit written");
        is_str(res.unit_path, fx.unit, "unit under <config>/systemd/user");
        ok(install_has_marker(fx.unit) && install_has_marker(fx.dropin), "both files carry the marker");
        text = slurp(fx.dropin, NULL);
        ok(text && strstr(text, "Environment=\"PI_CODING_AGENT_DIR=/custom/pi\""),
           "drop-in records PI_CODING_AGENT_DIR");
        ok(text && !strstr(text, "PrivateNetwork"), "no team.conf: the sandbox keeps its network off");
        free(text);
        struct stat st;
        ok(stat(fx.unit, &st) == 0 && (st.st_mode & 07777) == 0644, "unit mode 0644");
        {
                char team[PATH_MAX];
                if (snprintf(path, sizeof(path), "%s/agentmeterd", fx.cfg) >= (int)sizeof(path) ||
                    snprintf(team, sizeof(team), "%s/team.conf", path) >= (int)sizeof(team))
                        exit(99);
                mkdir(path, 0700);
                FILE *tf = fopen(team, "w");
                if (tf) {
                        fputs("url = host=db dbname=team\n", tf);
                        fclose(tf);
                }
                is_int(install_files(&c, &res), 0, "install with a team.conf");
                text = slurp(fx.dropin, NULL);
                ok(text && strstr(text, "\nPrivateNetwork=no\n") &&
                   strstr(text, "\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"),
                   "a team.conf: the drop-in gives the daemon the network");
                free(text);
                unlink(team);
        }

        is_int(install_files(&c, &res), 0, "install again");
        is_int(res.unit_action, INSTALL_UNIT_UNCHANGED, "same binary: unit unchanged");
        c.daemon_path = "/elsewhere/agentmeterd";
        install_files(&c, &res);
        is_int(res.unit_action, INSTALL_UNIT_UPDATED, "binary moved: our unit updated");
        text = slurp(fx.unit, NULL);
        ok(text && strstr(text, "\nExecStart=/elsewhere/agentmeterd\n"), "updated ExecStart");
        free(text);

        /* someone else's unit in the config home */
        write_file(fx.unit, "[Service]\nExecStart=/usr/bin/true\n");
        unlink(fx.dropin);
        is_int(install_files(&c, &res), -EEXIST, "refuses to overwrite a unit without the marker");
        is_str(res.conflict, fx.unit, "names the file in the way");
        ok(!exists(fx.dropin), "nothing written when refusing");
        text = slurp(fx.unit, NULL);
        ok(text && strcmp(text, "[Service]\nExecStart=/usr/bin/true\n") == 0, "foreign unit untouched");
        free(text);
        c.force = true;
        is_int(install_files(&c, &res), 0, "--force overwrites it");
        is_int(res.unit_action, INSTALL_UNIT_REPLACED, "reported as replaced");
        ok(install_has_marker(fx.unit), "now ours");
        c.force = false;

        /* someone else's drop-in under our name */
        write_file(fx.dropin, "[Service]\nEnvironment=FOO=1\n");
        is_int(install_files(&c, &res), -EEXIST, "refuses to overwrite a drop-in without the marker");
        is_str(res.conflict, fx.dropin, "names the drop-in");
        unlink(fx.dropin);

        /* a packaged unit elsewhere in the search path is used as is */
        unlink(fx.unit);
        pathf(path, "%s/agentmeterd.service", fx.pkg);
        write_file(path, "[Service]\nExecStart=/usr/bin/agentmeterd\n");
        c.daemon_path = NULL;
        is_int(install_files(&c, &res), 0, "install with a packaged unit");
        is_int(res.unit_action, INSTALL_UNIT_PACKAGED, "packaged unit used");
        is_str(res.unit_path, path, "its path reported");
        ok(!exists(fx.unit) && install_has_marker(fx.dropin), "no unit written, drop-in written");
        ok(!res.from_package, "without dpkg's word it is not the package's");

        /* the Debian package's unit (dpkg-query says whose it is) */
        c.from_package = owned_by_package;
        package_owns = path;
        is_int(install_files(&c, &res), 0, "install with the package's unit");
        ok(res.unit_action == INSTALL_UNIT_PACKAGED && res.from_package, "reported as the package's");
        ok(!exists(fx.unit) && install_has_marker(fx.dropin) && !res.removed[0],
           "only the drop-in written");
        /* a unit an earlier (clone) install wrote would hide the package's: it goes */
        char *ours = NULL;
        is_int(install_unit_text("/opt/x/agentmeterd", &ours), 0, "a clone install's unit text");
        write_file(fx.unit, ours);
        free(ours);
        ok(install_has_marker(fx.unit), "a clone install's unit (marked) in the config home");
        is_int(install_files(&c, &res), 0, "install again once the package is there");
        ok(res.from_package && !exists(fx.unit), "the earlier install's unit is removed");
        is_str(res.removed, fx.unit, "and named");
        is_str(res.unit_path, path, "the package's unit serves");
        /* someone else's unit there is still refused */
        write_file(fx.unit, "[Service]\nExecStart=/usr/bin/true\n");
        is_int(install_files(&c, &res), -EEXIST, "a foreign unit in the config home is still refused");
        ok(exists(fx.unit), "and left alone");
        unlink(fx.unit);
        c.from_package = NULL;
        unlink(path);
        is_int(install_files(&c, &res), -ENOENT, "no unit anywhere and no binary: -ENOENT");
        cleanup(&fx);
}

static void test_uninstall(void)
{
        const char *const env[] = { NULL };
        struct fixture fx;
        struct install_result res;
        struct uninstall_result u;
        char path[PATH_MAX];

        fixture(&fx);
        struct install_config c = { .config_home = fx.cfg, .daemon_path = "/b/agentmeterd",
                                    .vars = vars, .get = kv_get, .userdata = (void *)env };
        install_files(&c, &res);
        mkdir(fx.wants, 0755);
        pathf(path, "%s/agentmeterd.service", fx.wants);
        if (symlink(fx.unit, path) < 0)
                printf("# symlink: %s\n", strerror(errno));

        is_int(uninstall_files(fx.cfg, &u), 0, "uninstall");
        ok(!exists(fx.unit) && !exists(fx.dropin) && !exists(fx.ddir),
           "unit, drop-in and the emptied drop-in directory removed");
        ok(!exists(path), "dangling enable link to our unit removed");
        is_int(u.n_removed, 4, "four things removed and reported");
        is_int(u.n_kept, 0, "nothing kept");
        is_int(uninstall_files(fx.cfg, &u), 0, "uninstall twice is fine");
        is_int(u.n_removed + u.n_kept, 0, "and finds nothing");

        /* only marked files go; the user's own files stay */
        install_files(&c, &res);
        write_file(fx.unit, "[Service]\nExecStart=/mine\n");
        pathf(path, "%s/90-mine.conf", fx.ddir);
        write_file(path, "[Service]\nNice=5\n");
        is_int(uninstall_files(fx.cfg, &u), 0, "uninstall with foreign files around");
        ok(!exists(fx.dropin), "our drop-in removed");
        ok(exists(path) && exists(fx.ddir), "the user's drop-in and its directory stay");
        ok(exists(fx.unit), "the user's unit stays");
        is_int(u.n_kept, 1, "the foreign unit is reported as kept");
        is_str(u.kept[0], fx.unit, "by path");
        cleanup(&fx);
}

int main(void)
{
        test_quote();
        test_dropin_text();
        test_dropin_registry();
        test_unit_text();
        test_install_files();
        test_uninstall();
        return tap_done();
}
