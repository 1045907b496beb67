/* `agentmeterctl install --web`: the socket and service units of the web
 * dashboard (a user socket on 127.0.0.1:8791, or --listen's address, that
 * starts `agentmeterctl web` on the first connection; it exits when idle
 * and the socket stays), written with install's marker and removed by
 * uninstall only when they carry it. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define WEB_SOCKET_UNIT "agentmeterd-web.socket"
#define WEB_SERVICE_UNIT "agentmeterd-web.service"

/* The two units' text for this agentmeterctl (ctl_path) and address
 * (HOST:PORT). -ENOMEM. */
int web_units_text(const char *ctl_path, const char *listen, char **ret_socket, char **ret_service);
/* Writes both under config_home/systemd/user. -EEXIST (conflict names the
 * file) when one is there without the marker and !force; other -errno. */
int web_units_write(const char *config_home, const char *ctl_path, const char *listen, bool force,
                    char conflict[PATH_MAX]);
/* Removes those with the marker; the paths removed into removed[] (up to
 * 2), their count returned, or -errno. */
int web_units_remove(const char *config_home, char removed[2][PATH_MAX]);
/* The address the installed socket unit listens on (its ListenStream=), or
 * -ENOENT when none is installed. */
int web_units_listen(const char *config_home, char *buf, size_t cap);
