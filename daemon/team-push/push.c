/* The team push (team-push/push.h): a state machine on sd-event around one
 * non-blocking libpq connection. Host names are resolved first
 * (team-push/resolve.c: libpq itself would resolve them blocking); connect,
 * handshake and each batch have a
 * deadline. A batch is one query string, so one round trip:
 *   BEGIN; COPY am_rows FROM STDIN; COPY am_calls FROM STDIN;
 *   <the merge>; UPDATE meters SET acked_seq ...; COMMIT
 * and only when COMMIT succeeded is the outbox moved (ledger_outbox_ack).
 * Killed in between, the next connection finds the server's acked_seq
 * ahead of the ledger's and moves the ledger to it: nothing is sent twice. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "ledger/outbox.h"
#include "log.h"
#include "team-ledger/pq.h"
#include "team-push/batch.h"
#include "team-push/kill-point.h"
#include "team-push/push.h"
#include "team-push/resolve.h"
#include "team-ledger/schema.h"
#include "timefmt.h"

#define COPY_CHUNK (64u << 10)
#define IDLE_POLL_USEC 500000ULL    /* an idle connection looks at the outbox this often */
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000
#define MAX_HOSTS 8
#define ERR_MAX 512

enum state {
        S_RESOLVING = 1, /* waiting for getaddrinfo_a */
        S_CONNECTING,    /* PQconnectPoll */
        S_HANDSHAKE,     /* schema version, meter, staging tables */
        S_IDLE,          /* connected, nothing to send */
        S_READING,       /* reading the next batch from the outbox, a slice per loop turn */
        S_BATCH,         /* a batch is in flight */
        S_BACKOFF,       /* waiting to retry */
};

enum op {
        OP_NONE = 0,
        OP_VERSION,
        OP_METER,
        OP_STAGING,
        OP_BATCH,
};

struct team_push {
        const struct pq_api *pq; /* libpq, loaded by team_push_new */
        sd_event *event;
        struct ledger *ledger;
        struct team_conf conf;
        void (*on_refill)(void *u);
        void *u;
        /* the url as libpq parsed it, plus what we add (hostaddr, ...) */
        char **kw, **val;
        size_t n_kw;
        char server[256]; /* host:port/db as shown in status, no password */

        enum state state;
        PGconn *conn;
        int fd;
        sd_event_source *io, *deadline, *retry, *poll, *reader;
        struct team_resolve *resolve; /* the url's host names */

        /* the query in flight */
        enum op op;
        bool op_failed;
        int copy_phase;   /* COPY_IN results seen in this batch: 1 rows, 2 calls */
        bool copying;     /* between COPY_IN and PQputCopyEnd */
        size_t copy_off;
        bool want_write;
        char op_error[ERR_MAX];

        /* handshake */
        int meter_id;
        uint64_t server_acked;
        int id_renewals;

        /* the batch */
        struct team_buf sql;
        struct team_batch batch; /* in flight (S_BATCH) or being read (S_READING) */
        struct team_batch next;  /* read while the batch is in flight */
        bool prefetching;        /* next was begun after batch */
        uint64_t counter_seen; /* the ledger's outbox counter when last looked */

        /* status */
        int64_t connected_since_ms, last_push_ms, last_error_ms, next_retry_ms;
        uint64_t rows_sent, calls_sent, batches;
        char last_error[ERR_MAX];
        unsigned backoff_ms;
        char logged[ERR_MAX + 32]; /* the state last logged: once per change */

        enum team_kill_point kill_at; /* the test hook's (team-push/kill-point.h) */
};

