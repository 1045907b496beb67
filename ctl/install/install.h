/* The files `agentmeterctl install` writes and `uninstall` removes: the user
 * unit (when no unit is installed already) and the drop-in that records the
 * installing shell's discovery variables. Pure file work under a given
 * config home, so tests run it without systemctl (see service.h). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define INSTALL_MARKER "# Written by agentmeterctl install; removed by agentmeterctl uninstall."
#define INSTALL_UNIT_NAME "agentmeterd.service"
#define INSTALL_DROPIN_DIR "agentmeterd.service.d"
#define INSTALL_DROPIN_NAME "50-environment.conf"

/* systemd/agentmeterd.service.in, byte for byte (a unit test compares). */
extern const char install_unit_template[];

/* Quotes s for a unit file, malloc'd into *ret: with exec=false for the
 * inside of Environment="..." (escapes \ " and control characters, % as %%);
 * with exec=true as one ExecStart= word (also $ as $$, quoted only when it
 * holds blanks, quotes or backslashes). -ENOMEM. */
int install_quote(const char *s, bool exec, char **ret);

struct install_config {
        const char *config_home;      /* ${XDG_CONFIG_HOME:-~/.config} */
        const char *const *unit_dirs; /* the rest of the user unit search path, NULL-terminated */
        const char *daemon_path;      /* ExecStart= of a unit install writes (may be NULL) */
        const char *const *vars;      /* discovery variables: registry_env_vars */
        const char *(*get)(void *userdata, const char *name); /* NULL = unset */
        void *userdata;
        int64_t now_s;                /* recorded as AGENTMETER_INSTALL_TIME */
        bool force;                   /* overwrite files without the marker */
        const char *metrics_file;     /* NULL, or the Prometheus textfile the daemon keeps
                                       * (install --metrics-dir): recorded as
                                       * AGENTMETER_METRICS_FILE with ReadWritePaths=-DIR */
        /* NULL, or NULL-terminated: the roots the harnesses' own settings
         * named as this shell's discovery found them ("roo /data/roo/tasks
         * from config <settings.json> roo-cline.customStoragePath [Code]"),
         * written into the drop-in as comments: the daemon reads the same
         * files itself (and follows their changes), nothing to carry over */
        const char *const *config_roots;
        /* NULL, or whether the installed Debian package agentmeterd owns
         * path (service.c asks dpkg-query) */
        bool (*from_package)(const char *path);
};

enum install_unit_action {
        INSTALL_UNIT_WRITTEN = 1,   /* there was none: wrote ours */
        INSTALL_UNIT_UPDATED = 2,   /* ours, rewritten (e.g. the binary moved) */
        INSTALL_UNIT_UNCHANGED = 3, /* ours, already as it would be written */
        INSTALL_UNIT_REPLACED = 4,  /* someone else's, replaced because of force */
        INSTALL_UNIT_PACKAGED = 5,  /* a unit elsewhere in the search path: used as is */
};


struct install_result {
        enum install_unit_action unit_action;
        char unit_path[PATH_MAX];   /* the unit the user manager will load */
        char dropin_path[PATH_MAX];
        char conflict[PATH_MAX];    /* with -EEXIST: the file that lacks the marker */
        unsigned n_recorded;        /* discovery variables recorded */
        bool from_package;          /* INSTALL_UNIT_PACKAGED: the unit is the Debian package's */
        char removed[PATH_MAX];     /* a unit an earlier install wrote under the config home,
                                     * removed because the package's now serves ("" if none) */
};

/* The unit install writes: the marker line, then the template with
 * @BINDIR@/agentmeterd replaced by daemon_path. -ENOMEM. */
int install_unit_text(const char *daemon_path, char **ret_text);
/* The drop-in: marker, [Service], one Environment= per set variable (HOME
 * excluded), AGENTMETER_INSTALL_VARS and AGENTMETER_INSTALL_TIME; the
 * config_roots as comments. */
int install_dropin_text(const struct install_config *c, char **ret_text, unsigned *ret_n);

/* Writes the unit when needed and the drop-in, atomically each. A unit
 * of the Debian package (from_package) is used as it is, and one that an
 * earlier install wrote under the config home, which would hide it, is
 * removed; then only the drop-in is written. -EEXIST (ret->conflict says
 * which file; nothing written) when a file there lacks the marker and
 * !force; -ENOENT when a unit must be written but daemon_path is NULL;
 * other -errno. */
int install_files(const struct install_config *c, struct install_result *ret);

/* Writes text to path (mode 0644) through a temporary file in dir and
 * rename(), making dir first. 0 or -errno. */
int install_write_file(const char *dir, const char *path, const char *text);

/* true when path is a regular file whose first line is INSTALL_MARKER. */
bool install_has_marker(const char *path);

struct uninstall_result {
        char removed[4][PATH_MAX];  /* files and directories removed */
        unsigned n_removed;
        char kept[2][PATH_MAX];     /* unit/drop-in present without the marker */
        unsigned n_kept;
};

/* Removes the drop-in (and its directory when empty), the unit under
 * config_home and a dangling enable link to it, each only when install
 * wrote it. 0 or -errno. */
int uninstall_files(const char *config_home, struct uninstall_result *ret);
