/* The text form of a rate-limit snapshot (stored in the ledger's meta db,
 * passed on by status as it is). */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "ratelimits.h"

static json_object *window_json(const struct limit_window *w)
{
        json_object *o;

        if (!w->present)
                return NULL;
        o = json_object_new_object();
        json_object_object_add(o, "used_percent", json_object_new_double(w->used_centi / 100.0));
        json_object_object_add(o, "window_minutes",
                               w->window_minutes ? json_object_new_int64(w->window_minutes) : NULL);
        json_object_object_add(o, "resets_at",
                               w->resets_at_s ? json_object_new_int64(w->resets_at_s) : NULL);
        return o;
}

int limits_format(const struct rate_limits *rl, char *buf, size_t cap)
{
        json_object *o = json_object_new_object();
        const char *s;
        size_t n;
        int r = 0;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "observed_ms", json_object_new_int64(rl->observed_ms));
        json_object_object_add(o, "tool", json_object_new_string(rl->tool));
        json_object_object_add(o, "limit_id", rl->limit_id[0] ? json_object_new_string(rl->limit_id) : NULL);
        json_object_object_add(o, "plan_type",
                               rl->plan_type[0] ? json_object_new_string(rl->plan_type) : NULL);
        json_object_object_add(o, "primary", window_json(&rl->primary));
        json_object_object_add(o, "secondary", window_json(&rl->secondary));
        s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
        if (!s)
                r = -ENOMEM;
        else if (n >= cap)
                r = -ENOBUFS;
        else
                memcpy(buf, s, n + 1);
        json_object_put(o);
        return r;
}

static int64_t get_i64(json_object *o, const char *k)
{
        json_object *v;
        return json_object_object_get_ex(o, k, &v) && v ? json_object_get_int64(v) : 0;
}

static void get_str(json_object *o, const char *k, char *dst, size_t cap)
{
        json_object *v;
        const char *s;

        dst[0] = 0;
        if (json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) &&
            (s = json_object_get_string(v)))
                row_set_str(dst, cap, s, strlen(s));
}

static void get_window(json_object *o, const char *k, struct limit_window *w)
{
        json_object *v, *u;

        *w = (struct limit_window){ 0 };
        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_object))
                return;
        w->present = true;
        if (json_object_object_get_ex(v, "used_percent", &u) && u) {
                double d = json_object_get_double(u) * 100.0 + 0.5;
                w->used_centi = d <= 0 ? 0 : d >= 1000000.0 ? 1000000u : (uint32_t)d;
        }
        w->window_minutes = (uint32_t)get_i64(v, "window_minutes");
        w->resets_at_s = get_i64(v, "resets_at");
}

int limits_parse(const char *text, struct rate_limits *ret_rl)
{
        json_object *o = json_tokener_parse(text);
        struct rate_limits rl = { 0 };

        if (!o || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        rl.observed_ms = get_i64(o, "observed_ms");
        get_str(o, "tool", rl.tool, sizeof(rl.tool));
        get_str(o, "limit_id", rl.limit_id, sizeof(rl.limit_id));
        get_str(o, "plan_type", rl.plan_type, sizeof(rl.plan_type));
        get_window(o, "primary", &rl.primary);
        get_window(o, "secondary", &rl.secondary);
        json_object_put(o);
        *ret_rl = rl;
        return 0;
}