static void fail(struct team_push *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pump(struct team_push *p);
static void start_connect(struct team_push *p);
static void next_batch(struct team_push *p);
static void send_batch(struct team_push *p);

/* ---- logging once per state ---------------------------------------------- */

static void log_state(struct team_push *p, int level, const char *what)
{
        if (strcmp(p->logged, what) == 0) {
                log_debug("team: %s (again)", what);
                return;
        }
        snprintf(p->logged, sizeof(p->logged), "%s", what);
        char f0[300];
        snprintf(f0, sizeof(f0), "AGENTMETER_TEAM_SERVER=%s", p->server);
        const char *fields[] = { f0, NULL };
        log_fields(level, fields, "team ledger %s: %s", p->server, what);
}

/* ---- the test hook ----------------------------------------------------------- */

/* AGENTMETER_TEST_TEAM_KILL (team-push/kill-point.h): at its point, what
 * libpq still holds is flushed (the server has seen everything sent so
 * far), and the daemon dies as a kill -9 would kill it. */
static void kill_point(struct team_push *p, enum team_kill_point at)
{
        if (p->kill_at == TEAM_KILL_NONE || p->kill_at != at)
                return;
        if (p->conn && p->pq->setnonblocking(p->conn, 0) == 0)
                (void)p->pq->flush(p->conn);
        log_notice("team: test hook AGENTMETER_TEST_TEAM_KILL: killed at %s", team_kill_point_name(at));
        raise(SIGKILL);
}

/* ---- event sources --------------------------------------------------------- */

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *u);

static void io_off(struct team_push *p)
{
        p->io = sd_event_source_disable_unref(p->io);
        p->fd = -1;
}

/* Watches libpq's socket for reading, and writing while data waits. */
static void io_update(struct team_push *p)
{
        int fd = p->conn ? p->pq->socket(p->conn) : -1;
        uint32_t ev = EPOLLIN | (p->want_write ? EPOLLOUT : 0);

        if (fd < 0) {
                io_off(p);
                return;
        }
        if (p->io && fd != p->fd)
                io_off(p); /* libpq moved to another socket (another host, a retry) */
        if (!p->io) {
                if (sd_event_add_io(p->event, &p->io, fd, ev, on_io, p) < 0) {
                        p->io = NULL;
                        return;
                }
                p->fd = fd;
                return;
        }
        (void)sd_event_source_set_io_events(p->io, ev);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *u)
{
        struct team_push *p = u;
        (void)s;
        (void)usec;
        if (p->state == S_RESOLVING || p->state == S_CONNECTING)
                fail(p, "no connection within %u s (connect_timeout)", p->conf.connect_timeout_s);
        else
                fail(p, "the server did not answer within %u s (query_timeout)", p->conf.query_timeout_s);
        return 0;
}

static void deadline_in(struct team_push *p, unsigned seconds)
{
        uint64_t usec = (uint64_t)seconds * 1000000ULL;
        if (!p->deadline) {
                if (sd_event_add_time_relative(p->event, &p->deadline, CLOCK_MONOTONIC, usec, 100000,
                                               on_deadline, p) < 0)
                        p->deadline = NULL;
                return;
        }
        (void)sd_event_source_set_time_relative(p->deadline, usec);
        (void)sd_event_source_set_enabled(p->deadline, SD_EVENT_ONESHOT);
}

static void deadline_off(struct team_push *p)
{
        if (p->deadline)
                (void)sd_event_source_set_enabled(p->deadline, SD_EVENT_OFF);
}

static int on_poll(sd_event_source *s, uint64_t usec, void *u)
{
        struct team_push *p = u;
        (void)s;
        (void)usec;
        if (p->state == S_IDLE && ledger_outbox_counter(p->ledger) != p->counter_seen)
                next_batch(p);
        if (p->state == S_IDLE)
                (void)sd_event_source_set_time_relative(p->poll, IDLE_POLL_USEC),
                        (void)sd_event_source_set_enabled(p->poll, SD_EVENT_ONESHOT);
        return 0;
}

static void idle(struct team_push *p)
{
        p->state = S_IDLE;
        deadline_off(p);
        if (!p->poll) {
                if (sd_event_add_time_relative(p->event, &p->poll, CLOCK_MONOTONIC, IDLE_POLL_USEC,
                                               100000, on_poll, p) < 0)
                        p->poll = NULL;
                return;
        }
        (void)sd_event_source_set_time_relative(p->poll, IDLE_POLL_USEC);
        (void)sd_event_source_set_enabled(p->poll, SD_EVENT_ONESHOT);
}

/* ---- failure and backoff --------------------------------------------------- */

static void drop_connection(struct team_push *p)
{
        io_off(p);
        if (p->conn)
                p->pq->finish(p->conn);
        p->conn = NULL;
        p->op = OP_NONE;
        p->copying = false;
        p->want_write = false;
        p->connected_since_ms = 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *u)
{
        struct team_push *p = u;
        (void)s;
        (void)usec;
        start_connect(p);
        return 0;
}

