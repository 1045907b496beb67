/* The database era of OpenCode and Kilo: `message(id, session_id,
 * time_created, time_updated, data)` read read-only through SQLite. An
 * assistant row is INSERTed with every token 0 when its step starts and
 * UPDATEd in place twice (final tokens and cost, then time.completed); the
 * ledger must end with the final values, once, and a read must cost what
 * changed, not the table.
 *
 * The schema has no index on time_updated (a `WHERE time_updated >= ?` is a
 * scan of the whole table), so the watermark is the rowid, and the rows that
 * can still change are kept apart:
 * - The tail: rows past the highest rowid read (new messages, a fork's
 *   copies, the rows an upgrade migrated from the JSON files).
 * - The waiting rows: assistant rows read before they were complete (no
 *   time.completed and no error), kept by rowid (as many as the state's
 *   private area holds as varint deltas, at most PEND_MAX) and fetched again
 *   by rowid on every pass until they are; the tail is never rewound for
 *   them, so a pass costs what changed however many rows wait. Rows past
 *   what the set holds (the overflow, from overflow_at up) are found again
 *   by a range read that SQLite filters on time_updated (rows updated since
 *   the last pass, less a margin), so only the rows that changed reach the
 *   parser; the overflow ends when nothing in it can still be waiting
 *   (PEND_TTL_MS after it began). A row waiting longer than PEND_TTL_MS (a
 *   writer killed mid-step) stops waiting: it stays counted as last read.
 * - The change feed: where the database has OpenCode's `event` table (an
 *   append-only event log, written in the same transaction as the update
 *   it records), the message.updated events past the event watermark name
 *   the messages updated anywhere, which are fetched by primary key. The
 *   events are never summed (each update is there again).
 * Rowids are max+1, so a new row can only take a rowid at or below the
 * watermark after the rows at the top were deleted: the id of the row at
 * the watermark (and of the event at the event watermark) is kept, and when
 * it no longer holds, everything is read again (content keys make that
 * harmless). A message Kilo removes stays in the ledger: it was billed.
 *
 * A pass is: the waiting rows, the events, the tail; it may span calls
 * (max_rows), resumed from the state in parse_state.priv. The connection,
 * the immutable read of a WAL database in a read-only directory, the
 * fingerprint that skips a database nothing wrote, and "settling" are as
 * for OpenClaw's databases (adapt-sqlite.h, openclaw/db.c).
 *
 * Kilo's fork copies carry cost 0: a row with tokens and cost 0, written
 * after its call had completed, looks for the call it copies (same
 * time_created, same content key, found through the (session_id,
 * time_created) index, one probe per session) and takes its cost, so the
 * call keeps it whichever row is read first. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-sqlite.h"
#include "binio.h"
#include "opencode/opencode.h"
#include "timefmt.h"

#define PEND_MAX     32 /* waiting rows kept by rowid, when their deltas fit */
#define PEND_TTL_MS  (6 * 3600 * 1000LL)
#define RECHECK_MS   30000
#define UPDATE_SLACK_MS 60000 /* the overflow read looks this far before the last pass */
#define COPY_LAG_MS  1000 /* a row written this long after its call completed may be a copy */

enum phase { PH_IDLE = 0, PH_EVENTS = 1, PH_TAIL = 2 };

/* What a database source keeps between calls, in parse_state.priv: */
struct db_state {
        bool valid;
        bool done;          /* the last call read everything there was ... */
        uint64_t fp;        /* ... of the database with this fingerprint ... */
        int64_t at_ms;      /* ... at this time */
        bool not_ours;      /* a *.db of another name without our tables */
        uint8_t phase;      /* enum phase: where the pass in progress is */
        bool have_mark;     /* mark: hash64 of the id of the row at the watermark */
        uint64_t mark;
        bool have_ev;       /* the event table: read up to ev_wm, whose id hashes to ev_mark */
        int64_t ev_wm;
        uint64_t ev_mark;
        int64_t cursor;     /* PH_EVENTS: where the tail will start; PH_TAIL: the last rowid read */
        bool overflow;      /* waiting rows not kept: the first of them at overflow_at, */
        int64_t overflow_at;
        int64_t overflow_ms; /* ... since this time */
        int64_t pass_ms;    /* when the last pass began (the overflow reads rows updated since) */
        uint64_t rows_read;
        uint8_t n_pend;
        int64_t pend[PEND_MAX]; /* waiting rows, ascending rowids */
};

