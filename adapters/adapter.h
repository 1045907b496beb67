/* The adapter interface: what each harness tells the pipeline. Where its
 * files are (discover), which files are transcripts (classify), and how a
 * line, a document or a table becomes usage rows (parse_line, parse_document,
 * collect_rows: the three kinds of source, below). Adapters
 * hold no global state, never log, and read the environment only through
 * struct discover_env with names from the registry's table. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "row.h"

struct ledger;
struct checkpoint;
struct json_object;

/* ---- capabilities -------------------------------------------------------- */

enum cap_tokens { CAP_TOKENS_NONE = 0, CAP_TOKENS_EXACT = 1 };
enum cap_cost { CAP_COST_NONE = 0, CAP_COST_VENDOR = 1, CAP_COST_COMPUTED = 2 };
enum cap_activity { CAP_ACTIVITY_NONE = 0, CAP_ACTIVITY_EXACT = 1, CAP_ACTIVITY_UNATTRIBUTED = 2,
                    CAP_ACTIVITY_RECORDED = 3 };
enum cap_reasoning { CAP_REASONING_NONE = 0, CAP_REASONING_SUBSET = 1 };
/* What one row (an "event" of the reports) stands for: a model call, or a
 * step between two cumulative snapshots a harness wrote (one or more calls
 * that cannot be told apart: Droid). */
enum cap_events { CAP_EVENTS_CALLS = 0, CAP_EVENTS_SNAPSHOT_STEPS = 1 };

struct capabilities {
        uint8_t tokens, cost, activity, reasoning, events;
};
const char *cap_tokens_name(uint8_t v);
const char *cap_cost_name(uint8_t v);
const char *cap_activity_name(uint8_t v);
const char *cap_reasoning_name(uint8_t v);
const char *cap_events_name(uint8_t v);

/* ---- discovery ----------------------------------------------------------- */

/* The environment adapters see. `get` returns NULL for unset or empty. The
 * daemon passes its own environment; tests pass a table. */
struct discover_env {
        const char *(*get)(void *userdata, const char *name);
        void *userdata;
};
/* Adapters call this, never getenv(): name must be in the registry's table. */
const char *discover_env_get(const struct discover_env *env, const char *name);

enum root_reason {
        ROOT_DEFAULT = 0, /* built-in default under $HOME */
        ROOT_ENV = 1,     /* moved by an environment variable (env_var) */
        ROOT_CONFIG = 2,  /* named by the harness's own config file (detail) */
        ROOT_PROFILE = 3, /* a profile directory found by glob (detail) */
};
const char *root_reason_name(uint8_t reason);

struct root {
        char path[PATH_MAX];      /* absolute */
        char label[64];           /* "sessions", "profile dev", "agent ops", ... */
        uint8_t reason;           /* enum root_reason */
        char env_var[64];         /* with ROOT_ENV: the variable */
        char detail[256];         /* with ROOT_CONFIG/PROFILE: e.g. the config path */
        uint8_t max_depth;        /* directory levels below path the scan descends */
        uint8_t flags;            /* ROOT_F_* */
        const struct adapter *adapter;
};
/* The label names where the root's sessions come from (the editor of the VS
 * Code extensions' tasks): reports show it per session (adapters/origins.h). */
#define ROOT_F_ORIGIN 0x1u

/* What discovery found besides roots: a file it read to find them (a
 * change of it runs discovery again, so an edited setting moves the root
 * at once), and a note for status (a config file it could not use, and why). */
struct discovery_file {
        char path[PATH_MAX];
};
struct discovery_note {
        const struct adapter *adapter;
        char text[512];
};

