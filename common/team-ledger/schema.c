/* The team schema's SQL. Rows are keyed by the ledger's 16-byte content key
 * (as a uuid), so the same call sent by two machines, or twice, is one row;
 * the merge is the ledger's monotone upsert (ledger/rows.c, merge_row):
 * per token field the maximum, the cost of the greater price, the earliest
 * time (an exact one beats an approximate one), the main-chain session
 * over a sidechain copy, empty strings filled; the first machine stays the
 * row's origin. A repriced row's cost replaces the stored one when its
 * tokens are all at least the stored ones. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "team-ledger/schema.h"

#define S TEAM_SCHEMA "."

const char team_schema_v1_sql[] =
        "CREATE SCHEMA IF NOT EXISTS " TEAM_SCHEMA ";\n"
        "CREATE TABLE " S "schema_info (version integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),"
        " migrated_at timestamptz NOT NULL DEFAULT now());\n"
        "INSERT INTO " S "schema_info (version) VALUES (1);\n"
        /* one per (machine, ledger): a daemon's identity and its cursor */
        "CREATE TABLE " S "meters (\n"
        "  id serial PRIMARY KEY,\n"
        "  machine_key text NOT NULL,\n"
        "  ledger_id text NOT NULL,\n"
        "  machine text NOT NULL,\n"
        "  user_name text NOT NULL,\n"
        "  acked_seq bigint NOT NULL DEFAULT 0,\n"
        "  rows_received bigint NOT NULL DEFAULT 0,\n"
        "  calls_received bigint NOT NULL DEFAULT 0,\n"
        "  batches bigint NOT NULL DEFAULT 0,\n"
        "  first_seen timestamptz NOT NULL DEFAULT now(),\n"
        "  last_push timestamptz,\n"
        "  agent_version text NOT NULL DEFAULT '',\n"
        "  UNIQUE (machine_key, ledger_id));\n"
        "CREATE TABLE " S "usage (\n"
        "  key uuid PRIMARY KEY,\n"
        "  origin integer NOT NULL REFERENCES " S "meters (id),\n"
        "  harness text NOT NULL, session text NOT NULL, project text NOT NULL,\n"
        "  provider text NOT NULL, model text NOT NULL, model_alias text NOT NULL, tier text NOT NULL,\n"
        "  kind smallint NOT NULL,\n"
        "  time_ms bigint NOT NULL, time_approx boolean NOT NULL, sidechain boolean NOT NULL,\n"
        "  tokens_known boolean NOT NULL,\n"
        "  input bigint NOT NULL, output bigint NOT NULL, cache_read bigint NOT NULL,\n"
        "  cache_write bigint NOT NULL, cache_write_1h bigint NOT NULL, reasoning bigint NOT NULL,\n"
        "  total bigint NOT NULL,\n"
        "  cost_nano bigint NOT NULL, cost_source smallint NOT NULL, price_source text NOT NULL,\n"
        "  n_calls integer NOT NULL,\n"
        "  received_at timestamptz NOT NULL DEFAULT now(),\n"
        "  updated_at timestamptz NOT NULL DEFAULT now());\n"
        "CREATE INDEX usage_time ON " S "usage (time_ms);\n"
        "CREATE INDEX usage_origin ON " S "usage (origin);\n"
        "CREATE TABLE " S "calls (\n"
        "  key uuid PRIMARY KEY,\n"
        "  usage_key uuid NOT NULL,\n"
        "  origin integer NOT NULL REFERENCES " S "meters (id),\n"
        "  harness text NOT NULL, name text NOT NULL, idx integer NOT NULL, time_ms bigint NOT NULL);\n"
        "CREATE INDEX calls_time ON " S "calls (time_ms);\n"
        /* what readers (psql, Grafana, agentmeterctl report --team) see */
        "CREATE VIEW " S "usage_rows AS SELECT u.key, m.machine, m.user_name, u.harness, u.session,"
        " u.project, u.provider, u.model, u.model_alias, u.tier, u.kind, u.time_ms,"
        " to_timestamp(u.time_ms / 1000.0) AS time, u.time_approx, u.sidechain, u.tokens_known,"
        " u.input, u.output, u.cache_read, u.cache_write, u.cache_write_1h, u.reasoning, u.total,"
        " CASE WHEN u.cost_source <> 0 THEN u.cost_nano / 1e9 END AS cost_usd,"
        " u.cost_nano, u.cost_source, u.price_source, u.n_calls"
        " FROM " S "usage u JOIN " S "meters m ON m.id = u.origin;\n"
        "CREATE VIEW " S "tool_calls AS SELECT c.key, c.usage_key, m.machine, m.user_name, c.harness,"
        " c.name AS tool, c.time_ms, to_timestamp(c.time_ms / 1000.0) AS time,"
        " u.cost_source, u.cost_nano, u.n_calls, u.session, u.project"
        " FROM " S "calls c JOIN " S "meters m ON m.id = c.origin"
        " LEFT JOIN " S "usage u ON u.key = c.usage_key;\n"