/* parse_state.priv, little-endian (format 2):
 *   u8 DB_PRIV_FORMAT | u8 flags | u8 phase | u64 fp | u64 mark | u64 ev_mark |
 *   var at_ms | var ev_wm | var cursor | var overflow_at | var overflow_ms |
 *   var pass_ms | var rows_read | u8 n_pend | var pend[0] | var pend[i] - pend[i-1] ...
 * state_put keeps as many waiting rows as fit; the rest join the overflow.
 * Format 1 (fixed fields, six waiting rows) is still read. Any other
 * content: nothing known (the database is read again). */
#define DB_PRIV_FORMAT_1 1
#define DB_PRIV_LEN_1    (4 + 8 * 8 + 8 * 6)
#define DB_PRIV_FORMAT   2
#define F_DONE           0x01u
#define F_NOT_OURS       0x02u
#define F_MARK           0x04u
#define F_EV             0x08u
#define F_OVERFLOW       0x10u

static void flags_get(struct db_state *s, uint8_t flags)
{
        s->done = flags & F_DONE;
        s->not_ours = flags & F_NOT_OURS;
        s->have_mark = flags & F_MARK;
        s->have_ev = flags & F_EV;
        s->overflow = flags & F_OVERFLOW;
}

static struct db_state state_get_1(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct db_state s = { 0 };
        uint8_t flags;

        if (ps->priv_len != DB_PRIV_LEN_1 || br_u8(&r) != DB_PRIV_FORMAT_1)
                return (struct db_state){ 0 };
        flags = br_u8(&r);
        s.phase = br_u8(&r);
        s.n_pend = br_u8(&r);
        s.fp = br_u64(&r);
        s.at_ms = (int64_t)br_u64(&r);
        s.mark = br_u64(&r);
        s.ev_wm = (int64_t)br_u64(&r);
        s.ev_mark = br_u64(&r);
        s.cursor = (int64_t)br_u64(&r);
        s.overflow_at = (int64_t)br_u64(&r);
        s.rows_read = br_u64(&r);
        for (size_t i = 0; i < 6; i++) {
                int64_t v = (int64_t)br_u64(&r);
                if (i < s.n_pend && i < PEND_MAX)
                        s.pend[i] = v;
        }
        flags_get(&s, flags);
        /* the old overflow rewound the tail: read from its first row once more */
        if (s.overflow && s.overflow_at > 0 && s.overflow_at - 1 < s.cursor)
                s.cursor = s.overflow_at - 1;
        s.overflow = false;
        if (r.bad || s.phase > PH_TAIL || s.n_pend > 6)
                return (struct db_state){ 0 };
        s.valid = true;
        return s;
}

static struct db_state state_get(const struct parse_state *ps)
{
        struct br r = { ps->priv, ps->priv_len, 0, false };
        struct db_state s = { 0 };
        uint8_t flags;
        int64_t prev = 0;

        if (ps->priv_len > 0 && ps->priv[0] == DB_PRIV_FORMAT_1)
                return state_get_1(ps);
        if (ps->priv_len == 0 || br_u8(&r) != DB_PRIV_FORMAT)
                return (struct db_state){ 0 };
        flags = br_u8(&r);
        s.phase = br_u8(&r);
        s.fp = br_u64(&r);
        s.mark = br_u64(&r);
        s.ev_mark = br_u64(&r);
        s.at_ms = (int64_t)br_var(&r);
        s.ev_wm = (int64_t)br_var(&r);
        s.cursor = (int64_t)br_var(&r);
        s.overflow_at = (int64_t)br_var(&r);
        s.overflow_ms = (int64_t)br_var(&r);
        s.pass_ms = (int64_t)br_var(&r);
        s.rows_read = br_var(&r);
        s.n_pend = br_u8(&r);
        if (s.n_pend > PEND_MAX)
                return (struct db_state){ 0 };
        for (size_t i = 0; i < s.n_pend; i++) {
                prev += (int64_t)br_var(&r);
                s.pend[i] = prev;
        }
        flags_get(&s, flags);
        if (r.bad || s.phase > PH_TAIL)
                return (struct db_state){ 0 };
        s.valid = true;
        return s;
}

/* The whole parse_state is the private area: the named fields stay zero.
 * The waiting rows that do not fit join the overflow. */
