/* agentmeterctl and the team ledger: connecting (team.conf's url, or
 * --url), `team init` (create or migrate the schema, grant the roles) and
 * `report --team` (the same report builder over the team server's sums,
 * team/source.c). libpq is loaded on first use (pq.h). */
#pragma once

#include <stdio.h>

#include "report/query.h"

struct json_object;

/* team init: exit status (0, 1), messages on out and errf. */
int team_init(const char *url, FILE *out, FILE *errf);

/* The report q (q->team set) from the team server: 0 and the report
 * object, or -errno with the reason in err (-EINVAL: the query is wrong). */
int team_report(const char *url, const struct report_query *q, struct json_object **ret_report,
                char *err, size_t cap);
