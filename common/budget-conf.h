/* The budgets file (~/.config/agentmeterd/budgets.conf): spending limits
 * per day, week or month, in USD or tokens, total or for one harness,
 * model or project, with warning levels; parsed here, evaluated by
 * daemon/budget/budget.c. Format in agentmeterd(8), "BUDGETS". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "row.h"

#define BUDGET_FILE "budgets.conf"      /* in ${XDG_CONFIG_HOME:-~/.config}/agentmeterd */
#define BUDGET_FILE_MAX (256u * 1024u)  /* a bigger file is refused */
#define BUDGET_MAX 64                   /* rules kept; the rest are reported */
#define BUDGET_LEVELS_MAX 8
#define BUDGET_NAME_MAX 64
#define BUDGET_COMMAND_MAX 1024
#define BUDGET_ERRORS_MAX 8             /* error messages kept (all are counted) */
#define BUDGET_ERROR_LEN 200
#define BUDGET_PERCENT_MAX 100000       /* a percent shown is capped here (1,000 times the limit) */

enum budget_period { BUDGET_DAILY = 1, BUDGET_WEEKLY, BUDGET_MONTHLY };
enum budget_unit { BUDGET_USD = 1, BUDGET_TOKENS };
enum budget_scope { BUDGET_TOTAL = 0, BUDGET_HARNESS, BUDGET_MODEL, BUDGET_PROJECT };

struct budget_rule {
        char name[BUDGET_NAME_MAX];     /* name=, else "<period>-<n>" (n: its line) */
        enum budget_period period;
        enum budget_unit unit;
        int64_t limit;                  /* nano-USD or tokens, > 0 */
        enum budget_scope scope;
        char match[ROW_PROJECT_MAX];    /* harness id, model, or project directory */
        unsigned levels[BUDGET_LEVELS_MAX]; /* percents, ascending, unique */
        size_t n_levels;
        unsigned line;
};

struct budget_conf {
        struct budget_rule rules[BUDGET_MAX];
        size_t n_rules;
        char command[BUDGET_COMMAND_MAX]; /* "" = none; run with /bin/sh -c */
        unsigned n_errors;
        char errors[BUDGET_ERRORS_MAX][BUDGET_ERROR_LEN]; /* "line N: why" */
};

/* ${XDG_CONFIG_HOME:-~/.config}/agentmeterd/budgets.conf into buf. */
int budget_conf_path(char *buf, size_t cap);

/* Parses the text of a budgets file. Bad lines are skipped and reported in
 * conf->errors with their line number; everything else is kept. -ENOMEM. */
int budget_conf_parse(const char *text, size_t len, struct budget_conf *ret_conf);

/* Reads and parses path: -ENOENT when it does not exist (no budgets),
 * -EFBIG past BUDGET_FILE_MAX, other -errno. */
int budget_conf_load(const char *path, struct budget_conf *ret_conf);

const char *budget_period_name(enum budget_period p);
const char *budget_unit_name(enum budget_unit u);
const char *budget_scope_name(enum budget_scope s);

/* The spend as a percentage of the limit, in tenths of a percent, floored
 * and capped at BUDGET_PERCENT_MAX (0 for no spend): the one figure
 * `status` shows (tenths / 10.0) and the journal and the command's
 * environment show in whole percents (tenths / 10), so a level L is
 * crossed exactly when the whole percent reaches L. */
int64_t budget_percent_tenths(int64_t amount, int64_t limit);

/* Whether a row counts against the rule's scope (not its period). A project
 * matches the directory itself and everything below it. */
bool budget_rule_matches(const struct budget_rule *b, const char *harness, const char *model,
                         const char *project);

/* The start of the period containing ms, in the process's local zone (weeks
 * start on Monday), as UTC ms, and its label ("2026-12-01", "2026-W49",
 * "2026-12") into key (at least 16 bytes). */
void budget_period_of(enum budget_period p, int64_t ms, int64_t *ret_start_ms,
                      int64_t *ret_end_ms, char *ret_key, size_t cap);