static unsigned jitter(unsigned ms)
{
        uint32_t r = 0;
        if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
                r = (uint32_t)timefmt_now_ms();
        return ms / 2 + (unsigned)(r % (ms / 2 + 1)); /* [ms/2, ms] */
}

static void fail(struct team_push *p, const char *fmt, ...)
{
        va_list ap;
        char msg[ERR_MAX];
        unsigned wait;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        msg[strcspn(msg, "\n")] = 0;
        drop_connection(p);
        team_resolve_cancel(p->resolve);
        deadline_off(p);
        if (p->poll)
                (void)sd_event_source_set_enabled(p->poll, SD_EVENT_OFF);
        if (p->reader)
                (void)sd_event_source_set_enabled(p->reader, SD_EVENT_OFF);
        p->prefetching = false;
        snprintf(p->last_error, sizeof(p->last_error), "%s", msg);
        p->last_error_ms = timefmt_now_ms();
        p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_MIN_MS;
        if (p->backoff_ms > BACKOFF_MAX_MS)
                p->backoff_ms = BACKOFF_MAX_MS;
        wait = jitter(p->backoff_ms);
        p->next_retry_ms = p->last_error_ms + wait;
        p->state = S_BACKOFF;
        log_state(p, LOG_WARNING, msg);
        if (!p->retry) {
                if (sd_event_add_time_relative(p->event, &p->retry, CLOCK_MONOTONIC,
                                               (uint64_t)wait * 1000, 100000, on_retry, p) < 0)
                        p->retry = NULL;
                return;
        }
        (void)sd_event_source_set_time_relative(p->retry, (uint64_t)wait * 1000);
        (void)sd_event_source_set_enabled(p->retry, SD_EVENT_ONESHOT);
}

/* libpq's message without its trailing newline and "ERROR:  " prefix. */
static const char *pq_message(const char *m, char *buf, size_t cap)
{
        if (!m || !*m)
                return "unknown error";
        if (strncmp(m, "ERROR:  ", 8) == 0 || strncmp(m, "FATAL:  ", 8) == 0)
                m += 8;
        snprintf(buf, cap, "%s", m);
        buf[strcspn(buf, "\n")] = 0;
        return buf;
}

/* ---- connecting ------------------------------------------------------------ */

