/* Unit tests for the session report's limit (issue 51: a heavy user's
 * 32,000 sessions): with a limit only the newest sessions are rows, in the
 * same order and with the same fields as the last rows of the full report,
 * while the totals and rows_total stay those of every session in range;
 * through the session sums (a bounded selection) and through the rows
 * (the vendor cost mode), with ties on the last time, ranges and filters. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "report-test.h"
#include "tap.h"
#include "timefmt.h"

#define N_SESSIONS 120
#define BASE_MS    1772000000000LL /* 2026-02-25 */

static struct ledger *L;

/* Rows of N_SESSIONS sessions of two harnesses, committed in a shuffled
 * order; session i's last row at BASE + hours(i / 2 * 7 % 97), so pairs
 * of sessions share a last time (the tie order matters) and the last
 * times are not in session order. */
static void fill(void)
{
        static struct usage_row rows[N_SESSIONS * 3];
        size_t n = 0;
        unsigned seed = 51;

        for (int i = 0; i < N_SESSIONS; i++) {
                int64_t last = BASE_MS + (int64_t)(i / 2 * 7 % 97) * 3600000LL;
                int calls = 1 + i % 3;
                for (int k = 0; k < calls; k++) {
                        struct usage_row *r = &rows[n++];
                        char id[32];

                        snprintf(id, sizeof(id), "s%d-r%d", i, k);
                        rep_row_start(r, "report-limit-test", id);
                        r->flags = ROW_F_TOKENS_KNOWN;
                        r->time_ms = last - (int64_t)k * 60000;
                        r->input = 1000 + (uint64_t)i;
                        r->output = 10 + (uint64_t)k;
                        r->total = r->input + r->output;
                        /* a third priced by the table: the vendor mode differs */
                        r->cost_source = i % 3 == 0 ? COST_COMPUTED : COST_VENDOR;
                        r->cost_nano = 1000000 + (int64_t)i * 1000;
                        snprintf(r->tool, sizeof(r->tool), "%s", i % 2 ? "pi" : "claude");
                        snprintf(r->session, sizeof(r->session), "sess-%03d", (i * 37) % N_SESSIONS);
                        snprintf(r->project, sizeof(r->project), "/work/p%d", i % 5);
                        snprintf(r->provider, sizeof(r->provider), "anthropic");
                        snprintf(r->model, sizeof(r->model), "model-%d", i % 4);
                }
        }
        for (size_t i = n - 1; i > 0; i--) { /* shuffled: the ledger's order is its keys' */
                seed = seed * 1103515245u + 12345u;
                size_t j = (seed >> 8) % (i + 1);
                struct usage_row t = rows[i];
                rows[i] = rows[j];
                rows[j] = t;
        }
        struct commit_batch b = {.rows = rows, .n_rows = n};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

static json_object *run(uint32_t limit, enum report_cost cost, const char *since, const char *harness)
{
        json_object *o = rep_run(L, (struct report_query){.kind = REPORT_SESSION, .tz = "UTC", .limit = limit,
                                                          .cost = cost, .since = since},
                                 harness);
        if (!o)
                exit(1);
        return o;
}

/* limited's rows are the last rows of all's, field by field, and its
 * totals and rows_total are all's. */
static void same_tail(json_object *all, json_object *limited, uint32_t limit, const char *what)
{
        size_t n_all = rep_nrows(all), want = limit && limit < n_all ? limit : n_all, bad = 0;

        is_int(rep_nrows(limited), want, what);
        for (size_t i = 0; i < rep_nrows(limited) && i < want; i++) {
                json_object *x = json_object_array_get_idx(rep_field(all, "rows"), n_all - want + i);
                json_object *y = json_object_array_get_idx(rep_field(limited, "rows"), i);
                if (strcmp(rep_text(x, "session"), rep_text(y, "session")) != 0 ||
                    strcmp(json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN),
                           json_object_to_json_string_ext(y, JSON_C_TO_STRING_PLAIN)) != 0)
                        bad++;
        }
        is_int(bad, 0, "  the newest rows, in the report's order, every field as in the full report");
        is_str(rep_text(limited, "totals"), rep_text(all, "totals"), "  totals: every session's, not the rows'");
        is_int(json_object_get_int64(rep_field(limited, "rows_total")), n_all, "  rows_total: every session");
        if (limit)
                is_int(json_object_get_int64(rep_field(limited, "limit")), limit, "  limit echoed");
        else
                ok(rep_field(limited, "limit") == NULL && json_object_object_get_ex(limited, "limit", NULL),
                   "  limit null: every session");
}

