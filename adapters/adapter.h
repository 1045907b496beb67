/* The adapter interface: what each harness tells the pipeline. Where its
 * files are (discover), which files are transcripts (classify), and how a
 * line or a database becomes usage rows (parse_line / collect_db). Adapters
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

/* ---- capabilities -------------------------------------------------------- */

enum cap_tokens { CAP_TOKENS_NONE = 0, CAP_TOKENS_EXACT = 1 };
enum cap_cost { CAP_COST_NONE = 0, CAP_COST_VENDOR = 1, CAP_COST_COMPUTED = 2 };
enum cap_activity { CAP_ACTIVITY_NONE = 0, CAP_ACTIVITY_EXACT = 1, CAP_ACTIVITY_UNATTRIBUTED = 2,
                    CAP_ACTIVITY_RECORDED = 3 };
enum cap_reasoning { CAP_REASONING_NONE = 0, CAP_REASONING_SUBSET = 1 };

struct capabilities {
        uint8_t tokens, cost, activity, reasoning;
};
const char *cap_tokens_name(uint8_t v);
const char *cap_cost_name(uint8_t v);
const char *cap_activity_name(uint8_t v);
const char *cap_reasoning_name(uint8_t v);

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
        const struct adapter *adapter;
};

struct root_list {
        struct root *v;
        size_t n, cap;
};
int root_list_push(struct root_list *l, struct root **ret_root); /* zeroed; -ENOMEM */
void root_list_free(struct root_list *l);

/* What collect_db returns besides negative errno. */
enum collect_result {
        COLLECT_DONE = 0,     /* read to the end */
        COLLECT_MORE = 1,     /* max_rows reached: call again */
        COLLECT_SETTLING = 2, /* read to the end, but a writer was at work a
                               * moment ago: its commit may not have been
                               * visible yet, and a commit that only updates
                               * shared memory raises no file event, so call
                               * again shortly */
};

/* ---- classification ------------------------------------------------------ */

enum classify_result {
        CLASS_IGNORE = 0,  /* not ours: sidecar, lock, temp, backup */
        CLASS_LINES = 1,   /* a line-oriented transcript to tail */
        CLASS_DB = 2,      /* a database source (collect_db) */
        CLASS_DESCEND = 3, /* a directory to watch and scan */
        CLASS_ZSTD_LINES = 4, /* a zstd-compressed line transcript: decoded as a stream
                               * and read like CLASS_LINES, offsets counted in the
                               * decoded bytes */
};

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

/* What parse_line returns (all non-negative): */
enum parse_result {
        PARSE_OK = 0,         /* zero or more rows appended */
        PARSE_MALFORMED = 1,  /* not valid JSON / not the expected shape: counted, skipped */
        PARSE_NOT_SOURCE = 2, /* first line says this is not a transcript of ours */
};

/* Everything a parser may want to know about the source it reads. */
struct source_ctx {
        const struct adapter *adapter;
        const char *path;
        const char *root_path;        /* the root it was found under */
        struct stat st;               /* as of this read */
        const void *config;           /* adapter's loaded config (e.g. PicoClaw model map) */
        uint64_t source_hash;         /* hash64(path) */
};

struct adapter {
        const char *id;           /* "pi", "openclaw", "picoclaw" */
        const char *display_name;
        struct capabilities caps;
        const char *const *env;   /* NULL-terminated: every variable that can move its files */

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

        /* One complete line (no newline; may hold several JSON objects). */
        int (*parse_line)(const struct source_ctx *ctx, struct parse_state *ps,
                          const char *line, size_t len, struct row_batch *out);

        /* Database sources: append rows past *io_watermark, advancing it.
         * At most max_rows rows per call; returns a collect_result, or
         * negative errno on failure (locked, corrupt, unknown schema).
         * *io_malformed grows by the records passed over because they could
         * not be decoded or parsed (the database's "malformed lines"); like
         * the rows, only on success. */
        int (*collect_db)(const struct source_ctx *ctx, struct parse_state *ps,
                          uint64_t *io_watermark, size_t max_rows, struct row_batch *out,
                          uint64_t *io_malformed);

        /* What a source's parse state says the harness spent but no row
         * could meter exactly (Claude Code: cost-state differences it could
         * not attribute), for status: differences and their tokens. May be
         * NULL. */
        void (*unmetered)(const struct parse_state *ps, uint64_t *ret_runs, uint64_t *ret_tokens);
};
