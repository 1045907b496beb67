/* The web dashboard's units (web-units.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "install/install.h"
#include "install/web-units.h"

int web_units_text(const char *ctl_path, const char *listen, char **ret_socket, char **ret_service)
{
        _cleanup_free_ char *exec = NULL;

        if (install_quote(ctl_path, true, &exec) < 0)
                return -ENOMEM;
        if (asprintf(ret_socket,
                     INSTALL_MARKER "\n"
                     "[Unit]\n"
                     "Description=agentmeterd web dashboard socket (agentmeterctl web)\n"
                     "Documentation=man:agentmeterctl(1)\n"
                     "\n"
                     "[Socket]\n"
                     "ListenStream=%s\n"
                     "NoDelay=true\n"
                     "\n"
                     "[Install]\n"
                     "WantedBy=sockets.target\n",
                     listen) < 0)
                return -ENOMEM;
        if (asprintf(ret_service,
                     INSTALL_MARKER "\n"
                     "[Unit]\n"
                     "Description=agentmeterd web dashboard (agentmeterctl web)\n"
                     "Documentation=man:agentmeterctl(1)\n"
                     "Requires=" WEB_SOCKET_UNIT "\n"
                     "After=" WEB_SOCKET_UNIT " agentmeterd.service\n"
                     "\n"
                     "[Service]\n"
                     "ExecStart=%s web\n"
                     "NoNewPrivileges=yes\n"
                     "LockPersonality=yes\n"
                     "RestrictRealtime=yes\n"
                     "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"
                     "SystemCallArchitectures=native\n",
                     exec) < 0) {
                free(*ret_socket);
                *ret_socket = NULL;
                return -ENOMEM;
        }
        return 0;
}

#define DIR_MAX (PATH_MAX - 64) /* room for "/" and a unit name */

static int unit_dir(const char *config_home, char dir[DIR_MAX])
{
        int n = snprintf(dir, DIR_MAX, "%s/systemd/user", config_home);
        return n < 0 || n >= DIR_MAX ? -ENAMETOOLONG : 0;
}

int web_units_write(const char *config_home, const char *ctl_path, const char *listen, bool force,
                    char conflict[PATH_MAX])
{
        _cleanup_free_ char *sock = NULL, *svc = NULL;
        char dir[DIR_MAX], path[2][PATH_MAX];
        const char *names[2] = { WEB_SOCKET_UNIT, WEB_SERVICE_UNIT };
        int r = unit_dir(config_home, dir);

        if (r < 0)
                return r;
        r = web_units_text(ctl_path, listen, &sock, &svc);
        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
                if (!force && access(path[i], F_OK) == 0 && !install_has_marker(path[i])) {
                        snprintf(conflict, PATH_MAX, "%s", path[i]);
                        return -EEXIST;
                }
        }
        r = install_write_file(dir, path[0], sock);
        if (r >= 0)
                r = install_write_file(dir, path[1], svc);
        return r;
}

int web_units_remove(const char *config_home, char removed[2][PATH_MAX])
{
        const char *names[2] = { WEB_SOCKET_UNIT, WEB_SERVICE_UNIT };
        char dir[DIR_MAX], path[PATH_MAX];
        int n = 0, r = unit_dir(config_home, dir);

        if (r < 0)
                return r;
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                if (!install_has_marker(path))
                        continue;
                if (unlink(path) < 0)
                        return -errno;
                snprintf(removed[n++], PATH_MAX, "%s", path);
        }
        return n;
}

int web_units_listen(const char *config_home, char *buf, size_t cap)
{
        char dir[DIR_MAX], path[PATH_MAX], line[512];
        _cleanup_fclose_ FILE *f = NULL;
        int r = unit_dir(config_home, dir);

        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/%s", dir, WEB_SOCKET_UNIT);
        f = fopen(path, "re");
        if (!f)
                return -ENOENT;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "ListenStream=", 13) == 0) {
                        line[strcspn(line, "\n")] = 0;
                        snprintf(buf, cap, "%s", line + 13);
                        return 0;
                }
        return -ENOENT;
}
