/* What `top` shows, apart from how: today / this week / this month sums by
 * harness, model or project (asked from the daemon's report command after
 * rows arrive), the last calls from the tail stream, the active five-hour
 * block, and the sources with errors. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blocks.h"

struct json_object;

enum top_period { TOP_TODAY = 0, TOP_WEEK, TOP_MONTH, TOP_PERIODS };
enum top_group { TOP_BY_HARNESS = 0, TOP_BY_MODEL, TOP_BY_PROJECT, TOP_GROUPS };

#define TOP_RECENT_MAX 64
#define TOP_LINES_MAX 256
#define TOP_KEY_MAX 320

struct top_sums {
        double cost_usd;
        bool priced;        /* some cost known */
        bool unpriced;      /* some events without a price */
        uint64_t tokens, events;
};

struct top_line {
        char key[TOP_KEY_MAX];
        struct top_sums p[TOP_PERIODS];
};

struct top_model {
        const char *socket;
        const char *tz;                         /* NULL: the daemon's local zone */
        enum top_group group;
        struct top_sums total[TOP_PERIODS];
        struct top_line lines[TOP_LINES_MAX];   /* sorted by this month's cost */
        size_t n_lines;
        struct json_object *recent[TOP_RECENT_MAX]; /* newest last */
        size_t n_recent;
        struct block_set blocks;
        bool blocks_from_ledger;                /* history read, not only live rows */
        struct json_object *errors;             /* sources with an error (array) */
        uint64_t rows_seen;
        char problem[256];                      /* last refresh failure, "" when fine */
};

const char *top_group_name(enum top_group g);
const char *top_period_name(enum top_period p);

/* The first day (YYYY-MM-DD, local) of each period containing now. */
void top_period_starts(int64_t now_ms, char days[TOP_PERIODS][11]);

/* Asks the daemon for the sums of every period in the current grouping and
 * for the sources. 0, or -errno with m->problem set. */
int top_model_refresh(struct top_model *m);
/* Reads the last two days of calls from the ledger (read-only) for the
 * block; -errno when the ledger cannot be read (live rows still count). */
int top_model_load_history(struct top_model *m, const char *state_dir);
/* A committed row from the tail stream. */
void top_model_add_row(struct top_model *m, struct json_object *row);
void top_model_free(struct top_model *m);
