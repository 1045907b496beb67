/* Unit tests of the Kimi adapter (written from the public format facts):
 * which files count in either layout, a usage.record as one call with the
 * model of the llm.request before it, step.end never counted, both usage
 * scopes counted, an all-zero record none, the key taking the agent and
 * not the session (a fork's copy is the same call), and Kimi CLI's
 * StatusUpdate keyed by its message id. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "registry.h"
#include "row.h"

extern const struct adapter adapter_kimi;
static const struct adapter *A = &adapter_kimi;

/* Every line of the fixture file through parse_line as path; rows into b. */
static int parse_file(const char *rel, const char *path, struct row_batch *b)
{
        char full[PATH_MAX];
        struct source_ctx ctx = { .adapter = A, .path = path };
        struct parse_state ps = { 0 };
        int malformed = 0;

        xsnprintf(full, sizeof(full), "%s/fixtures/kimi/home/%s", am_srcdir(), rel);
        char *s = slurp(full, NULL);
        if (!s)
                exit(99);
        for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
                malformed += A->parse_line(&ctx, &ps, line, strlen(line), b) == PARSE_MALFORMED;
        free(s);
        return malformed;
}

#define CODE "/h/.kimi-code/sessions/wd_proj_0123456789ab/"
#define S1 "session_11111111-1111-4111-8111-111111111111"
#define S2 "session_22222222-2222-4222-8222-222222222222"

static void test_classify(void)
{
        is_int(A->classify("wd_p_1/session_1/agents/main/wire.jsonl", "wire.jsonl", 5, false), CLASS_LINES,
               "Kimi Code: an agent's wire.jsonl");
        is_int(A->classify("abc/uuid/wire.jsonl", "wire.jsonl", 3, false), CLASS_LINES, "Kimi CLI: a session's wire.jsonl");
        is_int(A->classify("wd_p_1/session_1/context.jsonl", "context.jsonl", 3, false), CLASS_IGNORE, "other files are not");
        is_int(A->classify("wd_p_1/session_1/agents/main/x", "x", 5, true), CLASS_IGNORE, "nothing below an agent's dir");
        ok(registry_env_known("KIMI_CODE_HOME") && registry_env_known("KIMI_SHARE_DIR"), "both variables are discovery variables");
        ok(A->unverified != NULL, "marked unverified");
}

static void test_code(void)
{
        struct row_batch b = { 0 }, sub = { 0 }, fork = { 0 };

        is_int(parse_file(".kimi-code/sessions/wd_proj_0123456789ab/" S1 "/agents/main/wire.jsonl",
                          CODE S1 "/agents/main/wire.jsonl", &b), 1, "one malformed line, skipped");
        is_int((int)b.n, 2, "two calls: step.end repeats one, an all-zero record is none");
        ok(b.n == 2 && b.rows[0].input == 1000 && b.rows[0].output == 200 && b.rows[0].cache_read == 3000,
           "inputOther is uncached input, inputCacheRead the cache read");
        ok(b.n == 2 && strcmp(b.rows[0].model, "kimi-k2-0905-preview") == 0, "the model of the llm.request before it, not the alias");
        ok(b.n == 2 && b.rows[1].input == 500, "a session-scoped record (after a compaction request) counts");
        ok(b.n == 2 && b.rows[0].time_ms == 1796112002000LL, "the record's time (ms)");
        ok(b.n == 2 && strcmp(b.rows[0].session, S1) == 0 && strcmp(b.rows[0].project, "wd_proj_0123456789ab") == 0,
           "session and workspace from the path");
        parse_file(".kimi-code/sessions/wd_proj_0123456789ab/" S1 "/agents/agent-0/wire.jsonl",
                   CODE S1 "/agents/agent-0/wire.jsonl", &sub);
        ok(sub.n == 1 && memcmp(&sub.rows[0].key, &b.rows[0].key, sizeof(b.rows[0].key)) != 0,
           "a sub-agent's record with the same content is another call (the agent is in the key)");
        parse_file(".kimi-code/sessions/wd_proj_0123456789ab/" S2 "/agents/main/wire.jsonl",
                   CODE S2 "/agents/main/wire.jsonl", &fork);
        ok(fork.n == 2 && memcmp(&fork.rows[0].key, &b.rows[0].key, sizeof(b.rows[0].key)) == 0 &&
           memcmp(&fork.rows[1].key, &b.rows[1].key, sizeof(b.rows[1].key)) == 0,
           "a fork's copy of a session: the same calls (the session is not in the key)");
        row_batch_free(&b);
        row_batch_free(&sub);
        row_batch_free(&fork);
}

static void test_cli(void)
{
        struct row_batch b = { 0 };
        const char *rel = ".kimi/sessions/0a1b2c3d4e5f/33333333-3333-4333-8333-333333333333/wire.jsonl";

        is_int(parse_file(rel, "/h/.kimi/sessions/0a1b2c3d4e5f/33333333-3333-4333-8333-333333333333/wire.jsonl", &b), 0,
               "Kimi CLI: no malformed line");
        /* chatcmpl-1 twice (one key), a context-only update (none), one without id, the
         * nested sub-agent's (not counted), one past the bounds (the ledger refuses it) */
        is_int((int)b.n, 4, "four rows: the step's two updates, one without id, the one past the bounds");
        ok(b.n == 4 && memcmp(&b.rows[0].key, &b.rows[1].key, sizeof(b.rows[0].key)) == 0 &&
           (b.rows[1].flags & ROW_F_UPSERT) && b.rows[1].output == 40,
           "a step's later update: the same key, upserted to its larger counts");
        ok(b.n == 4 && b.rows[0].time_ms == 1796115601250LL, "the time in seconds, to the ms");
        ok(b.n == 4 && b.rows[2].input == 50 && b.rows[2].output == 5, "input_other is uncached input");
        ok(b.n == 4 && strcmp(b.rows[0].session, "33333333-3333-4333-8333-333333333333") == 0, "the session dir");
        ok(b.n == 4 && b.rows[0].model[0] == '\0', "no model in the file: left empty (unpriced)");
        row_batch_free(&b);
}

int main(void)
{
        test_classify();
        test_code();
        test_cli();
        return tap_done();
}
