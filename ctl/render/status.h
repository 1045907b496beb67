/* Renders the daemon's `status` and `sources` answers for people, and
 * compares the invoking shell's discovery variables with the daemon's. */
#pragma once

#include <stdio.h>

struct json_object;

/* The status object (see agentmeterctl(1), STATUS FIELDS). 0 or -EIO. */
int render_status(FILE *f, struct json_object *status);

/* The sources object {"sources":[...]} as a table. 0, -EINVAL, -EIO. */
int render_sources(FILE *f, struct json_object *sources);

/* For every name in vars except HOME: compares get(userdata, name) (NULL =
 * unset) with status.env[name] and writes one warning with the fix per
 * difference. Returns the number of differences. */
int render_env_mismatch(FILE *f, struct json_object *status, const char *const *vars,
                        const char *(*get)(void *userdata, const char *name), void *userdata);
