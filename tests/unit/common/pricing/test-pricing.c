/* The price engine: the built-in table, every rule of pricing.md (long
 * context thresholds, 1-hour writes, multipliers, dates, id normalisation
 * with the ids that motivated each rule and their near-misses), ingest's
 * vendor-vs-computed choice, and user overrides. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pricing/pricing.h"
#include "tap.h"
#include "testutil.h"
#include "timefmt.h"

#define M 1000000ull
#define DAY_MS (86400000LL)
#define T_2026 1767225600000LL /* 2026-01-01 */

static struct price_table *T;

/* cost in nano-USD of one request, or the negative errno */
static int64_t cost(const char *model, const char *tier, uint64_t in, uint64_t out, uint64_t cr,
                    uint64_t cw, uint64_t cw1h)
{
        struct price_request q = {.model = model, .tier = tier, .time_ms = T_2026, .input = in,
                                  .output = out, .cache_read = cr, .cache_write = cw,
                                  .cache_write_1h = cw1h};
        struct price_quote pq;
        int r = price_compute(T, &q, &pq);
        return r < 0 ? r : pq.cost_nano;
}

static const char *norm(const char *id)
{
        static char out[ROW_MODEL_MAX], region[ROW_TIER_MAX];
        if (price_normalise_id(id, out, sizeof(out), region, sizeof(region)) < 0)
                return "(error)";
        if (region[0]) {
                static char both[ROW_MODEL_MAX + ROW_TIER_MAX + 2];
                snprintf(both, sizeof(both), "%s [%s]", out, region);
                return both;
        }
        return out;
}

static void test_builtin(void)
{
        /* every model of ../shared/reference/pricing.md, with its input and
         * output list price (USD per 1M tokens, as nano-USD per 1M tokens) */
        static const struct { const char *id; int64_t in, out, cr; } want[] = {
                {"claude-opus-4-5", 5000000000, 25000000000, 500000000},
                {"claude-opus-4-6", 5000000000, 25000000000, 500000000},
                {"claude-opus-4-7", 5000000000, 25000000000, 500000000},
                {"claude-opus-4-8", 5000000000, 25000000000, 500000000},
                {"claude-opus-4", 15000000000, 75000000000, 1500000000},
                {"claude-opus-4-1", 15000000000, 75000000000, 1500000000},
                {"claude-sonnet-4", 3000000000, 15000000000, 300000000},
                {"claude-sonnet-4-5", 3000000000, 15000000000, 300000000},
                {"claude-sonnet-4-6", 3000000000, 15000000000, 300000000},
                {"claude-sonnet-5", 2000000000, 10000000000, 200000000},
                {"claude-haiku-4-5", 1000000000, 5000000000, 100000000},
                {"gpt-5", 1250000000, 10000000000, 125000000},
                {"gpt-5-codex", 1250000000, 10000000000, 125000000},
                {"gpt-5.1", 1250000000, 10000000000, 125000000},
                {"gpt-5.1-codex", 1250000000, 10000000000, 125000000},
                {"gpt-5.1-codex-max", 1250000000, 10000000000, 125000000},
                {"gpt-5-mini", 250000000, 2000000000, 25000000},
                {"gpt-5.1-codex-mini", 250000000, 2000000000, 25000000},
                {"gpt-5.2", 1750000000, 14000000000, 175000000},
                {"gpt-5.2-codex", 1750000000, 14000000000, 175000000},
                {"gpt-5.3-codex", 1750000000, 14000000000, 175000000},
                {"gpt-5.3-codex-spark", 1750000000, 14000000000, 175000000},
                {"gpt-5.4", 2500000000, 15000000000, 250000000},
                {"gpt-5.4-mini", 750000000, 4500000000, 75000000},
                {"gpt-5.5", 5000000000, 30000000000, 500000000},
                {"gpt-5.6", 5000000000, 30000000000, 500000000},
                {"o3", 2000000000, 8000000000, 500000000},
                {"gpt-4.1", 2000000000, 8000000000, 500000000},
                {"o4-mini", 1100000000, 4400000000, 275000000},
                {"gemini-2.5-pro", 1250000000, 10000000000, 125000000},
                {"gemini-2.5-flash", 300000000, 2500000000, 30000000},
                {"gemini-3-pro-preview", 2000000000, 12000000000, 200000000},
                {"gemini-3.1-pro-preview", 2000000000, 12000000000, 200000000},
                {"gemini-2.5-flash-lite", 100000000, 400000000, 10000000},
                {"gemini-3-flash-preview", 500000000, 3000000000, 50000000},
                {"gemini-3.1-flash-lite", 250000000, 1500000000, 25000000},
                {"gemini-3.5-flash", 1500000000, 9000000000, 150000000},
                {"gemini-3.5-flash-lite", 300000000, 2500000000, 30000000},
                {"deepseek-chat", 140000000, 280000000, 2800000},
                {"deepseek-reasoner", 140000000, 280000000, 2800000},
                {"qwen3-coder-plus", 1000000000, 5000000000, 200000000},
                {"qwen3-coder-flash", 300000000, 1500000000, 60000000},
                {"qwen3-max", 1200000000, 6000000000, 240000000},
        };
        int bad = 0;

        is_str(T->checked, "2026-12-01", "built-in table is dated");
        is_str(T->label, "table-2026-12-01", "its price source label");
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                /* 10K tokens: under every long-context threshold and size tier */
                int64_t a = 100 * cost(want[i].id, "", M / 100, 0, 0, 0, 0),
                        b = 100 * cost(want[i].id, "", 0, M / 100, 0, 0, 0),
                        c = 100 * cost(want[i].id, "", 0, 0, M / 100, 0, 0);
                if (a != want[i].in || b != want[i].out || c != want[i].cr) {
                        bad++;
                        printf("# %s: in %lld out %lld cache read %lld\n", want[i].id, (long long)a,
                             (long long)b, (long long)c);
                }
        }
        ok(bad == 0, "all %zu models of pricing.md priced at their list prices",
           sizeof(want) / sizeof(want[0]));
        bad = 0;
        for (size_t i = 0; i < T->n_entries; i++)
                if (!T->entries[i].source[0] || T->entries[i].vendor[0] == 0)
                        bad++;
        is_int(bad, 0, "every built-in figure has a vendor and a source");
        is_int(cost("deepseek-chat", "", 0, 0, 1, 0, 0), 3, "one cache read at $0.0028/M: 2.8 nano -> 3");
        is_int(cost("deepseek-chat", "", 0, 0, 3, 0, 0), 8, "three: 8.4 nano -> 8");
        is_int(cost("deepseek-chat", "", 1, 0, 1, 0, 0), 143, "classes summed before rounding: 142.8 -> 143");
}

