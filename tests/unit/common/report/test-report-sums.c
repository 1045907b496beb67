/* Every report adds up to the daily report: over rows spanning weeks,
 * months, projects and harnesses, in zones with DST (Berlin, New York,
 * Lord Howe's half-hour shift) and odd offsets (Kathmandu), whole and in
 * date ranges, with and without breakdowns. Weekly buckets are checked
 * against an independent count made with the C library's localtime. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ledger/ledger.h"
#include "report/report.h"
#include "tap.h"

static struct ledger *L;

#define N_ROWS 600
static int64_t row_time[N_ROWS];

static void put_rows(void)
{
        static const char *const tools[] = {"pi", "openclaw", "picoclaw"};
        static const char *const projects[] = {"/w/app", "/w/api", "/w/app-wt", ""};
        static const char *const models[] = {"opus", "sonnet", "gpt-5"};
        static struct usage_row r;
        /* 2026-02-20 .. ~2026-05-10 UTC: DST starts in March (EU, US) and
         * ends in April (Lord Howe); a row every ~3h13m lands near midnights */
        int64_t t = 1771545600000LL;

        for (int i = 0; i < N_ROWS; i++, t += 11580000LL + (i % 7) * 60000LL) {
                struct keyhash h;
                memset(&r, 0, sizeof(r));
                keyhash_begin(&h, "sums-test");
                keyhash_u64(&h, (uint64_t)i);
                keyhash_end(&h, &r.key);
                r.kind = ROW_KIND_MESSAGE;
                r.time_ms = row_time[i] = t;
                const char *tool = tools[i % 3];
                if (strcmp(tool, "picoclaw") != 0) {
                        r.flags = ROW_F_TOKENS_KNOWN;
                        r.input = 100 + i;
                        r.output = 10 + i % 13;
                        r.cache_read = i * 3;
                        r.cache_write = i % 5;
                        r.reasoning = i % 4;
                        r.total = r.input + r.output + r.cache_read + r.cache_write;
                        r.cost_source = i % 10 == 0 ? COST_NONE : i % 4 == 0 ? COST_COMPUTED : COST_VENDOR;
                        r.cost_nano = 1000003LL * (i + 1);
                }
                ROW_SET(r.tool, tool);
                char sess[32];
                snprintf(sess, sizeof(sess), "s%d", i / 20);
                row_set_str(r.session, sizeof(r.session), sess, strlen(sess));
                ROW_SET(r.project, projects[(i / 5) % 4]);
                ROW_SET(r.provider, "p");
                ROW_SET(r.model, models[(i / 3) % 3]);
                struct commit_batch b = {.rows = &r, .n_rows = 1};
                if (ledger_commit(L, &b, NULL) < 0)
                        abort();
        }
}

static json_object *run(struct report_query q)
{
        json_object *o = NULL;
        const char *err = NULL;
        if (report_run(L, &q, &o, &err) < 0) {
                printf("# report failed: %s\n", err ? err : "?");
                return NULL;
        }
        return o;
}

static json_object *get(json_object *o, const char *k)
{
        json_object *v = NULL;
        json_object_object_get_ex(o, k, &v);
        return v;
}

/* The sums of an object as one comparable line. */
static void sums_line(json_object *o, char *buf, size_t cap)
{
        static const char *const f[] = {"events", "input_tokens", "output_tokens", "cache_read_tokens",
                                        "cache_write_tokens", "reasoning_tokens", "total_tokens",
                                        "cost_usd", "unpriced_events", "tool_calls", "cost_source"};
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && n < cap; i++) {
                json_object *v = get(o, f[i]);
                n += (size_t)snprintf(buf + n, cap - n, "%s=%s ", f[i],
                                      v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "null");
        }
}

/* The rows' sums added up, as the same kind of line. */
static void rows_line(json_object *rep, char *buf, size_t cap)
{
        json_object *rows = get(rep, "rows");
        long long ev = 0, un = 0, calls = 0, in = 0;
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *r = json_object_array_get_idx(rows, i);
                ev += json_object_get_int64(get(r, "events"));
                un += json_object_get_int64(get(r, "unpriced_events"));
                calls += json_object_get_int64(get(r, "tool_calls"));
                in += get(r, "input_tokens") ? json_object_get_int64(get(r, "input_tokens")) : 0;
        }
        snprintf(buf, cap, "events=%lld unpriced=%lld calls=%lld input=%lld", ev, un, calls, in);
}

static void totals_line(json_object *rep, char *buf, size_t cap)
{
        json_object *t = get(rep, "totals");
        snprintf(buf, cap, "events=%lld unpriced=%lld calls=%lld input=%lld",
                 (long long)json_object_get_int64(get(t, "events")),
                 (long long)json_object_get_int64(get(t, "unpriced_events")),
                 (long long)json_object_get_int64(get(t, "tool_calls")),
                 (long long)(get(t, "input_tokens") ? json_object_get_int64(get(t, "input_tokens")) : 0));
}