#define SUMS \
        " count(*) AS events," \
        " sum(input) FILTER (WHERE tokens_known) AS input_tokens," \
        " sum(output) FILTER (WHERE tokens_known) AS output_tokens," \
        " sum(cache_read) FILTER (WHERE tokens_known) AS cache_read_tokens," \
        " sum(cache_write) FILTER (WHERE tokens_known) AS cache_write_tokens," \
        " sum(reasoning) FILTER (WHERE tokens_known) AS reasoning_tokens," \
        " sum(total) FILTER (WHERE tokens_known) AS total_tokens," \
        " sum(cost_usd) AS cost_usd," \
        " count(*) FILTER (WHERE cost_source = 0) AS unpriced_events," \
        " sum(n_calls) AS tool_calls," \
        " min(time) AS first, max(time) AS last"
        "CREATE VIEW " S "daily AS SELECT date_trunc('day', time) AS day, machine, user_name, harness,"
        " provider, model," SUMS " FROM " S "usage_rows GROUP BY 1, 2, 3, 4, 5, 6;\n"
        "CREATE VIEW " S "by_user AS SELECT user_name," SUMS " FROM " S "usage_rows GROUP BY 1;\n"
        "CREATE VIEW " S "by_machine AS SELECT machine, user_name," SUMS " FROM " S "usage_rows GROUP BY 1, 2;\n"
        "CREATE VIEW " S "by_model AS SELECT harness, provider, model," SUMS " FROM " S "usage_rows"
        " GROUP BY 1, 2, 3;\n"
        "CREATE VIEW " S "by_project AS SELECT project," SUMS " FROM " S "usage_rows GROUP BY 1;\n"
        "CREATE VIEW " S "machines AS SELECT machine, user_name, machine_key, ledger_id, first_seen,"
        " last_push, rows_received, calls_received, batches, agent_version FROM " S "meters;\n";

/* ---- version 2: the rollups ---------------------------------------------------
 *
 * A usage row adds to its rollup (bucket of its time, origin, harness,
 * provider, model): one event, its tokens when known, its cost when priced
 * (cost_source <> 0; computed = 2), its tool calls. Two widths: `rollups`
 * per 15 minutes (a local day in any zone is a whole number of them) and
 * `rollups_hourly` per hour (enough for a zone whose offsets are whole
 * hours, most of them, with a fraction of the rows). The merge of a push
 * (INSERT ... ON CONFLICT DO UPDATE) fires the insert trigger with the
 * rows it inserted and the update trigger with the old and new images of
 * the rows it changed: the update's difference (-old +new, also when the
 * row moved to an earlier bucket) is added in the same statement's
 * transaction, so the rollups always equal the sums of the rows. The
 * groups are written in key order: two pushes touching the same rollups
 * lock them in one order (no deadlock). */
#define QUARTER "900000"
#define HOUR "3600000"
#define BUCKET_OF(t, w) "(" t " - mod(mod(" t ", " w ") + " w ", " w "))"
#define CONTRIB(sign, tbl, w) \
        "SELECT " sign " AS sign, " BUCKET_OF("time_ms", w) " AS bucket_ms, origin, harness, provider, model," \
        " tokens_known, input, output, cache_read, cache_write, cache_write_1h, reasoning, total," \
        " cost_source, cost_nano, n_calls FROM " tbl
