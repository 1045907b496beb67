/* The team ledger's pieces without a server: team.conf (keys, defaults,
 * bad lines, the password rule, the machine key), COPY lines (escaping,
 * invalid UTF-8, uuids), the batch statement, and the report builder fed by
 * a source other than the ledger: a --by machine split, its filters left
 * to the source, the same totals as without the split. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "tap.h"
#include "team-ledger/conf.h"
#include "team-ledger/copy.h"
#include "team-ledger/schema.h"

static void conf_tests(void)
{
        struct team_conf c;
        static const char good[] = "# the team\nurl = host=/run/pg dbname=team\n  machine = box-1 \nuser=alice\n"
                                   "connect_timeout = 3\nquery_timeout=30\n";
        char buf[512];

        memset(&c, 0, sizeof(c));
        is_int(team_conf_parse(good, strlen(good), &c), 0, "conf: parses");
        is_str(c.url, "host=/run/pg dbname=team", "conf: url, the whole rest of the line");
        is_str(c.machine, "box-1", "conf: machine, trimmed");
        ok(c.machine_set, "conf: machine set");
        is_str(c.user, "alice", "conf: user without blanks around =");
        is_int(c.connect_timeout_s, 3, "conf: connect_timeout");
        is_int(c.query_timeout_s, 30, "conf: query_timeout");
        is_str(c.error, "", "conf: no error");

        memset(&c, 0, sizeof(c));
        static const char bad[] = "url = x\nmachne = typo\nquery_timeout = 0\n";
        team_conf_parse(bad, strlen(bad), &c);
        ok(strstr(c.error, "line 2") && strstr(c.error, "unknown key"), "conf: an unknown key says its line (%s)", c.error);
        memset(&c, 0, sizeof(c));
        static const char none[] = "machine = m\n";
        team_conf_parse(none, strlen(none), &c);
        ok(strstr(c.error, "no 'url ='") != NULL, "conf: a file without url says so");
        memset(&c, 0, sizeof(c));
        static const char nul[] = "url = a\0b\n";
        team_conf_parse(nul, sizeof(nul) - 1, &c);
        ok(strstr(c.error, "NUL") != NULL, "conf: a NUL byte is refused");

        c.private_file = false;
        c.mode = 0644;
        ok(team_conf_password_refusal(&c, false, buf, sizeof(buf)) == NULL, "password rule: no password, fine");
        ok(team_conf_password_refusal(&c, true, buf, sizeof(buf)) && strstr(buf, "mode 0644"),
           "password rule: refused in a readable file (%s)", buf);
        c.private_file = true;
        c.mode = 0600;
        ok(team_conf_password_refusal(&c, true, buf, sizeof(buf)) == NULL, "password rule: fine in a private file");

        char k1[TEAM_KEY_HEX + 1], k2[TEAM_KEY_HEX + 1], k3[TEAM_KEY_HEX + 1];
        team_machine_key("0123456789abcdef0123456789abcdef", NULL, k1);
        team_machine_key("0123456789abcdef0123456789abcdef", "box-1", k2);
        team_machine_key("0123456789abcdef0123456789abcdef", NULL, k3);
        ok(strlen(k1) == TEAM_KEY_HEX && strcmp(k1, k3) == 0, "machine key: stable, 32 hex digits");
        ok(strcmp(k1, k2) != 0, "machine key: a configured name makes another machine");
}

static void copy_tests(void)
{
        struct team_buf b = { 0 };
        struct usage_row *r = calloc(1, sizeof(*r));
        struct activity_entry a = { 0 };
        struct row_key ck;
        char u[37];

        for (int i = 0; i < ROW_KEY_SIZE; i++)
                r->key.b[i] = (uint8_t)(i * 17);
        team_uuid(&r->key, u);
        is_str(u, "00112233-4455-6677-8899-aabbccddeeff", "uuid text");
        r->flags = ROW_F_TOKENS_KNOWN | ROW_F_SIDECHAIN;
        r->kind = ROW_KIND_MESSAGE;
        r->time_ms = 1782900000123LL;
        r->input = 5, r->output = 7, r->total = 12;
        r->cost_source = COST_COMPUTED, r->cost_nano = 42;
        ROW_SET(r->tool, "claude");
        ROW_SET(r->session, "s\t1");
        ROW_SET(r->project, "/home/u/a\\b\nc");
        memcpy(r->model, "m\xff\xc3\xa9", 5); /* a stray byte, then é */
        r->n_calls = 2;
        is_int(team_copy_row(&b, r, true), 0, "copy: a row");
        is_str(b.p, "00112233-4455-6677-8899-aabbccddeeff\tt\tclaude\ts\\t1\t/home/u/a\\\\b\\nc\t\tm\xef\xbf\xbd\xc3\xa9\t\t\t"
                    "1\t1782900000123\tf\tt\tt\t5\t7\t0\t0\t0\t0\t12\t42\t2\t\t2\n",
               "copy: escapes, U+FFFD for a bad byte, flags, numbers in the staging table's order");
        team_buf_reset(&b);
        r->cost_source = COST_NONE;
        team_copy_row(&b, r, false);
        ok(strstr(b.p, "\t12\t0\t0\t\t2\n") != NULL, "copy: an unpriced row sends cost 0 with source 0");
        team_buf_reset(&b);
        memset(ck.b, 0xab, sizeof(ck.b));
        a.usage_key = r->key;
        ROW_SET(a.tool, "claude");
        ROW_SET(a.name, "Bash");
        a.index = 3;
        a.time_ms = 5;
        is_int(team_copy_call(&b, &ck, &a), 0, "copy: a call");
        is_str(b.p, "abababab-abab-abab-abab-abababababab\t00112233-4455-6677-8899-aabbccddeeff\tclaude\tBash\t3\t5\n",
               "copy: the call's line");
        team_buf_free(&b);
        free(r);

        char sql[32768];
        is_int(team_batch_sql(sql, sizeof(sql), 7, 99, 3, 4), 0, "batch statement fits");
        ok(strstr(sql, "acked_seq = GREATEST(acked_seq, 99)") && strstr(sql, "WHERE id = 7;") &&
           strstr(sql, "ON CONFLICT (key) DO NOTHING") && strstr(sql, "COMMIT") &&
           strstr(sql, "WHERE NOT repriced") && strstr(sql, "WHERE  repriced"),
           "batch statement: the two merges, the calls, the cursor, COMMIT");
        is_int(team_batch_sql(sql, 100, 7, 99, 3, 4), -ENOBUFS, "batch statement: too small a buffer");
}