static void test_limits(enum report_cost cost, const char *mode)
{
        json_object *all = run(0, cost, NULL, NULL);
        static const uint32_t limits[] = { 1, 2, 3, 50, N_SESSIONS - 1, N_SESSIONS, N_SESSIONS + 5 };
        char what[128];

        is_int(rep_nrows(all), N_SESSIONS, "every session listed without a limit");
        is_int(json_object_get_int64(rep_field(all, "rows_total")), N_SESSIONS, "rows_total without a limit");
        for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
                json_object *l = run(limits[i], cost, NULL, NULL);
                snprintf(what, sizeof(what), "%s, limit %u: min(limit, sessions) rows", mode, limits[i]);
                same_tail(all, l, limits[i], what);
                json_object_put(l);
        }
        json_object_put(all);

        /* a range and a harness filter: the newest of those, their totals */
        all = run(0, cost, "2026-02-27", "pi");
        json_object *l = run(7, cost, "2026-02-27", "pi");
        ok(rep_nrows(all) > 7 && rep_nrows(all) < N_SESSIONS, "%s: the range and filter keep some sessions (%zu)",
           mode, rep_nrows(all));
        snprintf(what, sizeof(what), "%s, --since and --harness pi, limit 7", mode);
        same_tail(all, l, 7, what);
        json_object_put(l);
        json_object_put(all);
}

static void test_builder_totals(void)
{
        struct report_query q = {.kind = REPORT_SESSION, .tz = "UTC", .limit = 10};
        struct report_result res;
        struct usage_sums rows = {0};
        const char *err = NULL;

        if (report_build(L, &q, &res, &err) < 0)
                exit(1);
        is_int(res.n, 10, "builder: 10 rows");
        is_int(res.rows_total, N_SESSIONS, "builder: rows_total counts every session");
        for (size_t i = 0; i < res.n; i++)
                usage_sums_add(&rows, &res.rows[i].sums);
        ok(res.totals.events > rows.events && res.totals.input > rows.input,
           "builder: the totals are more than the 10 rows' sums");
        bool ordered = true;
        for (size_t i = 1; i < res.n; i++)
                ordered = ordered && res.rows[i - 1].last_ms <= res.rows[i].last_ms;
        ok(ordered, "builder: rows by last time, oldest first");
        report_result_free(&res);
}

static void test_query(void)
{
        static const struct {
                const char *json;
                int r;
                uint32_t limit;
                const char *name;
        } cases[] = {
                { "{\"report\":\"session\",\"limit\":25}", 0, 25, "json: limit 25" },
                { "{\"report\":\"session\",\"limit\":0}", 0, 0, "json: limit 0 (every session)" },
                { "{\"report\":\"session\",\"limit\":null}", 0, 0, "json: limit null" },
                { "{\"report\":\"session\"}", 0, 0, "json: no limit" },
                { "{\"report\":\"session\",\"limit\":-1}", -EINVAL, 0, "json: a negative limit refused" },
                { "{\"report\":\"session\",\"limit\":\"5\"}", -EINVAL, 0, "json: a string limit refused" },
                { "{\"report\":\"session\",\"limit\":2.5}", -EINVAL, 0, "json: a fraction refused" },
                { "{\"report\":\"session\",\"limit\":99999999999}", -EINVAL, 0, "json: a huge limit refused" },
        };
        const char *err = NULL;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_object *req = json_tokener_parse(cases[i].json);
                struct report_query q = {0};
                int r = report_query_from_json(req, &q, &err);
                ok(r == cases[i].r && (r < 0 || q.limit == cases[i].limit), "%s", cases[i].name);
                json_object_put(req);
        }
        struct report_query q = {.kind = REPORT_DAILY, .tz = "UTC", .limit = 5};
        json_object *o = NULL;
        is_int(report_run(L, &q, &o, &err), -EINVAL, "a limit on a daily report: -EINVAL");
        is_str(err, "--limit applies to session reports", "  with a message");
}

int main(void)
{
        char dir[PATH_MAX];

        L = rep_ledger_open(dir, sizeof(dir));
        fill();
        test_limits(REPORT_COST_AUTO, "session sums");
        test_limits(REPORT_COST_VENDOR, "rows (vendor)");
        test_builder_totals();
        test_query();
        rep_ledger_close(L, dir);
        return tap_done();
}
