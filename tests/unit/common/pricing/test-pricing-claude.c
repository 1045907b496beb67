/* The price engine against reality: Claude Code 2.1.328 writes its own
 * computed cost per session and model (cost-state lines, cumulative
 * modelUsage with costUSD); the engine must give the same figure for the
 * same tokens, to the micro-dollar ($AM_SAMPLES, default ../shared/samples,
 * realgen/claude-code-2.1.328; skipped when absent). */
#include <errno.h>
#include <glob.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pricing/pricing.h"
#include "tap.h"
#include "testutil.h"

#define CORPUS "realgen/claude-code-2.1.328"

static struct price_table *T;

/* The largest prompt (input + cache read + cache write) of any single call
 * of a model, from the fake server's record of every answered call: the
 * cost-state sums are priced as short requests only if none was long. */
struct maxes {
        char model[16][ROW_MODEL_MAX];
        uint64_t prompt[16];
        int n;
};

static void max_cb(struct json_object *o, void *u)
{
        struct maxes *m = u;
        struct json_object *us, *mo;
        const char *model;
        int i;

        if (!o || !json_object_object_get_ex(o, "usage", &us) || !json_object_object_get_ex(o, "model", &mo))
                return;
        model = json_object_get_string(mo);
        uint64_t p = (uint64_t)(jint(us, "input", 0) + jint(us, "cache_read", 0) + jint(us, "cache_write", 0));
        for (i = 0; i < m->n && strcmp(m->model[i], model) != 0; i++)
                ;
        if (i == m->n) {
                if (m->n == 16)
                        return;
                snprintf(m->model[m->n++], ROW_MODEL_MAX, "%s", model);
                m->prompt[i] = 0;
        }
        if (p > m->prompt[i])
                m->prompt[i] = p;
}

static uint64_t max_prompt(const struct maxes *m, const char *model)
{
        for (int i = 0; i < m->n; i++)
                if (strcmp(m->model[i], model) == 0)
                        return m->prompt[i];
        return 0;
}

struct check {
        const struct maxes *maxes;
        const char *file;
        int lines, entries, equal, unequal, unpriced, one_hour, totals_equal;
        int64_t line_nano; /* engine cost of the current line's models */
        char last_session[ROW_SESSION_MAX];
        /* the last cost-state of the file, per model: what each session ends at */
        struct json_object *last;
};

static void check_usage(struct check *c, const char *session, const char *model, struct json_object *mu,
                        int64_t when_ms)
{
        struct json_object *cv;
        struct price_quote q;
        uint64_t cw = (uint64_t)jint(mu, "cacheCreationInputTokens", 0),
                 cw1h = (uint64_t)jint(mu, "cacheCreationEphemeral1hInputTokens", 0);
        struct price_request req = {
                .model = model,
                .tier = "",
                .time_ms = when_ms,
                .input = (uint64_t)jint(mu, "inputTokens", 0),
                .output = (uint64_t)jint(mu, "outputTokens", 0), /* thinking included */
                .cache_read = (uint64_t)jint(mu, "cacheReadInputTokens", 0),
                .cache_write = cw,
                .cache_write_1h = cw1h,
                .prompt_max = max_prompt(c->maxes, model),
        };
        double usd;
        int r;

        if (!json_object_object_get_ex(mu, "costUSD", &cv))
                return;
        usd = json_object_get_double(cv);
        c->entries++;
        c->one_hour += cw1h > 0;
        r = price_compute(T, &req, &q);
        if (r < 0) {
                c->unpriced++;
                printf("# %s %s: engine cannot price it (%s)\n", session, model, strerror(-r));
                return;
        }
        if (q.long_context)
                printf("# %s %s: a call over the long-context threshold\n", session, model);
        c->line_nano += q.cost_nano;
        if ((q.cost_nano + 500) / 1000 == llround(usd * 1e6)) {
                c->equal++;
        } else {
                c->unequal++;
                printf("# %s %s: Claude Code %.7f, engine %.9f\n", session, model, usd,
                       (double)q.cost_nano / 1e9);
        }
}