static void state_put(struct parse_state *ps, const struct db_state *s0)
{
        struct db_state s = *s0;
        struct bw w;
        size_t fixed, kept = 0;

        for (;;) {
                w = (struct bw){ ps->priv, 0, sizeof(ps->priv), false };
                bw_u8(&w, DB_PRIV_FORMAT);
                bw_u8(&w, (uint8_t)((s.done ? F_DONE : 0) | (s.not_ours ? F_NOT_OURS : 0) | (s.have_mark ? F_MARK : 0) |
                                    (s.have_ev ? F_EV : 0) | (s.overflow ? F_OVERFLOW : 0)));
                bw_u8(&w, s.phase);
                bw_u64(&w, s.fp);
                bw_u64(&w, s.mark);
                bw_u64(&w, s.ev_mark);
                bw_var(&w, (uint64_t)s.at_ms);
                bw_var(&w, (uint64_t)s.ev_wm);
                bw_var(&w, (uint64_t)s.cursor);
                bw_var(&w, (uint64_t)s.overflow_at);
                bw_var(&w, (uint64_t)s.overflow_ms);
                bw_var(&w, (uint64_t)s.pass_ms);
                bw_var(&w, s.rows_read);
                fixed = w.len;
                bw_u8(&w, 0); /* n_pend, set below */
                kept = 0;
                for (size_t i = 0; i < s.n_pend; i++) {
                        struct bw before = w;
                        bw_var(&w, (uint64_t)(s.pend[i] - (i ? s.pend[i - 1] : 0)));
                        if (w.overflow) {
                                w = before;
                                break;
                        }
                        kept++;
                }
                if (kept == s.n_pend || (s.overflow && s.overflow_at <= s.pend[kept]))
                        break;
                /* the rest waits in the overflow, which then begins at the
                 * first of them (the fixed part may grow: encode again) */
                if (!s.overflow || s.overflow_ms <= 0 || s.overflow_ms > s.at_ms)
                        s.overflow_ms = s.at_ms;
                s.overflow = true;
                s.overflow_at = s.pend[kept];
        }
        ps->priv[fixed] = (uint8_t)kept;
        memset(ps, 0, offsetof(struct parse_state, priv_len));
        ps->priv_len = (uint32_t)w.len;
}

int ocode_db_figures(const struct parse_state *ps, uint64_t watermark, struct ocode_db_figures *ret)
{
        struct db_state s = state_get(ps);

        if (!s.valid)
                return -EINVAL;
        *ret = (struct ocode_db_figures){
                .rows_read = s.rows_read,
                .waiting = s.n_pend,
                .waiting_more = s.overflow,
                .watermark = watermark,
                .event_mark = s.have_ev && s.ev_wm > 0 ? (uint64_t)s.ev_wm : 0,
                .not_ours = s.not_ours,
        };
        return 0;
}

/* A waiting row kept (ascending, once); past PEND_MAX the first not kept is
 * remembered. */
static void pend_add(struct db_state *st, int64_t rowid)
{
        for (size_t i = 0; i < st->n_pend; i++)
                if (st->pend[i] == rowid)
                        return;
        if (st->n_pend < PEND_MAX && (st->n_pend == 0 || st->pend[st->n_pend - 1] < rowid)) {
                st->pend[st->n_pend++] = rowid;
                return;
        }
        if (!st->overflow || rowid < st->overflow_at) {
                st->overflow = true;
                st->overflow_at = rowid;
        }
}

static bool pend_has(const struct db_state *st, int64_t rowid)
{
        for (size_t i = 0; i < st->n_pend; i++)
                if (st->pend[i] == rowid)
                        return true;
        return false;
}

/* ---- sqlite ----------------------------------------------------------------- */

#define MSG_COLS "rowid, id, session_id, time_created, time_updated, data"

static const char Q_TAIL[] = "SELECT " MSG_COLS " FROM message WHERE rowid > ?1 ORDER BY rowid LIMIT ?2";
static const char Q_RANGE[] = "SELECT " MSG_COLS
                               " FROM message WHERE rowid >= ?1 AND rowid <= ?2 AND time_updated >= ?3 ORDER BY rowid";
static const char Q_ROWID[] = "SELECT " MSG_COLS " FROM message WHERE rowid = ?1";
static const char Q_BYID[] = "SELECT " MSG_COLS " FROM message WHERE id = ?1";
static const char Q_MARK[] = "SELECT id FROM message WHERE rowid = ?1";
static const char Q_PARTS[] = "SELECT data FROM part WHERE message_id = ?1 ORDER BY id";
static const char Q_EV[] =
        "SELECT rowid, id, type, data FROM event WHERE rowid > ?1 ORDER BY rowid LIMIT ?2";
static const char Q_EV_MAX[] = "SELECT rowid, id FROM event ORDER BY rowid DESC LIMIT 1";
static const char Q_EV_MARK[] = "SELECT id FROM event WHERE rowid = ?1";
/* one probe of the (session_id, time_created) index per session */
static const char Q_COPIES[] =
        "SELECT m.data FROM session AS s CROSS JOIN message AS m "
        "ON m.session_id = s.id AND m.time_created = ?1 WHERE m.id <> ?2";

