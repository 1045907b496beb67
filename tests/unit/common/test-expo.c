/* Unit tests for the Prometheus exposition writer: escaping, ordering,
 * one series per label set, HELP/TYPE once per family, exact values, bad
 * names refused, and (when promtool is installed) Prometheus's own lint. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expo.h"
#include "tap.h"

static size_t count(const char *hay, const char *needle)
{
        size_t n = 0;
        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static void test_escaping(void)
{
        char *s = NULL;

        is_int(expo_escape_label("a\\b\"c\nd", &s), 0, "escape: ok");
        is_str(s, "a\\\\b\\\"c\\nd", "escape: backslash, quote, newline");
        free(s);
        expo_escape_label("x\x1b[31my\x7fz", &s);
        is_str(s, "x\xef\xbf\xbd[31my\xef\xbf\xbdz", "escape: ESC and DEL become U+FFFD");
        free(s);
        expo_escape_label("bad\xff\xfe utf8 \xc3\xa9", &s);
        is_str(s, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xc3\xa9", "escape: invalid UTF-8 replaced, valid kept");
        free(s);
        expo_escape_label("\xed\xa0\x80", &s);
        ok(strstr(s, "\xef\xbf\xbd") != NULL, "escape: a UTF-16 surrogate is not UTF-8");
        free(s);
}

static int raise_a(const char *series, int64_t *value, void *u)
{
        size_t *n = u;
        (*n)++;
        if (strcmp(series, "t_tokens_total{model=\"a\",type=\"input\"}") == 0)
                *value = 100;
        return 0;
}

static void test_render(void)
{
        struct expo *e = NULL;
        char *text = NULL;
        size_t len = 0;
        static const char *const lb[] = {"model", "b", "type", "input", NULL};
        static const char *const la[] = {"model", "a", "type", "input", NULL};
        static const char *const lq[] = {"model", "we\"ird\\\n", "type", "input", NULL};

        is_int(expo_new(&e), 0, "new");
        is_int(expo_family(e, "t_tokens_total", EXPO_COUNTER, "Tokens.\nSecond line \\ here", 1), 0,
               "family: counter");
        is_int(expo_family(e, "t_cost_usd_total", EXPO_COUNTER, "Cost in USD.", 1000000000), 0,
               "family: nano-scaled counter");
        is_int(expo_family(e, "t_last_seconds", EXPO_GAUGE, "Last event.", 1000), 0,
               "family: milli-scaled gauge");
        is_int(expo_family(e, "t_tokens_total", EXPO_COUNTER, "again", 1), -EEXIST,
               "family declared twice: -EEXIST");
        is_int(expo_family(e, "9bad", EXPO_GAUGE, "x", 1), -EINVAL, "family name checked");
        is_int(expo_family(e, "t_x", EXPO_GAUGE, "x", 12), -EINVAL, "scale must be a power of ten");
        is_int(expo_add(e, "nope", la, 1), -ENOENT, "unknown family: -ENOENT");
        static const char *const bad[] = {"__name", "x", NULL};
        is_int(expo_add(e, "t_tokens_total", bad, 1), -EINVAL, "reserved label name refused");
        static const char *const bad2[] = {"a-b", "x", NULL};
        is_int(expo_add(e, "t_tokens_total", bad2, 1), -EINVAL, "label name checked");

        expo_add(e, "t_tokens_total", lb, 5);
        expo_add(e, "t_tokens_total", la, 7);
        expo_add(e, "t_tokens_total", lb, 10);
        expo_add(e, "t_tokens_total", lq, 1);
        expo_add(e, "t_cost_usd_total", la, 1500000000);
        expo_add(e, "t_cost_usd_total", lb, 91341000);
        expo_add(e, "t_cost_usd_total", lq, 1);
        expo_max(e, "t_last_seconds", NULL, 1764547200123);
        expo_max(e, "t_last_seconds", NULL, 1000);
        is_int(expo_render(e, &text, &len), 0, "render");
        is_int(len, strlen(text), "length returned");
        ok(len > 0 && text[len - 1] == '\n', "ends in a newline");
        is_int(count(text, "# HELP t_tokens_total "), 1, "HELP once per family");
        is_int(count(text, "# TYPE t_tokens_total counter\n"), 1, "TYPE once per family");
        is_int(count(text, "# TYPE t_last_seconds gauge\n"), 1, "gauge TYPE");
        ok(strstr(text, "# HELP t_tokens_total Tokens.\\nSecond line \\\\ here\n") != NULL,
           "HELP escapes newline and backslash");
        is_int(count(text, "t_tokens_total{model=\"b\",type=\"input\"} "), 1,
               "the same labels twice are one series");
        ok(strstr(text, "t_tokens_total{model=\"b\",type=\"input\"} 15\n") != NULL,
           "... whose value is the sum");
        const char *a = strstr(text, "t_tokens_total{model=\"a\""),
                   *b = strstr(text, "t_tokens_total{model=\"b\""),
                   *w = strstr(text, "t_tokens_total{model=\"we");
        ok(a && b && w && a < b && b < w, "series sorted by label text");
        ok(strstr(text, "t_tokens_total{model=\"we\\\"ird\\\\\\n\",type=\"input\"} 1\n") != NULL,
           "label value escaped in the sample line");
        ok(strstr(text, "t_cost_usd_total{model=\"a\",type=\"input\"} 1.5\n") != NULL,
           "nano-USD 1500000000 -> 1.5");
        ok(strstr(text, "t_cost_usd_total{model=\"b\",type=\"input\"} 0.091341\n") != NULL,
           "nano-USD 91341000 -> 0.091341 exactly");
        ok(strstr(text, "type=\"input\"} 0.000000001\n") != NULL, "one nano-USD -> 0.000000001");
        ok(strstr(text, "t_last_seconds 1764547200.123\n") != NULL,
           "ms gauge as seconds, expo_max keeps the largest");
        const char *h1 = strstr(text, "# HELP t_tokens_total"), *h2 = strstr(text, "# HELP t_cost"),
                   *h3 = strstr(text, "# HELP t_last");
        ok(h1 && h2 && h3 && h1 < h2 && h2 < h3, "families in declaration order");

        /* lint by Prometheus itself, when installed */
        if (access("/usr/bin/promtool", X_OK) == 0) {
                char path[] = "/tmp/expo-test-XXXXXX", cmd[128];
                int fd = mkstemp(path);
                ok(fd >= 0 && write(fd, text, len) == (ssize_t)len, "wrote the text for promtool");
                close(fd);
                snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >/dev/null 2>&1", path);
                is_int(system(cmd), 0, "promtool check metrics accepts it");
                unlink(path);
        } else {
                printf("ok %d # SKIP promtool not installed\n", ++tap_n);
        }
        free(text);

        /* the high-water-mark hook sees and may raise every counter series */
        size_t n = 0;
        is_int(expo_foreach_counter(e, raise_a, &n), 0, "foreach over counters");
        is_int(n, 6, "six counter series (gauges left out)");
        expo_render(e, &text, NULL);
        ok(strstr(text, "t_tokens_total{model=\"a\",type=\"input\"} 100\n") != NULL,
           "a raised value is rendered");
        free(text);
        /* series given by their text (saved high-water marks) */
        is_int(expo_max_series(e, "t_tokens_total{model=\"gone\",type=\"input\"}", 42), 0,
               "max_series: creates a series the labels no longer produce");
        is_int(expo_max_series(e, "t_tokens_total{model=\"b\",type=\"input\"}", 3), 0,
               "max_series: an existing series");
        is_int(expo_max_series(e, "t_last_seconds", 5), -ENOENT, "max_series: gauges are not marked");
        is_int(expo_max_series(e, "t_tokens_total{broken", 5), -EINVAL, "max_series: malformed text");
        expo_render(e, &text, NULL);
        ok(strstr(text, "t_tokens_total{model=\"gone\",type=\"input\"} 42\n") != NULL,
           "max_series: the created series is rendered");
        ok(strstr(text, "t_tokens_total{model=\"b\",type=\"input\"} 15\n") != NULL,
           "max_series: a lower mark does not lower a value");
        free(text);
        e = expo_free(e);
}

int main(void)
{
        test_escaping();
        test_render();
        return tap_done();
}
