/* Pricing one call: the table entry in effect for its (canonical) model,
 * time and request size (a size tier), the whole-request long-context card,
 * cache writes by lifetime, the tier/region multipliers; and applying that
 * to rows at ingest. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pricing/pricing.h"

typedef unsigned __int128 u128;

static bool in_effect(int64_t from, int64_t until, int64_t t)
{
        return from <= t && t < until;
}

/* The entry for model at time t and a request of prompt tokens: the
 * highest size tier the prompt is above (the base entry, tier 0, for any
 * size), then an override beats the built-in table, then the latest
 * start. */
static const struct price_entry *better(const struct price_entry *best, const struct price_entry *e,
                                        int64_t time_ms, uint64_t prompt)
{
        if (!in_effect(e->from_ms, e->until_ms, time_ms) || (e->prompt_above && prompt <= e->prompt_above))
                return best;
        if (!best || e->prompt_above > best->prompt_above)
                return e;
        if (e->prompt_above == best->prompt_above &&
            ((e->overridden && !best->overridden) ||
             (e->overridden == best->overridden && e->from_ms > best->from_ms)))
                return e;
        return best;
}

static const struct price_entry *find_entry(const struct price_table *t, const char *model,
                                            int64_t time_ms, uint64_t prompt)
{
        const struct price_entry *best = NULL;

        if (t->by_model && t->n_by_model == t->n_entries) {
                /* the model's run in the index, in table order */
                size_t lo = 0, hi = t->n_by_model;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (strcmp(t->entries[t->by_model[mid]].model, model) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                for (; lo < t->n_by_model && strcmp(t->entries[t->by_model[lo]].model, model) == 0; lo++)
                        best = better(best, &t->entries[t->by_model[lo]], time_ms, prompt);
                return best;
        }
        for (size_t i = 0; i < t->n_entries; i++)
                if (strcmp(t->entries[i].model, model) == 0)
                        best = better(best, &t->entries[i], time_ms, prompt);
        return best;
}

/* The multiplier for one tier token: override first, then the model's own
 * row before a "*" row. NULL: nobody names it. */
static const struct price_mult *find_mult(const struct price_table *t, const struct price_entry *e,
                                          const char *tier, size_t tier_len, int64_t time_ms)
{
        const struct price_mult *best = NULL;
        int best_rank = -1;
        for (size_t i = 0; i < t->n_mults; i++) {
                const struct price_mult *m = &t->mults[i];
                bool exact = strcmp(m->model, e->model) == 0;
                if (strcmp(m->vendor, e->vendor) != 0 || (!exact && strcmp(m->model, "*") != 0) ||
                    strlen(m->tier) != tier_len || strncmp(m->tier, tier, tier_len) != 0 ||
                    !in_effect(m->from_ms, m->until_ms, time_ms))
                        continue;
                int rank = (m->overridden ? 2 : 0) + (exact ? 1 : 0);
                if (rank > best_rank) {
                        best = m;
                        best_rank = rank;
                }
        }
        return best;
}

/* Tier words that mean the standard price. */
static bool is_standard(const char *w, size_t n)
{
        static const char *const std[] = {"standard", "default", "auto", NULL};
        for (size_t i = 0; std[i]; i++)
                if (strlen(std[i]) == n && strncmp(std[i], w, n) == 0)
                        return true;
        return n == 0;
}

/* A card's price for a class, with the documented fallbacks: a cache write
 * without its own price is billed as input, a 1-hour write without one as
 * a 5-minute write; a cache read without one as input. */
static int64_t card_price(const struct price_card *c, enum price_class k)
{
        int64_t p = c->pico[k];
        if (p != PRICE_NONE)
                return p;
        if (k == PC_CW1H && c->pico[PC_CW5M] != PRICE_NONE)
                return c->pico[PC_CW5M];
        return c->pico[PC_INPUT];
}

int price_compute(const struct price_table *t, const struct price_request *q,
                  struct price_quote *ret_quote)
{
        char model[ROW_MODEL_MAX], region[ROW_TIER_MAX];
        const struct price_entry *e;
        const struct price_card *card;
        struct price_quote quote = {0};
        uint64_t prompt;
        u128 pico = 0, div = 1000; /* pico -> nano */
        const char *tier = q->tier ? q->tier : "";

        if (!t || price_normalise_id(q->model, model, sizeof(model), region, sizeof(region)) < 0)
                return -ENOENT;
        if (q->input > PRICE_TOKEN_MAX || q->output > PRICE_TOKEN_MAX ||
            q->cache_read > PRICE_TOKEN_MAX || q->cache_write > PRICE_TOKEN_MAX ||
            q->prompt_max > 4 * PRICE_TOKEN_MAX)
                return -ERANGE;
        if (q->cache_write_1h > q->cache_write)
                return -EINVAL;
        prompt = q->prompt_max ? q->prompt_max : q->input + q->cache_read + q->cache_write;
        e = find_entry(t, model, q->time_ms, prompt);
        if (!e)
                return -ENOENT;
        /* the long card prices every token of a request whose prompt is MORE
         * than the threshold (exactly at it: the base card) */
        quote.long_context = e->long_above && prompt > e->long_above;
        card = quote.long_context ? &e->lng : &e->base;
        pico += (u128)q->input * (uint64_t)card_price(card, PC_INPUT);
        pico += (u128)q->output * (uint64_t)card_price(card, PC_OUTPUT);
        pico += (u128)q->cache_read * (uint64_t)card_price(card, PC_CACHE_READ);
        pico += (u128)(q->cache_write - q->cache_write_1h) * (uint64_t)card_price(card, PC_CW5M);
        pico += (u128)q->cache_write_1h * (uint64_t)card_price(card, PC_CW1H);
        quote.overridden = e->overridden;
        quote.permille = 1000;

        /* every tier token must be named by a multiplier in effect */
        char tokens[ROW_TIER_MAX * 2];
        snprintf(tokens, sizeof(tokens), "%s%s%s", tier, *tier && *region ? "+" : "", region);
        for (const char *w = tokens; *w;) {
                size_t n = strcspn(w, "+");
                if (!is_standard(w, n)) {
                        const struct price_mult *m = find_mult(t, e, w, n, q->time_ms);
                        if (!m)
                                return -ENOTSUP;
                        if (!m->max_prompt || prompt <= m->max_prompt) {
                                pico *= m->permille;
                                div *= 1000;
                                quote.permille = (uint32_t)((uint64_t)quote.permille * m->permille / 1000);
                                quote.overridden |= m->overridden;
                        }
                }
                w += n;
                if (*w == '+')
                        w++;
        }
        /* round half up to a nano-USD */
        u128 nano = (pico + div / 2) / div;
        if (nano > (u128)INT64_MAX)
                return -ERANGE;
        quote.cost_nano = (int64_t)nano;
        quote.entry = e;
        *ret_quote = quote;
        return 0;
}

int pricing_apply_row(const struct price_table *t, struct usage_row *row)
{
        struct price_quote pq;
        bool any_tokens = row->input || row->output || row->cache_read || row->cache_write;
        int64_t old_cost = row->cost_nano;
        uint8_t old_src = row->cost_source;
        char old_ps[ROW_PRICE_SRC_MAX];

        if (!t || !(row->flags & ROW_F_TOKENS_KNOWN))
                return 0;
        /* the harness's own figure wins, except a 0 for a call with tokens
         * (pi writes 0 for a model missing from its catalogue) unless the
         * cost is counted in another row */
        if (row->cost_source == COST_VENDOR &&
            (!(row->cost_nano == 0 && any_tokens) || (row->flags & ROW_F_COST_ELSEWHERE)))
                return 0;
        memcpy(old_ps, row->price_source, sizeof(old_ps));
        struct price_request q = {
                .model = row->model,
                .tier = row->tier,
                .time_ms = row->time_ms,
                .input = row->input,
                .output = row->output,
                .cache_read = row->cache_read,
                .cache_write = row->cache_write,
                .cache_write_1h = row->cache_write_1h,
        };
        if (price_compute(t, &q, &pq) == 0) {
                row->cost_nano = pq.cost_nano;
                row->cost_source = COST_COMPUTED;
                snprintf(row->price_source, sizeof(row->price_source), "%s",
                         pq.overridden ? "override" : t->label);
        } else {
                /* unpriced, never $0 */
                row->cost_nano = 0;
                row->cost_source = COST_NONE;
                row->price_source[0] = 0;
        }
        return row->cost_nano != old_cost || row->cost_source != old_src ||
               strcmp(row->price_source, old_ps) != 0;
}

void pricing_apply_batch(const struct price_table *t, struct row_batch *b)
{
        if (!t)
                return;
        for (size_t i = 0; i < b->n; i++)
                (void)pricing_apply_row(t, &b->rows[i]);
}
