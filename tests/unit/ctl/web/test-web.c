/* Unit tests for `agentmeterctl web`'s parts: the secret file (made once,
 * 0600, refused when others could read it or it is not 64 hex digits),
 * the constant-time comparison, --listen parsing, the hub's sequence and
 * wait, the page state (every ledger name escaped, the report's marks),
 * the report requests (the month's sessions bounded),
 * and the socket and service units of install --web. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "install/web-units.h"
#include "tap.h"
#include "web/feed.h"
#include "web/hub.h"
#include "web/listen.h"
#include "web/secret.h"
#include "web/view.h"

static void test_secret(void)
{
        char dir[] = "/tmp/amweb.XXXXXX", path[256], s1[WEB_SECRET_LEN + 1], s2[WEB_SECRET_LEN + 1], err[512];
        struct stat st;
        FILE *f;

        ok(mkdtemp(dir) != NULL, "a temporary directory");
        snprintf(path, sizeof(path), "%s/sub/secret", dir);
        is_int(web_secret_load(path, s1, err, sizeof(err)), 0, "a missing secret is made");
        is_int(strlen(s1), 64, "... 64 hex digits");
        ok(strspn(s1, "0123456789abcdef") == 64, "... lower-case hex only");
        ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "... in a 0600 file");
        snprintf(err, sizeof(err), "%s/sub", dir);
        ok(stat(err, &st) == 0 && (st.st_mode & 0777) == 0700, "... in a 0700 directory");
        is_int(web_secret_load(path, s2, err, sizeof(err)), 0, "loaded again");
        is_str(s2, s1, "... the same secret");
        ok(web_secret_equal(s1, s2), "equal to itself");
        s2[63] = s2[63] == 'a' ? 'b' : 'a';
        ok(!web_secret_equal(s1, s2), "one digit off: not equal");
        ok(!web_secret_equal(s1, NULL) && !web_secret_equal(s1, "") && !web_secret_equal(s1, "abc"),
           "none, empty or short: not equal");
        chmod(path, 0640);
        is_int(web_secret_load(path, s2, err, sizeof(err)), -EPERM, "a secret others could read is refused");
        ok(strstr(err, "0600") != NULL, "... saying why (%s)", err);
        chmod(path, 0600);
        f = fopen(path, "w");
        fputs("not hex at all\n", f);
        fclose(f);
        is_int(web_secret_load(path, s2, err, sizeof(err)), -EBADMSG, "a secret that is not 64 hex digits is refused");
        unlink(path);
        snprintf(err, sizeof(err), "%s/sub", dir);
        rmdir(err);
        rmdir(dir);
}

static void test_listen(void)
{
        struct web_listen l;
        char err[512];

        is_int(web_listen_parse("127.0.0.1:8791", &l, err, sizeof(err)), 0, "127.0.0.1:8791");
        ok(strcmp(l.host, "127.0.0.1") == 0 && l.port == 8791 && l.loopback, "... loopback, port 8791");
        is_int(web_listen_parse("localhost:0", &l, err, sizeof(err)), 0, "localhost:0");
        ok(strcmp(l.host, "127.0.0.1") == 0 && l.port == 0, "... is 127.0.0.1");
        is_int(web_listen_parse("[::1]:9000", &l, err, sizeof(err)), 0, "[::1]:9000");
        ok(strcmp(l.host, "[::1]") == 0 && l.loopback, "... written in brackets, loopback");
        is_int(web_listen_parse("0.0.0.0:80", &l, err, sizeof(err)), 0, "0.0.0.0:80");
        ok(!l.loopback && strcmp(l.url_host, "127.0.0.1") == 0, "... not loopback; the URL names 127.0.0.1");
        is_int(web_listen_parse("192.0.2.1:8080", &l, err, sizeof(err)), 0, "192.0.2.1:8080");
        ok(!l.loopback, "... not loopback");
        const char *bad[] = { "example.com:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", ":80",
                              "[::1:80", "127.0.0.1:8x", "::1:80" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                is_int(web_listen_parse(bad[i], &l, err, sizeof(err)), -EINVAL, bad[i]);
}

static void test_hub(void)
{
        struct web_hub h;
        uint64_t seq = 0;
        char *got = NULL;

        is_int(web_hub_init(&h), 0, "hub");
        is_int(web_hub_wait(&h, &seq, 10, &got), 0, "no state yet: the wait times out");
        web_hub_publish(&h, strdup("{\"a\":1}"));
        is_int(web_hub_wait(&h, &seq, 10, &got), 1, "a state: returned at once");
        ok(got && strcmp(got, "{\"a\":1}") == 0 && seq == 1, "... the text, sequence 1");
        free(got);
        web_hub_publish(&h, strdup("{\"a\":1}"));
        is_int(web_hub_wait(&h, &seq, 10, &got), 0, "the same text again is no new state");
        web_hub_publish(&h, strdup("{\"a\":2}"));
        is_int(web_hub_wait(&h, &seq, 10, &got), 1, "a changed one is");
        ok(seq == 2, "... sequence 2");
        free(got);
        web_hub_conn(&h, 1);
        ok(!web_hub_idle(&h, 0), "a request in progress: not idle");
        web_hub_conn(&h, -1);
        ok(web_hub_idle(&h, 0), "none: idle");
        web_hub_stop(&h);
        is_int(web_hub_wait(&h, &seq, 1000, &got), -ECANCELED, "stopped: waits end");
        web_hub_free(&h);
}

static void test_view(void)
{
        struct web_data d = { .live = true };
        const char *rep = "{\"report\":\"model\",\"rows\":[{\"harness\":\"pi\",\"model\":\"m<script>\","
                          "\"cost_usd\":1.5,\"cost_source\":\"computed\",\"unpriced_events\":1,"
                          "\"total_tokens\":1234,\"events\":2}],"
                          "\"totals\":{\"cost_usd\":1.5,\"cost_source\":\"computed\",\"unpriced_events\":1,"
                          "\"total_tokens\":1234,\"events\":2}}";
        json_object *st, *row = json_tokener_parse("{\"key\":\"k1\",\"harness\":\"pi\",\"model\":\"x\\\"><img src=y>\","
                                                   "\"project\":\"/p/<b>\",\"time\":\"2026-12-01T10:00:00Z\","
                                                   "\"total_tokens\":10,\"cost_usd\":null}");
        char *text;
        const char *view, *calls;

        for (int p = 0; p < TOP_PERIODS; p++)
                d.period[p] = json_tokener_parse(rep);
        d.tops[WEB_TOP_MODEL] = json_tokener_parse(rep);
        d.recent[d.n_recent++] = row;
        text = web_view_state(&d);
        ok(text != NULL, "the state is made");
        st = json_tokener_parse(text);
        view = json_object_get_string(json_object_object_get(st, "view"));
        calls = json_object_get_string(json_object_object_get(st, "calls"));
        ok(view && strstr(view, "<span class=\"v\">~$1.500000*</span>"), "a period's cost with the marks ~ and *");
        ok(view && strstr(view, "m&lt;script&gt;") && !strstr(view, "<script"), "a model name is escaped");
        ok(calls && strstr(calls, "x&quot;&gt;&lt;img src=y&gt;") && !strstr(calls, "<img"),
           "a call's model is escaped, attribute quotes too");
        ok(calls && strstr(calls, "&lt;b&gt;") && !strstr(calls, "<b>"), "... and its project");
        ok(calls && strstr(calls, "<td class=\"num\">\xe2\x80\x94</td>"), "an unknown cost is the dash");
        ok(json_object_get_boolean(json_object_object_get(st, "live")), "live");
        json_object_put(st);
        free(text);
        for (int p = 0; p < TOP_PERIODS; p++)
                json_object_put(d.period[p]);
        json_object_put(d.tops[WEB_TOP_MODEL]);
        json_object_put(row);
}

/* The page's report requests: the month's sessions bounded to the newest
 * WEB_TOP_READ (a heavy user's month has thousands), every other report
 * whole; a top table of a limited session report says it is of the newest. */
