/* Unit tests for the metrics exporter: series from a real ledger, cost split
 * by source, unknown tokens left out, and high-water marks: a series whose
 * ledger value goes down (an upsert filling in a row's model moves it to
 * another series) keeps its exported value, also after a restart, and
 * many new series at once are merged into the marks in one pass. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "ledger/ledger.h"
#include "metrics.h"
#include "tap.h"
#include "testutil.h"
#include "timefmt.h"

static struct ledger *L;

static void put(const char *id, const char *tool, const char *model, uint8_t cost_src,
                int64_t cost_nano, bool tokens, uint32_t flags)
{
        static struct usage_row r;
        struct keyhash h;

        memset(&r, 0, sizeof(r));
        keyhash_begin(&h, "metrics-test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r.key);
        r.kind = ROW_KIND_MESSAGE;
        r.flags = (tokens ? ROW_F_TOKENS_KNOWN : 0) | flags;
        r.time_ms = 1764547200000LL;
        if (tokens) {
                r.input = 100;
                r.output = 20;
                r.cache_read = 5;
                r.cache_write = 7;
                r.cache_write_1h = strcmp(model, "h1") == 0 ? 3 : 0; /* of the 7 */
                r.total = 132;
        }
        r.cost_source = cost_src;
        r.cost_nano = cost_nano;
        ROW_SET(r.tool, tool);
        ROW_SET(r.session, "s1");
        ROW_SET(r.provider, "anthropic");
        ROW_SET(r.model, model);
        struct commit_batch b = {.rows = &r, .n_rows = 1};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

static char *text_of(struct ingest *in)
{
        struct metrics_config mc = {.user = "alice@host", .start_ms = 1000};
        struct metrics *m = NULL;
        char *text = NULL;

        if (metrics_new(NULL, in, &mc, &m) < 0 || metrics_text(m, &text) < 0)
                abort();
        metrics_free(m);
        return text;
}

static bool has(const char *text, const char *line)
{
        return strstr(text, line) != NULL;
}

int main(void)
{
        char dir[300], cmd[400];
        struct fenv fe = {0};
        struct discover_env env = fenv_env(&fe);
        struct ingest *in = NULL;
        char *t;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0 || ingest_new(L, &env, NULL, &in) < 0)
                return 99;
        put("v1", "pi", "m", COST_VENDOR, 1500000000, true, 0);
        put("c1", "pi", "m", COST_COMPUTED, 250000000, true, 0);
        put("u1", "pi", "m", COST_NONE, 0, true, 0);
        put("p1", "picoclaw", "x", COST_NONE, 0, false, 0);
        put("up", "openclaw", "", COST_VENDOR, 2000, true, ROW_F_UPSERT);
        put("h1a", "pi", "h1", COST_VENDOR, 1000, true, 0);
        put("h1b", "pi", "h1", COST_VENDOR, 1000, true, 0);

        t = text_of(in);
        ok(has(t, "agentmeter_cost_usd_total{user=\"alice@host\",harness=\"pi\",provider=\"anthropic\",model=\"m\",cost_source=\"vendor\"} 1.5\n"),
           "mixed model: vendor part from the vendor-only report");
        ok(has(t, "agentmeter_cost_usd_total{user=\"alice@host\",harness=\"pi\",provider=\"anthropic\",model=\"m\",cost_source=\"computed\"} 0.25\n"),
           "mixed model: computed part = total - vendor");
        ok(has(t, "agentmeter_unpriced_events_total{user=\"alice@host\",harness=\"pi\",provider=\"anthropic\",model=\"m\"} 1\n"),
           "unpriced events counted");
        ok(has(t, "agentmeter_events_total{user=\"alice@host\",harness=\"pi\",provider=\"anthropic\",model=\"m\"} 3\n"),
           "events counted");
        ok(has(t, "agentmeter_tokens_total{user=\"alice@host\",harness=\"pi\",provider=\"anthropic\",model=\"m\",type=\"input\"} 300\n"),
           "input tokens summed");
        ok(has(t, "model=\"m\",type=\"cache_write_5m\"} 21\n") &&
                   has(t, "model=\"m\",type=\"cache_write_1h\"} 0\n"),
           "cache writes split 5m/1h (1h: 0 until rows carry it)");
        ok(has(t, "model=\"h1\",type=\"cache_write_5m\"} 8\n") && has(t, "model=\"h1\",type=\"cache_write_1h\"} 6\n"),
           "rows with 1-hour writes: 1h 6 and 5m 8 of 14 (the 1-hour part survives the rollup sums)");
        ok(!has(t, "agentmeter_tokens_total{user=\"alice@host\",harness=\"picoclaw\""),
           "a harness without token counts has no token series (unknown is not 0)");
        ok(has(t, "agentmeter_events_total{user=\"alice@host\",harness=\"picoclaw\",provider=\"anthropic\",model=\"x\"} 1\n"),
           "... but its events are counted");
        ok(has(t, "agentmeter_build_info{user=\"alice@host\",version=\"" AM_VERSION "\"} 1\n"), "build info");
        ok(has(t, "agentmeter_last_event_timestamp_seconds{user=\"alice@host\",harness=\"pi\"} 1764547200\n"),
           "last event per harness, in seconds");
        ok(has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"\",type=\"input\"} 100\n"),
           "the upsert row first counts under model \"\"");
        free(t);

        /* the same row again with its model filled in: the ledger moves it */
        put("up", "openclaw", "late-model", COST_VENDOR, 2000, true, ROW_F_UPSERT);
        t = text_of(in);
        ok(has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"late-model\",type=\"input\"} 100\n"),
           "after the upsert: the new series has the row");
        ok(has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"\",type=\"input\"} 100\n"),
           "... and the old series keeps its high-water mark (a counter never goes down)");
        free(t);

        /* a new exporter (a restart) reads the marks back from the ledger */
        ingest_free(in);
        ingest_new(L, &env, NULL, &in);
        t = text_of(in);
        ok(has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"\",type=\"input\"} 100\n"),
           "after a restart the high-water mark still holds");
        ok(has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"\",cost_source=\"vendor\"} 0.000002\n"),
           "... for the cost counter too");
        free(t);

        /* many models at once (a generated catalogue priced through an
         * override): the new series' marks are merged in one pass (each was
         * inserted into the sorted array, a move of the rest every time:
         * 31,775 models took 11 s of memmove per render) */
