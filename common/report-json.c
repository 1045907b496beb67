/* Report JSON: the builder's rows of sums as the report object, one usage
 * row as a tail event; NULL never shown as 0. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "report-blocks.h"
#include "report-json.h"
#include "row.h"
#include "timefmt.h"

static void add(json_object *o, const char *k, json_object *v)
{
        json_object_object_add(o, k, v);
}

json_object *report_money_json(int64_t nano)
{
        char buf[40];
        uint64_t a = nano < 0 ? -(uint64_t)nano : (uint64_t)nano;
        uint64_t micro = (a + 500) / 1000;
        snprintf(buf, sizeof(buf), "%s%llu.%06llu", nano < 0 ? "-" : "",
                 (unsigned long long)(micro / 1000000), (unsigned long long)(micro % 1000000));
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static json_object *share_json(double nano)
{
        return report_money_json((int64_t)llround(nano));
}

static json_object *tokens_json(uint64_t v, bool known)
{
        return known ? json_object_new_int64((int64_t)v) : NULL;
}

/* The six token fields of a row or a sum, all null when not known. */
static void tokens_add(json_object *o, uint64_t input, uint64_t output, uint64_t cache_read,
                       uint64_t cache_write, uint64_t reasoning, uint64_t total, bool known)
{
        add(o, "input_tokens", tokens_json(input, known));
        add(o, "output_tokens", tokens_json(output, known));
        add(o, "cache_read_tokens", tokens_json(cache_read, known));
        add(o, "cache_write_tokens", tokens_json(cache_write, known));
        add(o, "reasoning_tokens", tokens_json(reasoning, known));
        add(o, "total_tokens", tokens_json(total, known));
}

const char *report_sums_cost_source(const struct usage_sums *s)
{
        if (!s->priced_events)
                return NULL;
        return s->computed_events == 0                 ? "vendor-reported"
               : s->computed_events == s->priced_events ? "computed"
                                                        : "mixed";
}

void report_sums_json(json_object *o, const struct usage_sums *s)
{
        const char *src = report_sums_cost_source(s);

        tokens_add(o, s->input, s->output, s->cache_read, s->cache_write, s->reasoning, s->total,
                   s->token_events > 0);
        add(o, "cost_usd", s->priced_events ? report_money_json(s->cost_nano) : NULL);
        add(o, "cost_source", src ? json_object_new_string(src) : NULL);
        add(o, "unpriced_events", json_object_new_int64((int64_t)(s->events - s->priced_events)));
        add(o, "events", json_object_new_int64((int64_t)s->events));
        add(o, "tool_calls", json_object_new_int64((int64_t)s->calls));
}