enum { C_ROWID, C_ID, C_SESSION, C_CREATED, C_UPDATED, C_DATA };

struct reader {
        const struct ocode_flavor *fl;
        const struct source_ctx *ctx;
        struct adapt_db conn;
        sqlite3 *db;
        sqlite3_stmt *q_tail, *q_rowid, *q_range, *q_byid, *q_mark, *q_parts, *q_ev, *q_ev_max, *q_ev_mark, *q_copies;
        int64_t now_ms;
        uint64_t malformed;
        size_t n; /* rows read this call */
};

static int prep(struct reader *rd, const char *q, sqlite3_stmt **ret, bool optional)
{
        int rc = sqlite3_prepare_v2(rd->db, q, -1, ret, NULL);

        if (rc == SQLITE_OK)
                return 0;
        *ret = NULL;
        if (optional && (rc & 0xff) == SQLITE_ERROR)
                return 0; /* a table this database does not have */
        return adapt_sql_errno(rd->db, rc);
}

/* 0; 1 when the database holds no message table (a new empty file, or not
 * ours: *ret_not_ours); negative errno. */
static int db_open(struct reader *rd, bool *ret_not_ours)
{
        int rc, r;

        *ret_not_ours = false;
        r = adapt_db_open(rd->ctx->path, &rd->conn);
        if (r < 0)
                return r;
        rd->db = rd->conn.db;
        rc = sqlite3_prepare_v2(rd->db, Q_TAIL, -1, &rd->q_tail, NULL);
        if ((rc & 0xff) == SQLITE_ERROR) {
                rd->q_tail = NULL;
                if (adapt_db_empty(&rd->conn))
                        return 1;
                if (ocode_db_name_known(rd->fl, rd->ctx->path))
                        return -EPROTO; /* the harness's own database in a shape we do not know */
                *ret_not_ours = true;
                return 1;
        }
        if (rc != SQLITE_OK)
                return adapt_sql_errno(rd->db, rc);
        if ((r = prep(rd, Q_ROWID, &rd->q_rowid, false)) < 0 || (r = prep(rd, Q_RANGE, &rd->q_range, false)) < 0 ||
            (r = prep(rd, Q_BYID, &rd->q_byid, false)) < 0 ||
            (r = prep(rd, Q_MARK, &rd->q_mark, false)) < 0 || (r = prep(rd, Q_PARTS, &rd->q_parts, true)) < 0 ||
            (r = prep(rd, Q_EV, &rd->q_ev, true)) < 0 || (r = prep(rd, Q_EV_MAX, &rd->q_ev_max, true)) < 0 ||
            (r = prep(rd, Q_EV_MARK, &rd->q_ev_mark, true)) < 0)
                return r;
        if (rd->fl->fork_cost_zero && (r = prep(rd, Q_COPIES, &rd->q_copies, true)) < 0)
                return r;
        return 0;
}

static void reader_close(struct reader *rd)
{
        sqlite3_stmt *all[] = { rd->q_tail, rd->q_rowid, rd->q_range, rd->q_byid, rd->q_mark, rd->q_parts,
                                rd->q_ev, rd->q_ev_max, rd->q_ev_mark, rd->q_copies };

        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
                sqlite3_finalize(all[i]);
        adapt_db_close(&rd->conn); /* ends the read transaction */
        rd->db = NULL;
}

static uint64_t text_hash(sqlite3_stmt *st, int col)
{
        const unsigned char *t = sqlite3_column_text(st, col);
        return t ? hash64(t, (size_t)sqlite3_column_bytes(st, col)) : 0;
}

/* ---- one message row ------------------------------------------------------------ */

/* The tool calls of a part row: {"type":"tool","tool":name,"callID":id}. */
struct part_f {
        struct jscan_span type, tool, call_id;
};

static bool part_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct part_f *p = u;

        if (JSCAN_KEY_IS(k, "type"))
                return jscan_read_str(s, &p->type, depth);
        if (JSCAN_KEY_IS(k, "tool"))
                return jscan_read_str(s, &p->tool, depth);
        if (JSCAN_KEY_IS(k, "callID"))
                return jscan_read_str(s, &p->call_id, depth);
        return jscan_skip(s, depth);
}

/* The message's tool parts into row->calls (the step that asked for them
 * is the call that paid for them). */
