/* Usage rows: one billed model call (or, for harnesses without usage on disk,
 * one activity-bearing turn), their tool calls, the content dedup key, and the
 * versioned binary encoding stored in the ledger. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROW_KEY_SIZE 16

struct row_key {
        uint8_t b[ROW_KEY_SIZE];
};

enum row_kind {
        ROW_KIND_MESSAGE = 1,        /* assistant message with usage */
        ROW_KIND_COMPACTION = 2,     /* compaction entry with usage */
        ROW_KIND_BRANCH_SUMMARY = 3, /* branch_summary entry with usage */
        ROW_KIND_TOOL_RESULT = 4,    /* toolResult.usage (pi 1.x) */
        ROW_KIND_USAGE_ENTRY = 5,    /* `usage` entry (pi 1.x, e.g. cache_warm) */
        ROW_KIND_TURN = 6,           /* assistant turn without usage (PicoClaw) */
        ROW_KIND_RESPONSE = 7,       /* one API response (Codex token_usage_record / token_count) */
        ROW_KIND_SNAPSHOT_STEP = 8,  /* the growth of a cumulative per-session snapshot between two
                                      * versions read (one or more calls: Droid) */
};

enum cost_source {
        COST_NONE = 0,     /* unpriced: NOT free */
        COST_VENDOR = 1,   /* written by the harness itself */
        COST_COMPUTED = 2, /* computed from our price table */
};

/* flags */
#define ROW_F_TOKENS_KNOWN 0x1u /* token fields are real numbers, not "unavailable" */
#define ROW_F_TIME_APPROX  0x2u /* time came from a fallback (meta, mtime) */
#define ROW_F_SIDECHAIN    0x4u /* subagent / sidechain call */
#define ROW_F_UPSERT       0x8u /* commit as monotone upsert, not insert-if-absent */
#define ROW_F_COST_ELSEWHERE 0x10u /* its cost is counted in another row (Crush: a root session's
                                    * accumulated cost): a vendor 0 stays 0, never priced */

#define ROW_TOOL_MAX     16
#define ROW_SESSION_MAX  128
#define ROW_PROJECT_MAX  512
#define ROW_PROVIDER_MAX 64
#define ROW_MODEL_MAX    128
#define ROW_TIER_MAX     16
#define ROW_PRICE_SRC_MAX 24
#define ROW_CALLS_MAX    64
#define CALL_NAME_MAX    96
#define CALL_ID_MAX      80

struct tool_call {
        char id[CALL_ID_MAX];     /* harness call id; "" when the harness has none */
        char name[CALL_NAME_MAX]; /* "namespace/name" when namespaced */
};

struct usage_row {
        struct row_key key;
        uint32_t flags;
        uint8_t kind;        /* enum row_kind */
        uint8_t cost_source; /* enum cost_source */
        int64_t time_ms;     /* UTC epoch milliseconds */
        /* Disjoint billable classes: input (uncached), output, cache_read,
         * cache_write. cache_write_1h is the part of cache_write written with
         * the 1-hour TTL (5-minute writes = cache_write - cache_write_1h);
         * reasoning is a subset of output; total is their sum as the harness
         * counts it. */
        uint64_t input, output, cache_read, cache_write, reasoning, total;
        uint64_t cache_write_1h;
        int64_t cost_nano; /* nano-USD (1e-9): harnesses write per-call costs with more
                            * than six decimals, and rounding each row to micro-USD
                            * drifts the sums; meaningful only when cost_source != COST_NONE */
        uint64_t source_hash; /* hash of the source path that first delivered it */
        char tool[ROW_TOOL_MAX];         /* harness id: "pi", "openclaw", "picoclaw" */
        char session[ROW_SESSION_MAX];
        char project[ROW_PROJECT_MAX];   /* cwd / workspace */
        char provider[ROW_PROVIDER_MAX];
        char model[ROW_MODEL_MAX];
        char model_alias[ROW_MODEL_MAX]; /* harness alias when it differs (PicoClaw) */
        char tier[ROW_TIER_MAX];         /* service tier / speed that changes the price:
                                          * "" (standard), "priority", "flex", "batch",
                                          * "fast"; lower case */
        char price_source[ROW_PRICE_SRC_MAX]; /* with COST_COMPUTED: "table-YYYY-MM-DD" or
                                               * "override"; "" otherwise */
        uint32_t n_calls;                /* tool calls in this record (cost-share divisor) */
        struct tool_call calls[ROW_CALLS_MAX]; /* [0, n_calls) set (both strings); in a
                                               * row_batch the rest is undefined */
};

