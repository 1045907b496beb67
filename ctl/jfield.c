/* Tolerant JSON member access for the client's renderers (see jfield.h). */
#include <json-c/json.h>
#include <math.h>

#include "jfield.h"

struct json_object *jfield(struct json_object *obj, const char *key)
{
        struct json_object *v = NULL;

        if (!obj || !json_object_is_type(obj, json_type_object))
                return NULL;
        if (!json_object_object_get_ex(obj, key, &v))
                return NULL;
        return json_object_is_type(v, json_type_null) ? NULL : v;
}

const char *jstr(struct json_object *obj, const char *key)
{
        struct json_object *v = jfield(obj, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool jint(struct json_object *obj, const char *key, int64_t *ret_v)
{
        struct json_object *v = jfield(obj, key);

        if (!v)
                return false;
        if (json_object_is_type(v, json_type_int)) {
                *ret_v = json_object_get_int64(v);
                return true;
        }
        if (json_object_is_type(v, json_type_double)) {
                double d = json_object_get_double(v);
                if (!isfinite(d) || d > 9.2e18 || d < -9.2e18)
                        return false;
                *ret_v = llround(d);
                return true;
        }
        return false;
}

int64_t jint_or(struct json_object *obj, const char *key, int64_t def)
{
        int64_t v;
        return jint(obj, key, &v) ? v : def;
}

bool jdouble(struct json_object *obj, const char *key, double *ret_v)
{
        struct json_object *v = jfield(obj, key);

        if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return false;
        *ret_v = json_object_get_double(v);
        return isfinite(*ret_v);
}

bool jbool(struct json_object *obj, const char *key)
{
        struct json_object *v = jfield(obj, key);
        return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

void jfield_putp(struct json_object **o)
{
        if (*o)
                json_object_put(*o);
        *o = NULL;
}