static void line_cb(struct json_object *o, void *u)
{
        struct check *c = u;
        struct json_object *t, *mu, *sid, *st;

        if (!o || !json_object_object_get_ex(o, "type", &t) ||
            strcmp(json_object_get_string(t), "cost-state") != 0 ||
            !json_object_object_get_ex(o, "modelUsage", &mu))
                return;
        c->lines++;
        c->line_nano = 0;
        json_object_object_get_ex(o, "sessionId", &sid);
        json_object_object_get_ex(o, "startTime", &st);
        json_object_object_foreach(mu, model, usage)
                check_usage(c, sid ? json_object_get_string(sid) : "?", model, usage,
                            st ? json_object_get_int64(st) : 0);
        /* the session's total over its models */
        if (json_object_object_get_ex(o, "totalCostUSD", &t)) {
                if ((c->line_nano + 500) / 1000 == llround(json_object_get_double(t) * 1e6))
                        c->totals_equal++;
                else
                        printf("# %s: totalCostUSD %.7f, engine %.9f\n", sid ? json_object_get_string(sid) : "?",
                               json_object_get_double(t), (double)c->line_nano / 1e9);
        }
}

int main(void)
{
        const char *samples = getenv("AM_SAMPLES");
        char dir[PATH_MAX], pattern[PATH_MAX + 64];
        struct maxes maxes = {0};
        struct check c = {.maxes = &maxes};
        struct stat sb;
        glob_t g = {0};

        if (!samples || !*samples)
                samples = "../shared/samples";
        snprintf(dir, sizeof(dir), "%s/" CORPUS, samples);
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                printf("1..0 # SKIP no Claude Code samples at %s\n", dir);
                return 0;
        }
        is_int(price_table_load(NULL, &T), 0, "built-in table");
        snprintf(pattern, sizeof(pattern), "%s/truth-calls.jsonl", dir);
        json_lines(pattern, max_cb, &maxes);
        ok(maxes.n >= 3, "per-call sizes of %d models from truth-calls.jsonl", maxes.n);
        for (int i = 0; i < maxes.n; i++) {
                struct price_request q = {.model = maxes.model[i], .input = maxes.prompt[i]};
                struct price_quote pq;
                ok(price_compute(T, &q, &pq) == 0 && !pq.long_context,
                   "%s: largest call %llu tokens, under its long-context threshold", maxes.model[i],
                   (unsigned long long)maxes.prompt[i]);
        }
        snprintf(pattern, sizeof(pattern), "%s/claude-config/projects/*/*.jsonl", dir);
        glob(pattern, 0, NULL, &g);
        snprintf(pattern, sizeof(pattern), "%s/claude-config/projects/*/*/subagents/*.jsonl", dir);
        glob(pattern, GLOB_APPEND, NULL, &g);
        ok(g.gl_pathc >= 8, "%zu transcripts", g.gl_pathc);
        for (size_t i = 0; i < g.gl_pathc; i++)
                json_lines(g.gl_pathv[i], line_cb, &c);
        globfree(&g);
        ok(c.lines >= 13, "%d cost-state lines", c.lines);
        ok(c.entries >= 12, "%d (session, model) figures to check", c.entries);
        is_int(c.totals_equal, c.lines, "every session's totalCostUSD equals the engine's sum over its models");
        is_int(c.unpriced, 0, "the engine prices every model Claude Code priced");
        is_int(c.unequal, 0, "every figure equals Claude Code's own cost to the micro-dollar");
        ok(c.equal == c.entries && c.equal > 0, "%d of %d equal", c.equal, c.entries);
        ok(c.one_hour > 0, "%d figures include 1-hour cache writes (priced at CW1h)", c.one_hour);
        T = price_table_free(T);
        return tap_done();
}
