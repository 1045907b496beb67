/* Report JSON: the builder's rows of sums as the report's text, one usage
 * row as a tail event; NULL never shown as 0. Everything is written as text
 * (jsonw: a report of thousands of sessions is one buffer, not an object per
 * field); the object forms are that text parsed. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json/jsonw.h"
#include "ledger/ledger.h"
#include "report/blocks.h"
#include "report/cache-view.h"
#include "report/json.h"
#include "row.h"
#include "timefmt.h"

void report_money_text(int64_t nano, char buf[REPORT_MONEY_TEXT_MAX])
{
        uint64_t a = nano < 0 ? -(uint64_t)nano : (uint64_t)nano;
        uint64_t micro = (a + 500) / 1000, whole = micro / 1000000, frac = micro % 1000000;
        char tmp[REPORT_MONEY_TEXT_MAX], *p = tmp + sizeof(tmp);

        /* "%s%llu.%06llu" from the end, without printf (several per row) */
        *--p = 0;
        for (int i = 0; i < 6; i++, frac /= 10)
                *--p = (char)('0' + frac % 10);
        *--p = '.';
        do {
                *--p = (char)('0' + whole % 10);
                whole /= 10;
        } while (whole);
        if (nano < 0)
                *--p = '-';
        memcpy(buf, p, (size_t)(tmp + sizeof(tmp) - p));
}