static int add_calls(struct reader *rd, sqlite3_stmt *msg, struct usage_row *row)
{
        int rc;

        row->n_calls = 0;
        if (!rd->q_parts)
                return 0;
        sqlite3_bind_text(rd->q_parts, 1, (const char *)sqlite3_column_text(msg, C_ID),
                          sqlite3_column_bytes(msg, C_ID), SQLITE_TRANSIENT);
        while ((rc = sqlite3_step(rd->q_parts)) == SQLITE_ROW) {
                const char *t = (const char *)sqlite3_column_text(rd->q_parts, 0);
                struct jscan s = { t, t ? t + sqlite3_column_bytes(rd->q_parts, 0) : NULL };
                struct part_f p = { 0 };

                if (!t || row->n_calls >= ROW_CALLS_MAX)
                        continue;
                jscan_ws(&s);
                if (!jscan_at(&s, '{') || !jscan_object(&s, part_key, &p, 0) || !jscan_span_eq(&p.type, "tool") ||
                    !p.tool.p || p.tool.n == 0)
                        continue;
                jscan_span_set(row->calls[row->n_calls].id, sizeof(row->calls[0].id), &p.call_id);
                jscan_span_set(row->calls[row->n_calls].name, sizeof(row->calls[0].name), &p.tool);
                row->n_calls++;
        }
        sqlite3_reset(rd->q_parts);
        return rc == SQLITE_DONE ? 0 : adapt_sql_errno(rd->db, rc);
}

/* Kilo: a row with tokens and cost 0 takes the cost of the call it copies.
 * Only a row written well after its call completed can be a copy (a fork
 * copies time.completed and writes the row at fork time); a call of a free
 * model, written as it completes, is not looked up. */
static int copy_cost(struct reader *rd, sqlite3_stmt *msg, const struct ocode_msg *m, struct usage_row *row)
{
        int rc;

        if (!rd->q_copies || row->cost_source != COST_NONE || !m->completed ||
            sqlite3_column_int64(msg, C_UPDATED) - m->completed_ms <= COPY_LAG_MS)
                return 0;
        sqlite3_bind_int64(rd->q_copies, 1, sqlite3_column_int64(msg, C_CREATED));
        sqlite3_bind_text(rd->q_copies, 2, (const char *)sqlite3_column_text(msg, C_ID),
                          sqlite3_column_bytes(msg, C_ID), SQLITE_TRANSIENT);
        while ((rc = sqlite3_step(rd->q_copies)) == SQLITE_ROW) {
                const char *t = (const char *)sqlite3_column_text(rd->q_copies, 0);
                struct ocode_msg o;

                if (!t || ocode_msg_parse(t, (size_t)sqlite3_column_bytes(rd->q_copies, 0), &o) < 0 ||
                    !o.cost.present || !(o.cost.d > 0) || !ocode_msg_same_call(m, &o))
                        continue;
                struct row_batch one = { 0 };
                if (ocode_msg_row(rd->fl, &o, OCODE_ERA_DB, "", 0, 0, &one) == 1 &&
                    one.rows[0].cost_source == COST_VENDOR) {
                        row->cost_source = COST_VENDOR;
                        row->cost_nano = one.rows[0].cost_nano;
                }
                row_batch_free(&one);
                if (row->cost_source == COST_VENDOR)
                        break;
        }
        sqlite3_reset(rd->q_copies);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : adapt_sql_errno(rd->db, rc);
}

/* The current row of st: its usage row (if it has one) into out. 1 when
 * it is an assistant row still waiting for its final state, else 0;
 * negative errno. */
static int read_row(struct reader *rd, sqlite3_stmt *st, struct db_state *state, struct row_batch *out)
{
        const char *data = (const char *)sqlite3_column_text(st, C_DATA);
        const char *sid = (const char *)sqlite3_column_text(st, C_SESSION);
        int64_t updated = sqlite3_column_int64(st, C_UPDATED);
        char session[ROW_SESSION_MAX];
        struct ocode_msg m;
        int r;

        rd->n++;
        state->rows_read++;
        if (!data || ocode_msg_parse(data, (size_t)sqlite3_column_bytes(st, C_DATA), &m) < 0) {
                rd->malformed++;
                return 0;
        }
        row_set_str(session, sizeof(session), sid ? sid : "", sid ? (size_t)sqlite3_column_bytes(st, C_SESSION) : 0);
        r = ocode_msg_row(rd->fl, &m, OCODE_ERA_DB, session, sqlite3_column_int64(st, C_CREATED),
                          rd->ctx->source_hash, out);
        if (r < 0)
                return r;
        if (r == 1) {
                struct usage_row *row = &out->rows[out->n - 1];
                if ((r = add_calls(rd, st, row)) < 0 || (r = copy_cost(rd, st, &m, row)) < 0)
                        return r;
        }
        /* waiting, unless its writer has been gone for hours */
        return ocode_msg_pending(&m) && updated > rd->now_ms - PEND_TTL_MS;
}