struct root_list {
        struct root *v;
        size_t n, cap;
        struct discovery_file *files;
        size_t n_files, cap_files;
        struct discovery_note *notes;
        size_t n_notes, cap_notes;
};
int root_list_push(struct root_list *l, struct root **ret_root); /* zeroed; -ENOMEM */
/* Lists path as a file discovery read (once): 0 or -ENOMEM. */
int root_list_add_file(struct root_list *l, const char *path);
/* Adds a note for status, printf-style: 0 or -ENOMEM. */
int root_list_note(struct root_list *l, const struct adapter *adapter, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Whether path is a file discovery read. */
bool root_list_has_file(const struct root_list *l, const char *path);
void root_list_free(struct root_list *l);

/* What collect_rows returns besides negative errno. */
enum collect_result {
        COLLECT_DONE = 0,     /* read to the end */
        COLLECT_MORE = 1,     /* max_rows reached: call again */
        COLLECT_SETTLING = 2, /* read to the end, but a writer was at work a
                               * moment ago: its commit may not have been
                               * visible yet, and a commit that only updates
                               * shared memory raises no file event, so call
                               * again shortly */
        COLLECT_PUBLISHING = 3, /* read to the end, and a commit is written
                                 * that the read may not have seen (its writer
                                 * publishes it in a moment): call again very
                                 * soon (adapt_db_commit_pending) */
};

/* ---- classification: the three kinds of source ---------------------------
 *
 * A source is one file the daemon reads into rows. Its adapter's classify()
 * says which of three kinds it is; from there on the daemon treats them
 * alike (one queue, one checkpoint per path in the ledger, rows and the new
 * checkpoint committed in one transaction, content keys making every
 * re-read harmless). What differs is what the checkpoint's position means:
 *
 *  LINES     appended records (JSONL), plain or zstd-compressed (told by
 *            the file's first bytes, never by its name). The position is
 *            the byte after the last consumed newline (of the decoded
 *            stream for a compressed file); the daemon checks the file is
 *            the one it read (inode, first line, the bytes before the
 *            offset) and hands parse_line each new complete line. A
 *            rewritten file is read again from 0.
 *  DOCUMENT  one file rewritten whole after every change, in place (same
 *            inode: truncate and write) or replaced by rename. The daemon
 *            reads all of it through the descriptor it opened, and skips a
 *            version it has already read (same size and mtime, or the same
 *            bytes). A document caught half-written is "settling": nothing
 *            is counted, it is read again shortly. parse_document gets the
 *            whole text and the length of the prefix that is byte-identical
 *            to what it parsed last (so it may skip the messages in it), and
 *            emits rows whose keys are the same for the same message on
 *            every rewrite. A snapshot document (cumulative totals) keeps
 *            the last totals in its parse state and emits the difference.
 *            A new inode under the same path is the next version of the
 *            same document, not a rewrite of a tailed file.
 *  TABLE     rows in a SQLite database, read read-only through SQLite
 *            (adapt-sqlite.h) by collect_rows past a watermark the adapter
 *            defines (a rowid; or an update time plus key, so a row updated
 *            in place is found again). The -wal/-shm/-journal siblings map
 *            to their database through source_of.
 */
enum classify_result {
        CLASS_IGNORE = 0,   /* not ours: sidecar, lock, temp, backup */
        CLASS_LINES = 1,    /* appended records: parse_line */
        CLASS_TABLE = 2,    /* a SQLite database: collect_rows */
        CLASS_DESCEND = 3,  /* a directory to watch and scan */
        CLASS_DOCUMENT = 4, /* a file rewritten whole: parse_document */
};
/* Whether a classify result names a source (one of the three kinds). */
static inline bool class_is_source(int cls)
{
        return cls == CLASS_LINES || cls == CLASS_TABLE || cls == CLASS_DOCUMENT;
}

/* What a changed path means (adapter->source_of). */
enum source_of_result {
        SOURCE_SELF = 0,  /* the path is (or may be) a source itself: classify decides */
        SOURCE_OTHER = 1, /* a change of another source, written to ret_source (a SQLite
                           * -wal names its database) */
        SOURCE_NONE = 2,  /* not a change of any source (our own reads touch it) */
};

/* ---- parsing ------------------------------------------------------------- */

#define PS_PRIV_MAX 128

/* Per-source state carried across lines and persisted in the checkpoint, so
 * a tail-read after a restart resumes with the right context. The named
 * fields mean the same for every adapter; what only one adapter needs goes
 * into priv. */
struct parse_state {
        uint32_t flags;                  /* PS_* */
        uint32_t version;                /* harness format version (pi: 1..3) */
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];
        char provider[ROW_PROVIDER_MAX]; /* current model, carried forward */
        char model[ROW_MODEL_MAX];
        int64_t fallback_time_ms;        /* for lines without a time of their own */
        int64_t last_time_ms;            /* time of the last entry seen */
        /* Adapter-private, persisted with the checkpoint: bytes only the
         * adapter that reads the source interprets, written and read with an
         * explicit layout of its own (never a struct copied in). priv_len 0
         * (a fresh source, or a state written before this area existed):
         * nothing kept. */
        uint32_t priv_len;
        uint8_t priv[PS_PRIV_MAX];
};
#define PS_HEADER_SEEN 0x1u /* the first line has been examined */
#define PS_NOT_SOURCE  0x2u /* the file is not this harness's: read nothing more */

