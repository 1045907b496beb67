/* The team server as a report source (report/build.h): each of the
 * builder's inputs as one SQL query over the reader views (usage_rows,
 * tool_calls), summed on the server per 15-minute bucket, session, exact
 * time (blocks) or tool, with the query's harness, machine, user and date
 * filters in the WHERE clause. */
#pragma once

#include "team-ledger/pq.h"
#include "report/build.h"

struct team_source {
        const struct pq_api *pq;
        PGconn *conn;
        char error[1024]; /* the server's message when a query failed */
};

void team_source_init(struct team_source *ts, const struct pq_api *pq, PGconn *conn,
                      struct report_source *ret_src);