static void connect_poll(struct team_push *p)
{
        PostgresPollingStatusType st = p->pq->connectPoll(p->conn);
        char b[ERR_MAX];

        switch (st) {
        case PGRES_POLLING_READING:
                p->want_write = false;
                io_update(p);
                return;
        case PGRES_POLLING_WRITING:
                p->want_write = true;
                io_update(p);
                return;
        case PGRES_POLLING_OK:
                break;
        default:
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return;
        }
        if (p->pq->setnonblocking(p->conn, 1) != 0) {
                fail(p, "cannot make the connection non-blocking: %s",
                     pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return;
        }
        p->want_write = false;
        io_update(p);
        p->state = S_HANDSHAKE;
        p->op = OP_VERSION;
        p->op_failed = false;
        deadline_in(p, p->conf.query_timeout_s);
        if (!p->pq->sendQuery(p->conn, "SELECT version FROM " TEAM_SCHEMA ".schema_info")) {
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return;
        }
        pump(p);
}

static void quiet(void *arg, const char *message)
{
        (void)arg;
        (void)message;
}

/* The parsed url with hostaddr set from the resolved names. */
static void connect_now(struct team_push *p)
{
        char addrs[MAX_HOSTS * (INET6_ADDRSTRLEN + 1)], b[ERR_MAX];
        const char *kw[64], *val[64];
        size_t n = 0;
        bool any;

        if (team_resolve_hostaddr(p->resolve, addrs, sizeof(addrs), b, sizeof(b)) < 0) {
                fail(p, "%s", b);
                return;
        }
        any = addrs[0] != 0;
        for (size_t i = 0; i < p->n_kw && n < 60; i++) {
                if (any && strcmp(p->kw[i], "hostaddr") == 0)
                        continue;
                kw[n] = p->kw[i], val[n++] = p->val[i];
        }
        if (any)
                kw[n] = "hostaddr", val[n++] = addrs;
        kw[n] = NULL, val[n] = NULL;
        p->conn = p->pq->connectStartParams(kw, val, 0);
        if (!p->conn) {
                fail(p, "out of memory");
                return;
        }
        if (p->pq->status(p->conn) == CONNECTION_BAD) {
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return;
        }
        p->pq->setNoticeProcessor(p->conn, quiet, NULL); /* notices are not ours to print */
        p->state = S_CONNECTING;
        p->want_write = true; /* as if PQconnectPoll had said WRITING */
        io_update(p);
}

static void on_resolved(void *u)
{
        struct team_push *p = u;
        if (p->state == S_RESOLVING)
                connect_now(p);
}

static void start_connect(struct team_push *p)
{
        int r;

        drop_connection(p);
        team_resolve_cancel(p->resolve);
        p->state = S_RESOLVING;
        p->next_retry_ms = 0;
        deadline_in(p, p->conf.connect_timeout_s);
        if (!team_resolve_needed(p->resolve)) {
                connect_now(p);
                return;
        }
        r = team_resolve_start(p->resolve);
        if (r < 0)
                fail(p, "cannot resolve host names: %s", strerror(-r));
}

/* ---- results --------------------------------------------------------------- */

static void op_error(struct team_push *p, PGresult *res)
{
        char b[ERR_MAX];
        const char *state = p->pq->resultErrorField(res, PG_DIAG_SQLSTATE);

        if (p->op_failed)
                return;
        p->op_failed = true;
        if (p->op == OP_VERSION && state && (strcmp(state, "42P01") == 0 || strcmp(state, "3F000") == 0))
                snprintf(p->op_error, sizeof(p->op_error),
                         "the database has no agentmeterd team schema; run: agentmeterctl team init");
        else
                snprintf(p->op_error, sizeof(p->op_error), "%s",
                         pq_message(p->pq->resultErrorMessage(res), b, sizeof(b)));
}

static void on_result(struct team_push *p, PGresult *res)
{
        ExecStatusType st = p->pq->resultStatus(res);

        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
                op_error(p, res);
                return;
        }
        if (p->op == OP_VERSION && st == PGRES_TUPLES_OK) {
                long v = p->pq->ntuples(res) == 1 ? strtol(p->pq->getvalue(res, 0, 0), NULL, 10) : -1;
                if (v > TEAM_SCHEMA_VERSION) {
                        p->op_failed = true;
                        snprintf(p->op_error, sizeof(p->op_error),
                                 "the team schema is version %ld, newer than this agentmeterd knows "
                                 "(%d): upgrade agentmeterd", v, TEAM_SCHEMA_VERSION);
                } else if (v < TEAM_SCHEMA_PUSH_MIN) {
                        p->op_failed = true;
                        snprintf(p->op_error, sizeof(p->op_error),
                                 "the team schema is version %ld, this agentmeterd needs %d: run "
                                 "agentmeterctl team init", v, TEAM_SCHEMA_PUSH_MIN);
                }
        } else if (p->op == OP_METER && st == PGRES_TUPLES_OK && p->pq->ntuples(res) == 1) {
                p->meter_id = (int)strtol(p->pq->getvalue(res, 0, 0), NULL, 10);
                p->server_acked = strtoull(p->pq->getvalue(res, 0, 1), NULL, 10);
        }
}

static void send_meter(struct team_push *p)
{
        static const char sql[] =
                "INSERT INTO " TEAM_SCHEMA ".meters (machine_key, ledger_id, machine, user_name, agent_version)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (machine_key, ledger_id) DO UPDATE SET"
                " machine = EXCLUDED.machine, user_name = EXCLUDED.user_name,"
                " agent_version = EXCLUDED.agent_version"
                " RETURNING id, acked_seq";
        struct outbox_state st;
        char id[2 * OUTBOX_ID_SIZE + 1], b[ERR_MAX];
        const char *params[5];
        int r = ledger_outbox_state(p->ledger, &st);

        if (r < 0) {
                fail(p, "cannot read the outbox: %s", strerror(-r));
                return;
        }
        for (size_t i = 0; i < OUTBOX_ID_SIZE; i++)
                snprintf(id + 2 * i, 3, "%02x", st.id[i]);
        params[0] = p->conf.machine_key;
        params[1] = id;
        params[2] = p->conf.machine;
        params[3] = p->conf.user;
        params[4] = AM_VERSION;
        p->op = OP_METER;
        p->op_failed = false;
        p->meter_id = 0;
        if (!p->pq->sendQueryParams(p->conn, sql, 5, NULL, params, NULL, NULL, 0))
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
}