/* Events per week start (YYYY-MM-DD) counted with localtime in tz. */
static size_t weeks_by_libc(const char *tz, int wstart, int64_t lo, int64_t hi, char keys[][11],
                            int *counts, size_t max)
{
        size_t n = 0;
        const char *old = getenv("TZ");
        char *saved = old ? strdup(old) : NULL;

        setenv("TZ", tz, 1);
        tzset();
        for (int i = 0; i < N_ROWS; i++) {
                if (row_time[i] < lo || row_time[i] >= hi)
                        continue;
                time_t s = (time_t)(row_time[i] / 1000);
                struct tm tm;
                localtime_r(&s, &tm);
                struct tm d = {.tm_year = tm.tm_year, .tm_mon = tm.tm_mon,
                               .tm_mday = tm.tm_mday - (tm.tm_wday - wstart + 7) % 7, .tm_hour = 12};
                time_t g = timegm(&d);
                gmtime_r(&g, &d);
                char k[11];
                strftime(k, sizeof(k), "%Y-%m-%d", &d);
                size_t j = 0;
                while (j < n && strcmp(keys[j], k) != 0)
                        j++;
                if (j == n && n < max) {
                        memcpy(keys[n], k, 11);
                        counts[n++] = 0;
                }
                if (j < max)
                        counts[j]++;
        }
        if (saved) {
                setenv("TZ", saved, 1);
                free(saved);
        } else {
                unsetenv("TZ");
        }
        tzset();
        return n;
}

static void check_zone(const char *tz, const char *since, const char *until)
{
        static const enum report_kind kinds[] = {REPORT_WEEKLY, REPORT_MONTHLY, REPORT_PROJECT,
                                                 REPORT_MODEL};
        struct report_query dq = {.kind = REPORT_DAILY, .tz = tz, .since = since, .until = until};
        json_object *daily = run(dq);
        char want[512], got[512], a[256], b[256];

        sums_line(get(daily, "totals"), want, sizeof(want));
        rows_line(daily, a, sizeof(a));
        totals_line(daily, b, sizeof(b));
        ok(strcmp(a, b) == 0, "%s %s..%s: daily rows add up to its totals", tz, since ? since : "", until ? until : "");
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
                for (int bd = REPORT_BREAKDOWN_NONE; bd <= REPORT_BREAKDOWN_HARNESS; bd++) {
                        if (kinds[k] == REPORT_MODEL && bd)
                                continue;
                        for (int ws = 0; ws < (kinds[k] == REPORT_WEEKLY ? 7 : 1); ws++) {
                                struct report_query q = dq;
                                q.kind = kinds[k];
                                q.breakdown = (enum report_breakdown)bd;
                                q.week_start = ws;
                                q.week_start_set = kinds[k] == REPORT_WEEKLY;
                                q.merge_worktrees = kinds[k] == REPORT_PROJECT && bd == 0;
                                json_object *o = run(q);
                                sums_line(get(o, "totals"), got, sizeof(got));
                                rows_line(o, a, sizeof(a));
                                totals_line(o, b, sizeof(b));
                                ok(strcmp(got, want) == 0 && strcmp(a, b) == 0,
                                   "%s %s..%s: %s%s%s%s totals = daily totals, rows add up",
                                   tz, since ? since : "", until ? until : "", report_kind_name(q.kind),
                                   bd ? " by " : "", bd ? report_breakdown_name(q.breakdown) : "",
                                   q.week_start_set ? report_week_start_name(ws) : "");
                                if (strcmp(got, want) != 0)
                                        printf("#   got  %s\n#   want %s\n", got, want);
                                json_object_put(o);
                        }
                }

        /* weekly keys and counts: the same as localtime's, for two week starts */
        for (int ws = 0; ws <= 1; ws++) {
                struct report_query q = dq;
                struct report_range rg;
                char keys[64][11];
                int counts[64];
                q.kind = REPORT_WEEKLY;
                q.week_start = ws;
                q.week_start_set = true;
                report_query_range(&q, &rg, NULL);
                size_t n = weeks_by_libc(tz, ws, rg.since_ms, rg.until_ms, keys, counts, 64);
                json_object *o = run(q), *rows = get(o, "rows");
                bool same = json_object_array_length(rows) == n;
                for (size_t i = 0; same && i < n; i++) {
                        json_object *r = json_object_array_get_idx(rows, i);
                        same = strcmp(json_object_get_string(get(r, "key")), keys[i]) == 0 &&
                               json_object_get_int64(get(r, "events")) == counts[i];
                        if (!same)
                                printf("#   week %zu: got %s %lld, localtime says %s %d\n", i,
                                       json_object_get_string(get(r, "key")),
                                       (long long)json_object_get_int64(get(r, "events")), keys[i], counts[i]);
                }
                ok(same, "%s %s..%s: weeks starting %s match an independent localtime count (%zu weeks)",
                   tz, since ? since : "", until ? until : "", report_week_start_name(ws), n);
                json_object_put(o);
        }
        json_object_put(daily);
}