/* The checkpoint form of a parse state: at most PS_ENCODED_MAX bytes (991,
 * asserted to fit CHECKPOINT_STATE_MAX). encode: -ENOBUFS when cap is too small,
 * -EINVAL for priv_len over PS_PRIV_MAX. decode: -EBADMSG for anything but
 * a whole value of a known encoding version; states of the version before
 * the private area decode with priv_len 0. */
#define PS_ENCODED_MAX                                                                              \
        (1 + 4 + 4 + 8 + 8 + 2 + (ROW_SESSION_MAX - 1) + 2 + (ROW_PROJECT_MAX - 1) + 2 +            \
         (ROW_PROVIDER_MAX - 1) + 2 + (ROW_MODEL_MAX - 1) + 2 + PS_PRIV_MAX)
int parse_state_encode(const struct parse_state *ps, uint8_t *buf, size_t cap, size_t *ret_len);
int parse_state_decode(const uint8_t *buf, size_t len, struct parse_state *ret_ps);

/* What parse_line and parse_document return (all non-negative): */
enum parse_result {
        PARSE_OK = 0,         /* zero or more rows appended */
        PARSE_MALFORMED = 1,  /* not valid JSON / not the expected shape: counted, skipped
                               * (a document: not read again until it changes) */
        PARSE_NOT_SOURCE = 2, /* first line (or the document) says this is not ours */
        PARSE_INCOMPLETE = 3, /* documents: torn or half-written; no rows may be left in
                               * out; the daemon reads it again shortly, and counts it
                               * malformed once it stays so after its writer is done */
};

/* A TABLE source's keyed state beside its checkpoint: what a reader keeps
 * per item (a session's last running totals) when parse_state.priv is too
 * small for all of them. The daemon keeps it in the ledger (its db
 * `srcstate`) and commits what put() records with the rows and checkpoint
 * of the same read, in one transaction, or not at all: a read that fails or
 * is not committed leaves no trace of its puts. get() sees the puts of the
 * read in progress. Keys 1..SRC_STATE_KEY_MAX bytes, values
 * 1..SRC_STATE_VALUE_MAX (the ledger's SOURCE_STATE_*_MAX). */
#define SRC_STATE_KEY_MAX   200
#define SRC_STATE_VALUE_MAX 256
struct source_state {
        /* 0 and the value's first cap bytes (*ret_len its whole length),
         * -ENOENT, or another negative errno (the read fails with it). */
        int (*get)(void *u, const void *key, size_t key_len, void *ret_value, size_t cap,
                   size_t *ret_len);
        /* 0, -EINVAL (sizes), -ENOMEM. */
        int (*put)(void *u, const void *key, size_t key_len, const void *value, size_t value_len);
        void *u;
};

/* Everything a parser may want to know about the source it reads. */
struct source_ctx {
        const struct adapter *adapter;
        const char *path;
        const char *root_path;        /* the root it was found under */
        struct stat st;               /* as of this read */
        const void *config;           /* adapter's loaded config (e.g. PicoClaw model map) */
        uint64_t source_hash;         /* hash64(path) */
        const struct source_state *state; /* TABLE sources; NULL: none kept (a
                                           * reader then keeps only what priv holds) */
};

/* The figures status shows for a harness beyond the common ones (OpenClaw:
 * calls found in archives and cold storage, per agent). The daemon walks
 * the adapter's sources with next(); *cache is the adapter's to keep
 * between calls (one allocation: the daemon frees it with free(); NULL at
 * first). */
struct adapter_source_view {
        const char *path;
        uint8_t kind;           /* enum classify_result */
        int last_error;         /* negative errno of the last read, 0 when fine */
        const struct checkpoint *cp; /* NULL when it has none yet */
};
struct adapter_status_ctx {
        struct ledger *ledger;
        /* The next source of this adapter: true and *ret filled, false at the end. */
        bool (*next)(void *it, struct adapter_source_view *ret);
        void *it;
        void **cache;
};