/* The server's cursor against the ledger's: see the top of this file. */
static int reconcile_cursor(struct team_push *p)
{
        struct outbox_state st;
        int r = ledger_outbox_state(p->ledger, &st);

        if (r < 0)
                return r;
        if (p->server_acked > 0 && p->server_acked >= st.next_seq) {
                /* the server confirmed numbers this ledger never handed
                 * out: it knows another history under this identity (this
                 * ledger came back from a backup). A new identity, and
                 * everything again (the server keeps each row once). */
                if (++p->id_renewals > 2)
                        return -ELOOP;
                r = ledger_outbox_new_id(p->ledger);
                log_state(p, LOG_NOTICE, "the server is ahead of this ledger's outbox: sending the "
                                         "whole ledger again under a new identity");
                if (r == 0 && p->on_refill)
                        p->on_refill(p->u);
                return r < 0 ? r : 1; /* register again */
        }
        if (p->server_acked < st.acked_seq) {
                /* the server lost what it had confirmed (restored from a
                 * backup, or another server under the same url) */
                log_state(p, LOG_NOTICE, "the server lacks part of this ledger's history: sending "
                                         "the whole ledger again");
                r = ledger_outbox_refill(p->ledger);
                if (r == 0 && p->on_refill)
                        p->on_refill(p->u);
                return r;
        }
        if (p->server_acked > st.acked_seq)
                /* the server committed a batch whose acknowledgement the
                 * ledger lost (a crash in between): catch up, send nothing again */
                return ledger_outbox_ack(p->ledger, p->server_acked);
        return 0;
}

static void op_done(struct team_push *p)
{
        char b[ERR_MAX];
        enum op op = p->op;
        int r;

        p->op = OP_NONE;
        if (p->op_failed) {
                fail(p, "%s", p->op_error);
                return;
        }
        switch (op) {
        case OP_VERSION:
                send_meter(p);
                break;
        case OP_METER:
                if (p->meter_id <= 0) {
                        fail(p, "the server did not register this machine");
                        return;
                }
                p->op = OP_STAGING;
                char sql[1024];
                snprintf(sql, sizeof(sql), "%sSET statement_timeout = %u", team_staging_sql,
                         p->conf.query_timeout_s * 1000);
                if (!p->pq->sendQuery(p->conn, sql))
                        fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                break;
        case OP_STAGING:
                r = reconcile_cursor(p);
                if (r == 1) {
                        /* a new identity: register it again */
                        static const char again[] = "DISCARD TEMP; SELECT version FROM " TEAM_SCHEMA ".schema_info";
                        p->op = OP_VERSION;
                        if (!p->pq->sendQuery(p->conn, again))
                                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                        break;
                }
                if (r < 0) {
                        fail(p, "cannot move the outbox: %s", strerror(-r));
                        return;
                }
                p->connected_since_ms = timefmt_now_ms();
                p->backoff_ms = 0;
                p->last_error[0] = 0;
                p->id_renewals = 0;
                {
                        struct outbox_state st;
                        char what[128];
                        (void)ledger_outbox_state(p->ledger, &st);
                        snprintf(what, sizeof(what), "connected as machine %.40s, user %.40s; backlog %" PRIu64,
                                 p->conf.machine, p->conf.user, st.entries);
                        log_state(p, LOG_INFO, what);
                }
                next_batch(p);
                break;
        case OP_BATCH:
                kill_point(p, TEAM_KILL_BEFORE_ACK);
                r = ledger_outbox_ack(p->ledger, p->batch.last);
                if (r < 0) {
                        /* the server has it; the next connection's cursor check moves the ledger */
                        fail(p, "the server committed a batch but the ledger could not record it: %s",
                             strerror(-r));
                        return;
                }
                p->rows_sent += p->batch.n_rows;
                p->calls_sent += p->batch.n_calls;
                p->batches++;
                p->last_push_ms = timefmt_now_ms();
                if (!p->prefetching) {
                        next_batch(p);
                        break;
                }
                /* the batch read meanwhile goes next (or goes on being read) */
                struct team_batch done = p->batch;
                p->batch = p->next;
                p->next = done;
                p->prefetching = false;
                p->counter_seen = ledger_outbox_counter(p->ledger);
                if (!p->batch.complete) {
                        p->state = S_READING;
                        deadline_off(p);
                        (void)sd_event_source_set_enabled(p->reader, SD_EVENT_ONESHOT);
                } else if (team_batch_empty(&p->batch)) {
                        next_batch(p); /* anything committed since */
                } else {
                        send_batch(p);
                }
                break;
        default:
                break;
        }
}