static json_object *str_or_null(const char *s)
{
        return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *time_json(int64_t ms)
{
        char buf[32];
        timefmt_format_utc(ms, buf);
        return json_object_new_string(buf);
}

json_object *report_row_json(const struct usage_row *r)
{
        json_object *o = json_object_new_object(), *calls = json_object_new_array();
        char hex[2 * ROW_KEY_SIZE + 1];

        if (!o || !calls) {
                json_object_put(o);
                json_object_put(calls);
                return NULL;
        }
        row_key_hex(&r->key, hex);
        add(o, "key", json_object_new_string(hex));
        add(o, "harness", json_object_new_string(r->tool));
        add(o, "session", json_object_new_string(r->session));
        add(o, "project", json_object_new_string(r->project));
        add(o, "provider", json_object_new_string(r->provider));
        add(o, "model", json_object_new_string(r->model));
        if (r->model_alias[0])
                add(o, "model_alias", json_object_new_string(r->model_alias));
        add(o, "kind", json_object_new_string(row_kind_name(r->kind)));
        add(o, "time", time_json(r->time_ms));
        add(o, "sidechain", json_object_new_boolean(!!(r->flags & ROW_F_SIDECHAIN)));
        tokens_add(o, r->input, r->output, r->cache_read, r->cache_write, r->reasoning, r->total,
                   r->flags & ROW_F_TOKENS_KNOWN);
        add(o, "cost_usd", r->cost_source != COST_NONE ? report_money_json(r->cost_nano) : NULL);
        add(o, "cost_source",
            r->cost_source != COST_NONE ? json_object_new_string(cost_source_name(r->cost_source))
                                        : NULL);
        for (uint32_t i = 0; i < r->n_calls && i < ROW_CALLS_MAX; i++)
                json_object_array_add(calls, json_object_new_string(r->calls[i].name));
        add(o, "tool_calls", calls);
        return o;
}

static json_object *local_zone_json(void)
{
        const char *tz = getenv("TZ");
        char buf[PATH_MAX];
        ssize_t n;

        if (tz && *tz)
                return json_object_new_string(tz[0] == ':' ? tz + 1 : tz);
        n = readlink("/etc/localtime", buf, sizeof(buf) - 1);
        if (n > 0) {
                const char *z;
                buf[n] = 0;
                z = strstr(buf, "zoneinfo/");
                if (z)
                        return json_object_new_string(z + 9);
        }
        return json_object_new_string("localtime");
}

static int64_t now_of(const struct report_query *q)
{
        struct timespec ts;
        if (q->now_ms)
                return q->now_ms;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_object *entry_json(const struct report_query *q, const struct report_entry *e)
{
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add(o, "key", json_object_new_string(e->key));
        if (q->kind == REPORT_WEEKLY && report_week_start(q) == 1) {
                char w[16];
                report_iso_week(e->key, w);
                add(o, "iso_week", json_object_new_string(w));
        }
        if (q->kind == REPORT_PROJECT)
                add(o, "project", json_object_new_string(e->key));
        if (q->breakdown != REPORT_BREAKDOWN_NONE)
                add(o, "harness", json_object_new_string(e->harness));
        if (q->breakdown == REPORT_BREAKDOWN_MODEL) {
                add(o, "provider", json_object_new_string(e->provider));
                add(o, "model", json_object_new_string(e->model));
        }
        switch (q->kind) {
        case REPORT_SESSION:
                add(o, "harness", json_object_new_string(e->harness));
                add(o, "session", json_object_new_string(e->session));
                add(o, "project", json_object_new_string(e->project));
                add(o, "model", json_object_new_string(e->model));
                add(o, "first", time_json(e->first_ms));
                add(o, "last", time_json(e->last_ms));
                break;
        case REPORT_TOOL:
                add(o, "harness", json_object_new_string(e->harness));
                add(o, "tool", json_object_new_string(e->key));
                add(o, "calls", json_object_new_int64((int64_t)e->calls));
                add(o, "cost_share_usd", e->priced_calls ? share_json(e->share_nano) : NULL);
                return o;
        case REPORT_BLOCKS: {
                struct block_live b;
                add(o, "harness", json_object_new_string(e->harness));
                add(o, "start", time_json(e->first_ms));
                add(o, "end", time_json(e->first_ms + REPORT_BLOCK_MS));
                add(o, "last", time_json(e->last_ms));
                bool live = report_block_live(e, now_of(q), &b);
                add(o, "active", json_object_new_boolean(live));
                if (live) {
                        add(o, "elapsed_s", json_object_new_int64(b.elapsed_ms / 1000));
                        add(o, "remaining_s", json_object_new_int64(b.remaining_ms / 1000));
                        add(o, "burn_usd_per_hour",
                            e->sums.priced_events ? report_money_json(b.burn_nano_per_hour) : NULL);
                        add(o, "tokens_per_hour",
                            e->sums.token_events ? json_object_new_int64((int64_t)b.tokens_per_hour) : NULL);
                        add(o, "projected_cost_usd",
                            e->sums.priced_events ? report_money_json(b.projected_nano) : NULL);
                }
                break;
        }
        case REPORT_MODEL:
                add(o, "harness", json_object_new_string(e->harness));
                add(o, "provider", json_object_new_string(e->provider));
                add(o, "model", json_object_new_string(e->model));
                break;
        default:
                break;
        }
        report_sums_json(o, &e->sums);
        return o;
}

json_object *report_to_json(const struct report_query *q, const struct report_result *res)
{
        json_object *o = json_object_new_object(), *rows = json_object_new_array();
        json_object *totals = json_object_new_object(), *h = NULL;

        if (!o || !rows || !totals) {
                json_object_put(o);
                json_object_put(rows);
                json_object_put(totals);
                return NULL;
        }
        add(o, "report", json_object_new_string(report_kind_name(q->kind)));
        add(o, "tz", q->tz && *q->tz ? json_object_new_string(q->tz) : local_zone_json());
        add(o, "since", str_or_null(q->since));
        add(o, "until", str_or_null(q->until));
        if (q->harness[0]) {
                h = json_object_new_array();
                for (size_t i = 0; h && i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                        json_object_array_add(h, json_object_new_string(q->harness[i]));
        }
        add(o, "harness", h);
        add(o, "cost", json_object_new_string(report_cost_name(q->cost)));
        add(o, "breakdown", q->breakdown ? json_object_new_string(report_breakdown_name(q->breakdown))
                                         : NULL);
        if (q->kind == REPORT_WEEKLY)
                add(o, "week_start", json_object_new_string(report_week_start_name(report_week_start(q))));
        if (q->kind == REPORT_PROJECT)
                add(o, "merge_worktrees", json_object_new_boolean(q->merge_worktrees));
        if (q->kind == REPORT_BLOCKS) {
                add(o, "block_hours", json_object_new_int(5));
                add(o, "now", time_json(now_of(q)));
        }
        for (size_t i = 0; i < res->n; i++)
                json_object_array_add(rows, entry_json(q, &res->rows[i]));
        if (q->kind == REPORT_TOOL) {
                add(totals, "calls", json_object_new_int64((int64_t)res->calls));
                add(totals, "cost_share_usd", res->priced_calls ? share_json(res->share_nano) : NULL);
        } else {
                report_sums_json(totals, &res->totals);
        }
        add(o, "rows", rows);
        add(o, "totals", totals);
        return o;
}

int report_run(struct ledger *l, const struct report_query *q, json_object **ret_report,
               const char **ret_error)
{
        struct report_result res;
        struct timefmt_zone z = {0};
        json_object *o;
        int r;

        /* one zone switch for the whole report, not two per conversion
         * (glibc reads the zone file at each switch) */
        if (timefmt_zone_valid(q->tz) == 0)
                timefmt_zone_enter(&z, q->tz);
        r = q->kind == REPORT_BLOCKS ? report_blocks_build(l, q, &res, ret_error)
                                     : report_build(l, q, &res, ret_error);
        if (r < 0) {
                timefmt_zone_leave(&z);
                return r;
        }
        o = report_to_json(q, &res);
        timefmt_zone_leave(&z);
        report_result_free(&res);
        if (!o)
                return report_fail(ret_error, -ENOMEM, "out of memory");
        *ret_report = o;
        return 0;
}
