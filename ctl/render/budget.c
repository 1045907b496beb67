/* Renders the daemon's "budgets" status member as readable lines. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "jfield.h"
#include "render/budget.h"
#include "termtext.h"

static const char *figure(struct json_object *rule, const char *key, char *buf)
{
        const char *unit = jstr(rule, "unit");
        double usd;
        int64_t tokens;

        if (unit && strcmp(unit, "usd") == 0 && jdouble(rule, key, &usd))
                return fmt_usd(usd, buf);
        if (jint(rule, key, &tokens)) {
                char n[FMT_MAX];
                snprintf(buf, FMT_MAX, "%s tokens", fmt_i64(tokens, n));
                return buf;
        }
        return FMT_DASH;
}

static void levels(struct json_object *arr, char *buf, size_t cap)
{
        size_t o = 0;
        buf[0] = 0;
        for (size_t i = 0; arr && i < json_object_array_length(arr) && o + 8 < cap; i++)
                o += (size_t)snprintf(buf + o, cap - o, "%s%d%%", i ? "," : "",
                                      json_object_get_int(json_object_array_get_idx(arr, i)));
}

void render_budgets(FILE *f, struct json_object *budgets)
{
        struct json_object *rules = jfield(budgets, "rules"), *errs = jfield(budgets, "errors");
        size_t nr = rules ? json_object_array_length(rules) : 0;
        size_t ne = errs ? json_object_array_length(errs) : 0;
        char t[1024], u[1024], esc[1024];

        if (nr == 0 && ne == 0)
                return;
        fputc('\n', f);
        for (size_t i = 0; i < nr; i++) {
                struct json_object *r = json_object_array_get_idx(rules, i);
                char a[FMT_MAX], l[FMT_MAX], lv[64], fired[64];
                double pct = 0;
                const char *scope = jstr(r, "scope");

                jdouble(r, "percent", &pct);
                levels(jfield(r, "levels"), lv, sizeof(lv));
                levels(jfield(r, "fired"), fired, sizeof(fired));
                snprintf(u, sizeof(u), "%s%s%s", scope ? scope : "total",
                         jstr(r, "match") ? " " : "", jstr(r, "match") ? jstr(r, "match") : "");
                fprintf(f, "budget        %s: %s %s, %s of %s (%.1f%%); levels %s; fired %s\n",
                        termtext(jstr(r, "name"), t, sizeof(t)), jstr(r, "period") ? jstr(r, "period") : "?",
                        termtext(u, esc, sizeof(esc)), figure(r, "amount", a), figure(r, "limit", l), pct,
                        lv, fired[0] ? fired : "none");
        }
        for (size_t i = 0; i < ne; i++)
                fprintf(f, "budget error  %s: %s\n", termtext(jstr(budgets, "config"), u, sizeof(u)),
                        termtext(json_object_get_string(json_object_array_get_idx(errs, i)), t,
                                 sizeof(t)));
}
