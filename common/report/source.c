/* The ledger as a report source (report/build.h): rollups, rows, sessions
 * and tool calls read from the LMDB ledger, handed to the builder one by
 * one (party always "": a ledger is one machine's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/source.h"

struct pass {
        const struct report_query *q;
        const struct report_range *rg;
        report_item_fn item;
        report_session_fn session;
        report_calls_fn calls;
        void *u;
        struct ledger *l;
        struct usage_row *row; /* tool calls: the row that paid for one */
};

void report_sums_add_row(struct usage_sums *s, const struct usage_row *r, enum report_cost mode)
{
        usage_sums_add_row(s, r, +1);
        if (mode == REPORT_COST_VENDOR && r->cost_source == COST_COMPUTED) {
                s->cost_nano = (int64_t)((uint64_t)s->cost_nano - (uint64_t)r->cost_nano);
                s->priced_events--;
                s->computed_events--;
        }
}

static int rollup_fn(const struct rollup_entry *e, void *u)
{
        struct pass *p = u;
        struct report_item it = {
                .first_ms = e->bucket_ms, .last_ms = e->bucket_ms, .tool = e->tool,
                .provider = e->provider, .model = e->model, .project = "", .session = "",
                .party = "", .sums = e->sums,
        };
        return p->item(&it, p->u);
}

static int ledger_rollups(void *ctx, const struct report_query *q, int64_t from_ms, int64_t until_ms,
                          report_item_fn cb, void *u)
{
        struct pass p = { .q = q, .item = cb, .u = u };
        return ledger_foreach_rollup(ctx, from_ms, until_ms, rollup_fn, &p);
}

static int row_fn(const struct usage_row *r, void *u)
{
        struct pass *p = u;
        struct report_item it = {
                .first_ms = r->time_ms, .last_ms = r->time_ms, .tool = r->tool,
                .provider = r->provider, .model = r->model, .project = r->project,
                .session = r->session, .party = "",
        };
        report_sums_add_row(&it.sums, r, p->q->cost);
        return p->item(&it, p->u);
}

static int ledger_rows(void *ctx, const struct report_query *q, report_item_fn cb, void *u)
{
        struct pass p = { .q = q, .item = cb, .u = u };
        return ledger_foreach_row(ctx, row_fn, &p);
}

static int session_fn(const struct session_entry *s, void *u)
{
        struct pass *p = u;
        return p->session(s, "", p->u);
}

static int ledger_sessions(void *ctx, const struct report_query *q, report_session_fn cb, void *u)
{
        struct pass p = { .q = q, .session = cb, .u = u };
        return ledger_foreach_session(ctx, session_fn, &p);
}

static int activity_fn(const struct activity_entry *a, void *u)
{
        struct pass *p = u;
        struct report_calls c = { .tool = a->tool, .name = a->name, .party = "", .calls = 1 };
        int r;

        if (!report_harness_ok(p->q, a->tool) || a->time_ms < p->rg->since_ms ||
            a->time_ms >= p->rg->until_ms)
                return 0;
        if (!p->q->calls_only || report_query_filtered(p->q)) {
                /* a nested read txn: allowed, the ledger env is MDB_NOTLS */
                r = ledger_get_row(p->l, &a->usage_key, p->row);
                if (r < 0 && r != -ENOENT)
                        return r;
                /* a --session/--project filter: the paying row says whose call it was */
                if (report_query_filtered(p->q) &&
                    (r == -ENOENT || !report_row_ok(p->q, a->tool, p->row->session, p->row->project)))
                        return 0;
                if (!p->q->calls_only && r == 0 && p->row->cost_source != COST_NONE &&
                    !(p->q->cost == REPORT_COST_VENDOR && p->row->cost_source == COST_COMPUTED)) {
                        c.priced_calls = 1;
                        c.share_nano = (double)p->row->cost_nano /
                                       (double)(p->row->n_calls ? p->row->n_calls : 1);
                }
        }
        return p->calls(&c, p->u);
}

static int ledger_calls(void *ctx, const struct report_query *q, const struct report_range *rg,
                        report_calls_fn cb, void *u)
{
        struct pass p = { .q = q, .rg = rg, .calls = cb, .u = u, .l = ctx };
        int r;

        if ((!q->calls_only || report_query_filtered(q)) && !(p.row = malloc(sizeof(*p.row))))
                return -ENOMEM;
        r = ledger_foreach_activity(ctx, activity_fn, &p);
        free(p.row);
        return r;
}

void report_source_ledger(struct ledger *l, struct report_source *ret)
{
        *ret = (struct report_source){
                .rollups = ledger_rollups, .rows = ledger_rows, .sessions = ledger_sessions,
                .calls = ledger_calls, .ctx = l, .ledger = l,
        };
}
