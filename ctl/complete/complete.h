/* Shell completion answered by agentmeterctl itself: the scripts (bash, zsh,
 * fish) pass the words typed so far to `agentmeterctl __complete`, which
 * prints the candidates for the last one. So a new command, option, report
 * kind or harness adapter completes without a new script. Pure: the
 * commands and options come in a spec, the daemon's values through a
 * callback. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What an option's value or a command's positional argument is. */
enum complete_value {
        CV_NONE = 0,
        CV_FILE,      /* a path: the shell completes files */
        CV_DIR,       /* a directory: the shell completes directories */
        CV_KIND,      /* report kinds (report_kind_name) */
        CV_SHELL,     /* bash, zsh, fish */
        CV_HARNESS,   /* adapter ids from the registry; comma lists */
        CV_ZONE,      /* tz database names found under $TZDIR or /usr/share/zoneinfo */
        CV_COST,      /* auto, vendor, computed */
        CV_BREAKDOWN, /* model, harness */
        CV_WEEKDAY,   /* monday .. sunday */
        CV_SESSION,   /* session ids: asked of the daemon */
        CV_PROJECT,   /* projects: asked of the daemon */
        CV_TEXT,      /* free text (dates, formats): nothing to offer */
        CV_PARTY,     /* machine, user (team reports' --by) */
        CV_TEAM,      /* team subcommands: init */
};

struct complete_option {
        const char *name;  /* without the dashes: "tz" */
        int has_arg;       /* getopt's no_argument / required_argument */
        int code;          /* getopt_long's val */
        unsigned bit;      /* the command-table bit; 0 for options every command takes */
        enum complete_value value;
        const char *help;
};

struct complete_command {
        const char *name;
        unsigned allowed;  /* option bits */
        int n_pos;         /* positional arguments */
        enum complete_value positional;
        const char *help;
};

struct complete_spec {
        const struct complete_command *cmds;
        size_t n_cmds;
        const struct complete_option *opts;
        size_t n_opts;
        /* Writes "value\tdescription" lines for CV_SESSION/CV_PROJECT values
         * starting with prefix; may do nothing (no daemon answering). */
        void (*daemon_values)(void *userdata, enum complete_value what, const char *prefix, FILE *out);
        void *userdata;
};

/* words: what follows the program name on the line, up to the cursor; the
 * last is the word being completed ("" after a blank). Writes one
 * candidate per line, "word" or "word\tdescription", each starting with
 * that word (a "--opt=" prefix kept); or the single line ":files" or
 * ":dirs" when the shell should complete paths itself. */
void complete_words(FILE *out, const struct complete_spec *spec, int n, char *const *words);

/* The completion script for shell "bash", "zsh" or "fish", or NULL. */
const char *complete_script(const char *shell);
