/* Unit tests of the Amp adapter (written from the public format facts):
 * which files count, a message's usage as one call, an all-zero usage as
 * none, an older thread's ledger event and its message as one row (the
 * message's cache split, the event's model and time), an event without a
 * message usage counted alone, and a document that is no thread. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testutil.h"

#include "adapter.h"
#include "registry.h"
#include "row.h"

extern const struct adapter adapter_amp;
static const struct adapter *A = &adapter_amp;

static char *fixture(const char *name)
{
        char path[PATH_MAX];
        xsnprintf(path, sizeof(path), "%s/fixtures/amp/home/.local/share/amp/threads/%s", am_srcdir(), name);
        char *s = slurp(path, NULL);
        if (!s)
                exit(99);
        return s;
}

static int parse(const char *doc, struct row_batch *b)
{
        struct source_ctx ctx = { .adapter = A, .path = "/h/.local/share/amp/threads/T-x.json" };
        struct parse_state ps = { 0 };
        size_t known = 0;

        return A->parse_document(&ctx, &ps, doc, strlen(doc), &known, b);
}

static const struct usage_row *find(const struct row_batch *b, const char *model, uint64_t output)
{
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->rows[i].model, model) == 0 && b->rows[i].output == output)
                        return &b->rows[i];
        return NULL;
}

static void test_classify(void)
{
        is_int(A->classify("", "threads", 0, true), CLASS_DESCEND, "threads/ is walked");
        is_int(A->classify("T-1.json", "T-1.json", 1, false), CLASS_DOCUMENT, "a thread is a document");
        is_int(A->classify("notes.json", "notes.json", 1, false), CLASS_IGNORE, "another JSON file is not");
        is_int(A->classify("T-1.json.tmp", "T-1.json.tmp", 1, false), CLASS_IGNORE, "a temporary file is not");
        ok(registry_env_known("AMP_DATA_DIR"), "AMP_DATA_DIR is a discovery variable");
        ok(A->unverified != NULL, "marked unverified");
}

static void test_messages(void)
{
        struct row_batch b = { 0 };
        char *doc = fixture("T-aaaaaaaa-0000-4000-8000-000000000001.json");
        const struct usage_row *r;

        is_int(parse(doc, &b), PARSE_OK, "newer thread parses");
        is_int((int)b.n, 2, "two calls: the all-zero usage is none");
        r = find(&b, "claude-sonnet-4-5", 200);
        ok(r && r->input == 10 && r->cache_write == 986 && r->cache_read == 11372, "inputTokens is uncached input; cache split kept");
        ok(r && !(r->flags & ROW_F_TIME_APPROX) && r->time_ms == 1796119200000LL, "its own timestamp");
        r = find(&b, "gpt-5", 50);
        ok(r && r->input == 0 && r->cache_write == 3000, "an OpenAI-family call keeps Amp's buckets");
        ok(r && strcmp(r->session, "T-aaaaaaaa-0000-4000-8000-000000000001") == 0, "the thread is the session");
        row_batch_free(&b);
        free(doc);
}

static void test_ledger(void)
{
        struct row_batch b = { 0 };
        char *doc = fixture("T-bbbbbbbb-0000-4000-8000-000000000002.json");
        const struct usage_row *r;

        is_int(parse(doc, &b), PARSE_OK, "older thread parses");
        is_int((int)b.n, 3, "three calls: a message with its event is one");
        r = find(&b, "claude-sonnet-4-5", 20);
        ok(r && r->input == 100 && r->cache_write == 500 && r->cache_read == 200,
           "message 2: its own cache split with its event's counts");
        ok(r && !(r->flags & ROW_F_TIME_APPROX) && r->time_ms == 1795165200000LL, "... and its event's time");
        r = find(&b, "claude-sonnet-4-5", 40);
        ok(r && r->input == 300, "message 3 has no usage: counted from its event");
        r = find(&b, "claude-haiku-4-5", 3);
        ok(r && r->input == 7, "an event naming no message: counted by its own id");
        row_batch_free(&b);
        free(doc);
}

static void test_keys(void)
{
        struct row_batch a = { 0 }, b = { 0 };
        char *doc = fixture("T-bbbbbbbb-0000-4000-8000-000000000002.json");

        parse(doc, &a);
        parse(doc, &b);
        ok(a.n == b.n && a.n > 0 && memcmp(&a.rows[0].key, &b.rows[0].key, sizeof(a.rows[0].key)) == 0,
           "a re-read keys its calls the same (a rewrite counts nothing twice)");
        ok(memcmp(&a.rows[0].key, &a.rows[1].key, sizeof(a.rows[0].key)) != 0, "two messages, two keys");
        ok(a.rows[0].flags & ROW_F_UPSERT, "a message's usage may grow in a later version: upserted");
        row_batch_free(&a);
        row_batch_free(&b);
        free(doc);
        is_int(parse("{\"not\":\"a thread\"}", &a), PARSE_NOT_SOURCE, "a JSON object without messages is not a thread");
        is_int(parse("{\"id\":\"T-1\",\"messages\":[", &a), PARSE_INCOMPLETE, "a torn write is read again");
        row_batch_free(&a);
}

int main(void)
{
        test_classify();
        test_messages();
        test_ledger();
        test_keys();
        return tap_done();
}
