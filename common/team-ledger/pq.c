/* dlopen of libpq.so.5 (pq.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "team-ledger/pq.h"

static struct pq_api api;
static void *handle;

#define SYM(field, name)                                              \
        do {                                                          \
                *(void **)&api.field = dlsym(handle, #name);          \
                if (!api.field) {                                     \
                        missing = #name;                              \
                        goto fail;                                    \
                }                                                     \
        } while (0)

const struct pq_api *pq_api(char *err, size_t cap)
{
        const char *missing = NULL;

        if (handle)
                return &api;
        handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                snprintf(err, cap, "cannot load libpq (Debian: apt install libpq5): %s", dlerror());
                return NULL;
        }
        SYM(connectdbParams, PQconnectdbParams);
        SYM(status, PQstatus);
        SYM(errorMessage, PQerrorMessage);
        SYM(finish, PQfinish);
        SYM(exec, PQexec);
        SYM(execParams, PQexecParams);
        SYM(resultStatus, PQresultStatus);
        SYM(resultErrorMessage, PQresultErrorMessage);
        SYM(resultErrorField, PQresultErrorField);
        SYM(ntuples, PQntuples);
        SYM(getvalue, PQgetvalue);
        SYM(getisnull, PQgetisnull);
        SYM(clear, PQclear);
        SYM(conninfoParse, PQconninfoParse);
        SYM(conninfoFree, PQconninfoFree);
        SYM(freemem, PQfreemem);
        SYM(setNoticeProcessor, PQsetNoticeProcessor);
        SYM(db, PQdb);
        SYM(host, PQhost);
        SYM(user, PQuser);
        SYM(connectStartParams, PQconnectStartParams);
        SYM(connectPoll, PQconnectPoll);
        SYM(socket, PQsocket);
        SYM(setnonblocking, PQsetnonblocking);
        SYM(sendQuery, PQsendQuery);
        SYM(sendQueryParams, PQsendQueryParams);
        SYM(putCopyData, PQputCopyData);
        SYM(putCopyEnd, PQputCopyEnd);
        SYM(flush, PQflush);
        SYM(consumeInput, PQconsumeInput);
        SYM(isBusy, PQisBusy);
        SYM(getResult, PQgetResult);
        return &api;
fail:
        snprintf(err, cap, "libpq lacks %s", missing);
        dlclose(handle);
        handle = NULL;
        memset(&api, 0, sizeof(api));
        return NULL;
}
