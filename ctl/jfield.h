/* Tolerant field access on the daemon's JSON answers: a missing field and a
 * JSON null read the same, so renderers never crash on a partial object. */
#pragma once

#include "cleanup.h"

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json_object.h>

struct json_object;

/* The member, or NULL when absent or JSON null. */
struct json_object *jfield(struct json_object *obj, const char *key);
/* The string member, or NULL when absent, null or not a string. */
const char *jstr(struct json_object *obj, const char *key);
/* true and the integer when the member is a number (doubles are rounded). */
bool jint(struct json_object *obj, const char *key, int64_t *ret_v);
/* The integer member, or def when absent/null/not a number. */
int64_t jint_or(struct json_object *obj, const char *key, int64_t def);
bool jdouble(struct json_object *obj, const char *key, double *ret_v);
/* true only for a JSON true. */
bool jbool(struct json_object *obj, const char *key);

/* json_object_put for __attribute__((cleanup)). */
void jfield_putp(struct json_object **o);
#define _cleanup_json_ _cleanup_(jfield_putp)