static void test_worktrees(void);

int main(void)
{
        char dir[300], cmd[400];

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        if (ledger_open(dir, 0, &L) < 0)
                return 99;
        put_rows();
        static const char *const zones[] = {"UTC", "Europe/Berlin", "America/New_York",
                                            "Australia/Lord_Howe", "Asia/Kathmandu"};
        for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
                check_zone(zones[z], NULL, NULL);
                check_zone(zones[z], "2026-03-08", "2026-04-05"); /* US and EU DST starts, LHI ends */
        }

        /* ISO week names */
        json_object *o = run((struct report_query){.kind = REPORT_WEEKLY, .tz = "UTC"});
        json_object *r0 = json_object_array_get_idx(get(o, "rows"), 0);
        is_str(json_object_get_string(get(r0, "key")), "2026-02-16", "first week starts Monday 2026-02-16");
        is_str(json_object_get_string(get(r0, "iso_week")), "2026-W08", "... ISO week 2026-W08");
        is_str(json_object_get_string(get(o, "week_start")), "monday", "week_start echoed");
        json_object_put(o);
        char w[16];
        report_iso_week("2024-12-30", w);
        is_str(w, "2025-W01", "ISO week of 2024-12-30 is 2025-W01");
        report_iso_week("2027-01-01", w);
        is_str(w, "2026-W53", "ISO week of Friday 2027-01-01 is 2026-W53");

        /* a breakdown only where it makes sense */
        struct report_query bq = {.kind = REPORT_SESSION, .breakdown = REPORT_BREAKDOWN_MODEL};
        const char *err = NULL;
        is_int(report_run(L, &bq, &o, &err), -EINVAL, "session --breakdown: -EINVAL");
        int wd;
        ok(report_week_start_parse("Sun", &wd) == 0 && wd == 0, "week start 'Sun' = 0");
        is_int(report_week_start_parse("xy", &wd), -EINVAL, "week start 'xy' refused");

        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
        test_worktrees();
        return tap_done();
}

static void put_project(const char *id, const char *project)
{
        static struct usage_row r;
        struct keyhash h;
        memset(&r, 0, sizeof(r));
        keyhash_begin(&h, "wt-test");
        keyhash_str(&h, id);
        keyhash_end(&h, &r.key);
        r.kind = ROW_KIND_MESSAGE;
        r.flags = ROW_F_TOKENS_KNOWN;
        r.input = 10;
        r.time_ms = 1771545600000LL;
        ROW_SET(r.tool, "pi");
        ROW_SET(r.session, "s");
        row_set_str(r.project, sizeof(r.project), project, strlen(project));
        struct commit_batch b = {.rows = &r, .n_rows = 1};
        if (ledger_commit(L, &b, NULL) < 0)
                abort();
}

/* --merge-worktrees: a worktree's rows count under its main checkout. */
static void test_worktrees(void)
{
        char dir[300], main_[400], wt[400], other[400], path[500], cmd[1400];
        FILE *f;

        snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
        snprintf(main_, sizeof(main_), "%s/src/app", dir);
        snprintf(wt, sizeof(wt), "%s/src/app-feature", dir);
        snprintf(other, sizeof(other), "%s/src/lib", dir);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.git/worktrees/app-feature' '%s' '%s/.git'", main_, wt, other);
        if (system(cmd) != 0 || ledger_open(dir, 0, &L) < 0)
                exit(99);
        snprintf(path, sizeof(path), "%s/.git", wt);
        f = fopen(path, "w");
        fprintf(f, "gitdir: %s/.git/worktrees/app-feature\n", main_);
        fclose(f);
        put_project("a", main_);
        put_project("b", wt);
        put_project("c", wt);
        put_project("d", other);
        put_project("e", "/nonexistent/place");

        json_object *plain = run((struct report_query){.kind = REPORT_PROJECT, .tz = "UTC"});
        json_object *merged = run((struct report_query){.kind = REPORT_PROJECT, .tz = "UTC",
                                                         .merge_worktrees = true});
        is_int(json_object_array_length(get(plain, "rows")), 4, "projects: four cwds");
        is_int(json_object_array_length(get(merged, "rows")), 3, "--merge-worktrees: the worktree joins its checkout");
        bool found = false;
        for (size_t i = 0; i < json_object_array_length(get(merged, "rows")); i++) {
                json_object *r = json_object_array_get_idx(get(merged, "rows"), i);
                if (strcmp(json_object_get_string(get(r, "project")), main_) == 0)
                        found = json_object_get_int64(get(r, "events")) == 3;
        }
        ok(found, "... the main checkout has its own and the worktree's 3 events");
        ok(json_object_get_boolean(get(merged, "merge_worktrees")), "merge_worktrees echoed");
        json_object_put(plain);
        json_object_put(merged);
        ledger_close(L);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                printf("# could not remove %s\n", dir);
}