/* ---- the pump ---------------------------------------------------------------- */

static const struct team_buf *copy_buf(struct team_push *p)
{
        return p->copy_phase == 1 ? &p->batch.rows : &p->batch.calls;
}

/* Writes COPY data and the rest of the query; false when the socket is full. */
static bool write_out(struct team_push *p)
{
        char b[ERR_MAX];

        while (p->copying) {
                const struct team_buf *buf = copy_buf(p);
                if (p->copy_off < buf->len) {
                        size_t n = buf->len - p->copy_off;
                        int rc = p->pq->putCopyData(p->conn, buf->p + p->copy_off, (int)(n > COPY_CHUNK ? COPY_CHUNK : n));
                        if (rc == 0)
                                return false;
                        if (rc < 0) {
                                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                                return false;
                        }
                        p->copy_off += n > COPY_CHUNK ? COPY_CHUNK : n;
                        if (p->copy_off < buf->len)
                                kill_point(p, TEAM_KILL_MID_COPY);
                        continue;
                }
                int rc = p->pq->putCopyEnd(p->conn, NULL);
                if (rc == 0)
                        return false;
                if (rc < 0) {
                        fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                        return false;
                }
                p->copying = false;
                if (p->copy_phase == 2)
                        kill_point(p, TEAM_KILL_COPY_END);
        }
        int rc = p->pq->flush(p->conn);
        if (rc < 0) {
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return false;
        }
        return rc == 0;
}

static void pump(struct team_push *p)
{
        char b[ERR_MAX];

        while (p->conn && p->op != OP_NONE) {
                bool flushed = write_out(p);
                if (!p->conn)
                        return; /* failed */
                if (!flushed || p->copying) {
                        p->want_write = true;
                        io_update(p);
                        return;
                }
                p->want_write = false;
                if (!p->pq->consumeInput(p->conn)) {
                        fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                        return;
                }
                bool again = false;
                while (!p->pq->isBusy(p->conn)) {
                        PGresult *res = p->pq->getResult(p->conn);
                        if (!res) {
                                op_done(p); /* may start the next query, or fail */
                                again = p->conn && p->op != OP_NONE;
                                break;
                        }
                        if (p->pq->resultStatus(res) == PGRES_COPY_IN) {
                                p->pq->clear(res);
                                p->copy_phase++;
                                if (p->op != OP_BATCH || p->copy_phase > 2) {
                                        p->pq->putCopyEnd(p->conn, "unexpected COPY");
                                } else {
                                        p->copying = true;
                                        p->copy_off = 0;
                                        if (p->copy_phase == 1)
                                                kill_point(p, TEAM_KILL_AFTER_BEGIN);
                                }
                                again = true;
                                break;
                        }
                        on_result(p, res);
                        p->pq->clear(res);
                }
                if (!again)
                        break;
        }
        if (p->conn)
                io_update(p);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *u)
{
        struct team_push *p = u;
        (void)s;
        (void)fd;
        (void)revents;
        if (p->state == S_CONNECTING) {
                connect_poll(p);
        } else if (p->op == OP_NONE) {
                /* idle: the server may have closed (a restart, a terminate) */
                char b[ERR_MAX];
                if (!p->pq->consumeInput(p->conn) || p->pq->status(p->conn) == CONNECTION_BAD)
                        fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                else
                        while (!p->pq->isBusy(p->conn)) {
                                PGresult *res = p->pq->getResult(p->conn);
                                if (!res)
                                        break;
                                p->pq->clear(res);
                        }
        } else {
                pump(p);
        }
        return 0;
}

/* ---- batches ----------------------------------------------------------------- */

