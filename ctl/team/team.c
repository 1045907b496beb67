/* The team commands of agentmeterctl (team.h): a synchronous libpq
 * connection (this is a client; the daemon's push is the asynchronous
 * one), the schema's creation and migration under an advisory lock, the
 * roles, and team reports. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "team-ledger/pq.h"
#include "report/report.h"
#include "team-ledger/conf.h"
#include "team-ledger/schema.h"
#include "team/source.h"
#include "team/team.h"

static void quiet(void *arg, const char *message)
{
        (void)arg;
        (void)message;
}

static void chomp(char *s)
{
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = 0;
}

/* A connection from --url, else team.conf (with the password rule). */
static PGconn *team_connect(const struct pq_api *pq, const char *url, char *err, size_t cap)
{
        static struct team_conf conf;
        const char *kw[] = { "dbname", "application_name", "client_encoding", NULL };
        const char *val[] = { NULL, "agentmeterctl", "UTF8", NULL };
        char path[PATH_MAX], why[TEAM_ERROR_MAX];
        PGconn *c;

        if (!url) {
                int r = team_conf_path(path, sizeof(path));
                if (r == 0)
                        r = team_conf_load(path, &conf);
                if (r == -ENOENT) {
                        snprintf(err, cap, "no team is configured: %s does not exist (or give --url)", path);
                        return NULL;
                }
                if (r < 0) {
                        snprintf(err, cap, "cannot read %s: %s", path, strerror(-r));
                        return NULL;
                }
                if (conf.error[0]) {
                        snprintf(err, cap, "%s", conf.error);
                        return NULL;
                }
                char *perr = NULL;
                PQconninfoOption *opts = pq->conninfoParse(conf.url, &perr);
                bool pw = false;
                if (!opts) {
                        snprintf(err, cap, "%s: url does not parse: %s", TEAM_CONF_FILE, perr ? perr : "out of memory");
                        chomp(err);
                        if (perr)
                                pq->freemem(perr);
                        return NULL;
                }
                for (PQconninfoOption *o = opts; o->keyword; o++)
                        if (strcmp(o->keyword, "password") == 0 && o->val && o->val[0])
                                pw = true;
                pq->conninfoFree(opts);
                const char *refusal = team_conf_password_refusal(&conf, pw, why, sizeof(why));
                if (refusal) {
                        snprintf(err, cap, "%s", refusal);
                        return NULL;
                }
                url = conf.url;
        }
        val[0] = url;
        c = pq->connectdbParams(kw, val, 1);
        if (!c) {
                snprintf(err, cap, "out of memory");
                return NULL;
        }
        if (pq->status(c) != CONNECTION_OK) {
                snprintf(err, cap, "cannot connect to the team server: %s", pq->errorMessage(c));
                chomp(err);
                pq->finish(c);
                return NULL;
        }
        pq->setNoticeProcessor(c, quiet, NULL);
        return c;
}

/* Runs sql; 0, or -EIO with the server's message in err. */
static int run(const struct pq_api *pq, PGconn *c, const char *sql, char *err, size_t cap)
{
        PGresult *res = pq->exec(c, sql);
        ExecStatusType st = res ? pq->resultStatus(res) : PGRES_FATAL_ERROR;
        int r = 0;

        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                snprintf(err, cap, "%s", res ? pq->resultErrorMessage(res) : pq->errorMessage(c));
                chomp(err);
                r = -EIO;
        }
        pq->clear(res);
        return r;
}

/* The schema's version: 0 when there is none, -EIO on errors. */
static int schema_version(const struct pq_api *pq, PGconn *c, char *err, size_t cap)
{
        PGresult *res = pq->exec(c, "SELECT to_regclass('" TEAM_SCHEMA ".schema_info') IS NOT NULL");
        int v = -EIO;

        if (res && pq->resultStatus(res) == PGRES_TUPLES_OK && pq->ntuples(res) == 1) {
                bool have = pq->getvalue(res, 0, 0)[0] == 't';
                pq->clear(res);
                if (!have)
                        return 0;
                res = pq->exec(c, "SELECT max(version) FROM " TEAM_SCHEMA ".schema_info");
                if (res && pq->resultStatus(res) == PGRES_TUPLES_OK && pq->ntuples(res) == 1)
                        v = pq->getisnull(res, 0, 0) ? 0 : atoi(pq->getvalue(res, 0, 0));
        }
        if (v < 0) {
                snprintf(err, cap, "%s", res ? pq->resultErrorMessage(res) : pq->errorMessage(c));
                chomp(err);
        }
        pq->clear(res);
        return v;
}

