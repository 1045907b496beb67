/* `agentmeterctl web` (web.h): the listening socket, the secret, the URL,
 * then one loop in the main thread over the feed (the daemon's stream) and
 * the signals while libmicrohttpd's threads serve the browsers. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "install/web-units.h"
#include "paths.h"
#include "timefmt.h"
#include "web/feed.h"
#include "web/hub.h"
#include "web/listen.h"
#include "web/secret.h"
#include "web/server.h"
#include "web/web.h"

/* Socket-activated, it exits when no connection has been open for this
 * long ($AGENTMETER_WEB_IDLE_SEC; 0 never); systemd starts it again on the
 * next one. Started by hand it never exits on its own. */
#define IDLE_DEFAULT_SEC 600

static int load_secret(char secret[WEB_SECRET_LEN + 1])
{
        char path[4096], err[4400];
        int r = web_secret_path(path, sizeof(path));

        if (r < 0) {
                fprintf(stderr, "agentmeterctl: no $XDG_RUNTIME_DIR or state directory for the web secret\n");
                return r;
        }
        r = web_secret_load(path, secret, err, sizeof(err));
        if (r < 0)
                fprintf(stderr, "agentmeterctl: %s\n", err);
        return r;
}

static int64_t idle_ms(bool activated)
{
        const char *e = getenv("AGENTMETER_WEB_IDLE_SEC");
        long v = e && *e ? strtol(e, NULL, 10) : IDLE_DEFAULT_SEC;

        if (!activated || v <= 0)
                return 0;
        return (int64_t)(v > 86400 ? 86400 : v) * 1000;
}

static int serve(const struct web_options *o, struct web_listen *l, const char *secret, int sigfd)
{
        struct web_feed_options fo = { .socket_path = o->socket_path, .state_dir = o->state_dir, .tz = o->tz,
                                       .team = o->team, .team_url = o->team_url };
        struct web_hub hub;
        struct web_feed feed;
        struct web_server *srv = NULL;
        char err[512];
        int64_t idle = idle_ms(l->activated);
        int r = web_hub_init(&hub);

        if (r < 0)
                return EXIT_ERR;
        r = web_server_start(l->fd, l->host, l->port, secret, &hub, &srv, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "agentmeterctl: %s\n", err);
                close(l->fd);
                web_hub_free(&hub);
                return EXIT_ERR;
        }
        web_feed_start(&feed, &fo, &hub);
        for (;;) {
                struct pollfd p[2] = { { .fd = sigfd, .events = POLLIN },
                                       { .fd = web_feed_fd(&feed), .events = POLLIN } };
                int64_t now = timefmt_mono_ms(), wake = web_feed_next(&feed);
                if (idle && wake > now + 1000)
                        wake = now + 1000;
                int n = poll(p, 2, wake > now ? (int)(wake - now) : 0);
                if (n < 0 && errno != EINTR)
                        break;
                if (n > 0 && (p[0].revents & POLLIN)) {
                        struct signalfd_siginfo si;
                        /* taken, so it is not pending when the mask is restored */
                        (void)!read(sigfd, &si, sizeof(si));
                        break;
                }
                web_feed_run(&feed, n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)));
                if (idle && web_hub_idle(&hub, idle)) {
                        fprintf(stderr, "agentmeterctl web: idle for %lld s, exiting (the socket stays)\n",
                                (long long)(idle / 1000));
                        break;
                }
        }
        web_hub_stop(&hub);
        web_server_stop(srv);
        web_feed_free(&feed);
        web_hub_free(&hub);
        return EXIT_OK;
}

int web_run(const struct web_options *o)
{
        const char *spec = o->listen ? o->listen : WEB_DEFAULT_LISTEN;
        char secret[WEB_SECRET_LEN + 1], err[512];
        struct web_listen l;
        sigset_t mask, old;
        int r, sigfd;

        if (o->print_url) {
                char cfg[4096], installed[300];
                /* the installed socket's address, unless --listen names one */
                if (!o->listen && paths_config_home(cfg, sizeof(cfg)) == 0 &&
                    web_units_listen(cfg, installed, sizeof(installed)) == 0)
                        spec = installed;
                if (web_listen_parse(spec, &l, err, sizeof(err)) < 0)
                        return cli_usage_error("%s", err);
                if (load_secret(secret) < 0)
                        return EXIT_ERR;
                printf("http://%s:%u/?token=%s\n", l.url_host, l.port, secret);
                return EXIT_OK;
        }
        r = web_listen_open(spec, &l, err, sizeof(err));
        if (r == -EINVAL)
                return cli_usage_error("%s", err);
        if (r < 0) {
                fprintf(stderr, "agentmeterctl: %s\n", err);
                return EXIT_ERR;
        }
        if (load_secret(secret) < 0) {
                close(l.fd);
                return EXIT_ERR;
        }
        printf("http://%s:%u/?token=%s\n", l.url_host, l.port, secret);
        fflush(stdout);
        if (!l.loopback)
                fprintf(stderr, "agentmeterctl web: WARNING: listening on %s:%u, which is NOT loopback: anyone "
                                "who can reach it and learns the secret sees your usage\n",
                        l.host, l.port);
        /* blocked before libmicrohttpd's threads start: they inherit it */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, &old);
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0) {
                fprintf(stderr, "agentmeterctl: signalfd: %m\n");
                close(l.fd);
                return EXIT_ERR;
        }
        r = serve(o, &l, secret, sigfd);
        close(sigfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}
