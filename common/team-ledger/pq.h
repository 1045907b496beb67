/* libpq, loaded with dlopen on first use: only a team ledger needs it (the
 * daemon's push, agentmeterctl's `team` commands and `report --team`), and
 * linking it loads 24 shared objects into every start (agentmeterctl: +2.8
 * ms per status line; agentmeterd --once: 24 ms against 5). The function
 * pointers keep libpq's own types. */
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
        /* the asynchronous API (the daemon's push) */
        __typeof__(PQconnectStartParams) *connectStartParams;
        __typeof__(PQconnectPoll) *connectPoll;
        __typeof__(PQsocket) *socket;
        __typeof__(PQsetnonblocking) *setnonblocking;
        __typeof__(PQsendQuery) *sendQuery;
        __typeof__(PQsendQueryParams) *sendQueryParams;
        __typeof__(PQputCopyData) *putCopyData;
        __typeof__(PQputCopyEnd) *putCopyEnd;
        __typeof__(PQflush) *flush;
        __typeof__(PQconsumeInput) *consumeInput;
        __typeof__(PQisBusy) *isBusy;
        __typeof__(PQgetResult) *getResult;
};

/* The loaded library, or NULL with the reason in err. */
const struct pq_api *pq_api(char *err, size_t cap);
