/* The status line: bounded stdin, named fields, short money, a fallback
 * that never waits. */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "jfield.h"
#include "statusline.h"
#include "termtext.h"

static int64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int statusline_read_input(int fd, int timeout_ms, json_object **ret_input)
{
        char *buf = NULL;
        size_t len = 0;
        int64_t end = mono_ms() + timeout_ms;
        int r = 0;

        if (isatty(fd))
                return -ENODATA;
        buf = malloc(STATUSLINE_INPUT_MAX + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                int64_t left = end - mono_ms();
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (left <= 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                int k = poll(&p, 1, (int)left);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -ETIMEDOUT;
                        break;
                }
                ssize_t n = read(fd, buf + len, STATUSLINE_INPUT_MAX + 1 - len);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > STATUSLINE_INPUT_MAX) {
                        r = -E2BIG;
                        break;
                }
        }
        if (r == 0 && len == 0)
                r = -ENODATA;
        if (r == 0) {
                buf[len] = 0;
                json_object *o = json_tokener_parse(buf);
                if (!o || !json_object_is_type(o, json_type_object)) {
                        json_object_put(o);
                        r = -EBADMSG;
                } else {
                        *ret_input = o;
                }
        }
        free(buf);
        return r;
}

json_object *statusline_request(json_object *input, const char *tz)
{
        json_object *req = json_object_new_object(), *rl;
        const char *sid = jstr(input, "session_id");

        if (!req)
                return NULL;
        /* the daemon finds the harness from the transcript's root */
        if (jstr(input, "transcript_path"))
                json_object_object_add(req, "transcript_path", json_object_new_string(jstr(input, "transcript_path")));
        if (sid)
                json_object_object_add(req, "session", json_object_new_string(sid));
        if (tz)
                json_object_object_add(req, "tz", json_object_new_string(tz));
        rl = jfield(input, "rate_limits");
        if (rl && json_object_is_type(rl, json_type_object))
                json_object_object_add(req, "rate_limits", json_object_get(rl));
        return req;
}

/* Text from the input, safe for a terminal (termtext: C0/C1 controls, bidi
 * overrides and invalid UTF-8 shown as \xNN) and at most max bytes, cut on
 * a character boundary, never inside an escape. */
static void put_clean(FILE *f, const char *s, size_t max)
{
        char buf[4 * 200 + 1];

        if (max >= sizeof(buf))
                max = sizeof(buf) - 1;
        fputs(termtext(s, buf, max + 1), f);
}

/* "$1.23" (cents), "~$1.23" when computed, the dash when unknown. */
static void put_money(FILE *f, json_object *sums, const char *key)
{
        double v;
        const char *src = jstr(sums, "cost_source");
        if (!sums || !jdouble(sums, key, &v)) {
                fputs(FMT_DASH, f);
                return;
        }
        fprintf(f, "%s$%.2f", src && (strcmp(src, "computed") == 0 || strcmp(src, "mixed") == 0) ? "~" : "", v);
}

static void put_limit(FILE *f, json_object *rl, const char *window, const char *label)
{
        json_object *w = jfield(rl, window);
        double pct;
        int64_t resets;

        if (!w || !jdouble(w, "used_percentage", &pct)) {
                if (!label)
                        fputs(FMT_DASH, f);
                return;
        }
        if (label)
                fprintf(f, " | %s ", label);
        fprintf(f, "%.0f%%", pct);
        if (jint(w, "resets_at", &resets)) {
                int64_t left = resets - (int64_t)time(NULL);
                char d[FMT_MAX];
                if (left > 0)
                        fprintf(f, " (resets in %s)", fmt_duration((uint64_t)left, d));
        }
}

static json_object *limits_of(json_object *input, json_object *answer)
{
        json_object *rl = jfield(input, "rate_limits");
        return rl ? rl : jfield(answer, "rate_limits");
}

static void put_field(FILE *f, const char *name, size_t n, json_object *input, json_object *answer)
{
        json_object *block = jfield(answer, "block");
        json_object *model = jfield(input, "model");
        char d[FMT_MAX];
        int64_t left;

#define IS(s) (n == strlen(s) && strncmp(name, s, n) == 0)
        if (IS("model"))
                put_clean(f, jstr(model, "display_name") ? jstr(model, "display_name")
                             : jstr(model, "id")         ? jstr(model, "id")
                                                         : "?", 40);
        else if (IS("session"))
                put_money(f, jfield(answer, "session"), "cost_usd");
        else if (IS("today"))
                put_money(f, jfield(answer, "today"), "cost_usd");
        else if (IS("block"))
                put_money(f, block && json_object_get_boolean(jfield(block, "active")) ? block : NULL,
                          "cost_usd");
        else if (IS("burn"))
                put_money(f, block, "burn_usd_per_hour");
        else if (IS("left"))
                fputs(block && jint(block, "remaining_s", &left) ? fmt_duration((uint64_t)left, d)
                                                                 : FMT_DASH, f);
        else if (IS("limits")) {
                put_limit(f, limits_of(input, answer), "five_hour", "5h");
                put_limit(f, limits_of(input, answer), "seven_day", "7d");
        } else if (IS("limit_5h"))
                put_limit(f, limits_of(input, answer), "five_hour", NULL);
        else if (IS("limit_7d"))
                put_limit(f, limits_of(input, answer), "seven_day", NULL);
        else if (IS("cwd"))
                put_clean(f, jstr(input, "cwd") ? jstr(input, "cwd") : "", 200);
        else if (IS("project"))
                put_clean(f, jstr(jfield(input, "workspace"), "project_dir")
                                     ? jstr(jfield(input, "workspace"), "project_dir") : "", 200);
        else
                fprintf(f, "{%.*s}", (int)n, name); /* unknown: left as written */
#undef IS
}

void statusline_print(FILE *f, const char *format, json_object *input, json_object *answer,
                      const char *why)
{
        if (!answer) {
                if (input && jfield(input, "model")) {
                        put_field(f, "model", 5, input, NULL);
                        fputs(" | ", f);
                }
                fprintf(f, "agentmeter: %s\n", why ? why : "no data");
                return;
        }
        for (const char *p = format ? format : STATUSLINE_DEFAULT_FORMAT; *p; p++) {
                const char *close = *p == '{' ? strchr(p, '}') : NULL;
                if (close) {
                        put_field(f, p + 1, (size_t)(close - p - 1), input, answer);
                        p = close;
                } else {
                        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
                }
        }
        fputc('\n', f);
}

void statusline_print_json(FILE *f, json_object *input, json_object *answer, const char *why)
{
        json_object *o = json_object_new_object(), *model = jfield(input, "model"), *v;

        if (!o)
                return;
        json_object_object_add(o, "model", jstr(model, "display_name")
                                                   ? json_object_new_string(jstr(model, "display_name"))
                                                   : NULL);
        v = jfield(jfield(answer, "session"), "cost_usd");
        json_object_object_add(o, "session_cost_usd", v ? json_object_get(v) : NULL);
        v = jfield(jfield(answer, "today"), "cost_usd");
        json_object_object_add(o, "today_cost_usd", v ? json_object_get(v) : NULL);
        v = jfield(answer, "block");
        json_object_object_add(o, "block", v ? json_object_get(v) : NULL);
        v = limits_of(input, answer);
        json_object_object_add(o, "rate_limits", v ? json_object_get(v) : NULL);
        json_object_object_add(o, "daemon", json_object_new_boolean(answer != NULL));
        json_object_object_add(o, "fallback", answer ? NULL : json_object_new_string(why ? why : "no data"));
        fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}
