/* Blocks from the usage rows: collect (harness, time, sums) per row, sort
 * by harness and time, sweep windows of five hours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/blocks.h"
#include "timefmt.h"

#define MAX_TOOLS 1024 /* (harness, party) pairs: per machine or user in team reports */

struct ev {
        int64_t time_ms;
        uint16_t tool;
        struct usage_sums sums;
};

/* A block sequence: one harness (of one machine or user) */
struct track {
        char tool[ROW_TOOL_MAX];
        char party[REPORT_PARTY_MAX];
};

struct collect {
        const struct report_query *q;
        const struct report_range *rg;
        struct track *tools;
        size_t n_tools, last;
        struct ev *v;
        size_t n, cap;
};

static int tool_index(struct collect *c, const char *tool, const char *party)
{
        if (c->last < c->n_tools && strcmp(c->tools[c->last].tool, tool) == 0 &&
            strcmp(c->tools[c->last].party, party) == 0)
                return (int)c->last;
        for (size_t i = 0; i < c->n_tools; i++)
                if (strcmp(c->tools[i].tool, tool) == 0 && strcmp(c->tools[i].party, party) == 0)
                        return (int)(c->last = i);
        if (c->n_tools == MAX_TOOLS)
                return -E2BIG;
        if (!c->tools && !(c->tools = calloc(MAX_TOOLS, sizeof(*c->tools))))
                return -ENOMEM;
        snprintf(c->tools[c->n_tools].tool, ROW_TOOL_MAX, "%s", tool);
        snprintf(c->tools[c->n_tools].party, REPORT_PARTY_MAX, "%s", party);
        return (int)(c->last = c->n_tools++);
}