struct adapter {
        const char *id;           /* "pi", "claude", "codex", ...: the rows' harness id */
        const char *display_name;
        struct capabilities caps;
        const char *const *env;   /* NULL-terminated: every variable that can move its files */
        /* NULL when the adapter has been checked against files the harness
         * itself wrote (samples/realgen, a public capture); otherwise why
         * not, e.g. "written from public format facts; no real capture yet".
         * status shows it, so a user knows which figures are unproven. */
        const char *unverified;
        /* This harness runs `agentmeterctl statusline` with its status-line
         * JSON on stdin: a request naming no harness is about this one. */
        bool statusline_host;

        /* Appends this harness's roots. Missing directories are still listed
         * (the daemon watches for them to appear). */
        int (*discover)(const struct discover_env *env, struct root_list *out);

        /* Loads the harness config the parser needs (may be NULL); returns 0
         * and *ret_config (free with free_config), or a negative errno; a
         * broken config is not an error: return defaults and set *ret_warning. */
        int (*load_config)(const struct discover_env *env, void **ret_config,
                           const char **ret_warning);
        void (*free_config)(void *config);

        /* relpath is relative to the root ("" for the root itself), depth its
         * number of components, name the last one. */
        enum classify_result (*classify)(const char *relpath, const char *name, int depth,
                                         bool is_dir);

        /* Which source, if any, a changed file under one of this adapter's
         * roots belongs to. content_changed: the event was a write, create or
         * move-in (not an attribute change or a close). May be NULL: every
         * path is its own source. */
        enum source_of_result (*source_of)(const char *path, bool content_changed,
                                           char *ret_source, size_t cap);

        /* Another name the same line transcript takes (Codex compresses an
         * idle x into x.zst and a resume decompresses it back): 1 and the
         * name in ret, 0 when path has none. A compressed source is not read
         * while its plain sibling exists; a source without a checkpoint of
         * its own takes its sibling's when its content begins with what the
         * sibling consumed, so compressing and resuming read nothing twice.
         * May be NULL. */
        int (*sibling_of)(const char *path, char *ret, size_t cap);

        /* LINES: one complete line (no newline; may hold several JSON objects). */
        int (*parse_line)(const struct source_ctx *ctx, struct parse_state *ps,
                          const char *line, size_t len, struct row_batch *out);

        /* DOCUMENT: the whole current text doc[0, len) (NUL-terminated at
         * len). *io_known: on entry the length of a prefix of doc that is
         * byte-identical to the prefix this function reported after its last
         * PARSE_OK for this source (0: nothing known; then a resume point
         * the state holds is stale unless the adapter checks it against doc
         * itself, e.g. by a hash of the bytes it covers: a header that
         * changes on every write, such as a time stamp, ends the common
         * prefix at its first bytes); rows wholly inside it were committed
         * then and need not be emitted again. On PARSE_OK set it to the
         * prefix worth remembering (e.g. the end of the last complete
         * message), at most len. ps persists across versions of the
         * document (a snapshot's last totals live there); it is kept only
         * after PARSE_OK (and PARSE_NOT_SOURCE). Returns a parse_result. */
        int (*parse_document)(const struct source_ctx *ctx, struct parse_state *ps,
                              const char *doc, size_t len, size_t *io_known,
                              struct row_batch *out);

        /* TABLE: append rows past *io_watermark, advancing it (with the
         * rest of the position in ps->priv when a number is not enough).
         * At most max_rows rows per call; returns a collect_result, or
         * negative errno on failure (locked, corrupt, unknown schema).
         * *io_malformed grows by the records passed over because they could
         * not be decoded or parsed (the database's "malformed lines"); like
         * the rows, only on success. */
        int (*collect_rows)(const struct source_ctx *ctx, struct parse_state *ps,
                            uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                            uint64_t *io_malformed);

        /* What a source's parse state says the harness spent but no row
         * could meter exactly (Claude Code: cost-state differences it could
         * not attribute), for status: differences and their tokens. May be
         * NULL. */
        void (*unmetered)(const struct parse_state *ps, uint64_t *ret_runs, uint64_t *ret_tokens);

        /* Extra figures for status: a JSON object whose members are added to
         * the harness's entry, or NULL. May be NULL. */
        struct json_object *(*status_extra)(const struct adapter_status_ctx *ctx);
};