#define SIGNED(f) " coalesce(sum(sign * " f ") FILTER (WHERE tokens_known), 0),"
#define ROLLUP_ADD(table, contrib) \
        "INSERT INTO " S table " AS r SELECT bucket_ms, origin, harness, provider, model, sum(sign)," \
        " coalesce(sum(sign) FILTER (WHERE tokens_known), 0)," \
        SIGNED("input") SIGNED("output") SIGNED("cache_read") SIGNED("cache_write") \
        SIGNED("cache_write_1h") SIGNED("reasoning") SIGNED("total") \
        " coalesce(sum(sign * cost_nano) FILTER (WHERE cost_source <> 0), 0)," \
        " coalesce(sum(sign) FILTER (WHERE cost_source <> 0), 0)," \
        " coalesce(sum(sign) FILTER (WHERE cost_source = 2), 0)," \
        " coalesce(sum(sign * n_calls), 0)" \
        " FROM (" contrib ") d GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5" \
        " ON CONFLICT (bucket_ms, origin, harness, provider, model) DO UPDATE SET" \
        " events = r.events + EXCLUDED.events, token_events = r.token_events + EXCLUDED.token_events," \
        " input = r.input + EXCLUDED.input, output = r.output + EXCLUDED.output," \
        " cache_read = r.cache_read + EXCLUDED.cache_read, cache_write = r.cache_write + EXCLUDED.cache_write," \
        " cache_write_1h = r.cache_write_1h + EXCLUDED.cache_write_1h," \
        " reasoning = r.reasoning + EXCLUDED.reasoning, total = r.total + EXCLUDED.total," \
        " cost_nano = r.cost_nano + EXCLUDED.cost_nano, priced_events = r.priced_events + EXCLUDED.priced_events," \
        " computed_events = r.computed_events + EXCLUDED.computed_events, calls = r.calls + EXCLUDED.calls"
/* contrib(w): the statement's contributions at width w */
#define BOTH(contrib) ROLLUP_ADD("rollups", contrib(QUARTER)) "; " ROLLUP_ADD("rollups_hourly", contrib(HOUR))
#define TRIGGER_FN(name, contrib) \
        "CREATE FUNCTION " S name "() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp" \
        " AS $f$ BEGIN " BOTH(contrib) "; RETURN NULL; END $f$;\n"
#define INSERTED(w) CONTRIB("1", "new_rows", w)
#define UPDATED(w) CONTRIB("1", "new_rows", w) " UNION ALL " CONTRIB("-1", "old_rows", w)
#define DELETED(w) CONTRIB("-1", "old_rows", w)
#define EXISTING(w) CONTRIB("1", S "usage", w)
#define ROLLUP_TABLE(name) \
        "CREATE TABLE " S name " (\n" \
        "  bucket_ms bigint NOT NULL, origin integer NOT NULL REFERENCES " S "meters (id),\n" \
        "  harness text NOT NULL, provider text NOT NULL, model text NOT NULL,\n" \
        "  events bigint NOT NULL, token_events bigint NOT NULL,\n" \
        "  input bigint NOT NULL, output bigint NOT NULL, cache_read bigint NOT NULL,\n" \
        "  cache_write bigint NOT NULL, cache_write_1h bigint NOT NULL, reasoning bigint NOT NULL,\n" \
        "  total bigint NOT NULL, cost_nano bigint NOT NULL, priced_events bigint NOT NULL,\n" \
        "  computed_events bigint NOT NULL, calls bigint NOT NULL,\n" \
        "  PRIMARY KEY (bucket_ms, origin, harness, provider, model));\n"
/* a left join on the meter's key: a query that names no meter column
 * reads the rollups alone (the planner drops the join) */
#define ROLLUP_VIEW(name, table) \
        "CREATE VIEW " S name " AS SELECT r.bucket_ms, to_timestamp(r.bucket_ms / 1000.0) AS bucket," \
        " m.machine, m.user_name, r.harness, r.provider, r.model, r.events, r.token_events, r.input, r.output," \
        " r.cache_read, r.cache_write, r.cache_write_1h, r.reasoning, r.total, r.cost_nano," \
        " r.priced_events, r.computed_events, r.calls" \
        " FROM " S table " r LEFT JOIN " S "meters m ON m.id = r.origin WHERE r.events <> 0;\n"