static void test_requests(void)
{
        json_object *req = web_report_request("session", "2026-12-01", NULL, "UTC"), *v;
        struct web_data d = { .live = true };
        char *text, rep[256];
        const char *view;

        ok(req && json_object_object_get_ex(req, "limit", &v) && json_object_get_int(v) == WEB_TOP_READ,
           "session: limit %d", WEB_TOP_READ);
        ok(req && strcmp(json_object_get_string(json_object_object_get(req, "since")), "2026-12-01") == 0 &&
                   strcmp(json_object_get_string(json_object_object_get(req, "tz")), "UTC") == 0,
           "  since and tz");
        json_object_put(req);
        req = web_report_request("project", "2026-12-01", NULL, NULL);
        ok(req && !json_object_object_get_ex(req, "limit", NULL) && !json_object_object_get_ex(req, "tz", NULL),
           "project: no limit (every project), no zone given");
        json_object_put(req);
        req = web_report_request("daily", "2026-12-01", "model", "");
        ok(req && !json_object_object_get_ex(req, "limit", NULL) &&
                   strcmp(json_object_get_string(json_object_object_get(req, "breakdown")), "model") == 0,
           "daily by model: no limit, the breakdown");
        json_object_put(req);

        snprintf(rep, sizeof(rep),
                 "{\"report\":\"session\",\"limit\":2,\"rows_total\":3000,\"rows\":["
                 "{\"harness\":\"pi\",\"session\":\"s1\",\"project\":\"/p/a\",\"cost_usd\":1},"
                 "{\"harness\":\"pi\",\"session\":\"s2\",\"project\":\"/p/b\",\"cost_usd\":2}]}");
        d.tops[WEB_TOP_SESSION] = json_tokener_parse(rep);
        text = web_view_state(&d);
        json_object *st = text ? json_tokener_parse(text) : NULL;
        view = st ? json_object_get_string(json_object_object_get(st, "view")) : NULL;
        ok(view && strstr(view, "the costliest of the newest 2 of 3000 sessions"),
           "top sessions of a limited report: said to be of the newest");
        json_object_put(st);
        free(text);
        json_object_put(d.tops[WEB_TOP_SESSION]);
        d.tops[WEB_TOP_SESSION] = json_tokener_parse("{\"report\":\"session\",\"rows_total\":1,\"rows\":["
                                                     "{\"harness\":\"pi\",\"session\":\"s1\",\"cost_usd\":1}]}");
        text = web_view_state(&d);
        ok(text && !strstr(text, "the newest"), "  every session there: nothing said");
        free(text);
        json_object_put(d.tops[WEB_TOP_SESSION]);
}

