/* The team server as a report source (report/build.h): each of the
 * builder's inputs as one SQL query over the reader views (rollup_rows for
 * the rollup reports on a version-2 server, usage_rows, tool_calls), summed on the server per 15-minute bucket, session, exact
 * time (blocks) or tool, with the query's harness, machine, user and date
 * filters in the WHERE clause. */
#pragma once

#include "team-ledger/pq.h"
#include "report/build.h"

struct team_source {
        const struct pq_api *pq;
        PGconn *conn;
        int version;      /* the schema's: 2 has the rollups */
        char error[1024]; /* the server's message when a query failed */
};

void team_source_init(struct team_source *ts, const struct pq_api *pq, PGconn *conn, int version,
                      struct report_source *ret_src);
