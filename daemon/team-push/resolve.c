/* Asynchronous host name lookups for the team push (team-push/resolve.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "team-push/resolve.h"

#define HOSTS_MAX 8
#define ZOMBIES_MAX 8

struct team_resolve {
        sd_event_source *io;
        int fd; /* eventfd the resolver's threads write to */
        char *hosts[HOSTS_MAX]; /* NULL: needs no lookup */
        size_t n_hosts;
        struct addrinfo hints;
        struct gaicb *req[HOSTS_MAX];
        bool active;
        struct gaicb *zombie[ZOMBIES_MAX]; /* given up on, not ended yet */
        char *zombie_name[ZOMBIES_MAX];
        void (*done)(void *u);
        void *u;
};

static void free_req(struct gaicb *g)
{
        if (g->ar_result)
                freeaddrinfo(g->ar_result);
        free(g);
}

/* Frees the abandoned lookups that ended (all of them, waiting, with wait). */
static void reap(struct team_resolve *r, bool wait)
{
        for (size_t z = 0; z < ZOMBIES_MAX; z++) {
                if (!r->zombie[z])
                        continue;
                if (gai_error(r->zombie[z]) == EAI_INPROGRESS) {
                        if (!wait)
                                continue;
                        const struct gaicb *list[1] = { r->zombie[z] };
                        (void)gai_suspend(list, 1, NULL);
                }
                free_req(r->zombie[z]);
                free(r->zombie_name[z]);
                r->zombie[z] = NULL;
                r->zombie_name[z] = NULL;
        }
}

static bool all_ended(const struct team_resolve *r)
{
        for (size_t i = 0; i < r->n_hosts; i++)
                if (r->req[i] && gai_error(r->req[i]) == EAI_INPROGRESS)
                        return false;
        return true;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct team_resolve *r = u;
        uint64_t v;

        (void)s;
        (void)revents;
        (void)!read(fd, &v, sizeof(v));
        reap(r, false);
        if (r->active && all_ended(r)) {
                r->active = false;
                r->done(r->u);
        }
        return 0;
}

static void notify(union sigval sv)
{
        uint64_t one = 1;
        (void)!write(sv.sival_int, &one, sizeof(one)); /* in the resolver's thread */
}

static bool is_name(const char *h)
{
        struct in6_addr a6;
        struct in_addr a4;
        return h[0] && h[0] != '/' && h[0] != '@' && inet_pton(AF_INET, h, &a4) != 1 &&
               inet_pton(AF_INET6, h, &a6) != 1;
}

int team_resolve_new(sd_event *e, const char *hosts, void (*done)(void *u), void *u,
                     struct team_resolve **ret)
{
        struct team_resolve *r = calloc(1, sizeof(*r));
        const char *s = hosts;

        if (!r)
                return -ENOMEM;
        r->done = done;
        r->u = u;
        r->hints.ai_socktype = SOCK_STREAM;
        r->hints.ai_flags = AI_ADDRCONFIG;
        r->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->fd < 0 || sd_event_add_io(e, &r->io, r->fd, EPOLLIN, on_io, r) < 0) {
                r->io = NULL;
                team_resolve_free(r);
                return -ENOMEM;
        }
        while (s && r->n_hosts < HOSTS_MAX) {
                size_t n = strcspn(s, ",");
                char *h = strndup(s, n);
                if (h && !is_name(h)) {
                        free(h);
                        h = NULL;
                }
                r->hosts[r->n_hosts++] = h;
                if (!s[n])
                        break;
                s += n + 1;
        }
        *ret = r;
        return 0;
}

bool team_resolve_needed(const struct team_resolve *r)
{
        for (size_t i = 0; i < r->n_hosts; i++)
                if (r->hosts[i])
                        return true;
        return false;
}

void team_resolve_cancel(struct team_resolve *r)
{
        r->active = false;
        reap(r, false);
        for (size_t i = 0; i < HOSTS_MAX; i++) {
                if (!r->req[i])
                        continue;
                if (gai_cancel(r->req[i]) == EAI_NOTCANCELED) {
                        size_t z = 0;
                        while (z < ZOMBIES_MAX && r->zombie[z])
                                z++;
                        if (z < ZOMBIES_MAX) {
                                /* its name outlives the host list */
                                r->zombie_name[z] = strdup(r->req[i]->ar_name);
                                r->req[i]->ar_name = r->zombie_name[z] ? r->zombie_name[z] : "";
                                r->zombie[z] = r->req[i];
                                r->req[i] = NULL;
                                continue;
                        }
                        const struct gaicb *list[1] = { r->req[i] };
                        (void)gai_suspend(list, 1, NULL); /* too many slow lookups at once */
                }
                free_req(r->req[i]);
                r->req[i] = NULL;
        }
}

int team_resolve_start(struct team_resolve *r)
{
        struct sigevent sev = { .sigev_notify = SIGEV_THREAD, .sigev_notify_function = notify };
        struct gaicb *list[HOSTS_MAX];
        size_t n = 0;
        int e;

        team_resolve_cancel(r);
        for (size_t i = 0; i < r->n_hosts; i++) {
                if (!r->hosts[i])
                        continue;
                r->req[i] = calloc(1, sizeof(*r->req[i]));
                if (!r->req[i])
                        return -ENOMEM;
                r->req[i]->ar_name = r->hosts[i];
                r->req[i]->ar_request = &r->hints;
                list[n++] = r->req[i];
        }
        sev.sigev_value.sival_int = r->fd;
        r->active = true;
        e = getaddrinfo_a(GAI_NOWAIT, list, (int)n, &sev);
        if (e != 0) {
                r->active = false;
                return e == EAI_MEMORY ? -ENOMEM : -EAGAIN;
        }
        return 0;
}

int team_resolve_hostaddr(struct team_resolve *r, char *buf, size_t cap, char *err, size_t err_cap)
{
        size_t len = 0;
        bool any = false;

        buf[0] = 0;
        for (size_t i = 0; i < r->n_hosts; i++) {
                char a[INET6_ADDRSTRLEN] = "";
                struct gaicb *g = r->req[i];
                if (g) {
                        int e = gai_error(g);
                        struct addrinfo *ai = e == 0 ? g->ar_result : NULL;
                        if (!ai && r->n_hosts == 1) {
                                snprintf(err, err_cap, "cannot resolve host name \"%s\": %s", r->hosts[i],
                                         gai_strerror(e));
                                return -ENOENT;
                        }
                        if (ai && ai->ai_family == AF_INET)
                                inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, a, sizeof(a));
                        else if (ai && ai->ai_family == AF_INET6)
                                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, a, sizeof(a));
                        any = any || a[0];
                }
                int k = snprintf(buf + len, cap - len, "%s%s", i ? "," : "", a);
                if (k < 0 || (size_t)k >= cap - len)
                        return -ENOBUFS;
                len += (size_t)k;
        }
        if (!any)
                buf[0] = 0;
        return 0;
}

struct team_resolve *team_resolve_free(struct team_resolve *r)
{
        if (!r)
                return NULL;
        team_resolve_cancel(r);
        reap(r, true); /* at exit or a reconfiguration: the threads must be done */
        for (size_t i = 0; i < HOSTS_MAX; i++)
                free(r->hosts[i]);
        sd_event_source_disable_unref(r->io);
        if (r->fd >= 0)
                close(r->fd);
        free(r);
        return NULL;
}