static void test_units(void)
{
        char *sock = NULL, *svc = NULL, dir[] = "/tmp/amwebu.XXXXXX", buf[300], conflict[4096], path[512];
        char removed[2][4096];
        FILE *f;

        is_int(web_units_text("/opt/my bin/agentmeterctl", "127.0.0.1:8791", &sock, &svc), 0, "the unit texts");
        ok(sock && strstr(sock, "\nListenStream=127.0.0.1:8791\n") && strstr(sock, "WantedBy=sockets.target"),
           "the socket listens there, wanted by sockets.target");
        ok(svc && strstr(svc, "\nExecStart=\"/opt/my bin/agentmeterctl\" web\n") &&
           strstr(svc, "Requires=agentmeterd-web.socket"), "the service runs web, quoted; it requires the socket");
        ok(sock && svc && strncmp(sock, "# Written by agentmeterctl install", 34) == 0 &&
           strncmp(svc, "# Written by agentmeterctl install", 34) == 0, "both carry install's marker");
        free(sock);
        free(svc);
        ok(mkdtemp(dir) != NULL, "a config home");
        is_int(web_units_listen(dir, buf, sizeof(buf)), -ENOENT, "no socket installed: -ENOENT");
        is_int(web_units_write(dir, "/usr/bin/agentmeterctl", "127.0.0.1:9999", false, conflict), 0, "written");
        is_int(web_units_listen(dir, buf, sizeof(buf)), 0, "the installed socket's address");
        is_str(buf, "127.0.0.1:9999", "... as written");
        snprintf(path, sizeof(path), "%s/systemd/user/agentmeterd-web.service", dir);
        f = fopen(path, "w");
        fputs("[Service]\nExecStart=/bin/true\n", f);
        fclose(f);
        is_int(web_units_write(dir, "/usr/bin/agentmeterctl", "127.0.0.1:9999", false, conflict), -EEXIST,
               "a foreign service unit: refused");
        is_str(conflict, path, "... naming it");
        is_int(web_units_remove(dir, removed), 1, "uninstall removes only the marked one");
        ok(access(path, F_OK) == 0, "... the foreign one stays");
        unlink(path);
        snprintf(path, sizeof(path), "%s/systemd/user", dir);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/systemd", dir);
        rmdir(path);
        rmdir(dir);
}

int main(void)
{
        test_secret();
        test_listen();
        test_hub();
        test_view();
        test_requests();
        test_units();
        return tap_done();
}
