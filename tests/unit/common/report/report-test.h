/* What the report unit tests (test-report.c, test-report-limit.c) share: a
 * ledger in the test's temporary folder, a usage row's start, a query run
 * into the report's JSON, and its members read back. Header-only: each
 * unit test is linked from its own file. */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "tap.h"

/* A ledger in a new folder of the test's (dir, cap bytes): exits 99 when
 * it cannot be opened. */
static inline struct ledger *rep_ledger_open(char *dir, size_t cap)
{
        struct ledger *l = NULL;

        snprintf(dir, cap, "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &l) < 0)
                exit(99);
        return l;
}

static inline void rep_ledger_close(struct ledger *l, const char *dir)
{
        char cmd[PATH_MAX + 16];

        ledger_close(l);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
}

/* r emptied, a message row keyed by (tag, id). */
static inline void rep_row_start(struct usage_row *r, const char *tag, const char *id)
{
        struct keyhash h;

        memset(r, 0, sizeof(*r));
        keyhash_begin(&h, tag);
        keyhash_str(&h, id);
        keyhash_end(&h, &r->key);
        r->kind = ROW_KIND_MESSAGE;
}

/* q's report as JSON, with the harness list harness ("pi,claude") when
 * not NULL; NULL, said in a TAP comment, when the report fails. */
static inline json_object *rep_run(struct ledger *l, struct report_query q, const char *harness)
{
        char hbuf[64];
        json_object *o = NULL;
        const char *err = NULL;

        if (harness) {
                snprintf(hbuf, sizeof(hbuf), "%s", harness);
                report_parse_harness_list(hbuf, &q);
        }
        if (report_run(l, &q, &o, &err) < 0) {
                printf("# report failed: %s\n", err ? err : "?");
                return NULL;
        }
        /* the strings in q die here: serialise-check the object now */
        json_object_to_json_string(o);
        return o;
}

static inline json_object *rep_field(json_object *o, const char *k)
{
        json_object *v = NULL;
        json_object_object_get_ex(o, k, &v);
        return v;
}

static inline json_object *rep_rows(json_object *rep)
{
        return rep_field(rep, "rows");
}

static inline size_t rep_nrows(json_object *rep)
{
        return rep ? json_object_array_length(rep_rows(rep)) : 0;
}

/* The JSON text of a member, as the socket would carry it ("null" when
 * it is null or absent). */
static inline const char *rep_text(json_object *o, const char *k)
{
        json_object *v = rep_field(o, k);
        return v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                 : "null";
}