static void test_rules(void)
{
        /* long context, Anthropic: input + cache read + cache write > 200K */
        is_int(cost("claude-sonnet-4-5", "", 100000, 1000, 60000, 40000, 0),
               100000 * 3000LL + 1000 * 15000LL + 60000 * 300LL + 40000 * 3750LL,
               "sonnet-4-5 at exactly 200000 prompt tokens: base card");
        is_int(cost("claude-sonnet-4-5", "", 100001, 1000, 60000, 40000, 0),
               100001 * 6000LL + 1000 * 22500LL + 60000 * 600LL + 40000 * 7500LL,
               "at 200001: the whole request (output too) at the long card");
        is_int(cost("claude-sonnet-4-5", "", 200001, 0, 0, 0, 0), 200001 * 6000LL,
               "input alone over 200K: long card");
        is_int(cost("claude-sonnet-4-6", "", 300000, 0, 0, 0, 0), 300000 * 3000LL,
               "sonnet-4-6: 1M context at flat rates");
        is_int(cost("claude-opus-4-6", "", 500000, 0, 0, 0, 0), 500000 * 5000LL,
               "opus-4-6: no long card");
        /* OpenAI: > 272K */
        is_int(cost("gpt-5.4", "", 272000, 10, 0, 0, 0), 272000 * 2500LL + 10 * 15000LL,
               "gpt-5.4 at exactly 272000: base card");
        is_int(cost("gpt-5.4", "", 272001, 10, 0, 0, 0), 272001 * 5000LL + 10 * 22500LL,
               "gpt-5.4 at 272001: long card");
        is_int(cost("gpt-5.5", "", 200000, 0, 72001, 0, 0), 200000 * 10000LL + 72001 * 1000LL,
               "gpt-5.5: cached tokens count toward the threshold");
        is_int(cost("gpt-5.6", "", 0, 0, 0, 1000, 0), 1000 * 6250LL, "gpt-5.6 has a cache-write price");
        is_int(cost("gemini-2.5-pro", "", 200000, 0, 0, 0, 0), 200000 * 1250LL, "gemini-2.5-pro at 200000: base");
        is_int(cost("gemini-2.5-pro", "", 200001, 0, 0, 0, 0), 200001 * 2500LL, "gemini-2.5-pro at 200001: long");
        is_int(cost("gemini-3-pro-preview", "", 150000, 100, 50001, 0, 0),
               150000 * 4000LL + 100 * 18000LL + 50001 * 400LL, "gemini-3-pro-preview long card");

        /* cache writes by lifetime */
        is_int(cost("claude-sonnet-4-5", "", 0, 0, 0, 1000, 400), 600 * 3750LL + 400 * 6000LL,
               "sonnet-4-5: 600 5-minute writes at 3.75 and 400 1-hour writes at 6");
        is_int(cost("claude-opus-4-5", "", 0, 0, 0, 1000, 1000), 1000 * 10000LL, "opus-4-5 1-hour writes at 10");
        is_int(cost("claude-haiku-4-5", "", 0, 0, 0, 1000, 0), 1000 * 1250LL, "haiku-4-5 5-minute writes at 1.25");
        is_int(cost("claude-sonnet-4-5", "", 150000, 0, 0, 60000, 60000), 150000 * 6000LL + 60000 * 12000LL,
               "long card 1-hour writes at 12");
        is_int(cost("gpt-5", "", 100, 0, 0, 1000, 0), 1100 * 1250LL, "OpenAI: a cache write is billed as input");
        is_int(cost("claude-sonnet-4-5", "", 0, 0, 0, 10, 11), -EINVAL, "1-hour part larger than the writes: refused");

        /* multipliers */
        int64_t base48 = cost("claude-opus-4-8", "", 1000, 1000, 0, 0, 0);
        is_int(cost("claude-opus-4-8", "fast", 1000, 1000, 0, 0, 0), 2 * base48, "opus-4-8 fast: 2x");
        is_int(cost("claude-opus-4-6", "fast", 1000, 1000, 0, 0, 0),
               cost("claude-opus-4-6", "", 1000, 1000, 0, 0, 0), "opus-4-6 fast (retired): standard");
        is_int(cost("claude-opus-4-5", "fast", 1000, 1000, 0, 0, 0), -ENOTSUP,
               "fast on a model with no fast price: unpriced, not guessed");
        is_int(cost("claude-opus-4-5", "standard", 1000, 0, 0, 0, 0), 1000 * 5000LL, "'standard' is the base price");
        is_int(cost("gpt-5", "default", 1000, 0, 0, 0, 0), 1000 * 1250LL, "OpenAI 'default' tier is the base price");
        is_int(cost("gpt-5", "priority", 1000, 0, 0, 0, 0), 2 * 1000 * 1250LL, "priority: 2x");
        is_int(cost("gpt-5.4", "priority", 272001, 0, 0, 0, 0), 272001 * 5000LL,
               "priority over 272K: the long card without the 2x");
        is_int(cost("gpt-5.4", "priority", 272000, 0, 0, 0, 0), 2 * 272000 * 2500LL, "priority at 272000: 2x");
        is_int(cost("gpt-5.1-codex", "flex", 1000, 1000, 0, 0, 0), (1000 * 1250LL + 1000 * 10000LL) / 2, "flex: 0.5x");
        is_int(cost("gpt-5", "batch", 1000, 0, 0, 0, 0), 1000 * 1250LL / 2, "OpenAI batch: 0.5x");
        is_int(cost("claude-sonnet-4-5", "geo-us", 1000, 0, 0, 0, 0), 1000 * 3300LL, "Anthropic US-only inference: 1.1x");
        is_int(cost("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "", 1000, 0, 0, 0, 0), 1000 * 3300LL,
               "Bedrock eu. profile: 1.1x");
        is_int(cost("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "", 1000, 0, 0, 0, 0), 1000 * 3000LL,
               "Bedrock us. profile: list price");
        is_int(cost("claude-opus-4-8", "fast+geo-us", 1000, 0, 0, 0, 0), 1000 * 5000LL * 2 * 11 / 10,
               "two tier tokens multiply");
        is_int(cost("gemini-2.5-pro", "priority", 1000, 0, 0, 0, 0), -ENOTSUP, "an OpenAI tier on Google: unpriced");
        is_int(cost("gpt-5", "scale", 1000, 0, 0, 0, 0), -ENOTSUP, "an unknown tier: unpriced");

        /* unknown and out of bounds */
        is_int(cost("claude-opus-4-9", "", 1, 1, 0, 0, 0), -ENOENT, "a model not in the table: unpriced");
        is_int(cost("", "", 1, 1, 0, 0, 0), -ENOENT, "no model: unpriced");
        is_int(cost("gpt-5", "", PRICE_TOKEN_MAX + 1, 0, 0, 0, 0), -ERANGE, "absurd token counts refused");
        ok(cost("claude-opus-4", "", PRICE_TOKEN_MAX, PRICE_TOKEN_MAX, PRICE_TOKEN_MAX, PRICE_TOKEN_MAX,
                PRICE_TOKEN_MAX) > 0, "the largest accepted counts do not overflow");
}

static void test_normalise(void)
{
        /* rule: trailing 8-digit date (Anthropic) */
        is_str(norm("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5", "dated Anthropic id");
        is_str(norm("claude-sonnet-4-5-2025092"), "claude-sonnet-4-5-2025092", "7 digits are not a date");
        is_str(norm("claude-sonnet-4-5-19990101"), "claude-sonnet-4-5-19990101", "a date must start 20");
        /* rule: OpenAI dashed date */
        is_str(norm("gpt-5.4-2026-03-05"), "gpt-5.4", "dated OpenAI id");
        is_str(norm("gpt-5.4-2026-03"), "gpt-5.4-2026-03", "half a date stays");
        /* rule: Bedrock */
        is_str(norm("anthropic.claude-sonnet-4-5-20250929-v1:0"), "claude-sonnet-4-5", "Bedrock id");
        is_str(norm("us.anthropic.claude-opus-4-1-20250805-v1:0"), "claude-opus-4-1", "Bedrock us. profile");
        is_str(norm("global.anthropic.claude-haiku-4-5-20251001-v1:0"), "claude-haiku-4-5", "Bedrock global. profile");
        is_str(norm("eu.anthropic.claude-sonnet-4-5-20250929-v1:0"), "claude-sonnet-4-5 [region-eu]",
               "Bedrock eu. profile names its uplift");
        is_str(norm("anthropic.claude-opus-4-6-v1"), "claude-opus-4-6", "Bedrock -v1 without :0");
        is_str(norm("gpt-5-v2"), "gpt-5-v2", "-vN is dropped only from Bedrock ids");
        is_str(norm("eu.claude-sonnet-4-5"), "eu.claude-sonnet-4-5", "a profile prefix needs the vendor prefix");
        is_str(norm("anthropic-claude-opus-4-6"), "anthropic-claude-opus-4-6", "'anthropic-' is not 'anthropic.'");
        /* rule: Vertex @ */
        is_str(norm("claude-opus-4-6@default"), "claude-opus-4-6", "Vertex @default");
        is_str(norm("claude-sonnet-4-5@20250929"), "claude-sonnet-4-5", "Vertex @date");
        /* rule: router paths, Claude dotted versions */
        is_str(norm("anthropic/claude-opus-4.6"), "claude-opus-4-6", "router form with dotted version");
        is_str(norm("openrouter/anthropic/claude-sonnet-4.5"), "claude-sonnet-4-5", "openrouter/ prefix");
        is_str(norm("claude-sonnet-4.5"), "claude-sonnet-4-5", "Copilot CLI's dotted Claude id");
        is_str(norm("claude-haiku-4.5"), "claude-haiku-4-5", "... and another");
        is_str(norm("gpt-4.1"), "gpt-4.1", "Copilot CLI's gpt-4.1 keeps its dot");
        is_str(norm("openai/gpt-5.1-codex"), "gpt-5.1-codex", "openai/ prefix, dots kept");
        is_str(norm("gpt-5.1"), "gpt-5.1", "OpenAI dots are not Claude dots");
        is_str(norm("vertex_ai/claude-opus-4-6@default"), "claude-opus-4-6", "vertex_ai/ and @ together");
        /* rule: case */
        is_str(norm("Claude-Opus-4-6"), "claude-opus-4-6", "upper case");
        /* no fuzzy matching: near-misses stay unknown */
        is_int(cost("claude-opus-4-6", "", 1, 0, 0, 0, 0), 5000, "claude-opus-4-6 is priced");
        is_int(cost("claude-opus-4-6-20260101", "", 1, 0, 0, 0, 0), 5000, "dated opus-4-6 prices as opus-4-6");
        is_int(cost("claude-opus-4", "", 1, 0, 0, 0, 0), 15000, "claude-opus-4 is its own, older price");
        is_int(cost("claude-opus-4-9", "", 1, 0, 0, 0, 0), -ENOENT, "-4-9 does not fall back to -4");
        is_int(cost("claude-opus-4-6x", "", 1, 0, 0, 0, 0), -ENOENT, "-4-6x is not -4-6");
        is_int(cost("gpt-5.4-pro", "", 1, 0, 0, 0, 0), -ENOENT, "gpt-5.4-pro is not gpt-5.4");
        is_int(cost("gpt-5-nano", "", 1, 0, 0, 0, 0), -ENOENT, "gpt-5-nano is not gpt-5");
        is_int(cost("gemini-2.5-flash-lite", "", 1, 0, 0, 0, 0), 100, "flash-lite is its own model, not flash");
        is_int(cost("gemini-2.5-flash-lite-preview-09-2025", "", 1, 0, 0, 0, 0), -ENOENT,
               "a flash-lite preview is not flash-lite");
        is_int(cost("deepseek/deepseek-chat:free", "", 1, 0, 0, 0, 0), -ENOENT, "a router's :free variant is unknown");
        is_str(norm(""), "(error)", "empty id rejected");
}

static void test_apply(void)
{
        struct usage_row r;

        memset(&r, 0, sizeof(r));
        r.flags = ROW_F_TOKENS_KNOWN;
        r.time_ms = T_2026;
        r.input = 1000;
        r.output = 100;
        ROW_SET(r.model, "claude-sonnet-4-5-20250929");
        is_int(pricing_apply_row(T, &r), 1, "a row without cost is priced");
        ok(r.cost_source == COST_COMPUTED && r.cost_nano == 1000 * 3000 + 100 * 15000,
           "computed cost from the table");
        is_str(r.price_source, "table-2026-12-01", "price source names the table");
        is_int(pricing_apply_row(T, &r), 0, "pricing again changes nothing");

        memset(&r, 0, sizeof(r));
        r.flags = ROW_F_TOKENS_KNOWN;
        r.input = 1000;
        r.cost_source = COST_VENDOR;
        r.cost_nano = 0;
        ROW_SET(r.model, "gpt-5");
        is_int(pricing_apply_row(T, &r), 1, "pi's vendor 0 with tokens is re-priced");
        ok(r.cost_source == COST_COMPUTED && r.cost_nano == 1250000, "pi's 0 -> computed");

        ROW_SET(r.model, "mystery-model");
        r.cost_source = COST_VENDOR;
        r.cost_nano = 0;
        pricing_apply_row(T, &r);
        ok(r.cost_source == COST_NONE && r.price_source[0] == 0,
           "pi's 0 for a model we do not know either: unpriced, not $0");

        r.cost_source = COST_VENDOR;
        r.cost_nano = 777;
        ROW_SET(r.model, "gpt-5");
        is_int(pricing_apply_row(T, &r), 0, "a vendor cost is kept");
        ok(r.cost_nano == 777 && r.cost_source == COST_VENDOR, "vendor cost untouched");

        memset(&r, 0, sizeof(r));
        r.cost_source = COST_VENDOR;
        r.cost_nano = 0;
        r.flags = ROW_F_TOKENS_KNOWN;
        ROW_SET(r.model, "gpt-5");
        is_int(pricing_apply_row(T, &r), 0, "vendor 0 for a call without tokens stays 0");

        memset(&r, 0, sizeof(r));
        ROW_SET(r.model, "gpt-5");
        is_int(pricing_apply_row(T, &r), 0, "tokens unknown (PicoClaw turns): left unpriced");
        ok(r.cost_source == COST_NONE, "still COST_NONE");

        struct row_batch b = {0};
        struct usage_row *p;
        row_batch_push(&b, &p);
        p->flags = ROW_F_TOKENS_KNOWN;
        p->output = 10;
        ROW_SET(p->model, "o3");
        pricing_apply_batch(T, &b);
        ok(b.rows[0].cost_source == COST_COMPUTED && b.rows[0].cost_nano == 80000, "batch apply");
        pricing_apply_batch(NULL, &b);
        ok(b.rows[0].cost_nano == 80000, "no table: nothing changes");
        row_batch_free(&b);
}

static int64_t cost_in(struct price_table *t, const char *model, const char *tier, int64_t when,
                       uint64_t in, uint64_t out)
{
        struct price_request q = {.model = model, .tier = tier, .time_ms = when, .input = in, .output = out};
        struct price_quote pq;
        int r = price_compute(t, &q, &pq);
        return r < 0 ? r : pq.cost_nano;
}

static void test_dates_and_parse(void)
{
        static const char text[] =
                "checked 2026-01-02\n"
                "price m-a vendor=v in=1 out=2 until=2026-03-01 source=s\n"
                "price m-a vendor=v in=3 out=4 from=2026-03-01 source=s   # a price change\n"
                "mult v * fast 2 from=2026-02-01 until=2026-04-01 source=s\n";
        struct price_table t = {0};
        char err[256];
        unsigned line = 0;
        int64_t feb = T_2026 + 40 * DAY_MS, mar1 = 1772323200000LL; /* 2026-03-01 */

        is_int(price_table_parse(&t, text, strlen(text), false, &line, err, sizeof(err)), 0, "dated table parses");
        is_int(cost_in(&t, "m-a", "", feb, 1000, 0), 1000 * 1000, "before the change: old price");
        is_int(cost_in(&t, "m-a", "", mar1 - 1, 1000, 0), 1000 * 1000, "until= is exclusive");
        is_int(cost_in(&t, "m-a", "", mar1, 1000, 0), 3000 * 1000, "from= is inclusive");
        is_int(cost_in(&t, "m-a", "fast", T_2026, 1000, 0), -ENOTSUP, "multiplier not yet in effect");
        is_int(cost_in(&t, "m-a", "fast", feb, 1000, 0), 2000 * 1000, "multiplier in effect");
        free(t.entries);
        free(t.mults);

        static const struct { const char *text; unsigned line; const char *why; } bad[] = {
                {"checked 2026-01-02\nprice x vendor=v in=1 out=2 source=s\nprice y in=abc out=1\n", 3, "bad number"},
                {"checked 2026-01-02\n\nprice x vendor=v in=1 out=2 colour=red source=s\n", 3, "unknown key"},
                {"checked 2026-01-02\nprice x vendor=v in=1 source=s\n", 2, "no output price"},
                {"checked 2026-01-02\nprice x vendor=v in=1 out=2 source=s\nprice x vendor=v in=1 out=2 source=s\n", 3, "duplicate"},
                {"checked 2026-02-30\n", 1, "no such date"},
                {"price x vendor=v in=1 out=2 source=s\n", 1, "no checked date"},
                {"checked 2026-01-02\nprice x vendor=v in=0.0000001 out=2 source=s\n", 2, "too many decimals"},
                {"checked 2026-01-02\nmult v * fast two source=s\n", 2, "bad factor"},
                {"checked 2026-01-02\nfrobnicate\n", 2, "unknown entry"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct price_table b = {0};
                line = 0;
                int r = price_table_parse(&b, bad[i].text, strlen(bad[i].text), false, &line, err, sizeof(err));
                ok(r == -EINVAL && line == bad[i].line && err[0], "%s: refused at line %u (%s)", bad[i].why,
                   line, err);
                free(b.entries);
                free(b.mults);
        }
}

/* Size tiers (Qwen): the tier is chosen by one request's prompt (input +
 * cache read + cache write; more than the edge), and every token of that
 * request, output too, is billed at it; an override names its tier. */
static void test_tiers(void)
{
        static const char text[] =
                "checked 2026-01-02\n"
                "price m-t vendor=v in=1 out=5 cache_read=0.2 source=s\n"
                "price m-t vendor=v prompt_above=32000 in=2 out=10 cache_read=0.4 source=s\n"
                "price m-t vendor=v prompt_above=128000 in=3 out=15 cache_read=0.6 source=s\n";
        struct price_table t = {0}, *saved = T;
        char err[256];
        unsigned line = 0;

        is_int(cost("qwen3-coder-plus", "", 20000, 100, 12000, 0, 0), 20000 * 1000LL + 100 * 5000LL + 12000 * 200LL,
               "qwen3-coder-plus at exactly 32000 prompt tokens: the base tier");
        is_int(cost("qwen3-coder-plus", "", 20001, 100, 12000, 0, 0), 20001 * 1800LL + 100 * 9000LL + 12000 * 360LL,
               "at 32001: the whole request, output too, at the 32K-128K tier");
        is_int(cost("qwen3-coder-plus", "", 4000, 10, 124001, 0, 0), 4000 * 3000LL + 10 * 15000LL + 124001 * 600LL,
               "cached tokens count toward the tier (128001: the 128K-256K tier)");
        is_int(cost("qwen3-coder-plus", "", 204809, 47, 614400, 0, 0),
               204809 * 6000LL + 47 * 60000LL + 614400 * 1200LL, "819,209 prompt tokens: the 256K-1M tier");
        is_int(cost("qwen3-max", "", 300000, 10, 0, 0, 0), 300000 * 3000LL + 10 * 15000LL,
               "qwen3-max above its last edge: the highest tier it has");
        is_int(cost("qwen3-coder-flash", "", 40000, 0, 0, 0, 0), 40000 * 500LL, "qwen3-coder-flash 32K-128K");

        is_int(price_table_parse(&t, text, strlen(text), false, &line, err, sizeof(err)), 0, "a tiered table parses");
        T = &t;
        is_int(cost("m-t", "", 32000, 0, 0, 0, 0), 32000 * 1000LL, "tier edges: 32000 is the base");
        is_int(cost("m-t", "", 32001, 0, 0, 0, 0), 32001 * 2000LL, "32001 the second tier");
        is_int(cost("m-t", "", 128001, 1, 0, 0, 0), 128001 * 3000LL + 15000, "128001 the third");
        static const char ovr[] = "price m-t prompt_above=32000 in=1.5\nprice m-t out=4\n";
        is_int(price_table_parse(&t, ovr, strlen(ovr), true, &line, err, sizeof(err)), 0, "an override of one tier");
        is_int(cost("m-t", "", 40000, 10, 0, 0, 0), 40000 * 1500LL + 10 * 10000LL,
               "the named tier changed, its other figures kept");
        is_int(cost("m-t", "", 1000, 10, 0, 0, 0), 1000 * 1000LL + 10 * 4000LL,
               "an override without prompt_above= changes the base tier only");
        is_int(cost("m-t", "", 200000, 10, 0, 0, 0), 200000 * 3000LL + 10 * 15000LL, "... not the others");
        T = saved;
        free(t.entries);
        free(t.mults);

        static const struct { const char *text; const char *why; } bad[] = {
                {"checked 2026-01-02\nprice x vendor=v prompt_above=0 in=1 out=2 source=s\n", "prompt_above=0"},
                {"checked 2026-01-02\nprice x vendor=v prompt_above=lots in=1 out=2 source=s\n", "not a number"},
                {"checked 2026-01-02\nprice x vendor=v prompt_above=5 in=1 out=2 source=s\n"
                 "price x vendor=v prompt_above=5 in=1 out=2 source=s\n", "the same tier twice"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct price_table b = {0};
                int r = price_table_parse(&b, bad[i].text, strlen(bad[i].text), false, &line, err, sizeof(err));
                ok(r == -EINVAL && err[0], "%s: refused (%s)", bad[i].why, err);
                free(b.entries);
                free(b.mults);
        }
}

static void test_override(void)
{
        char *dir = tap_tmpdir(), path[4096];
        struct price_table *t = NULL;
        struct usage_row r;

        pj(path, dir, "prices.conf");
        is_int(price_table_load(path, &t), 0, "missing override: the built-in table");
        ok(!t->override_loaded && !t->override_error[0], "no override, no error");
        uint64_t fp_builtin = t->fingerprint;
        t = price_table_free(t);

        write_file(path, "# negotiated\n"
                         "price claude-sonnet-4-5 in=2.5\n"
                         "price my-local-model in=0 out=0.1\n"
                         "price anthropic/claude-haiku-4.5 out=4\n"
                         "mult anthropic claude-opus-4-5 fast 3\n");
        is_int(price_table_load(path, &t), 0, "override loads");
        ok(t->override_loaded && !t->override_error[0] && t->override_entries == 4,
           "override applied: %u entries", t->override_entries);
        ok(t->fingerprint != fp_builtin, "the fingerprint changes with the override");
        struct price_table *saved = T;
        T = t;
        is_int(cost("claude-sonnet-4-5", "", 1000, 1000, 1000, 0, 0), 1000 * 2500LL + 1000 * 15000LL + 1000 * 300LL,
               "partial override: new input price, other figures inherited");
        is_int(cost("claude-sonnet-4-5", "", 250000, 0, 0, 0, 0), 250000 * 6000LL, "the long card is inherited too");
        is_int(cost("my-local-model", "", 1000, 1000, 1000, 0, 0), 1000 * 100LL + 1000 * 0LL,
               "a new model: cache reads without a price are billed as input");
        is_int(cost("claude-haiku-4-5", "", 0, 1000, 0, 0, 0), 1000 * 4000LL, "an override by a router id applies");
        is_int(cost("claude-opus-4-5", "fast", 1000, 0, 0, 0, 0), 3 * 1000 * 5000LL, "a multiplier from the override");
        memset(&r, 0, sizeof(r));
        r.flags = ROW_F_TOKENS_KNOWN;
        r.input = 10;
        ROW_SET(r.model, "claude-sonnet-4-5");
        pricing_apply_row(T, &r);
        is_str(r.price_source, "override", "rows priced through the override say so");
        ROW_SET(r.model, "claude-opus-4-5");
        pricing_apply_row(T, &r);
        is_str(r.price_source, "table-2026-12-01", "rows of models the override leaves alone: the table");
        T = saved;
        t = price_table_free(t);

        write_file(path, "price claude-sonnet-4-5 in=2.5\n\nprice claude-sonnet-4-5 in=cheap\n");
        is_int(price_table_load(path, &t), 0, "a bad override is not fatal");
        ok(!t->override_loaded && strstr(t->override_error, "line 3") != NULL,
           "the error names the line: %s", t->override_error);
        T = t;
        is_int(cost("claude-sonnet-4-5", "", 1000, 0, 0, 0, 0), 1000 * 3000LL,
               "a bad override is ignored as a whole (its good line 1 too)");
        T = saved;
        ok(t->fingerprint == fp_builtin, "fingerprint of the built-in table alone");
        t = price_table_free(t);

        write_file(path, "price brand-new out=1\n");
        price_table_load(path, &t);
        ok(strstr(t->override_error, "needs in=") != NULL, "a new model needs in= and out=: %s", t->override_error);
        t = price_table_free(t);
        write_file(path, "checked 2027-01-01\n");
        price_table_load(path, &t);
        ok(strstr(t->override_error, "line 1") != NULL, "an override cannot re-date the table");
        t = price_table_free(t);

        pj(path, dir, "");
        price_table_load(dir, &t);
        ok(t->override_error[0] != 0, "a directory as override: reported (%s)", t->override_error);
        t = price_table_free(t);
}

/* Override lines apply in file order: an undated line changes the entries
 * of its model made before it (the built-in one, dated ones), not those
 * made after; a dated line after an undated one starts from nothing. */
static void test_override_order(void)
{
        char *dir = tap_tmpdir(), path[4096];
        struct price_table *t = NULL;
        int64_t mar = 1772323200000LL, jul = mar + 122 * DAY_MS, nov = mar + 245 * DAY_MS;

        pj(path, dir, "prices.conf");
        write_file(path, "price claude-sonnet-4-5 in=4 from=2026-06-01\n"
                         "price claude-sonnet-4-5 out=20\n"
                         "price my-new in=1 out=2\n"
                         "price my-new in=7 out=8 from=2026-06-01\n"
                         "price my-new out=9\n"
                         "price claude-sonnet-4-5 in=6 out=1 from=2026-10-01\n");
        is_int(price_table_load(path, &t), 0, "an ordered override loads");
        ok(t->override_loaded, "... and applies (%s)", t->override_error);
        is_int(cost_in(t, "claude-sonnet-4-5", "", mar, 1000, 1000), 1000 * 3000LL + 1000 * 20000LL,
               "the built-in entry takes the later undated out=20, keeps in=3");
        is_int(cost_in(t, "claude-sonnet-4-5", "", jul, 1000, 1000), 1000 * 4000LL + 1000 * 20000LL,
               "a dated entry made before an undated line takes it too");
        is_int(cost_in(t, "claude-sonnet-4-5", "", nov, 1000, 1000), 1000 * 6000LL + 1000 * 1000LL,
               "a dated entry made after it does not");
        is_int(cost_in(t, "my-new", "", mar, 1000, 1000), 1000 * 1000LL + 1000 * 9000LL,
               "a new model's undated entry takes a later undated line");
        is_int(cost_in(t, "my-new", "", jul, 1000, 1000), 1000 * 7000LL + 1000 * 9000LL,
               "... and so does its dated one");
        t = price_table_free(t);
        write_file(path, "price claude-sonnet-4-5 out=20\nprice claude-sonnet-4-5 in=5 from=2026-09-01\n");
        price_table_load(path, &t);
        ok(strstr(t->override_error, "line 2") && strstr(t->override_error, "needs in= and out="),
           "a dated line after an undated one has no built-in base: %s", t->override_error);
        t = price_table_free(t);
}

/* A big override (a generated catalogue: 31,775 models fill the 1 MiB
 * bound) loads in linear time: it took 6.4 s before, each load blocking
 * the daemon's loop; the bound here is generous. */
static void test_large_override(void)
{
        char *dir = tap_tmpdir(), path[4096], name[64];
        const size_t n = 31775;
        struct price_table *t = NULL;
        size_t cap = n * 40, len = 0;
        char *text = malloc(cap);

        for (size_t i = 0; i < n; i++)
                len += (size_t)snprintf(text + len, cap - len, "price vendor-m%05zu in=1 out=%zu\n", i, 1 + i % 7);
        pj(path, dir, "prices.conf");
        write_file(path, text);
        free(text);
        ok(len <= 1024 * 1024, "the override is %zu bytes (under the 1 MiB bound)", len);
        int64_t t0 = timefmt_mono_ms();
        is_int(price_table_load(path, &t), 0, "a 31,775-entry override loads");
        int64_t ms = timefmt_mono_ms() - t0;
        ok(ms < 2000, "... in linear time: %lld ms (before: quadratic, 6.4 s)", (long long)ms);
        ok(t->override_loaded && t->override_entries == n, "... every entry applied (%u)", t->override_entries);
        bool all = true;
        for (size_t i = 0; i < n; i += 997) {
                snprintf(name, sizeof(name), "vendor-m%05zu", i);
                all &= cost_in(t, name, "", T_2026, 1000, 1000) == 1000 * 1000LL + 1000 * 1000LL * (int64_t)(1 + i % 7);
        }
        ok(all, "... and each prices its own model (through the lookup index)");
        is_int(cost_in(t, "claude-sonnet-4-5", "", T_2026, 1000, 0), 1000 * 3000LL, "built-in models still price");
        is_int(cost_in(t, "vendor-m99999", "", T_2026, 1000, 0), -ENOENT, "a model in neither is unknown");
        t = price_table_free(t);
}

int main(void)
{
        int r = price_table_load(NULL, &T);
        is_int(r, 0, "the built-in table (data/prices.conf) parses");
        if (r < 0) {
                unsigned line = 0;
                char err[256];
                struct price_table t = {0};
                price_table_parse(&t, pricing_builtin_text, strlen(pricing_builtin_text), false, &line, err,
                                  sizeof(err));
                printf("# data/prices.conf line %u: %s\n", line, err);
                return tap_done();
        }
        test_builtin();
        test_rules();
        test_normalise();
        test_apply();
        test_dates_and_parse();
        test_tiers();
        test_override();
        test_override_order();
        test_large_override();
        T = price_table_free(T);
        return tap_done();
}