const char team_migrate_v2_sql[] =
        ROLLUP_TABLE("rollups")
        ROLLUP_TABLE("rollups_hourly")
        TRIGGER_FN("rollups_on_insert", INSERTED)
        TRIGGER_FN("rollups_on_update", UPDATED)
        TRIGGER_FN("rollups_on_delete", DELETED)
        "CREATE TRIGGER rollups_on_insert AFTER INSERT ON " S "usage REFERENCING NEW TABLE AS new_rows"
        " FOR EACH STATEMENT EXECUTE FUNCTION " S "rollups_on_insert();\n"
        "CREATE TRIGGER rollups_on_update AFTER UPDATE ON " S "usage REFERENCING OLD TABLE AS old_rows"
        " NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION " S "rollups_on_update();\n"
        "CREATE TRIGGER rollups_on_delete AFTER DELETE ON " S "usage REFERENCING OLD TABLE AS old_rows"
        " FOR EACH STATEMENT EXECUTE FUNCTION " S "rollups_on_delete();\n"
        /* the rows already there (the table is locked by the trigger's creation) */
        BOTH(EXISTING) ";\n"
        ROLLUP_VIEW("rollup_rows", "rollups")
        ROLLUP_VIEW("rollup_hours", "rollups_hourly")
        /* the span of the data, from the primary key's ends */
        "CREATE VIEW " S "rollup_span AS SELECT min(bucket_ms) AS first_ms, max(bucket_ms) AS last_ms"
        " FROM " S "rollups;\n"
        "UPDATE " S "schema_info SET version = 2, migrated_at = now();\n";

const char team_roles_sql[] =
        "DO $$ BEGIN\n"
        "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentmeter_writer') THEN\n"
        "    CREATE ROLE agentmeter_writer NOLOGIN; END IF;\n"
        "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentmeter_reader') THEN\n"
        "    CREATE ROLE agentmeter_reader NOLOGIN; END IF;\n"
        "END $$;\n"
        "GRANT USAGE ON SCHEMA " TEAM_SCHEMA " TO agentmeter_writer, agentmeter_reader;\n"
        "GRANT SELECT ON " S "schema_info TO agentmeter_writer, agentmeter_reader;\n"
        /* INSERT ... ON CONFLICT DO UPDATE reads the stored row: SELECT too */
        "GRANT SELECT, INSERT, UPDATE ON " S "usage, " S "calls, " S "meters, " S "rollups, " S "rollups_hourly TO agentmeter_writer;\n"
        "GRANT USAGE ON SEQUENCE " S "meters_id_seq TO agentmeter_writer;\n"
        "GRANT SELECT ON " S "usage_rows, " S "tool_calls, " S "daily, " S "by_user, " S "by_machine, "
        S "by_model, " S "by_project, " S "machines, " S "rollup_rows, " S "rollup_hours, " S "rollup_span TO agentmeter_reader;\n";

const char team_staging_sql[] =
        "CREATE TEMP TABLE am_rows (key uuid, repriced boolean, harness text, session text,"
        " project text, provider text, model text, model_alias text, tier text, kind smallint,"
        " time_ms bigint, time_approx boolean, sidechain boolean, tokens_known boolean,"
        " input bigint, output bigint, cache_read bigint, cache_write bigint, cache_write_1h bigint,"
        " reasoning bigint, total bigint, cost_nano bigint, cost_source smallint, price_source text,"
        " n_calls integer) ON COMMIT DELETE ROWS;\n"
        "CREATE TEMP TABLE am_calls (key uuid, usage_key uuid, harness text, name text, idx integer,"
        " time_ms bigint) ON COMMIT DELETE ROWS;\n";

#define COLS "key, origin, harness, session, project, provider, model, model_alias, tier, kind," \
             " time_ms, time_approx, sidechain, tokens_known, input, output, cache_read, cache_write," \
             " cache_write_1h, reasoning, total, cost_nano, cost_source, price_source, n_calls"
#define SRC_COLS "key, %d, harness, session, project, provider, model, model_alias, tier, kind," \
                 " time_ms, time_approx, sidechain, tokens_known, input, output, cache_read, cache_write," \
                 " cache_write_1h, reasoning, total, cost_nano, cost_source, price_source, n_calls"
#define TOK(f) f " = CASE WHEN EXCLUDED.tokens_known THEN GREATEST(t." f ", EXCLUDED." f ") ELSE t." f " END, "
#define EARLIER "((t.time_approx AND NOT EXCLUDED.time_approx) OR (t.time_approx = EXCLUDED.time_approx" \
                " AND EXCLUDED.time_ms < t.time_ms))"
#define MAIN "(t.sidechain AND NOT EXCLUDED.sidechain AND EXCLUDED.session <> '')"
#define FILL(f) f " = CASE WHEN t." f " = '' THEN EXCLUDED." f " ELSE t." f " END, "
#define DOMINATES "(NOT t.tokens_known OR (EXCLUDED.tokens_known AND EXCLUDED.input >= t.input" \
                  " AND EXCLUDED.output >= t.output AND EXCLUDED.cache_read >= t.cache_read" \
                  " AND EXCLUDED.cache_write >= t.cache_write AND EXCLUDED.cache_write_1h >= t.cache_write_1h" \
                  " AND EXCLUDED.reasoning >= t.reasoning AND EXCLUDED.total >= t.total))"