json_object *report_money_json(int64_t nano)
{
        char buf[REPORT_MONEY_TEXT_MAX];
        report_money_text(nano, buf);
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static void money_or_null(struct jsonw *w, const char *key, bool known, int64_t nano)
{
        char buf[REPORT_MONEY_TEXT_MAX];

        jsonw_key(w, key);
        if (!known) {
                jsonw_null(w);
                return;
        }
        report_money_text(nano, buf);
        jsonw_number(w, buf);
}

static void share_or_null(struct jsonw *w, const char *key, bool known, double nano)
{
        money_or_null(w, key, known, known ? (int64_t)llround(nano) : 0);
}

static void int_or_null(struct jsonw *w, const char *key, bool known, int64_t v)
{
        if (known)
                jsonw_key_int(w, key, v);
        else
                jsonw_key_null(w, key);
}

/* The six token fields of a row or a sum, all null when not known. */
static void tokens_write(struct jsonw *w, uint64_t input, uint64_t output, uint64_t cache_read,
                         uint64_t cache_write, uint64_t reasoning, uint64_t total, bool known)
{
        int_or_null(w, "input_tokens", known, (int64_t)input);
        int_or_null(w, "output_tokens", known, (int64_t)output);
        int_or_null(w, "cache_read_tokens", known, (int64_t)cache_read);
        int_or_null(w, "cache_write_tokens", known, (int64_t)cache_write);
        int_or_null(w, "reasoning_tokens", known, (int64_t)reasoning);
        int_or_null(w, "total_tokens", known, (int64_t)total);
}

static void time_write(struct jsonw *w, const char *key, int64_t ms)
{
        char buf[32];
        timefmt_format_utc(ms, buf);
        jsonw_key_string(w, key, buf);
}

const char *report_sums_cost_source(const struct usage_sums *s)
{
        if (!s->priced_events)
                return NULL;
        return s->computed_events == 0                 ? "vendor-reported"
               : s->computed_events == s->priced_events ? "computed"
                                                        : "mixed";
}

static void sums_write(struct jsonw *w, const struct usage_sums *s)
{
        tokens_write(w, s->input, s->output, s->cache_read, s->cache_write, s->reasoning, s->total,
                     s->token_events > 0);
        money_or_null(w, "cost_usd", s->priced_events, s->cost_nano);
        jsonw_key_string_or_null(w, "cost_source", report_sums_cost_source(s));
        jsonw_key_int(w, "unpriced_events", (int64_t)(s->events - s->priced_events));
        jsonw_key_int(w, "events", (int64_t)s->events);
        jsonw_key_int(w, "tool_calls", (int64_t)s->calls);
}

/* The object a writer's text makes; NULL on -ENOMEM. */
static json_object *parsed(struct jsonw *w)
{
        char *text;
        size_t len;
        json_object *o;

        if (jsonw_finish(w, &text, &len) < 0)
                return NULL;
        o = json_tokener_parse(text);
        free(text);
        return o;
}

int report_sums_json(json_object *o, const struct usage_sums *s)
{
        struct jsonw w = { 0 };
        json_object *f;

        jsonw_object_begin(&w);
        sums_write(&w, s);
        jsonw_object_end(&w);
        if (!(f = parsed(&w)))
                return -ENOMEM;
        json_object_object_foreach(f, k, v)
                json_object_object_add(o, k, json_object_get(v));
        json_object_put(f);
        return 0;
}

json_object *report_row_json(const struct usage_row *r)
{
        struct jsonw w = { 0 };
        char hex[2 * ROW_KEY_SIZE + 1];

        row_key_hex(&r->key, hex);
        jsonw_object_begin(&w);
        jsonw_key_string(&w, "key", hex);
        jsonw_key_string(&w, "harness", r->tool);
        jsonw_key_string(&w, "session", r->session);
        jsonw_key_string(&w, "project", r->project);
        jsonw_key_string(&w, "provider", r->provider);
        jsonw_key_string(&w, "model", r->model);
        if (r->model_alias[0])
                jsonw_key_string(&w, "model_alias", r->model_alias);
        jsonw_key_string(&w, "kind", row_kind_name(r->kind));
        time_write(&w, "time", r->time_ms);
        jsonw_key_bool(&w, "sidechain", r->flags & ROW_F_SIDECHAIN);
        tokens_write(&w, r->input, r->output, r->cache_read, r->cache_write, r->reasoning, r->total,
                     r->flags & ROW_F_TOKENS_KNOWN);
        money_or_null(&w, "cost_usd", r->cost_source != COST_NONE, r->cost_nano);
        jsonw_key_string_or_null(&w, "cost_source",
                                 r->cost_source != COST_NONE ? cost_source_name(r->cost_source) : NULL);
        jsonw_key(&w, "tool_calls");
        jsonw_array_begin(&w);
        for (uint32_t i = 0; i < r->n_calls && i < ROW_CALLS_MAX; i++)
                jsonw_string(&w, r->calls[i].name);
        jsonw_array_end(&w);
        jsonw_object_end(&w);
        return parsed(&w);
}

static const char *local_zone_name(char *buf, size_t cap)
{
        const char *tz = getenv("TZ");
        ssize_t n;

        if (tz && *tz)
                return tz[0] == ':' ? tz + 1 : tz;
        n = readlink("/etc/localtime", buf, cap - 1);
        if (n > 0) {
                const char *z;
                buf[n] = 0;
                z = strstr(buf, "zoneinfo/");
                if (z)
                        return z + 9;
        }
        return "localtime";
}

static int64_t now_of(const struct report_query *q)
{
        struct timespec ts;
        if (q->now_ms)
                return q->now_ms;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void entry_write(struct jsonw *w, const struct report_query *q, const struct report_entry *e)
{
        jsonw_object_begin(w);
        jsonw_key_string(w, "key", e->key);
        if (q->kind == REPORT_WEEKLY && report_week_start(q) == 1) {
                char iso[16];
                report_iso_week(e->key, iso);
                jsonw_key_string(w, "iso_week", iso);
        }
        if (q->kind == REPORT_PROJECT)
                jsonw_key_string(w, "project", e->key);
        if (q->by != REPORT_BY_NONE) /* team reports: the machine or user that sent them */
                jsonw_key_string(w, report_by_name(q->by), e->party);
        /* a breakdown is for daily, weekly, monthly and project only
         * (report_query_range refuses others), which name no harness below */
        if (q->breakdown != REPORT_BREAKDOWN_NONE)
                jsonw_key_string(w, "harness", e->harness);
        if (q->breakdown == REPORT_BREAKDOWN_MODEL) {
                jsonw_key_string(w, "provider", e->provider);
                jsonw_key_string(w, "model", e->model);
        }
        switch (q->kind) {
        case REPORT_SESSION:
                jsonw_key_string(w, "harness", e->harness);
                jsonw_key_string(w, "session", e->session);
                jsonw_key_string(w, "project", e->project);
                jsonw_key_string(w, "model", e->model);
                /* only where known: a session of any other harness, and every
                 * report written before origins existed, stay as they were */
                if (e->origin[0])
                        jsonw_key_string(w, "origin", e->origin);
                time_write(w, "first", e->first_ms);
                time_write(w, "last", e->last_ms);
                break;
        case REPORT_TOOL:
                jsonw_key_string(w, "harness", e->harness);
                jsonw_key_string(w, "tool", e->key);
                jsonw_key_int(w, "calls", (int64_t)e->calls);
                share_or_null(w, "cost_share_usd", e->priced_calls, e->share_nano);
                jsonw_object_end(w);
                return;
        case REPORT_BLOCKS: {
                struct block_live b;
                jsonw_key_string(w, "harness", e->harness);
                time_write(w, "start", e->first_ms);
                time_write(w, "end", e->first_ms + REPORT_BLOCK_MS);
                time_write(w, "last", e->last_ms);
                bool live = report_block_live(e, now_of(q), &b);
                jsonw_key_bool(w, "active", live);
                if (live) {
                        jsonw_key_int(w, "elapsed_s", b.elapsed_ms / 1000);
                        jsonw_key_int(w, "remaining_s", b.remaining_ms / 1000);
                        money_or_null(w, "burn_usd_per_hour", e->sums.priced_events, b.burn_nano_per_hour);
                        int_or_null(w, "tokens_per_hour", e->sums.token_events, (int64_t)b.tokens_per_hour);
                        money_or_null(w, "projected_cost_usd", e->sums.priced_events, b.projected_nano);
                }
                break;
        }
        case REPORT_MODEL:
                jsonw_key_string(w, "harness", e->harness);
                jsonw_key_string(w, "provider", e->provider);
                jsonw_key_string(w, "model", e->model);
                break;
        default:
                break;
        }
        sums_write(w, &e->sums);
        jsonw_object_end(w);
}

/* The text of a view's cached rows, written once for the cache that
 * keeps it: each row as entry_write writes it. */
static int view_text(const struct report_query *q, struct report_view *v)
{
        struct jsonw w = { 0 };
        size_t *off;
        char *text;
        size_t len;

        if (v->text->text)
                return 0;
        off = reallocarray(NULL, v->cached_n + 1, sizeof(*off));
        if (!off)
                return -ENOMEM;
        for (size_t i = 0; i < v->cached_n; i++) {
                off[i] = w.len;
                entry_write(&w, q, &v->cached_rows[i]);
        }
        off[v->cached_n] = w.len;
        if (jsonw_finish(&w, &text, &len) < 0) {
                free(off);
                return -ENOMEM;
        }
        v->text->text = text;
        v->text->off = off;
        return 0;
}

/* The whole report object: its rows and totals from res, or from view. */
static void report_write(struct jsonw *w, const struct report_query *q, const struct report_result *res,
                         const struct report_view *view)
{
        char zbuf[PATH_MAX];

        jsonw_object_begin(w);
        jsonw_key_string(w, "report", report_kind_name(q->kind));
        jsonw_key_string(w, "tz", q->tz && *q->tz ? q->tz : local_zone_name(zbuf, sizeof(zbuf)));
        jsonw_key_string_or_null(w, "since", q->since);
        jsonw_key_string_or_null(w, "until", q->until);
        jsonw_key(w, "harness");
        if (q->harness[0]) {
                jsonw_array_begin(w);
                for (size_t i = 0; i < REPORT_HARNESS_MAX && q->harness[i]; i++)
                        jsonw_string(w, q->harness[i]);
                jsonw_array_end(w);
        } else {
                jsonw_null(w);
        }
        jsonw_key_string(w, "cost", report_cost_name(q->cost));
        jsonw_key_string_or_null(w, "breakdown", q->breakdown ? report_breakdown_name(q->breakdown) : NULL);
        if (q->session) /* only when set: the header of an unfiltered report is unchanged */
                jsonw_key_string(w, "session", q->session);
        if (q->project)
                jsonw_key_string(w, "project", q->project);
        if (q->kind == REPORT_SESSION && res) { /* the rows may be the newest of more */
                int_or_null(w, "limit", q->limit > 0, q->limit);
                jsonw_key_int(w, "rows_total", (int64_t)res->rows_total);
        }
        if (q->kind == REPORT_WEEKLY)
                jsonw_key_string(w, "week_start", report_week_start_name(report_week_start(q)));
        if (q->kind == REPORT_PROJECT)
                jsonw_key_bool(w, "merge_worktrees", q->merge_worktrees);
        if (q->kind == REPORT_BLOCKS) {
                jsonw_key_int(w, "block_hours", 5);
                time_write(w, "now", now_of(q));
        }
        if (q->team) {
                jsonw_key_bool(w, "team", true);
                jsonw_key_string_or_null(w, "by", q->by ? report_by_name(q->by) : NULL);
                for (int k = 0; k < 2; k++) {
                        const char *const *list = k ? q->users : q->machines;
                        jsonw_key(w, k ? "users" : "machines");
                        if (!list[0]) {
                                jsonw_null(w);
                                continue;
                        }
                        jsonw_array_begin(w);
                        for (size_t i = 0; i < REPORT_PARTY_FILTER_MAX && list[i]; i++)
                                jsonw_string(w, list[i]);
                        jsonw_array_end(w);
                }
        }
        jsonw_key(w, "rows");
        jsonw_array_begin(w);
        for (size_t i = 0; res && i < res->n; i++)
                entry_write(w, q, &res->rows[i]);
        for (size_t i = 0; view && i < view->n; i++) {
                const size_t *off = view->text->off;
                int32_t c = view->cached[i];
                if (c >= 0)
                        jsonw_value_text(w, view->text->text + off[c], off[c + 1] - off[c]);
                else
                        entry_write(w, q, view->rows[i]);
        }
        jsonw_array_end(w);
        jsonw_key(w, "totals");
        jsonw_object_begin(w);
        if (view) {
                sums_write(w, &view->totals);
        } else if (q->kind == REPORT_TOOL) {
                jsonw_key_int(w, "calls", (int64_t)res->calls);
                share_or_null(w, "cost_share_usd", res->priced_calls, res->share_nano);
        } else {
                sums_write(w, &res->totals);
        }
        jsonw_object_end(w);
        jsonw_object_end(w);
}

int report_run_text(struct ledger *l, struct report_cache *cache, const struct report_query *q,
                    char **ret_text, size_t *ret_len, const char **ret_error)
{
        struct report_result res;
        struct timefmt_zone z = {0};
        struct jsonw w = { 0 };
        int r;

        /* one zone switch for the whole report, not two per conversion
         * (glibc reads the zone file at each switch) */
        if (timefmt_zone_valid(q->tz) == 0)
                timefmt_zone_enter(&z, q->tz);
        /* a rollup report the cache holds: its rows' text as the cache keeps it */
        struct report_view view;
        r = q->kind == REPORT_BLOCKS ? 0 : report_view_cached(l, cache, q, &view, ret_error);
        if (r > 0) {
                r = view_text(q, &view);
                if (r >= 0)
                        report_write(&w, q, NULL, &view);
                timefmt_zone_leave(&z);
                report_view_free(&view);
                if (r >= 0)
                        r = jsonw_finish(&w, ret_text, ret_len);
                jsonw_free(&w);
                return r < 0 ? report_fail(ret_error, -ENOMEM, "out of memory") : 0;
        }
        if (r < 0) {
                timefmt_zone_leave(&z);
                return r;
        }
        r = q->kind == REPORT_BLOCKS ? report_blocks_build(l, q, &res, ret_error)
                                     : report_build_cached(l, cache, q, &res, ret_error);
        if (r >= 0 && q->kind == REPORT_SESSION && q->annotate) {
                r = q->annotate(q->annotate_u, &res);
                if (r < 0) {
                        report_result_free(&res);
                        (void)report_fail(ret_error, r, "cannot tell the sessions' origins");
                }
        }
        if (r < 0) {
                timefmt_zone_leave(&z);
                return r;
        }
        report_write(&w, q, &res, NULL);
        timefmt_zone_leave(&z);
        report_result_free(&res);
        r = jsonw_finish(&w, ret_text, ret_len);
        if (r < 0)
                return report_fail(ret_error, -ENOMEM, "out of memory");
        return 0;
}

int report_run_from(const struct report_source *src, const struct report_query *q,
                    json_object **ret_report, const char **ret_error)
{
        struct report_result res;
        struct timefmt_zone z = {0};
        struct jsonw w = { 0 };
        char *text;
        size_t len;
        json_object *o;
        int r;

        if (timefmt_zone_valid(q->tz) == 0)
                timefmt_zone_enter(&z, q->tz);
        r = q->kind == REPORT_BLOCKS ? report_blocks_build_from(src, q, &res, ret_error)
                                     : report_build_from(src, q, &res, ret_error);
        if (r < 0) {
                timefmt_zone_leave(&z);
                return r;
        }
        report_write(&w, q, &res, NULL);
        timefmt_zone_leave(&z);
        report_result_free(&res);
        if (jsonw_finish(&w, &text, &len) < 0)
                return report_fail(ret_error, -ENOMEM, "out of memory");
        o = json_tokener_parse(text);
        free(text);
        if (!o)
                return report_fail(ret_error, -ENOMEM, "out of memory");
        *ret_report = o;
        return 0;
}

int report_run(struct ledger *l, const struct report_query *q, json_object **ret_report,
               const char **ret_error)
{
        char *text;
        size_t len;
        json_object *o;
        int r = report_run_text(l, NULL, q, &text, &len, ret_error);

        if (r < 0)
                return r;
        o = json_tokener_parse(text);
        free(text);
        if (!o)
                return report_fail(ret_error, -ENOMEM, "out of memory");
        *ret_report = o;
        return 0;
}
