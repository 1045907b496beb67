/* The team ledger's PostgreSQL schema (version TEAM_SCHEMA_VERSION) as SQL
 * text: what `agentmeterctl team init` runs, the staging tables and the
 * one-statement merge the daemon's push runs per batch. Nothing here
 * talks to a server. Tables, views and roles: docs/team.md. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TEAM_SCHEMA_VERSION 2
/* The oldest schema the push writes into: version 2 only added tables
 * and triggers the push does not name, so a daemon of this release pushes
 * to a server not yet migrated, and the daemons of a team can be upgraded
 * one by one before `team init` migrates the server. */
#define TEAM_SCHEMA_PUSH_MIN 1
#define TEAM_SCHEMA "agentmeter"

/* Creates schema version 1 from nothing (inside the caller's txn). */
extern const char team_schema_v1_sql[];
/* Version 1 -> 2 (inside the caller's txn): the rollups (sums per
 * 15-minute bucket x meter x harness x provider x model) kept by
 * statement triggers on usage in the same transaction as the rows, filled
 * from the rows already there; the view rollup_rows. */
extern const char team_migrate_v2_sql[];
/* Grants for the roles agentmeter_writer and agentmeter_reader, made when
 * missing (needs CREATEROLE; init runs it apart and reports a refusal). */
extern const char team_roles_sql[];
/* Per connection: the session's staging tables (ON COMMIT DELETE ROWS). */
extern const char team_staging_sql[];

/* The batch after the two COPYs, ending in COMMIT: both upserts, the
 * calls, the meter's cursor (acked_seq) and counters, into buf.
 * -ENOBUFS when it does not fit. */
int team_batch_sql(char *buf, size_t cap, int meter_id, uint64_t acked_seq, uint64_t n_rows,
                   uint64_t n_calls);

/* The query that starts a batch: BEGIN and the first COPY. */
#define TEAM_BATCH_BEGIN_SQL "BEGIN; COPY pg_temp.am_rows FROM STDIN"
#define TEAM_BATCH_CALLS_SQL "COPY pg_temp.am_calls FROM STDIN"
