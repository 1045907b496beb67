/* The price engine: a dated table of list prices (built in from
 * data/prices.conf, optionally overridden per user), model-id normalisation,
 * and a pure lookup from one call's tokens to integer nano-USD. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "row.h"

/* Token classes a card prices. */
enum price_class { PC_INPUT, PC_OUTPUT, PC_CACHE_READ, PC_CW5M, PC_CW1H, PC_COUNT };

#define PRICE_NONE (-1) /* "-": not published */
#define PRICE_VENDOR_MAX 16
#define PRICE_SOURCE_MAX 160
#define PRICE_TOKEN_MAX 1000000000000ull /* tokens per class per call we accept (1e12) */

struct price_card {
        int64_t pico[PC_COUNT]; /* pico-USD per token (= micro-USD per 1M tokens), or PRICE_NONE */
};

struct price_entry {
        char model[ROW_MODEL_MAX]; /* canonical id */
        char vendor[PRICE_VENDOR_MAX];
        int64_t from_ms, until_ms; /* in effect for from <= time < until */
        struct price_card base, lng;
        uint64_t long_above;       /* 0: no long-context card */
        uint64_t prompt_above;     /* a size tier (Qwen): the entry prices only requests
                                    * whose prompt is MORE than this, and the highest
                                    * such tier wins; 0: the base entry, any size */
        bool overridden;           /* some figure came from the user's override */
        unsigned line;
        char source[PRICE_SOURCE_MAX];
};

struct price_mult {
        char vendor[PRICE_VENDOR_MAX];
        char model[ROW_MODEL_MAX]; /* canonical id or "*" */
        char tier[ROW_TIER_MAX];   /* one tier token: "fast", "priority", "region-eu" ... */
        uint32_t permille;         /* factor x 1000 */
        int64_t from_ms, until_ms;
        uint64_t max_prompt;       /* 0: any size */
        bool overridden;
        char source[PRICE_SOURCE_MAX];
};

struct price_table {
        char checked[11];                  /* YYYY-MM-DD of the built-in table */
        char label[ROW_PRICE_SRC_MAX];     /* "table-YYYY-MM-DD" */
        struct price_entry *entries;
        size_t n_entries, cap_entries;
        size_t *by_model;                  /* price_table_load's lookup index: entries sorted by
                                            * model, then position; used while n_by_model == n_entries */
        size_t n_by_model;
        struct price_mult *mults;
        size_t n_mults, cap_mults;
        uint64_t fingerprint;              /* of the built-in and the override text in effect */
        /* the user's override file, as last loaded */
        char override_path[4096];
        bool override_loaded;              /* found and applied */
        unsigned override_entries;         /* price and mult lines applied */
        char override_error[512];          /* "" or why the file was ignored (with its line) */
};

/* The built-in table (data/prices.conf, embedded by the Makefile). */
extern const char pricing_builtin_text[];

/* Parses table text into t (fresh: zero it first; is_override: entries
 * merge into those already in t, a partial entry keeps the missing
 * figures). On a bad line -EINVAL, *ret_line and ret_err (a sentence). */
int price_table_parse(struct price_table *t, const char *text, size_t len, bool is_override,
                      unsigned *ret_line, char *ret_err, size_t errcap);

/* The built-in table plus the override at override_path (NULL: none; a
 * missing file is no override). A bad override is ignored and described
 * in override_error; only a bad built-in table (a bug) or no memory fail. */
int price_table_load(const char *override_path, struct price_table **ret_table);
struct price_table *price_table_free(struct price_table *t); /* NULL-safe, returns NULL */

/* One request (or, with prompt_max, a sum of requests of the same model). */
struct price_request {
        const char *model;   /* as the harness wrote it */
        const char *tier;    /* "" standard; tokens joined by '+', e.g. "fast+geo-us" */
        int64_t time_ms;     /* when the call was made */
        uint64_t input, output, cache_read, cache_write, cache_write_1h;
        uint64_t prompt_max; /* 0: one request (its prompt decides the long card);
                              * else the largest prompt among the summed requests */
};

struct price_quote {
        int64_t cost_nano;
        const struct price_entry *entry;
        bool long_context;   /* priced at the long card */
        bool overridden;     /* an override figure or multiplier was used */
        uint32_t permille;   /* product of the multipliers applied, x 1000 */
};

/* 0 and the quote; -ENOENT unknown model, -ENOTSUP a tier no multiplier
 * names for this model at that time, -ERANGE tokens out of bounds, -EINVAL
 * cache_write_1h > cache_write. Pure: no I/O, no state. */
int price_compute(const struct price_table *t, const struct price_request *q,
                  struct price_quote *ret_quote);

/* Model-id normalisation (explicit rules, see pricing/id.c): the canonical
 * id into ret_id and the tier token a region implies ("region-eu" or "")
 * into ret_region. -EINVAL for an empty or over-long id. */
int price_normalise_id(const char *id, char *ret_id, size_t cap, char *ret_region,
                       size_t region_cap);

/* Prices one row as ingest does: a row with a vendor cost keeps it (except
 * a vendor 0 with non-zero tokens: "could not price it"); a row without
 * known tokens is left alone; otherwise the computed cost and price_source
 * ("table-YYYY-MM-DD" or "override"), or COST_NONE when the table cannot
 * price it. Returns 1 when the row changed, 0 when not. */
int pricing_apply_row(const struct price_table *t, struct usage_row *row);
/* pricing_apply_row on every row; NULL table: nothing happens. */
void pricing_apply_batch(const struct price_table *t, struct row_batch *b);