/* ---- the pass ----------------------------------------------------------------- */

/* Whether the row at the watermark (and the event at the event watermark)
 * are still the ones read: 1, 0 (rows deleted or renumbered), negative errno. */
static int mark_holds(struct reader *rd, sqlite3_stmt *q, int64_t at, uint64_t mark)
{
        int rc, r = 0;

        sqlite3_bind_int64(q, 1, at);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW)
                r = text_hash(q, 0) == mark;
        else if (rc != SQLITE_DONE)
                r = adapt_sql_errno(rd->db, rc);
        sqlite3_reset(q);
        return r;
}

/* The event watermark moved to the last event there is (a read of every
 * row makes the events before it moot). */
static int events_skip(struct reader *rd, struct db_state *st)
{
        int rc, r = 0;

        st->have_ev = rd->q_ev != NULL && rd->q_ev_max != NULL && rd->q_ev_mark != NULL;
        st->ev_wm = 0;
        st->ev_mark = 0;
        if (!st->have_ev)
                return 0;
        rc = sqlite3_step(rd->q_ev_max);
        if (rc == SQLITE_ROW) {
                st->ev_wm = sqlite3_column_int64(rd->q_ev_max, 0);
                st->ev_mark = text_hash(rd->q_ev_max, 1);
        } else if (rc != SQLITE_DONE) {
                r = adapt_sql_errno(rd->db, rc);
        }
        sqlite3_reset(rd->q_ev_max);
        return r;
}

/* Everything read again from rowid 0 (the events before now are moot). */
static int start_over(struct reader *rd, struct db_state *st, uint64_t *wm)
{
        *wm = 0;
        st->have_mark = false;
        st->n_pend = 0;
        st->overflow = false;
        st->phase = PH_TAIL;
        st->cursor = 0;
        return events_skip(rd, st);
}

/* The waiting rows fetched again; those still waiting kept. */
static int refetch(struct reader *rd, struct db_state *st, struct row_batch *out)
{
        int64_t old[PEND_MAX];
        size_t n = st->n_pend;
        int rc, r = 0;

        memcpy(old, st->pend, sizeof(old));
        st->n_pend = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                sqlite3_bind_int64(rd->q_rowid, 1, old[i]);
                rc = sqlite3_step(rd->q_rowid);
                if (rc == SQLITE_ROW) {
                        r = read_row(rd, rd->q_rowid, st, out);
                        if (r == 1)
                                pend_add(st, old[i]);
                } else if (rc != SQLITE_DONE) {
                        r = adapt_sql_errno(rd->db, rc); /* SQLITE_DONE: removed, nothing to wait for */
                }
                sqlite3_reset(rd->q_rowid);
        }
        return r < 0 ? r : 0;
}

/* The overflow: the rows from overflow_at up to the watermark that were
 * updated since the last pass began (less a margin), found by SQLite's own
 * filter so the rows that did not change never reach the parser; those
 * still waiting join the set. It ends PEND_TTL_MS after it began. */
static int refetch_overflow(struct reader *rd, struct db_state *st, int64_t wm, struct row_batch *out)
{
        int64_t since = st->pass_ms > UPDATE_SLACK_MS ? st->pass_ms - UPDATE_SLACK_MS : 0;
        int rc, r = 0;

        if (!st->overflow)
                return 0;
        if (st->overflow_ms > 0 && rd->now_ms - st->overflow_ms > PEND_TTL_MS) {
                st->overflow = false; /* whatever waited there has waited too long */
                return 0;
        }
        st->overflow = false; /* set again by pend_add for a row that does not fit */
        sqlite3_bind_int64(rd->q_range, 1, st->overflow_at);
        sqlite3_bind_int64(rd->q_range, 2, wm);
        sqlite3_bind_int64(rd->q_range, 3, since);
        int64_t at = st->overflow_at, began = st->overflow_ms;
        while ((rc = sqlite3_step(rd->q_range)) == SQLITE_ROW) {
                int64_t rowid = sqlite3_column_int64(rd->q_range, C_ROWID);
                if (pend_has(st, rowid))
                        continue; /* fetched with the set */
                r = read_row(rd, rd->q_range, st, out);
                if (r < 0)
                        break;
                if (r == 1)
                        pend_add(st, rowid);
        }
        sqlite3_reset(rd->q_range);
        if (r < 0)
                return r;
        if (rc != SQLITE_DONE)
                return adapt_sql_errno(rd->db, rc);
        /* rows of the range that did not change may still wait: the overflow
         * stays where it began until its time is up */
        if (!st->overflow || st->overflow_at > at) {
                st->overflow = true;
                st->overflow_at = at;
        }
        st->overflow_ms = began;
        return 0;
}

