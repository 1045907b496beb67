/* Concurrent clients of the control socket, without a process or a thread
 * per client: the load generators before it (clients.py, a new
 * agentmeterctl process per query; socket_clients.py, 50 Python threads)
 * were on a 2-core machine their own bound. One thread, poll(2): C clients
 * start at once, each asks Q reports in turn, alternating `report daily`
 * and `report model` as clients.py does (optionally every Kth a session
 * report with agentmeterctl's default limit), each on a new connection as
 * agentmeterctl makes one; timed from the first connect attempt to the
 * answer's newline. Prints p50/p99/max per request, the answers, those
 * refused (no connection, or the daemon's "busy") and other errors, the
 * connects that found the listen backlog full and were tried again, and
 * the daemon's CPU time over the run (from /proc/PID/stat).
 *
 *   load-clients SOCKET [--clients C] [--each Q] [--session-every K]
 *                [--tz ZONE] [--pid PID]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CLIENTS_MAX 1000
#define HEAD_KEEP   32

enum kind { DAILY, MODEL, SESSION, KINDS };
static const char *const kind_name[KINDS] = { "daily", "model", "session" };

enum state { WAIT_CONNECT, SENDING, READING, DONE };

struct client {
        enum state st;
        int fd;
        int done;             /* requests answered (or failed) */
        enum kind kind;       /* of the request under way */
        double t0;            /* its first connect attempt, ms */
        size_t sent;
        char head[HEAD_KEEP]; /* the answer's first bytes */
        size_t head_len;
};

struct result {
        double ms;
        enum kind kind;
};

static struct {
        const char *sock, *tz;
        int clients, each, session_every;
        long pid;
} opt = { .clients = 50, .each = 4, .tz = "UTC" };

static struct result *results;
static size_t n_results;
static unsigned refused, errors, backlog_retries;
static char requests[KINDS][256];
static size_t request_len[KINDS];

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* utime + stime of pid in seconds, or -1 */
static double cpu_s(long pid)
{
        char path[64], buf[2048], *p;
        unsigned long long ut, st;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return -1;
        return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static enum kind kind_of(int k, int j)
{
        int n = k * opt.each + j;
        if (opt.session_every && n % opt.session_every == 0)
                return SESSION;
        return (k + j) % 2 == 0 ? DAILY : MODEL;
}

static void finish(struct client *c, int k, bool ok_answer)
{
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        if (ok_answer) {
                results[n_results++] = (struct result){ now_ms() - c->t0, c->kind };
        }
        c->done++;
        if (c->done == opt.each) {
                c->st = DONE;
                return;
        }
        c->kind = kind_of(k, c->done);
        c->t0 = now_ms();
        c->st = WAIT_CONNECT;
}

/* One connect attempt: true when it is settled (connected, or failed and
 * counted), false when the backlog is full and it is to be tried again
 * (on the same socket: an AF_UNIX socket stays unconnected after EAGAIN). */
static bool try_connect(struct client *c, int k)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (c->fd < 0)
                c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) {
                errors++;
                finish(c, k, false);
                return true;
        }
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opt.sock);
        if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                if (errno == EAGAIN || errno == EINTR) { /* a blocking client would wait here */
                        backlog_retries++;
                        return false;
                }
                refused++;
                finish(c, k, false);
                return true;
        }
        c->sent = 0;
        c->head_len = 0;
        c->st = SENDING;
        return true;
}

static void on_send(struct client *c, int k)
{
        ssize_t n = send(c->fd, requests[c->kind] + c->sent, request_len[c->kind] - c->sent,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n < 0) {
                errors++;
                finish(c, k, false);
                return;
        }
        c->sent += (size_t)n;
        if (c->sent == request_len[c->kind])
                c->st = READING;
}

static void on_read(struct client *c, int k)
{
        static char buf[1 << 16];
        ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) { /* closed before a whole answer */
                errors++;
                finish(c, k, false);
                return;
        }
        if (c->head_len < HEAD_KEEP) {
                size_t take = HEAD_KEEP - c->head_len < (size_t)n ? HEAD_KEEP - c->head_len : (size_t)n;
                memcpy(c->head + c->head_len, buf, take);
                c->head_len += take;
        }
        if (buf[n - 1] != '\n')
                return;
        static const char ok[] = "{\"v\":1,\"ok\":true";
        if (c->head_len >= sizeof(ok) - 1 && memcmp(c->head, ok, sizeof(ok) - 1) == 0) {
                finish(c, k, true);
                return;
        }
        if (memmem(c->head, c->head_len, "\"busy\"", 6))
                refused++;
        else
                errors++;
        finish(c, k, false);
}