#ifdef __SANITIZE_ADDRESS__
        /* the sanitizer lane checks the memory of the merge, not its cost
         * (40,000 took 15 s of its time): fewer, and no cost compared */
        enum { MANY = 4000, COMPARE_COST = 0 };
#else
        enum { MANY = 40000, COMPARE_COST = 1 };
#endif
        struct usage_row *rows = calloc(MANY, sizeof(*rows));
        for (int i = 0; i < MANY; i++) {
                struct keyhash h;
                char model[32];
                keyhash_begin(&h, "metrics-many");
                keyhash_u64(&h, (uint64_t)i);
                keyhash_end(&h, &rows[i].key);
                rows[i].kind = ROW_KIND_MESSAGE;
                rows[i].flags = ROW_F_TOKENS_KNOWN;
                rows[i].time_ms = 1764547200000LL + i;
                rows[i].input = rows[i].total = 10 + (uint64_t)i;
                rows[i].cost_source = COST_VENDOR;
                rows[i].cost_nano = 1000;
                snprintf(model, sizeof(model), "gen-%05d", (i * 7919) % MANY);
                ROW_SET(rows[i].tool, "pi");
                ROW_SET(rows[i].session, "many");
                ROW_SET(rows[i].provider, "vendor");
                row_set_str(rows[i].model, sizeof(rows[i].model), model, strlen(model));
        }
        struct commit_batch mb = {.rows = rows, .n_rows = MANY};
        if (ledger_commit(L, &mb, NULL) < 0)
                return 99;
        free(rows);
        /* the first render adds 40,000 models' marks, the second finds them
         * all: merged in one pass, the first costs about what the second
         * does (inserted one by one it cost ten times as much, 11.8 s) */
        int64_t t0 = timefmt_mono_ms();
        t = text_of(in);
        int64_t first = timefmt_mono_ms() - t0;
        t0 = timefmt_mono_ms();
        char *again = text_of(in);
        int64_t second = timefmt_mono_ms() - t0;
        ok(!COMPARE_COST || first < 2 * second + 1000,
           "%d new models: their marks cost no more than a render (%lld ms, then %lld ms with every "
           "mark there)", MANY, (long long)first, (long long)second);
        char last[96];
        snprintf(last, sizeof(last), "provider=\"vendor\",model=\"gen-%05d\",type=\"input\"} ", MANY - 1);
        ok(has(t, "provider=\"vendor\",model=\"gen-00000\",type=\"input\"} 10\n") && has(t, last) &&
                   has(t, "harness=\"openclaw\",provider=\"anthropic\",model=\"\",type=\"input\"} 100\n"),
           "... every series there, the older marks kept");
        ok(strcmp(t, again) == 0, "... and the marks read back give the same text");
        free(again);
        free(t);

        ingest_free(in);
        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
        return tap_done();
}
