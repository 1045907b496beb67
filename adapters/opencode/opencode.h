/* OpenCode and its fork Kilo keep the same data model: assistant messages in
 * a SQLite `message` table (1.2+), or one JSON file per message under
 * storage/ (OpenCode up to 1.1). What the two adapters share: the message
 * reader and its content key (opencode/msg.c), the table reader
 * (opencode/db.c), the JSON-file reader (opencode/json.c), the layout of
 * the data directory (opencode/layout.c) and the status figures
 * (opencode/status.c). What differs is data: struct ocode_flavor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "json/jscan.h"

struct json_object;

struct ocode_flavor {
        const char *tool;      /* the rows' harness id: "opencode", "kilo" */
        const char *data_name; /* the data directory under XDG_DATA_HOME and the
                                * database's stem: "opencode", "kilo" */
        const char *legacy_stem; /* a channel database of an older name kept in the
                                  * same directory (Kilo: opencode-<channel>.db), or NULL */
        bool fork_cost_zero;   /* a fork's copies carry cost 0 (Kilo): such a row
                                * takes the cost of the call it copies */
};

extern const struct ocode_flavor ocode_flavor_opencode;
extern const struct ocode_flavor ocode_flavor_kilo;

/* ---- one message (opencode/msg.c) ------------------------------------------ */

/* Dedup-key format tag: bump when the key's fields change. */
#define OCODE_KEY_FORMAT "opencode-msg-v1"

/* Where a message was read: the two eras count tokens.output differently
 * (the database era excludes reasoning, the JSON-file era includes it). */
enum ocode_era { OCODE_ERA_DB = 0, OCODE_ERA_JSON = 1 };

/* The fields of one message object; spans point into the text parsed. */
struct ocode_msg {
        struct jscan_span role, id, session, provider, model, cwd, root, agent;
        struct jscan_time created;
        bool completed;  /* time.completed is set ... */
        int64_t completed_ms; /* ... to this time (0 when not a number) */
        bool error;      /* an error object */
        bool has_tokens; /* a tokens object */
        struct jscan_num total, input, output, reasoning, cache_read, cache_write, cost;
};

/* Parses a message object: 0 and *ret; -EBADMSG when text is not one JSON
 * object (trailing blanks allowed). */
int ocode_msg_parse(const char *text, size_t len, struct ocode_msg *ret);

/* An assistant message that is still being written: no error and no
 * time.completed (its tokens may be 0 or final). */
bool ocode_msg_pending(const struct ocode_msg *m);

/* The usage row of a parsed message, appended to out: 1; 0 when it counts
 * nothing (not an assistant message, or every token and the cost 0: not
 * written yet, or a failed call); -ENOMEM. session: the session id
 * (NULL: the message's own sessionID); fallback_ms the time of a message
 * without time.created (ROW_F_TIME_APPROX). The row is ROW_F_UPSERT with
 * tokens as the ledger keeps them (output includes reasoning) and the
 * cost OpenCode wrote (COST_VENDOR), or none for a cost of 0 with tokens
 * (the price table prices it). Its key is OCODE_KEY_FORMAT over provider,
 * model, time.created, path.cwd, path.root, agent and the five token
 * counts as written: never the message or session id (a fork copies
 * messages under new ids), never the cost (Kilo's copies carry 0). */
int ocode_msg_row(const struct ocode_flavor *fl, const struct ocode_msg *m, enum ocode_era era,
                  const char *session, int64_t fallback_ms, uint64_t source_hash, struct row_batch *out);

/* Whether two parsed messages are the same call (their rows' keys agree). */
bool ocode_msg_same_call(const struct ocode_msg *a, const struct ocode_msg *b);

/* ---- the data directory (opencode/layout.c) -------------------------------- */

/* The roots of a harness: the data directory ${xdg_data:-home/.local/share}/
 * <data_name> (its databases and storage/message/ files), and the directory
 * of db_env's database when db_env names a file elsewhere (absolute, or
 * relative to the data directory; ":memory:" is no file). */
int ocode_add_roots(const struct adapter *a, const struct ocode_flavor *fl, const char *home,
                    const char *xdg_data, const char *db_env_name, const char *db_env, struct root_list *out);

enum classify_result ocode_classify(const char *relpath, const char *name, int depth, bool is_dir);
enum source_of_result ocode_source_of(const char *path, bool content_changed, char *ret_source, size_t cap);

/* Whether the database file name is one the harness itself names
 * (<data_name>.db, <data_name>-<channel>.db, Kilo's opencode-<channel>.db):
 * one of those without OpenCode's tables is an error, any other *.db under a
 * root is simply not ours. */
bool ocode_db_name_known(const struct ocode_flavor *fl, const char *path);

/* ---- the database (opencode/db.c) ------------------------------------------ */

int ocode_collect_db(const struct ocode_flavor *fl, const struct source_ctx *ctx, struct parse_state *ps,
                     uint64_t *io_watermark, size_t max_rows, struct row_batch *out, uint64_t *io_malformed);

/* What a database's parse state says, for status. */
struct ocode_db_figures {
        uint64_t rows_read;     /* message rows read (new rows and re-reads) */
        uint32_t waiting;       /* assistant rows still waiting for final tokens */
        bool waiting_more;      /* ... more than the reader tracks one by one */
        uint64_t watermark;     /* the highest message rowid read */
        uint64_t event_mark;    /* the event rowid the change feed has read to */
        bool not_ours;          /* a *.db without OpenCode's tables */
};
/* 0 and *ret; -EINVAL when ps holds no database state. */
int ocode_db_figures(const struct parse_state *ps, uint64_t watermark, struct ocode_db_figures *ret);

/* ---- the JSON-file era (opencode/json.c) ------------------------------------ */

int ocode_parse_document(const struct ocode_flavor *fl, const struct source_ctx *ctx, struct parse_state *ps,
                         const char *doc, size_t len, size_t *io_known, struct row_batch *out);

/* ---- status (opencode/status.c) ---------------------------------------------- */

/* {"databases": [{path, rows_read, waiting, watermark, event_watermark}]}. */
struct json_object *ocode_status(const struct adapter_status_ctx *ctx);