/* Copies src into a fixed field, truncating on a UTF-8 boundary. */
void row_set_str(char *dst, size_t cap, const char *src, size_t len);
#define ROW_SET(field, s) row_set_str((field), sizeof(field), (s), (s) ? strlen(s) : 0)

/* Builds a 128-bit key from a tagged list of fields (keyhash_* below). The
 * fields go into buf and are hashed in one call at the end (a key of a few
 * hundred bytes costs no allocation); past buf they stream into an XXH3
 * state: the same key either way. */
#define KEYHASH_INLINE 768
struct keyhash {
        void *state;  /* XXH3 state, once buf overflowed */
        size_t len;   /* bytes in buf */
        bool started; /* keyhash_begin succeeded */
        uint8_t buf[KEYHASH_INLINE];
};
int keyhash_begin(struct keyhash *h, const char *format);
void keyhash_str(struct keyhash *h, const char *s);
void keyhash_u64(struct keyhash *h, uint64_t v);
void keyhash_bytes(struct keyhash *h, const void *p, size_t n);
void keyhash_end(struct keyhash *h, struct row_key *ret_key);

/* 64-bit hash of a byte string (fingerprints, source ids). */
uint64_t hash64(const void *p, size_t n);

/* Key of the i-th tool call of a usage row (activity db). A call with an id
 * is keyed by (usage key, id) alone, so split or re-written records keep
 * its key; index only keys id-less calls. */
void row_call_key(const struct row_key *usage_key, uint32_t index, const char *call_id,
                  struct row_key *ret_key);

/* Binary encoding of the row (without calls: those live in the activity db,
 * n_calls is kept). Encoded size is at most ROW_ENCODED_MAX. */
#define ROW_ENCODED_MAX 2048
#define ROW_FORMAT_VERSION 3 /* 2: + cache_write_1h, tier, price_source; 3: varints; 1 and 2 still decode */
int row_encode(const struct usage_row *row, uint8_t *buf, size_t cap, size_t *ret_len);
/* -EBADMSG on a truncated or unknown-version value. Calls are not restored
 * (ret_row->calls[] is not touched; n_calls is set); the key (the LMDB key,
 * not in the value) comes back zeroed. */
int row_decode(const uint8_t *buf, size_t len, struct usage_row *ret_row);

/* Hex of a key into a 33-byte buffer. */
void row_key_hex(const struct row_key *key, char out[2 * ROW_KEY_SIZE + 1]);

const char *row_kind_name(uint8_t kind);
const char *cost_source_name(uint8_t src);

/* A growable batch of rows produced by an adapter. */
struct rate_limits;
struct row_batch {
        struct usage_row *rows;
        size_t n, cap;
        struct rate_limits *limits; /* latest rate-limit snapshot the lines held (ratelimits.h;
                                     * malloc'd by the adapter), NULL: none; freed by
                                     * row_batch_clear / row_batch_free */
};
/* Appends a zeroed row; -ENOMEM. */
int row_batch_push(struct row_batch *b, struct usage_row **ret_row);
/* Appends a row left as it is, for a caller that writes all of it up to
 * its calls[n_calls]; -ENOMEM. */
int row_batch_push_raw(struct row_batch *b, struct usage_row **ret_row);
void row_batch_clear(struct row_batch *b);
void row_batch_free(struct row_batch *b);