int team_init(const char *url, FILE *out, FILE *errf)
{
        char err[1024];
        const struct pq_api *pq = pq_api(err, sizeof(err));
        PGconn *c;
        int v, r;

        if (!pq || !(c = team_connect(pq, url, err, sizeof(err)))) {
                fprintf(errf, "agentmeterctl: %s\n", err);
                return 1;
        }
        /* one init at a time; the whole change in one transaction */
        r = run(pq, c, "BEGIN; SELECT pg_advisory_xact_lock(hashtext('agentmeterd team schema'))", err, sizeof(err));
        v = r < 0 ? r : schema_version(pq, c, err, sizeof(err));
        if (v > TEAM_SCHEMA_VERSION) {
                fprintf(errf, "agentmeterctl: the team schema in database %s is version %d, newer than this "
                              "agentmeterctl knows (%d): upgrade agentmeterd; nothing changed\n",
                        pq->db(c), v, TEAM_SCHEMA_VERSION);
                pq->finish(c);
                return 1;
        }
        if (r == 0 && v == 0)
                r = run(pq, c, team_schema_v1_sql, err, sizeof(err));
        /* the migrations from v, each in this txn (a new schema takes the
         * same steps as an old one, so every init runs them) */
        if (r == 0 && v >= 0 && v < 2)
                r = run(pq, c, team_migrate_v2_sql, err, sizeof(err));
        if (r == 0 && v >= 0)
                r = run(pq, c, "COMMIT", err, sizeof(err));
        if (r < 0 || v < 0) {
                fprintf(errf, "agentmeterctl: team init failed, nothing changed: %s\n", err);
                pq->finish(c);
                return 1;
        }
        if (v == 0)
                fprintf(out, "team schema version %d created in database %s\n", TEAM_SCHEMA_VERSION, pq->db(c));
        else if (v < TEAM_SCHEMA_VERSION)
                fprintf(out, "team schema in database %s migrated from version %d to %d\n", pq->db(c), v,
                        TEAM_SCHEMA_VERSION);
        else
                fprintf(out, "team schema version %d in database %s is up to date\n", v, pq->db(c));
        /* the roles: needs CREATEROLE and the tables' ownership; apart, so
         * that an ordinary owner still gets the schema */
        r = run(pq, c, team_roles_sql, err, sizeof(err));
        if (r < 0)
                fprintf(out, "roles agentmeter_writer and agentmeter_reader not set up (%s); a role with "
                             "CREATEROLE can run 'agentmeterctl team init' again, see docs/team.md\n", err);
        else
                fprintf(out, "roles agentmeter_writer (push) and agentmeter_reader (reports, views) granted\n");
        pq->finish(c);
        return 0;
}

int team_report(const char *url, const struct report_query *q, json_object **ret_report, char *err,
                size_t cap)
{
        const struct pq_api *pq = pq_api(err, cap);
        const char *why = NULL;
        struct team_source ts = { 0 };
        struct report_source src;
        PGconn *c;
        int r, v;

        if (!pq || !(c = team_connect(pq, url, err, cap)))
                return -EIO;
        v = schema_version(pq, c, err, cap);
        if (v == 0)
                snprintf(err, cap, "the team database has no agentmeterd schema: run agentmeterctl team init");
        else if (v > TEAM_SCHEMA_VERSION)
                snprintf(err, cap, "the team schema is version %d, newer than this agentmeterctl knows (%d): "
                                   "upgrade agentmeterd", v, TEAM_SCHEMA_VERSION);
        if (v <= 0 || v > TEAM_SCHEMA_VERSION) {
                pq->finish(c);
                return -EIO;
        }
        /* one snapshot for all the report's queries */
        r = run(pq, c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err, cap);
        /* the rollups' groups hashed in memory: the planner cannot know
         * how few days a year of buckets makes, and would sort them all */
        if (r == 0)
                r = run(pq, c, "SET LOCAL work_mem = '256MB'", err, cap);
        if (r == 0) {
                team_source_init(&ts, pq, c, v, &src);
                r = report_run_from(&src, q, ret_report, &why);
                if (r < 0)
                        snprintf(err, cap, "%s", ts.error[0] ? ts.error : why ? why : strerror(-r));
        }
        pq->finish(c);
        return r;
}
