/* The HTTP server (server.h). Every request is checked in this order: the
 * method, the Host header (only this listener's own names: a page from
 * another site that rebinds its name to 127.0.0.1 gets a 403), the Origin
 * when one is sent, then the secret for everything that holds data. No
 * response allows another origin (no CORS header is ever sent). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "web/assets.h"
#include "web/hub.h"
#include "web/mhd.h"
#include "web/server.h"
#include "web/sse.h"

#define MAX_CONNECTIONS 64
#define HOSTS_MAX 8

struct web_server {
        const struct mhd_api *api;
        struct MHD_Daemon *d;
        struct web_hub *hub;
        char secret[WEB_SECRET_LEN + 1];
        char hosts[HOSTS_MAX][300];
        size_t n_hosts;
};

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                          "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static bool host_ok(const struct web_server *s, const char *host)
{
        for (size_t i = 0; host && i < s->n_hosts; i++)
                if (strcasecmp(host, s->hosts[i]) == 0)
                        return true;
        return false;
}

static enum MHD_Result send_body(struct web_server *s, struct MHD_Connection *c, unsigned status,
                                 const char *type, const char *body, bool copy)
{
        struct MHD_Response *resp = s->api->create_response_from_buffer(
                strlen(body), (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
        enum MHD_Result r;

        if (!resp)
                return MHD_NO;
        s->api->add_response_header(resp, "Content-Type", type);
        s->api->add_response_header(resp, "Content-Security-Policy", csp);
        s->api->add_response_header(resp, "X-Content-Type-Options", "nosniff");
        s->api->add_response_header(resp, "Referrer-Policy", "no-referrer");
        s->api->add_response_header(resp, "X-Frame-Options", "DENY");
        s->api->add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
        s->api->add_response_header(resp, "Cache-Control", "no-store");
        if (status == 401)
                s->api->add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"agentmeterd\"");
        r = s->api->queue_response(c, status, resp);
        s->api->destroy_response(resp);
        return r;
}

static enum MHD_Result refuse(struct web_server *s, struct MHD_Connection *c, unsigned status, const char *why,
                              bool page)
{
        char body[256];

        if (page)
                return send_body(s, c, status, "text/html; charset=utf-8", web_denied_html, false);
        snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", why);
        return send_body(s, c, status, "application/json", body, true);
}

/* The secret from ?token= or "Authorization: Bearer ...": 0 ok, else the
 * status (401 none given, 403 a wrong one). */
static unsigned check_secret(struct web_server *s, struct MHD_Connection *c)
{
        const char *t = s->api->lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
        const char *auth = s->api->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

        if (!t && auth && strncasecmp(auth, "Bearer ", 7) == 0)
                t = auth + 7;
        if (!t || !*t)
                return 401;
        return web_secret_equal(s->secret, t) ? 0 : 403;
}

static enum MHD_Result events(struct web_server *s, struct MHD_Connection *c)
{
        struct web_sse *sse = web_sse_new(s->hub);
        struct MHD_Response *resp;
        enum MHD_Result r;

        if (!sse)
                return MHD_NO;
        resp = s->api->create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, web_sse_read, sse,
                                                     web_sse_free);
        if (!resp) {
                web_sse_free(sse);
                return MHD_NO;
        }
        s->api->add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
        s->api->add_response_header(resp, "Cache-Control", "no-store");
        s->api->add_response_header(resp, "X-Content-Type-Options", "nosniff");
        s->api->add_response_header(resp, "Content-Security-Policy", csp);
        r = s->api->queue_response(c, 200, resp);
        s->api->destroy_response(resp);
        return r;
}

static enum MHD_Result state(struct web_server *s, struct MHD_Connection *c)
{
        uint64_t seq = 0;
        char *text = NULL;
        enum MHD_Result r;

        if (web_hub_wait(s->hub, &seq, 5000, &text) <= 0)
                return refuse(s, c, 503, "no state yet", false);
        r = send_body(s, c, 200, "application/json", text, true);
        free(text);
        return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
        struct web_server *s = cls;
        const char *host = s->api->lookup_connection_value(c, MHD_HEADER_KIND, "Host");
        const char *origin = s->api->lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
        const struct web_asset *a;
        char own[320];
        unsigned bad;

        (void)version;
        (void)upload_data;
        if (!*req_cls) { /* a request in progress until on_completed */
                *req_cls = s;
                web_hub_conn(s->hub, 1);
        }
        if (*upload_data_size) /* a body to a GET-only server: dropped */
                *upload_data_size = 0;
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
                return refuse(s, c, 405, "GET only", false);
        if (!host_ok(s, host))
                return refuse(s, c, 403, "Host not allowed (open the page by the address it listens on)", false);
        snprintf(own, sizeof(own), "http://%s", host);
        if (origin && strcasecmp(origin, own) != 0)
                return refuse(s, c, 403, "Origin not allowed", false);
        a = web_asset_find(url);
        if (a)
                return send_body(s, c, 200, a->type, web_asset_text(a), false);
        if (strcmp(url, "/") != 0 && strcmp(url, "/api/state") != 0 && strcmp(url, "/events") != 0)
                return refuse(s, c, 404, "not found", false);
        bad = check_secret(s, c);
        if (bad)
                return refuse(s, c, bad, bad == 401 ? "secret needed" : "wrong secret", strcmp(url, "/") == 0);
        if (strcmp(url, "/") == 0)
                return send_body(s, c, 200, "text/html; charset=utf-8", web_page_html, false);
        if (strcmp(url, "/api/state") == 0)
                return state(s, c);
        return events(s, c);
}

/* Requests, not connections, are counted for the idle exit: libmicrohttpd
 * (a thread per connection) reports a closed connection only when its
 * listening thread next wakes, which may be never while idle. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct web_server *s = cls;

        (void)c;
        (void)toe;
        if (*req_cls) {
                *req_cls = NULL;
                web_hub_conn(s->hub, -1);
        }
}

int web_server_start(int fd, const char *host, unsigned port, const char *secret, struct web_hub *hub,
                     struct web_server **ret, char *err, size_t cap)
{
        struct web_server *s = calloc(1, sizeof(*s));
        const char *names[] = { "127.0.0.1", "localhost", "[::1]", host };

        if (!s)
                return -ENOMEM;
        s->api = mhd_api(err, cap);
        if (!s->api) {
                free(s);
                return -ENOPKG;
        }
        s->hub = hub;
        snprintf(s->secret, sizeof(s->secret), "%s", secret);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                if (!names[i] || (i == 3 && host_ok(s, names[i])))
                        continue;
                snprintf(s->hosts[s->n_hosts++], sizeof(s->hosts[0]), "%s:%u", names[i], port);
                if (port == 80 && s->n_hosts < HOSTS_MAX)
                        snprintf(s->hosts[s->n_hosts++], sizeof(s->hosts[0]), "%s", names[i]);
        }
        s->d = s->api->start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                            MHD_USE_ERROR_LOG,
                                    0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                                    MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                                    MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_NOTIFY_COMPLETED,
                                    on_completed, s, MHD_OPTION_END);
        if (!s->d) {
                snprintf(err, cap, "libmicrohttpd could not start on the listening socket");
                free(s);
                return -EIO;
        }
        *ret = s;
        return 0;
}

void web_server_stop(struct web_server *s)
{
        if (!s)
                return;
        s->api->stop_daemon(s->d);
        free(s);
}
