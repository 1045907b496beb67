/* libpq for agentmeterctl, loaded with dlopen on first use: only `team`
 * commands and `report --team` need it, and linking it would load 24
 * shared objects into every status line and report (measured: +2.8 ms
 * per start). The function pointers keep libpq's own types. */
#pragma once

#include <libpq-fe.h>
#include <stddef.h>

struct pq_api {
        __typeof__(PQconnectdbParams) *connectdbParams;
        __typeof__(PQstatus) *status;
        __typeof__(PQerrorMessage) *errorMessage;
        __typeof__(PQfinish) *finish;
        __typeof__(PQexec) *exec;
        __typeof__(PQexecParams) *execParams;
        __typeof__(PQresultStatus) *resultStatus;
        __typeof__(PQresultErrorMessage) *resultErrorMessage;
        __typeof__(PQresultErrorField) *resultErrorField;
        __typeof__(PQntuples) *ntuples;
        __typeof__(PQgetvalue) *getvalue;
        __typeof__(PQgetisnull) *getisnull;
        __typeof__(PQclear) *clear;
        __typeof__(PQconninfoParse) *conninfoParse;
        __typeof__(PQconninfoFree) *conninfoFree;
        __typeof__(PQfreemem) *freemem;
        __typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
        __typeof__(PQdb) *db;
        __typeof__(PQhost) *host;
        __typeof__(PQuser) *user;
};

/* The loaded library, or NULL with the reason in err. */
const struct pq_api *pq_api(char *err, size_t cap);