/* %s: the cost rule (TAKE or TAKE_REPRICED) three times */
#define MERGE(take) \
        "INSERT INTO " S "usage AS t (" COLS ") SELECT DISTINCT ON (key) " SRC_COLS \
        " FROM pg_temp.am_rows WHERE %s repriced ORDER BY key" \
        " ON CONFLICT (key) DO UPDATE SET " \
        "tokens_known = t.tokens_known OR EXCLUDED.tokens_known, " \
        TOK("input") TOK("output") TOK("cache_read") TOK("cache_write") TOK("cache_write_1h") \
        TOK("reasoning") TOK("total") \
        "cost_nano = CASE WHEN " take " THEN EXCLUDED.cost_nano ELSE t.cost_nano END, " \
        "cost_source = CASE WHEN " take " THEN EXCLUDED.cost_source ELSE t.cost_source END, " \
        "price_source = CASE WHEN " take " THEN EXCLUDED.price_source ELSE t.price_source END, " \
        "time_ms = CASE WHEN " EARLIER " THEN EXCLUDED.time_ms ELSE t.time_ms END, " \
        "time_approx = CASE WHEN " EARLIER " THEN EXCLUDED.time_approx ELSE t.time_approx END, " \
        "session = CASE WHEN " MAIN " OR t.session = '' THEN EXCLUDED.session ELSE t.session END, " \
        "sidechain = CASE WHEN " MAIN " THEN false ELSE t.sidechain END, " \
        FILL("project") FILL("provider") FILL("model") FILL("model_alias") FILL("tier") \
        "n_calls = GREATEST(t.n_calls, EXCLUDED.n_calls), updated_at = now() " \
        /* an identical copy (the other machine's, or a re-send) writes nothing */ \
        "WHERE (t.tokens_known, t.input, t.output, t.cache_read, t.cache_write, t.cache_write_1h," \
        " t.reasoning, t.total, t.cost_nano, t.cost_source, t.price_source, t.time_ms, t.time_approx," \
        " t.session, t.sidechain, t.project, t.provider, t.model, t.model_alias, t.tier, t.n_calls)" \
        " IS DISTINCT FROM (EXCLUDED.tokens_known, EXCLUDED.input, EXCLUDED.output, EXCLUDED.cache_read," \
        " EXCLUDED.cache_write, EXCLUDED.cache_write_1h, EXCLUDED.reasoning, EXCLUDED.total," \
        " EXCLUDED.cost_nano, EXCLUDED.cost_source, EXCLUDED.price_source, EXCLUDED.time_ms," \
        " EXCLUDED.time_approx, EXCLUDED.session, EXCLUDED.sidechain, EXCLUDED.project," \
        " EXCLUDED.provider, EXCLUDED.model, EXCLUDED.model_alias, EXCLUDED.tier, EXCLUDED.n_calls);\n"
#define TAKE "(EXCLUDED.cost_source <> 0 AND (t.cost_source = 0 OR EXCLUDED.cost_nano > t.cost_nano))"
#define TAKE_REPRICED "(EXCLUDED.cost_source <> 0 AND (t.cost_source = 0 OR EXCLUDED.cost_nano > t.cost_nano" \
                      " OR " DOMINATES "))"

int team_batch_sql(char *buf, size_t cap, int meter_id, uint64_t acked_seq, uint64_t n_rows,
                   uint64_t n_calls)
{
        int n = snprintf(buf, cap,
                         MERGE(TAKE) MERGE(TAKE_REPRICED)
                         "INSERT INTO " S "calls (key, usage_key, origin, harness, name, idx, time_ms)"
                         " SELECT DISTINCT ON (key) key, usage_key, %d, harness, name, idx, time_ms"
                         " FROM pg_temp.am_calls ORDER BY key ON CONFLICT (key) DO NOTHING;\n"
                         "UPDATE " S "meters SET acked_seq = GREATEST(acked_seq, %" PRIu64 "),"
                         " rows_received = rows_received + %" PRIu64 ", calls_received = calls_received + %" PRIu64 ","
                         " batches = batches + 1, last_push = now() WHERE id = %d;\n"
                         "COMMIT",
                         meter_id, "NOT", meter_id, "", meter_id, acked_seq, n_rows, n_calls, meter_id);
        return n < 0 || (size_t)n >= cap ? -ENOBUFS : 0;
}