/* The message.updated event's message id: data {"info":{"id":...}}. */
struct event_f {
        struct jscan_span id;
};

static bool info_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "id"))
                return jscan_read_str(s, &((struct event_f *)u)->id, depth);
        return jscan_skip(s, depth);
}

static bool event_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        if (JSCAN_KEY_IS(k, "info") && jscan_at(s, '{'))
                return jscan_object(s, info_key, u, depth + 1);
        return jscan_skip(s, depth);
}

/* A message an event says was updated: read when neither the waiting rows
 * nor the tail of this pass read it. */
static int event_message(struct reader *rd, struct db_state *st, const char *data, size_t len,
                         struct row_batch *out)
{
        struct jscan s = { data, data + len };
        struct event_f e = { 0 };
        char id[256];
        size_t n;
        int rc, r = 0;

        jscan_ws(&s);
        if (!jscan_at(&s, '{') || !jscan_object(&s, event_key, &e, 0) || !e.id.p || e.id.n == 0 ||
            e.id.n >= sizeof(id))
                return 0;
        n = jscan_span_decode(&e.id, id, sizeof(id) - 1);
        sqlite3_bind_text(rd->q_byid, 1, id, (int)n, SQLITE_TRANSIENT);
        rc = sqlite3_step(rd->q_byid);
        if (rc == SQLITE_ROW) {
                int64_t rowid = sqlite3_column_int64(rd->q_byid, C_ROWID);
                if (rowid <= st->cursor && !pend_has(st, rowid))
                        r = read_row(rd, rd->q_byid, st, out);
                /* a waiting row found here has its events: not kept */
        } else if (rc != SQLITE_DONE) {
                r = adapt_sql_errno(rd->db, rc);
        }
        sqlite3_reset(rd->q_byid);
        return r < 0 ? r : 0;
}

/* The events past the event watermark: 1 when max_rows was reached. */
static int read_events(struct reader *rd, struct db_state *st, size_t max_rows, struct row_batch *out)
{
        int64_t limit = (int64_t)(max_rows > rd->n ? max_rows - rd->n : 1), seen = 0;
        int rc, r = 0;

        if (!rd->q_ev || !rd->q_ev_mark) {
                st->have_ev = false; /* no event table (any more) */
                return 0;
        }
        if (!st->have_ev) {
                /* the table appeared since everything was read: all of it is new */
                st->have_ev = true;
                st->ev_wm = 0;
                st->ev_mark = 0;
        }
        if (st->ev_wm > 0 && (r = mark_holds(rd, rd->q_ev_mark, st->ev_wm, st->ev_mark)) <= 0)
                return r < 0 ? r : 2; /* events deleted (a session removed): read it all again */
        sqlite3_bind_int64(rd->q_ev, 1, st->ev_wm);
        sqlite3_bind_int64(rd->q_ev, 2, limit);
        while ((rc = sqlite3_step(rd->q_ev)) == SQLITE_ROW) {
                const char *type = (const char *)sqlite3_column_text(rd->q_ev, 2);
                const char *data = (const char *)sqlite3_column_text(rd->q_ev, 3);

                seen++;
                st->ev_wm = sqlite3_column_int64(rd->q_ev, 0);
                st->ev_mark = text_hash(rd->q_ev, 1);
                if (type && data && strncmp(type, "message.updated", strlen("message.updated")) == 0) {
                        r = event_message(rd, st, data, (size_t)sqlite3_column_bytes(rd->q_ev, 3), out);
                        if (r < 0)
                                break;
                }
                if (rd->n >= max_rows)
                        break;
        }
        sqlite3_reset(rd->q_ev);
        if (r < 0)
                return r;
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                return adapt_sql_errno(rd->db, rc);
        return rc == SQLITE_ROW || seen >= limit ? 1 : 0;
}

/* The tail: 1 when max_rows was reached. */
static int read_tail(struct reader *rd, struct db_state *st, uint64_t *wm, size_t max_rows, struct row_batch *out)
{
        int64_t limit = (int64_t)(max_rows > rd->n ? max_rows - rd->n : 1), seen = 0;
        int rc, r = 0;

        sqlite3_bind_int64(rd->q_tail, 1, st->cursor);
        sqlite3_bind_int64(rd->q_tail, 2, limit);
        while ((rc = sqlite3_step(rd->q_tail)) == SQLITE_ROW) {
                int64_t rowid = sqlite3_column_int64(rd->q_tail, C_ROWID);

                seen++;
                st->cursor = rowid;
                r = read_row(rd, rd->q_tail, st, out);
                if (r < 0)
                        break;
                if (r == 1)
                        pend_add(st, rowid);
                if ((uint64_t)rowid >= *wm) {
                        *wm = (uint64_t)rowid;
                        st->have_mark = true;
                        st->mark = text_hash(rd->q_tail, C_ID);
                }
                if (rd->n >= max_rows)
                        break;
        }
        sqlite3_reset(rd->q_tail);
        if (r < 0)
                return r;
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                return adapt_sql_errno(rd->db, rc);
        return rc == SQLITE_ROW || seen >= limit ? 1 : 0;
}

