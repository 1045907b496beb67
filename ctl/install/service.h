/* `agentmeterctl install` / `uninstall` as the user sees them: find the
 * user unit search path and the agentmeterd binary, write or remove the
 * files (install.h), and drive `systemctl --user`, printing every step. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* Runs argv (argv[0] looked up in PATH) with fork+execvp and waits.
 * Returns its exit status (0..255), 127 when it could not be run, or -errno. */
int service_run(FILE *log, const char *const *argv);

/* 0, -EEXIST (a file without the marker is in the way), -EIO (systemctl
 * failed; the files are in place), other -errno. Messages go to out/err. */
/* metrics_dir: NULL, or node_exporter's textfile directory (the daemon
 * writes agentmeterd-<login>.prom there). */
/* Whether the installed Debian package agentmeterd owns path
 * (`dpkg-query -S PATH`; false without dpkg). */
bool service_from_package(const char *path);

/* web_listen: NULL, or install --web's address (HOST:PORT) for the web
 * dashboard's socket unit (install/web-units.h), enabled and started too. */
int service_install(bool no_start, bool force, const char *metrics_dir, const char *web_listen, FILE *out,
                    FILE *err);
int service_uninstall(FILE *out, FILE *err);