static void send_batch(struct team_push *p)
{
        char b[ERR_MAX], *q = NULL;
        bool sent;
        int r = team_batch_sql(p->sql.p, p->sql.cap, p->meter_id, p->batch.last, p->batch.n_rows,
                               p->batch.n_calls);

        if (r < 0) {
                fail(p, "batch statement too long (a bug)");
                return;
        }
        p->state = S_BATCH;
        p->op = OP_BATCH;
        p->op_failed = false;
        p->copy_phase = 0;
        p->copying = false;
        deadline_in(p, p->conf.query_timeout_s + 10);
        if (asprintf(&q, TEAM_BATCH_BEGIN_SQL "; " TEAM_BATCH_CALLS_SQL ";\n%s", p->sql.p) < 0) {
                fail(p, "out of memory");
                return;
        }
        kill_point(p, TEAM_KILL_BEFORE_BEGIN);
        sent = p->pq->sendQuery(p->conn, q);
        free(q);
        if (!sent) {
                fail(p, "%s", pq_message(p->pq->errorMessage(p->conn), b, sizeof(b)));
                return;
        }
        /* while the server works on it, read the next one */
        if (team_batch_begin(&p->next, p->batch.last) == 0) {
                p->prefetching = true;
                (void)sd_event_source_set_enabled(p->reader, SD_EVENT_ONESHOT);
        }
        /* the caller pumps */
}

/* One slice of the next batch per loop turn (a slice of 1,000 entries
 * holds the loop ~2.5 ms; a whole batch of 5,000 held it 13 ms). */
static int on_reader(sd_event_source *s, void *u)
{
        struct team_push *p = u;
        struct team_batch *b = p->state == S_READING                  ? &p->batch
                               : p->state == S_BATCH && p->prefetching ? &p->next
                                                                        : NULL;
        int r;

        if (!b)
                return 0;
        r = team_batch_more(b, p->ledger, TEAM_BATCH_SLICE);
        if (r < 0) {
                fail(p, "cannot read the outbox: %s", strerror(-r));
                return 0;
        }
        if (!b->complete)
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (b == &p->next)
                return 0; /* ready: sent once the batch in flight committed */
        if (team_batch_empty(b)) {
                idle(p);
        } else {
                send_batch(p);
                pump(p);
        }
        return 0;
}

static void next_batch(struct team_push *p)
{
        int r;

        p->counter_seen = ledger_outbox_counter(p->ledger);
        r = team_batch_begin(&p->batch, 0);
        if (r == 0 && !p->reader && sd_event_add_defer(p->event, &p->reader, on_reader, p) < 0) {
                p->reader = NULL;
                r = -ENOMEM;
        }
        if (r < 0) {
                fail(p, "cannot read the outbox: %s", strerror(-r));
                return;
        }
        deadline_off(p);
        p->state = S_READING;
        (void)sd_event_source_set_enabled(p->reader, SD_EVENT_ONESHOT);
}

/* ---- life -------------------------------------------------------------------- */