/* One call's share of the pass: 1 when there is more to read now. */
static int read_pass(struct reader *rd, struct db_state *st, uint64_t *wm, size_t max_rows, struct row_batch *out)
{
        int r = 0;

        if (st->phase == PH_IDLE) {
                if (*wm > 0 && st->have_mark && (r = mark_holds(rd, rd->q_mark, (int64_t)*wm, st->mark)) < 0)
                        return r;
                if (*wm == 0 || !st->have_mark || r == 0) {
                        r = start_over(rd, st, wm);
                } else {
                        r = refetch(rd, st, out);
                        if (r >= 0)
                                r = refetch_overflow(rd, st, (int64_t)*wm, out);
                        st->cursor = (int64_t)*wm; /* the tail is never rewound */
                        st->phase = PH_EVENTS;
                }
                if (r < 0)
                        return r;
        }
        if (st->phase == PH_EVENTS) {
                r = read_events(rd, st, max_rows, out);
                if (r < 0 || r == 1)
                        return r;
                if (r == 2) {
                        if ((r = start_over(rd, st, wm)) < 0)
                                return r;
                } else {
                        st->phase = PH_TAIL;
                }
        }
        r = read_tail(rd, st, wm, max_rows, out);
        if (r == 0)
                st->phase = PH_IDLE;
        return r;
}

int ocode_collect_db(const struct ocode_flavor *fl, const struct source_ctx *ctx, struct parse_state *ps,
                     uint64_t *io_watermark, size_t max_rows, struct row_batch *out, uint64_t *io_malformed)
{
        struct db_state st0 = state_get(ps), st;
        bool settling = false, more = false;
        uint64_t fp = adapt_db_fingerprint(ctx->path, &settling), wm = 0;
        int64_t now = timefmt_now_ms();
        size_t n0 = out->n;
        struct reader rd;
        int r;

        if (max_rows == 0)
                max_rows = 1;
        if (*io_watermark == 0 && st0.phase == PH_IDLE)
                st0 = (struct db_state){ .rows_read = st0.rows_read }; /* a new database: nothing known */
        if (!settling && st0.valid && st0.done && st0.fp == fp && now >= st0.at_ms && now - st0.at_ms < RECHECK_MS)
                return COLLECT_DONE; /* nothing changed since we read it all */
        struct adapt_wal_mark mark;
        adapt_db_wal_mark(ctx->path, &mark); /* before the read's snapshot */

        for (int attempt = 0;; attempt++) {
                bool not_ours = false, immutable;

                st = st0;
                wm = *io_watermark;
                rd = (struct reader){ .fl = fl, .ctx = ctx, .now_ms = now };
                r = db_open(&rd, &not_ours);
                immutable = rd.conn.immutable;
                st.not_ours = not_ours;
                if (r == 1) {
                        r = 0; /* no tables yet, or not ours: nothing to read */
                        more = false;
                } else if (r == 0) {
                        r = read_pass(&rd, &st, &wm, max_rows, out);
                        more = r == 1;
                }
                reader_close(&rd);
                if (r >= 0 && immutable && adapt_db_fingerprint(ctx->path, NULL) != fp) {
                        /* a writer came meanwhile: what we read may mix two states */
                        out->n = n0;
                        if (attempt < 2) {
                                fp = adapt_db_fingerprint(ctx->path, &settling);
                                continue;
                        }
                        r = -EBUSY;
                }
                break;
        }
        if (r < 0) {
                out->n = n0; /* no partial count */
                return r;
        }
        /* settling: no "read it all" mark, so the next call reads */
        st.valid = true;
        st.done = !more && !settling;
        st.fp = fp;
        st.at_ms = now;
        if (st.phase == PH_IDLE || st0.phase == PH_IDLE)
                st.pass_ms = st0.phase == PH_IDLE ? now : st0.pass_ms;
        if (st.overflow && st.overflow_ms <= 0)
                st.overflow_ms = now;
        state_put(ps, &st);
        *io_watermark = wm;
        *io_malformed += rd.malformed;
        if (more)
                return COLLECT_MORE;
        return adapt_db_read_end(ctx->path, settling, &mark);
}