/* ---- the builder over a source that is not the ledger ---------------------- */

#define T0 1782900000000LL /* 2026-07-01T10:00:00Z */

static int fake_rollups(void *ctx, const struct report_query *q, int64_t from, int64_t until,
                        report_item_fn cb, void *u)
{
        static const char *const parties[] = { "alpha", "beta" };
        (void)ctx;
        for (int i = 0; i < 4; i++) {
                struct report_item it = {
                        .first_ms = T0 + i * 86400000LL / 2, .tool = "claude", .provider = "anthropic",
                        .model = "m", .project = "", .session = "",
                        .party = q->by ? parties[i % 2] : "",
                        .sums = { .events = 1 + (uint64_t)i, .token_events = 1, .input = 10,
                                  .priced_events = 1, .cost_nano = 1000 },
                };
                it.last_ms = it.first_ms;
                if (it.first_ms < from || it.first_ms >= until)
                        continue;
                int r = cb(&it, u);
                if (r)
                        return r;
        }
        return 0;
}

static int fake_none(void *ctx, const struct report_query *q, report_item_fn cb, void *u)
{
        (void)ctx, (void)q, (void)cb, (void)u;
        return -ENOSYS;
}

static void builder_tests(void)
{
        struct report_source src = { .rollups = fake_rollups, .rows = fake_none };
        struct report_query q = { .kind = REPORT_DAILY, .tz = "UTC", .team = true };
        struct report_result res;
        json_object *rep;
        const char *err = NULL;

        is_int(report_build_from(&src, &q, &res, &err), 0, "builder from a source: daily");
        is_int(res.n, 2, "two days");
        is_int(res.totals.events, 10, "the totals: every item");
        report_result_free(&res);
        q.by = REPORT_BY_MACHINE;
        is_int(report_build_from(&src, &q, &res, &err), 0, "by machine");
        is_int(res.n, 4, "a row per day and machine");
        ok(strcmp(res.rows[0].party, "alpha") == 0 && strcmp(res.rows[1].party, "beta") == 0 &&
           strcmp(res.rows[0].key, res.rows[1].key) == 0, "sorted by day, then machine");
        is_int(res.totals.events, 10, "the same totals split");
        report_result_free(&res);
        q.machines[0] = "alpha";
        is_int(report_run_from(&src, &q, &rep, &err), 0, "as JSON");
        json_object *row0 = json_object_array_get_idx(json_object_object_get(rep, "rows"), 0);
        is_str(json_object_get_string(json_object_object_get(row0, "machine")), "alpha", "rows carry the machine");
        is_str(json_object_get_string(json_object_object_get(rep, "by")), "machine", "the header says by machine");
        ok(json_object_get_boolean(json_object_object_get(rep, "team")), "the header says team");
        is_str(json_object_get_string(json_object_array_get_idx(json_object_object_get(rep, "machines"), 0)),
               "alpha", "the header names the machine filter");
        json_object_put(rep);
        q.kind = REPORT_PROJECT;
        ok(report_build_from(&src, &q, &res, &err) == -ENOSYS && err, "a source's error comes back (%s)", err ? err : "");
}

int main(void)
{
        conf_tests();
        copy_tests();
        builder_tests();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