static int by_ms(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static void print_line(const char *what, enum kind only, bool all)
{
        double *v = malloc((n_results ? n_results : 1) * sizeof(*v));
        size_t n = 0;

        if (!v)
                return;
        for (size_t i = 0; i < n_results; i++)
                if (all || results[i].kind == only)
                        v[n++] = results[i].ms;
        if (n) {
                qsort(v, n, sizeof(*v), by_ms);
                printf("   %-10s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  (%zu answers)\n", what,
                       v[n / 2 < n ? n / 2 : n - 1], v[(size_t)(0.99 * (double)n) < n ? (size_t)(0.99 * (double)n) : n - 1],
                       v[n - 1], n);
        }
        free(v);
}

static int usage(void)
{
        fprintf(stderr, "usage: load-clients SOCKET [--clients C] [--each Q] [--session-every K] "
                        "[--tz ZONE] [--pid PID]\n");
        return 2;
}

int main(int argc, char **argv)
{
        struct client *cl;
        struct pollfd *pf;
        int *who;
        double cpu0 = -1, cpu1 = -1, t_start, t_end;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (a[0] != '-') {
                        opt.sock = a;
                        continue;
                }
                if (!v)
                        return usage();
                if (strcmp(a, "--clients") == 0)
                        opt.clients = atoi(v);
                else if (strcmp(a, "--each") == 0)
                        opt.each = atoi(v);
                else if (strcmp(a, "--session-every") == 0)
                        opt.session_every = atoi(v);
                else if (strcmp(a, "--tz") == 0)
                        opt.tz = v;
                else if (strcmp(a, "--pid") == 0)
                        opt.pid = atol(v);
                else
                        return usage();
                i++;
        }
        if (!opt.sock || opt.clients < 1 || opt.clients > CLIENTS_MAX || opt.each < 1 || opt.each > 1000 ||
            opt.session_every < 0 || strlen(opt.tz) > 64 || strpbrk(opt.tz, "\"\\"))
                return usage();
        for (int k = 0; k < KINDS; k++) /* the requests agentmeterctl sends */
                request_len[k] = (size_t)snprintf(requests[k], sizeof(requests[k]),
                                                  "{\"v\":1,\"cmd\":\"report\",\"report\":\"%s\",\"tz\":\"%s\"%s}\n",
                                                  kind_name[k], opt.tz, k == SESSION ? ",\"limit\":50" : "");
        cl = calloc((size_t)opt.clients, sizeof(*cl));
        pf = calloc((size_t)opt.clients, sizeof(*pf));
        who = calloc((size_t)opt.clients, sizeof(*who));
        results = calloc((size_t)opt.clients * (size_t)opt.each, sizeof(*results));
        if (!cl || !pf || !who || !results) {
                fprintf(stderr, "load-clients: out of memory\n");
                return 1;
        }
        if (opt.pid)
                cpu0 = cpu_s(opt.pid);
        t_start = now_ms();
        for (int k = 0; k < opt.clients; k++)
                cl[k] = (struct client){ .st = WAIT_CONNECT, .fd = -1, .kind = kind_of(k, 0), .t0 = t_start };
        for (;;) {
                bool waiting = false, any = false;
                nfds_t n = 0;

                for (int k = 0; k < opt.clients; k++) {
                        struct client *c = &cl[k];
                        while (c->st == WAIT_CONNECT && try_connect(c, k) && c->st == WAIT_CONNECT)
                                ; /* a failed request: the client's next one */
                        if (c->st == WAIT_CONNECT)
                                waiting = true;
                        if (c->st == SENDING || c->st == READING) {
                                pf[n] = (struct pollfd){ c->fd, c->st == SENDING ? POLLOUT : POLLIN, 0 };
                                who[n++] = k;
                        }
                        any |= c->st != DONE;
                }
                if (!any)
                        break;
                /* a full backlog gives no event to wait for: try again soon */
                if (poll(pf, n, waiting ? 1 : 10000) < 0 && errno != EINTR) {
                        perror("load-clients: poll");
                        return 1;
                }
                for (nfds_t i = 0; i < n; i++) {
                        struct client *c = &cl[who[i]];
                        if (!pf[i].revents)
                                continue;
                        if (c->st == SENDING)
                                on_send(c, who[i]);
                        else if (c->st == READING)
                                on_read(c, who[i]);
                }
        }
        t_end = now_ms();
        if (opt.pid)
                cpu1 = cpu_s(opt.pid);
        printf("   %d clients x %d reports, one thread, a connection per request:\n", opt.clients, opt.each);
        print_line("all", DAILY, true);
        for (int k = 0; k < KINDS; k++)
                print_line(kind_name[k], (enum kind)k, false);
        printf("   %zu answered, %u refused, %u errors, %u connects found the backlog full (tried again); "
               "%.2f s",
               n_results, refused, errors, backlog_retries, (t_end - t_start) / 1e3);
        if (cpu0 >= 0 && cpu1 >= 0)
                printf(", daemon CPU %.2f s", cpu1 - cpu0);
        printf("\n");
        free(cl);
        free(pf);
        free(who);
        free(results);
        return refused || errors ? 3 : 0;
}