static int row_cb(const struct report_item *r, void *u)
{
        struct collect *c = u;
        int t;

        if (!report_row_ok(c->q, r->tool, r->session, r->project) || r->first_ms < c->rg->since_ms ||
            r->first_ms >= c->rg->until_ms)
                return 0;
        t = tool_index(c, r->tool, r->party);
        if (t < 0)
                return t;
        if (c->n == c->cap) {
                size_t ncap = c->cap ? c->cap * 2 : 1024;
                struct ev *nv = realloc(c->v, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                c->v = nv;
                c->cap = ncap;
        }
        struct ev *e = &c->v[c->n++];
        memset(e, 0, sizeof(*e));
        e->time_ms = r->first_ms;
        e->tool = (uint16_t)t;
        e->sums = r->sums;
        return 0;
}

static const struct collect *sort_ctx;

static int ev_cmp(const void *a, const void *b)
{
        const struct ev *x = a, *y = b;
        const struct track *tx = &sort_ctx->tools[x->tool], *ty = &sort_ctx->tools[y->tool];
        int c = strcmp(tx->party, ty->party);
        if (!c)
                c = strcmp(tx->tool, ty->tool);
        if (c)
                return c;
        return x->time_ms < y->time_ms ? -1 : x->time_ms > y->time_ms;
}

static int push(struct report_result *res, size_t *cap, const struct track *tr, int64_t start)
{
        const char *tool = tr->tool;
        if (res->n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 32;
                struct report_entry *nv = realloc(res->rows, ncap * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                res->rows = nv;
                *cap = ncap;
        }
        struct report_entry *e = &res->rows[res->n++];
        char t[32];
        memset(e, 0, sizeof(*e));
        timefmt_format_utc(start, t);
        snprintf(e->key, sizeof(e->key), "%s", t);
        snprintf(e->group, sizeof(e->group), "%s", tool);
        snprintf(e->harness, sizeof(e->harness), "%s", tool);
        snprintf(e->party, sizeof(e->party), "%s", tr->party);
        e->first_ms = e->last_ms = start;
        return 0;
}

static int collect_from(const struct report_source *src, const struct report_query *q,
                        const struct report_range *rg, struct report_result *res)
{
        struct collect c = {.q = q, .rg = rg};
        size_t cap = res->n;
        int r = src->rows(src->ctx, q, row_cb, &c);

        if (r < 0) {
                free(c.v);
                free(c.tools);
                return r;
        }
        sort_ctx = &c;
        if (c.n)
                qsort(c.v, c.n, sizeof(*c.v), ev_cmp);
        sort_ctx = NULL;
        for (size_t i = 0; i < c.n && r >= 0; i++) {
                const struct ev *e = &c.v[i];
                const struct track *tr = &c.tools[e->tool];
                struct report_entry *b = res->n ? &res->rows[res->n - 1] : NULL;
                if (!b || strcmp(b->harness, tr->tool) != 0 || strcmp(b->party, tr->party) != 0 ||
                    report_block_opens(true, b->first_ms, e->time_ms)) {
                        r = push(res, &cap, tr, e->time_ms);
                        if (r < 0)
                                break;
                        b = &res->rows[res->n - 1];
                }
                if (r >= 0) {
                        usage_sums_add(&b->sums, &e->sums);
                        b->last_ms = e->time_ms;
                }
        }
        free(c.v);
        free(c.tools);
        return r;
}

int report_blocks_collect(struct ledger *l, const struct report_query *q,
                          const struct report_range *rg, struct report_result *res)
{
        struct report_source src;
        report_source_ledger(l, &src);
        return collect_from(&src, q, rg, res);
}

int report_blocks_build(struct ledger *l, const struct report_query *q,
                        struct report_result *ret_result, const char **ret_error)
{
        struct report_source src;
        report_source_ledger(l, &src);
        return report_blocks_build_from(&src, q, ret_result, ret_error);
}

int report_blocks_build_from(const struct report_source *src, const struct report_query *q,
                             struct report_result *ret_result, const char **ret_error)
{
        struct report_result res = {0};
        struct report_range rg;
        int r = report_query_range(q, &rg, ret_error);

        if (r < 0)
                return r;
        r = collect_from(src, q, &rg, &res);
        if (r < 0) {
                free(res.rows);
                return report_fail(ret_error, r, "reading the %s: %s",
                                   src->ledger ? "ledger" : "team server", strerror(-r));
        }
        report_result_finish(q, res.rows, res.n, ret_result);
        return 0;
}

bool report_block_live(const struct report_entry *e, int64_t now_ms, struct block_live *ret)
{
        int64_t end = e->first_ms + REPORT_BLOCK_MS;
        struct block_live b = {0};
        const struct usage_sums *s = &e->sums;

        if (now_ms < e->first_ms || now_ms >= end)
                return false;
        b.elapsed_ms = now_ms - e->first_ms;
        b.remaining_ms = end - now_ms;
        /* at least a minute: a block that just began has no meaningful rate */
        int64_t div = b.elapsed_ms < 60000 ? 60000 : b.elapsed_ms;
        b.burn_nano_per_hour = (int64_t)((__int128)s->cost_nano * 3600000 / div);
        b.tokens_per_hour = (uint64_t)((unsigned __int128)(s->input + s->output + s->cache_read +
                                                           s->cache_write) * 3600000 / (uint64_t)div);
        b.projected_nano = s->cost_nano + (int64_t)((__int128)b.burn_nano_per_hour * b.remaining_ms / 3600000);
        *ret = b;
        return true;
}

struct recent {
        const char *tool;
        struct report_entry e;
        bool have;
};

static int recent_cb(const struct rollup_entry *r, void *u)
{
        struct recent *c = u;

        if (strcmp(r->tool, c->tool) != 0 || r->sums.events == 0)
                return 0;
        if (report_block_opens(c->have, c->e.first_ms, r->bucket_ms)) {
                memset(&c->e, 0, sizeof(c->e));
                c->e.first_ms = r->bucket_ms;
                c->have = true;
        }
        usage_sums_add(&c->e.sums, &r->sums);
        c->e.last_ms = r->bucket_ms;
        return 0;
}

int report_block_recent(struct ledger *l, const char *tool, int64_t now_ms,
                        struct report_entry *ret_entry)
{
        struct recent c = {.tool = tool};
        char t[32];
        int r = ledger_foreach_rollup(l, now_ms - 24 * 3600 * 1000LL, now_ms + 1, recent_cb, &c);

        if (r < 0)
                return r;
        if (!c.have)
                return -ENOENT;
        timefmt_format_utc(c.e.first_ms, t);
        snprintf(c.e.key, sizeof(c.e.key), "%s", t);
        snprintf(c.e.harness, sizeof(c.e.harness), "%s", tool);
        snprintf(c.e.group, sizeof(c.e.group), "%s", tool);
        *ret_entry = c.e;
        return 0;
}
