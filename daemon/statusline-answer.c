/* statusline answers: one session read, one day of rollups, one day of
 * rollups for the block; nothing that walks the whole ledger. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <time.h>

#include "ledger/ledger.h"
#include "report/blocks.h"
#include "report/json.h"
#include "adapter.h"
#include "paths.h"
#include "registry.h"
#include "statusline-answer.h"
#include "timefmt.h"

#define add(o, k, v) json_object_object_add((o), (k), (v))


static const char *opt_str(json_object *req, const char *k)
{
        json_object *v;
        if (!json_object_object_get_ex(req, k, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

static json_object *time_json(int64_t ms)
{
        char b[32];
        timefmt_format_utc(ms, b);
        return json_object_new_string(b);
}

static json_object *block_json(struct ledger *l, const char *harness, int64_t now)
{
        struct report_entry e;
        struct block_live b;
        json_object *o;

        if (report_block_recent(l, harness, now, &e) < 0)
                return NULL;
        o = json_object_new_object();
        add(o, "start", time_json(e.first_ms));
        add(o, "end", time_json(e.first_ms + REPORT_BLOCK_MS));
        bool live = report_block_live(&e, now, &b);
        add(o, "active", json_object_new_boolean(live));
        if (live) {
                add(o, "elapsed_s", json_object_new_int64(b.elapsed_ms / 1000));
                add(o, "remaining_s", json_object_new_int64(b.remaining_ms / 1000));
                add(o, "burn_usd_per_hour",
                    e.sums.priced_events ? report_money_json(b.burn_nano_per_hour) : NULL);
                add(o, "projected_cost_usd",
                    e.sums.priced_events ? report_money_json(b.projected_nano) : NULL);
        }
        report_sums_json(o, &e.sums);
        return o;
}

static int today_json(struct ledger *l, const char *tz, int64_t now, json_object **ret,
                      const char **ret_error)
{
        char day[11];
        struct report_query q = {.kind = REPORT_DAILY, .tz = tz, .since = day, .until = day};
        struct report_result res;
        json_object *o;
        int r;

        if (timefmt_zone_valid(tz) < 0)
                return report_fail(ret_error, -EINVAL, "unknown time zone '%s'", tz);
        timefmt_day(now, tz, day);
        r = report_build(l, &q, &res, ret_error);
        if (r < 0)
                return r;
        o = json_object_new_object();
        add(o, "date", json_object_new_string(day));
        report_sums_json(o, &res.totals);
        report_result_free(&res);
        *ret = o;
        return 0;
}

/* Keeps the latest rate limits per harness, stamped with when they came. */
static void remember_limits(struct statusline_state *st, const char *harness, json_object *rl,
                            int64_t now)
{
        json_object *copy = NULL;

        if (!rl || !json_object_is_type(rl, json_type_object))
                return;
        if (json_object_deep_copy(rl, &copy, NULL) < 0 || !copy)
                return;
        add(copy, "received_at", time_json(now));
        if (!st->rate_limits)
                st->rate_limits = json_object_new_object();
        add(st->rate_limits, harness, copy);
}

/* The harness a request without one is about: the one whose root holds
 * its transcript_path, else the adapter that says it runs status lines. */
static const char *harness_of(const struct root_list *roots, const char *transcript)
{
        for (size_t i = 0; transcript && roots && i < roots->n; i++)
                if (paths_within(transcript, roots->v[i].path, NULL))
                        return roots->v[i].adapter->id;
        for (size_t i = 0; registry_adapters[i]; i++)
                if (registry_adapters[i]->statusline_host)
                        return registry_adapters[i]->id;
        return NULL;
}

int statusline_answer(struct ledger *l, struct statusline_state *st, const struct root_list *roots,
                      json_object *req, json_object **ret_result, const char **ret_error)
{
        const char *harness = opt_str(req, "harness"), *session = opt_str(req, "session");
        const char *tz = opt_str(req, "tz");
        int64_t now = timefmt_now_ms();
        json_object *o, *today = NULL, *rl = NULL, *mine = NULL;
        struct session_entry se;
        int r;

        if (!harness || !*harness)
                harness = harness_of(roots, opt_str(req, "transcript_path"));
        if (!harness) {
                *ret_error = "the request names no harness (\"harness\", or a \"transcript_path\" under "
                             "a known root)";
                return -EINVAL;
        }
        if (strlen(harness) >= ROW_TOOL_MAX || (session && strlen(session) >= ROW_SESSION_MAX)) {
                *ret_error = "harness or session id too long";
                return -EINVAL;
        }
        if (strspn(harness, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(harness)) {
                *ret_error = "a harness id is lower-case letters, digits, - and _";
                return -EINVAL;
        }
        r = today_json(l, tz, now, &today, ret_error);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(req, "rate_limits", &rl))
                remember_limits(st, harness, rl, now);
        o = json_object_new_object();
        add(o, "harness", json_object_new_string(harness));
        if (session && *session && ledger_get_session(l, harness, session, &se) == 0) {
                json_object *so = json_object_new_object();
                add(so, "id", json_object_new_string(session));
                report_sums_json(so, &se.sums);
                add(o, "session", so);
        } else {
                add(o, "session", NULL);
        }
        add(o, "today", today);
        add(o, "block", block_json(l, harness, now));
        if (st->rate_limits && json_object_object_get_ex(st->rate_limits, harness, &mine))
                add(o, "rate_limits", json_object_get(mine));
        else
                add(o, "rate_limits", NULL);
        *ret_result = o;
        return 0;
}

void statusline_state_done(struct statusline_state *st)
{
        json_object_put(st->rate_limits);
        st->rate_limits = NULL;
}