int team_push_new(sd_event *e, struct ledger *l, const struct team_conf *conf,
                  const char *const *keywords, const char *const *values,
                  void (*on_refill)(void *u), void *u, struct team_push **ret)
{
        struct team_push *p = calloc(1, sizeof(*p));
        const char *host = NULL, *port = NULL, *db = NULL;
        bool have_hostaddr = false, have[4] = { false };
        static const char *const extra_kw[] = { "application_name", "client_encoding", "keepalives", "keepalives_idle" };
        static const char *const extra_val[] = { "agentmeterd", "UTF8", "1", "30" };
        size_t n = 0;

        char why[256];

        if (!p)
                return -ENOMEM;
        p->pq = pq_api(why, sizeof(why)); /* loaded already by the caller */
        if (!p->pq) {
                free(p);
                return -ENOSYS;
        }
        p->event = sd_event_ref(e);
        p->ledger = l;
        p->on_refill = on_refill;
        p->u = u;
        p->conf = *conf;
        p->fd = -1;
        p->kill_at = team_kill_point_from_env();
        for (const char *const *k = keywords; *k; k++)
                n++;
        p->kw = calloc(n + 5, sizeof(char *));
        p->val = calloc(n + 5, sizeof(char *));
        p->sql.cap = 32768;
        p->sql.p = malloc(p->sql.cap);
        if (!p->kw || !p->val || !p->sql.p) {
                team_push_free(p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                p->kw[p->n_kw] = strdup(keywords[i]);
                p->val[p->n_kw] = strdup(values[i]);
                if (!p->kw[p->n_kw] || !p->val[p->n_kw]) {
                        team_push_free(p);
                        return -ENOMEM;
                }
                for (size_t j = 0; j < 4; j++)
                        if (strcmp(keywords[i], extra_kw[j]) == 0)
                                have[j] = true;
                if (strcmp(keywords[i], "host") == 0)
                        host = p->val[p->n_kw];
                else if (strcmp(keywords[i], "hostaddr") == 0)
                        have_hostaddr = true;
                else if (strcmp(keywords[i], "port") == 0)
                        port = values[i];
                else if (strcmp(keywords[i], "dbname") == 0)
                        db = values[i];
                p->n_kw++;
        }
        for (size_t j = 0; j < 4; j++)
                if (!have[j]) {
                        p->kw[p->n_kw] = strdup(extra_kw[j]);
                        p->val[p->n_kw] = strdup(extra_val[j]);
                        if (!p->kw[p->n_kw] || !p->val[p->n_kw]) {
                                team_push_free(p);
                                return -ENOMEM;
                        }
                        p->n_kw++;
                }
        snprintf(p->server, sizeof(p->server), "%s%s%s/%s", host ? host : "(local socket)",
                 port ? ":" : "", port ? port : "", db ? db : "(default database)");
        if (team_resolve_new(e, have_hostaddr ? NULL : host, on_resolved, p, &p->resolve) < 0) {
                team_push_free(p);
                return -ENOMEM;
        }
        start_connect(p);
        *ret = p;
        return 0;
}

struct team_push *team_push_free(struct team_push *p)
{
        if (!p)
                return NULL;
        drop_connection(p);
        p->resolve = team_resolve_free(p->resolve);
        sd_event_source_disable_unref(p->deadline);
        sd_event_source_disable_unref(p->retry);
        sd_event_source_disable_unref(p->poll);
        sd_event_source_disable_unref(p->reader);
        for (size_t i = 0; i < p->n_kw; i++) {
                free(p->kw[i]);
                free(p->val[i]);
        }
        free(p->kw);
        free(p->val);
        team_batch_free(&p->batch);
        team_batch_free(&p->next);
        free(p->sql.p);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

void team_push_retry_now(struct team_push *p)
{
        if (p && p->state == S_BACKOFF) {
                p->backoff_ms = 0;
                start_connect(p);
        }
}

static json_object *time_or_null(int64_t ms)
{
        char b[32];
        if (ms <= 0)
                return NULL;
        timefmt_format_utc(ms, b);
        return json_object_new_string(b);
}

void team_push_status(const struct team_push *p, json_object *o)
{
        static const char *const names[] = {
                [S_RESOLVING] = "connecting", [S_CONNECTING] = "connecting", [S_HANDSHAKE] = "connecting",
                [S_IDLE] = "connected",       [S_BATCH] = "connected",       [S_BACKOFF] = "retrying",
                [S_READING] = "connected",
        };
        json_object_object_add(o, "state", json_object_new_string(names[p->state]));
        json_object_object_add(o, "server", json_object_new_string(p->server));
        json_object_object_add(o, "sending", json_object_new_boolean(p->state == S_BATCH));
        json_object_object_add(o, "connected_since", time_or_null(p->connected_since_ms));
        json_object_object_add(o, "last_push", time_or_null(p->last_push_ms));
        json_object_object_add(o, "rows_sent", json_object_new_int64((int64_t)p->rows_sent));
        json_object_object_add(o, "calls_sent", json_object_new_int64((int64_t)p->calls_sent));
        json_object_object_add(o, "batches", json_object_new_int64((int64_t)p->batches));
        json_object_object_add(o, "last_error", p->last_error[0] ? json_object_new_string(p->last_error) : NULL);
        json_object_object_add(o, "last_error_at", p->last_error[0] ? time_or_null(p->last_error_ms) : NULL);
        json_object_object_add(o, "next_retry", p->state == S_BACKOFF ? time_or_null(p->next_retry_ms) : NULL);
}
