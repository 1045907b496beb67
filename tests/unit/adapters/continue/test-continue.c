/* Unit tests of the Continue adapter: which files count, the two meanings
 * of prompt_tokens, a call's key the same in its session and in a fork's
 * copy and different for a resume's repeated prompt, a torn document
 * settling, and a JSON file that is no session. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "registry.h"
#include "row.h"

extern const struct adapter adapter_continue;
static const struct adapter *A = &adapter_continue;

/* doc through parse_document into b; the result */
static int parse(const char *doc, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = A, .path = "/h/.continue/sessions/s.json" };
        struct parse_state ps = { 0 };
        size_t known = 0;

        return A->parse_document(&ctx, &ps, doc, strlen(doc), &known, b);
}

static char *fixture(const char *rel)
{
        char path[PATH_MAX];
        xsnprintf(path, sizeof(path), "%s/fixtures/continue/%s", am_srcdir(), rel);
        char *s = slurp(path, NULL);
        if (!s)
                exit(99);
        return s;
}

static void test_classify(void)
{
        is_int(A->classify("", "sessions", 0, true), CLASS_DESCEND, "sessions/ is walked");
        is_int(A->classify("a.json", "a.json", 1, false), CLASS_DOCUMENT, "a session is a document");
        is_int(A->classify("sessions.json", "sessions.json", 1, false), CLASS_IGNORE, "the index is not");
        is_int(A->classify("a.json.tmp", "a.json.tmp", 1, false), CLASS_IGNORE, "a temp file is not");
        is_int(A->classify("x", "x", 1, true), CLASS_IGNORE, "nothing below sessions/");
        ok(registry_env_known("CONTINUE_GLOBAL_DIR"), "CONTINUE_GLOBAL_DIR is a discovery variable");
}

static void test_providers(void)
{
        struct row_batch b = { 0 };
        const char *oa = "{\"sessionId\":\"s\",\"workspaceDirectory\":\"/w\",\"history\":["
                         "{\"message\":{\"role\":\"assistant\",\"content\":\"x\",\"usage\":{\"prompt_tokens\":1000,"
                         "\"completion_tokens\":50,\"prompt_tokens_details\":{\"cached_tokens\":600},"
                         "\"completion_tokens_details\":{\"reasoning_tokens\":7},\"model\":\"m\"}}}]}";
        const char *an = "{\"sessionId\":\"s\",\"workspaceDirectory\":\"/w\",\"history\":["
                         "{\"message\":{\"role\":\"assistant\",\"content\":\"x\",\"usage\":{\"prompt_tokens\":200,"
                         "\"completion_tokens\":50,\"prompt_tokens_details\":{\"cache_read_tokens\":600,"
                         "\"cache_write_tokens\":64,\"cached_tokens\":600},\"model\":\"claude-sonnet-4-5\"}}}]}";

        is_int(parse(oa, &b), PARSE_OK, "openai: parsed");
        ok(b.n == 1 && b.rows[0].input == 400 && b.rows[0].cache_read == 600 && b.rows[0].cache_write == 0 &&
                   b.rows[0].output == 50 && b.rows[0].reasoning == 7,
           "openai: prompt_tokens includes the cached tokens (input 400 uncached)");
        ok(b.n == 1 && b.rows[0].cost_source == COST_NONE, "cost_cents is no price");
        row_batch_free(&b);
        b = (struct row_batch){ 0 };
        is_int(parse(an, &b), PARSE_OK, "anthropic: parsed");
        ok(b.n == 1 && b.rows[0].input == 200 && b.rows[0].cache_read == 600 && b.rows[0].cache_write == 64,
           "anthropic: prompt_tokens excludes cache read and write");
        row_batch_free(&b);
}

static bool same_key(const struct usage_row *a, const struct usage_row *b)
{
        return memcmp(&a->key, &b->key, sizeof(a->key)) == 0;
}

static void test_keys(void)
{
        struct row_batch pa = { 0 }, fk = { 0 }, rs = { 0 };
        char *parent = fixture("home/sessions/aaaa0001-0000-4000-8000-000000000001.json");
        char *fork = fixture("home/sessions/ffff0003-0000-4000-8000-000000000003.json");
        char *resumed = fixture("later/aaaa0001-0000-4000-8000-000000000001.resumed.json");
        char *torn = fixture("later/aaaa0001-0000-4000-8000-000000000001.torn.json");

        is_int(parse(parent, &pa), PARSE_OK, "parent parsed");
        is_int(parse(fork, &fk), PARSE_OK, "fork parsed");
        is_int(parse(resumed, &rs), PARSE_OK, "resumed parsed");
        ok(pa.n == 3 && fk.n == 4 && rs.n == 4, "3 calls, the fork 3 copied + 1, the resume 3 + 1");
        ok(pa.n == 3 && fk.n == 4 && same_key(&pa.rows[0], &fk.rows[0]) && same_key(&pa.rows[1], &fk.rows[1]) &&
                   same_key(&pa.rows[2], &fk.rows[2]),
           "a fork's copied calls have their parent's keys");
        ok(fk.n == 4 && !same_key(&pa.rows[2], &fk.rows[3]), "the fork's own call a key of its own");
        ok(rs.n == 4 && rs.rows[3].input == pa.rows[0].input && rs.rows[3].output == pa.rows[0].output &&
                   !same_key(&rs.rows[3], &pa.rows[0]),
           "a resume's repeated prompt, same usage: another call, another key");
        ok(pa.n == 3 && strcmp(pa.rows[0].session, "aaaa0001-0000-4000-8000-000000000001") == 0 &&
                   strcmp(pa.rows[0].project, "/work/alpha") == 0,
           "session from sessionId, project from workspaceDirectory");
        struct row_batch tb = { 0 };
        is_int(parse(torn, &tb), PARSE_INCOMPLETE, "a torn document is settling");
        is_int((int)tb.n, 0, "... and leaves no rows");
        is_int(parse("[1,2]", &tb), PARSE_NOT_SOURCE, "JSON without a history is not a session");
        is_int(parse("{\"history\":[] x", &tb), PARSE_MALFORMED, "garbage after the object is malformed");
        row_batch_free(&pa);
        row_batch_free(&fk);
        row_batch_free(&rs);
        row_batch_free(&tb);
        free(parent);
        free(fork);
        free(resumed);
        free(torn);
}

int main(void)
{
        test_classify();
        test_providers();
        test_keys();
        return tap_done();
}
