/* The budgets part of `status` for people: each rule's spend against its
 * limit in the current period, the levels that fired, and config errors. */
#pragma once

#include <stdio.h>

struct json_object;

/* Nothing when the status has no budgets. */
void render_budgets(FILE *f, struct json_object *budgets);
