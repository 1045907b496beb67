#!/bin/bash
# The team ledger against a real PostgreSQL (Debian's postgresql-15, started
# here: initdb into the test's directory, Unix socket only, as an
# unprivileged user): two daemons (two homes, machines alpha and beta,
# users alice and bob) with overlapping corpora (the same Claude Code
# session in both) push into one database; every team report equals the
# same report over one local ledger that ingested the union, the shared
# session once. Then: the server stopped while both meter (the rows arrive
# after), a daemon killed -9 between the server's commit and its own (it
# sends nothing again), the server restarted in the middle of a batch.
# The failure cases (team-errors.t) and no team.conf (team-off.t) are apart.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
. "$(dirname "$(readlink -f "$0")")/lib-pg.sh"
pg_have || skip_all "no PostgreSQL 15 server binaries ($PGBIN; Debian: postgresql-15)"
command -v jq >/dev/null || skip_all "no jq"
new_env
trap 'pg_cleanup; cleanup_team' EXIT
HOLD=$AM_BUILD/tools/lib/lmdb-hold
pg_init || { echo "1..0 # SKIP postgres would not start"; exit 0; }
use_test_user
. "$(dirname "$(readlink -f "$0")")/lib-team.sh"

SHARED=11111111-1111-4111-8111-111111111111
# homes: alpha has Claude Code and pi, beta Claude Code and Codex, U all three
mk_home A alpha alice
mk_home B beta bob
mk_home U
for h in A B U; do cp -r "$FIX/claude/config" "$T/$h/home/.claude"; done
for h in A U; do mkdir -p "$T/$h/home/.pi"; cp -r "$FIX/pi/agent" "$T/$h/home/.pi/agent"; done
for h in B U; do cp -r "$FIX/codex/home" "$T/$h/home/.codex"; done
fix_owner

out=$(team_init A 2>&1); rc=$?
is "$rc" 0 "team init creates the schema"
sed 's/^/# /' <<<"$out"
check "team init says which version it made" grep -q "schema version 2 created" <<<"$out"
out=$(team_init A 2>&1)
check "team init again: up to date, nothing changed" grep -q "version 2 .*is up to date" <<<"$out"
is "$(pg_q 'SELECT count(*) FROM agentmeter.schema_info')" 1 "one schema version row"

start_d A && start_d B
ok $? "both daemons start"
check "alpha: everything sent" wait_until 30 holds 'drained A'
check "beta: everything sent" wait_until 30 holds 'drained B'
is "$(tstat A state)" connected "status: alpha connected"
is "$(tstat A machine)/$(tstat B machine)" alpha/beta "status: the machines' names"
ok "$([ "$(tstat A rows_sent)" -gt 0 ] && echo 0 || echo 1)" "status: alpha counts rows sent ($(tstat A rows_sent))"
check "status text: the team line" grep -q "^team          connected to .* as machine alpha, user alice: backlog 0" \
	<<<"$(ctl A status)"
union_once

# the same report from the team server and from the union's ledger
for kind in daily weekly monthly session model tool project blocks; do
	is "$(team_rep A "$kind")" "$(union_rep "$kind")" "team $kind report equals the union ledger's"
done
is "$(team_rep A daily --breakdown model)" "$(union_rep daily --breakdown model)" "daily --breakdown model equals"
is "$(team_rep A daily --cost vendor)" "$(union_rep daily --cost vendor)" "daily --cost vendor equals"
is "$(team_rep A session --cost vendor)" "$(union_rep session --cost vendor)" "session --cost vendor equals"
is "$(team_rep A daily --harness claude)" "$(union_rep daily --harness claude)" "daily --harness claude equals"
is "$(team_rep A daily --since 2026-11-30 --until 2026-11-30)" "$(union_rep daily --since 2026-11-30 --until 2026-11-30)" \
	"a date range equals"
want=$(jq ".sessions[\"$SHARED\"].rows" "$FIX/claude/expected.json")
is "$(ctl A report session --team --json | jq "[.rows[] | select(.session == \"$SHARED\") | .events] | add")" \
	"$want" "the shared session counted once ($want calls)"
is "$(pg_q "SELECT count(*) FROM agentmeter.usage WHERE harness = 'claude'")" \
	"$(jq .all.rows "$FIX/claude/expected.json")" "the shared calls are one row each on the server"
is "$(pg_q "SELECT count(DISTINCT origin) FROM agentmeter.usage WHERE harness = 'claude'")" 1 \
	"each shared row has one origin: the machine that sent it first"

# by machine and by user, and their filters
bym=$(ctl A report daily --team --by machine --json)
is "$(jq -c '[.rows[].machine] | unique' <<<"$bym")" '["alpha","beta"]' "--by machine: both machines"
is "$(jq '[.rows[].events] | add' <<<"$bym")" "$(jq .totals.events <<<"$bym")" "--by machine: the rows sum to the totals"
is "$(jq -r .by <<<"$bym")" machine "--by machine: the report says so"
byu=$(ctl A report model --team --by user --json)
is "$(jq -c '[.rows[].user] | unique' <<<"$byu")" '["alice","bob"]' "--by user: both users"
ea=$(ctl A report daily --team --machine alpha --json | jq .totals.events)
eb=$(ctl A report daily --team --machine beta --json | jq .totals.events)
is "$((ea + eb))" "$(jq .totals.events <<<"$bym")" "--machine alpha + --machine beta = all ($ea + $eb)"
is "$(ctl A report daily --team --user bob --json | jq .totals.events)" "$eb" "--user bob = beta's"
is "$(ctl A report daily --team --machine alpha,beta --json | jq .totals.events)" "$((ea + eb))" "--machine a,b: both"
# each party's rows of a --by report are that party's own report (the
# server groups the rollups by party, harness and day, by model only for
# the reports that show models)
for m in alpha beta; do
	is "$(jq -cS "[.rows[] | select(.machine == \"$m\") | del(.machine)]" <<<"$bym")" \
	   "$(ctl A report daily --team --machine "$m" --json | jq -cS .rows)" "--by machine: $m's rows are its daily report"
done
for u in alice bob; do
	is "$(jq -cS "[.rows[] | select(.user == \"$u\") | del(.user)]" <<<"$byu")" \
	   "$(ctl A report model --team --user "$u" --json | jq -cS .rows)" "--by user: $u's rows are its model report"
done
is "$(team_rep A daily --breakdown harness)" "$(union_rep daily --breakdown harness)" "daily --breakdown harness equals"
is "$(team_rep A weekly --breakdown model)" "$(union_rep weekly --breakdown model)" "weekly --breakdown model equals"
check "table: the machine column" grep -q "^date  *machine" <<<"$(ctl A report daily --team --by machine)"
check "csv: the machine column" grep -q "^date,machine," <<<"$(ctl A report daily --team --by machine --csv)"
check "tool table with --by user" grep -q "user" <<<"$(ctl A report tool --team --by user)"
check "--by without --team is refused" holds '! ctl A report daily --by machine >/dev/null 2>&1'
check "view daily answers" holds '[ "$(pg_q "SELECT count(*) FROM agentmeter.daily")" -gt 0 ]'
is "$(pg_q "SELECT sum(events) FROM agentmeter.by_machine")" "$(jq .totals.events <<<"$bym")" "view by_machine: all events"

# ---- the server stopped while both meter -----------------------------------
logA=$(wc -l <"$T/A.log")
pg_stop
before=$(local_events A)
beforeB=$(local_events B)
new_call A msg_T1 40
new_call B msg_T1 40 # the same call on both machines
new_call B msg_T2 7
new_call U msg_T1 40
new_call U msg_T2 7
check "server down: alpha meters its new call" wait_until 20 holds "[ \"\$(local_events A)\" = $((before + 1)) ]"
check "server down: beta meters both" wait_until 20 holds "[ \"\$(local_events B)\" = $((beforeB + 2)) ]"
check "server down: status says retrying, with the error" wait_until 20 holds '[ "$(tstat A state)" = retrying ] && [ -n "$(tstat A last_error)" ]'
diag "alpha: $(tstat A last_error)"
check "server down: the new rows wait in the backlog" holds '[ "$(tstat A backlog)" -gt 0 ]'
pg_start
check "server back: alpha sends its backlog" wait_until 60 holds 'drained A'
check "server back: beta sends its backlog" wait_until 60 holds 'drained B'
union_once
is "$(team_rep A daily)" "$(union_rep daily)" "after the outage: the team daily report equals the union's"
is "$(team_rep B session)" "$(union_rep session)" "after the outage: the session report too"
outage=$(tail -n +$((logA + 1)) "$T/A.log" | grep "team ledger")
diag "alpha's log during the outage:"; sed 's/^/#   /' <<<"$outage"
n_fail=$(grep -c "warning: team ledger" <<<"$outage")
ok "$([ "$n_fail" -ge 1 ] && [ "$n_fail" -le 2 ] && echo 0 || echo 1)" \
	"journal: the outage logged once per state (the close, the refused connect), not per retry ($n_fail)"
check "journal: the reconnection logged" grep -q "team ledger .*: connected" <<<"$outage"

# ---- killed -9 between the server's commit and the ledger's -----------------
sent0=$(pg_q "SELECT rows_received || '/' || batches FROM agentmeter.meters WHERE machine = 'alpha'")
acked0=$(pg_q "SELECT acked_seq FROM agentmeter.meters WHERE machine = 'alpha'")
pg_stop
new_call A msg_K1 11
new_call A msg_K2 12
new_call U msg_K1 11
new_call U msg_K2 12
check "kill: alpha metered the calls" wait_until 20 holds '[ "$(tstat A backlog)" -ge 2 ]'
# the ledger quiet (no write for two seconds): the next write is the batch's acknowledgement
txn_id() { mdb_stat -n -e "$T/A/state/agentmeterd/ledger.mdb" | sed -n 's/.*Last transaction ID: //p'; }
quiet() { local a; a=$(txn_id); sleep 2; [ "$a" = "$(txn_id)" ]; }
check "kill: alpha's ledger is quiet" wait_until 20 quiet
"$HOLD" "$T/A/state/agentmeterd/ledger.mdb" >"$T/hold.out" 2>&1 &
HPID=$!
check "kill: the ledger's writer lock is held" wait_until 10 grep -q held "$T/hold.out"
pg_start
# (the retry comes after the backoff the outage grew: up to 60 s, and a
# SIGHUP would not hurry it: its reload waits for the held ledger)
check "kill: the server committed alpha's batch" wait_until 150 holds \
	"[ \"\$(pg_q \"SELECT acked_seq FROM agentmeter.meters WHERE machine = 'alpha'\")\" -gt $acked0 ]"
# (when it did not: whether the daemon still answered, its team state and
# its log, to tell a blocked loop from a late retry)
[ "$(pg_q "SELECT acked_seq FROM agentmeter.meters WHERE machine = 'alpha'")" -gt "$acked0" ] || {
	diag "alpha's team state: $(ctl A status --json 2>&1 | jq -c .team 2>&1)"
	tail -n 15 "$T/A.log" | sed 's/^/#   /'
}
sent1=$(pg_q "SELECT rows_received || '/' || batches FROM agentmeter.meters WHERE machine = 'alpha'")
kill -KILL "${DPIDS[A]}"; wait "${DPIDS[A]}" 2>/dev/null
kill -TERM "$HPID"; wait "$HPID"
diag "alpha's rows/batches on the server: $sent0 before, $sent1 after the commit"
start_d A
check "kill: alpha back, its backlog empty (moved to the server's cursor)" wait_until 30 holds 'drained A'
sleep 1
is "$(pg_q "SELECT rows_received || '/' || batches FROM agentmeter.meters WHERE machine = 'alpha'")" "$sent1" \
	"kill: nothing sent again after the restart"
is "$(tstat A rows_sent)" 0 "kill: the restarted daemon sent no row"
union_once
is "$(team_rep A daily)" "$(union_rep daily)" "kill: the team report equals the union's"

# ---- the server restarted in the middle of a batch ----------------------------
# a session holds a lock on the rows table, so beta's batch waits inside its
# transaction after the COPY; the server restarts under it
psql -X -q -h "$PGD" -U postgres -d team -c "BEGIN; LOCK TABLE agentmeter.usage IN SHARE MODE; SELECT pg_sleep(120)" \
	>/dev/null 2>&1 &
LPID=$!
check "mid-batch: the lock is taken" wait_until 10 holds \
	"[ \"\$(pg_q \"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'usage' AND l.mode = 'ShareLock' AND l.granted\")\" = 1 ]"
new_call B msg_M1 21
new_call B msg_M2 22
new_call U msg_M1 21
new_call U msg_M2 22
check "mid-batch: beta's batch waits on the lock, inside its transaction" wait_until 30 holds \
	"[ \"\$(pg_q \"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'agentmeterd' AND wait_event_type = 'Lock'\")\" = 1 ]"
pg_stop fast
wait "$LPID" 2>/dev/null
pg_start
kill -HUP "${DPIDS[B]}"
check "mid-batch: beta sends again after the restart" wait_until 60 holds 'drained B'
union_once
is "$(team_rep B daily)" "$(union_rep daily)" "mid-batch: the team report equals the union's"
is "$(pg_q "SELECT count(*) FROM agentmeter.usage")" "$(union_rep daily | jq .totals.events)" \
	"mid-batch: every row on the server once"

# ---- a reprice is sent again: a lower price replaces the stored costs ----
cost0=$(team_rep A daily --harness claude | jq .totals.cost_usd)
for h in A B U; do
	printf 'price claude-sonnet-4-5 in=0.5 out=1 cache_read=0.05 cw5m=0.5 cw1h=1\n' >"$T/$h/config/agentmeterd/prices.conf"
done
fix_owner
ctl A reprice >/dev/null && ctl B reprice >/dev/null
ok $? "reprice on both machines"
union_once # repriced as it starts: the table changed
check "reprice: alpha sends the repriced rows" wait_until 30 holds 'drained A'
check "reprice: beta too" wait_until 30 holds 'drained B'
cost1=$(team_rep A daily --harness claude | jq .totals.cost_usd)
check "reprice: the team's claude cost went down ($cost0 -> $cost1)" holds "python3 -c 'import sys; sys.exit(not $cost1 < $cost0)'"
is "$(team_rep A daily)" "$(union_rep daily)" "reprice: the team report equals the repriced union's"
is "$(team_rep A session)" "$(union_rep session)" "reprice: sessions too"

# ---- the rollups (schema version 2) ---------------------------------------------
# kept by the server's triggers in the push's transaction: after merges of
# one call from two machines, a kill, a restart and a reprice they equal
# the rows' own sums
RSUM="SELECT sum(events), sum(token_events), sum(input), sum(output), sum(cache_read), sum(cache_write),
 sum(reasoning), sum(cost_nano), sum(priced_events), sum(calls) FROM agentmeter.rollups"
HSUM=${RSUM/rollups/rollups_hourly}
USUM="SELECT count(*), count(*) FILTER (WHERE tokens_known), sum(input) FILTER (WHERE tokens_known),
 sum(output) FILTER (WHERE tokens_known), sum(cache_read) FILTER (WHERE tokens_known),
 sum(cache_write) FILTER (WHERE tokens_known), sum(reasoning) FILTER (WHERE tokens_known),
 sum(cost_nano) FILTER (WHERE cost_source <> 0), count(*) FILTER (WHERE cost_source <> 0), sum(n_calls)
 FROM agentmeter.usage"
is "$(pg_q "$RSUM")" "$(pg_q "$USUM")" "rollups: equal the rows' sums after two machines' merges, a kill and a reprice"
is "$(pg_q "$HSUM")" "$(pg_q "$USUM")" "rollups per hour: the same"
# the rollup reports read them, grouped into the asker's days on the server:
# the same as the union's in zones 5:45 and -5/-4 (DST) off UTC
for z in Asia/Kathmandu America/New_York; do
	for k in daily monthly model; do
		is "$(ctl A report $k --team --json --tz $z | jq -cS "$proj")" \
		   "$(as_d U "$C" --socket "$T/U/none.sock" report $k --json --tz $z 2>/dev/null | jq -cS "$proj")" \
		   "rollups: report $k in $z equals the union's"
	done
done
# ... and from the rollups, not the rows: a rollup changed by hand shows,
# the hourly ones in a zone of whole hours, the 15-minute ones in 5:45
bump() { # bump TABLE N
	pg_q "UPDATE agentmeter.$1 SET output = output + $2 WHERE ctid =
	 (SELECT ctid FROM agentmeter.$1 WHERE events > 0 ORDER BY bucket_ms LIMIT 1)" >/dev/null
}
out_of() { ctl A report daily --team --json --tz "$1" | jq .totals.output_tokens; }
want=$(union_rep daily | jq .totals.output_tokens)
bump rollups_hourly 1000000
is "$(out_of UTC) $(out_of Asia/Kathmandu)" "$((want + 1000000)) $want" "rollups: in UTC report daily --team reads the hourly rollups"
bump rollups_hourly -1000000
bump rollups 1000000
is "$(out_of UTC) $(out_of Asia/Kathmandu)" "$want $((want + 1000000))" "rollups: in Asia/Kathmandu the 15-minute ones"
bump rollups -1000000

# ---- migration: a version-1 server ------------------------------------------------
# the version-2 objects taken away: what a server made by the previous release is
pg_q "DROP VIEW agentmeter.rollup_rows, agentmeter.rollup_hours, agentmeter.rollup_span;
 DROP TRIGGER rollups_on_insert ON agentmeter.usage;
 DROP TRIGGER rollups_on_update ON agentmeter.usage; DROP TRIGGER rollups_on_delete ON agentmeter.usage;
 DROP FUNCTION agentmeter.rollups_on_insert(), agentmeter.rollups_on_update(), agentmeter.rollups_on_delete();
 DROP TABLE agentmeter.rollups, agentmeter.rollups_hourly; UPDATE agentmeter.schema_info SET version = 1" >/dev/null
new_call A msg_V1 31
new_call U msg_V1 31
check "v1: this release's daemon pushes into a version-1 schema" wait_until 30 holds 'drained A'
union_once
is "$(team_rep A daily)" "$(union_rep daily)" "v1: reports from the rows equal the union's"
out=$(team_init A 2>&1)
check "team init migrates: says from which version" grep -q "migrated from version 1 to 2" <<<"$out"
sed 's/^/# /' <<<"$out"
is "$(pg_q "$RSUM") $(pg_q "$HSUM")" "$(pg_q "$USUM") $(pg_q "$USUM")" "migrated: the rollups filled from the rows, every row once"
new_call B msg_V2 32
new_call U msg_V2 32
check "migrated: beta pushes a new call" wait_until 30 holds 'drained B'
union_once
is "$(pg_q "$RSUM") $(pg_q "$HSUM")" "$(pg_q "$USUM") $(pg_q "$USUM")" "migrated: the triggers keep them after the migration"
is "$(team_rep A daily)" "$(union_rep daily)" "migrated: report daily --team equals the union's"
is "$(team_rep A model)" "$(union_rep model)" "migrated: report model --team equals the union's"
is "$(pg_q "SELECT count(*) FROM agentmeter.usage")" "$(union_rep daily | jq .totals.events)" \
	"migrated: every row on the server once"

# ---- agentmeterctl web --team (issue 50): the team's page, by machine and
# by user, refreshed as pushes arrive (a call now on beta shows on alpha's)
as_cmd A
"${AS[@]}" "$C" web --team --listen 127.0.0.1:0 >"$T/web-team.out" 2>"$T/web-team.err" & # setpriv and env exec
WTPID=$!
wait_until 10 test -s "$T/web-team.out"
WURL=$(head -1 "$T/web-team.out")
wstate() { curl -s "${WURL%%/\?*}/api/state?token=${WURL#*token=}"; }
check "web --team: the team ledger's page with this month by machine and by user" wait_until 10 holds \
	'wstate | jq -e ".team and .problem == null and (.view | contains(\"This month by machine\") and contains(\"This month by user\"))"'
m0=$(wstate | jq '.totals.month.events // 0')
is "$m0" "$(ctl A report model --team --since "$(date +%Y-%m-01)" --json | jq '.totals.events // 0')" \
	"web --team: this month's calls as report --team counts them"
WPI=$T/B/home/.pi/agent/sessions/--home-u-web--/w.jsonl # a pi session beta's daemon finds as it appears
as_d B python3 "$TLIB/pi_call.py" header "$WPI" --cwd /home/u/web
as_d B python3 "$TLIB/pi_call.py" call "$WPI" --cost 0.5 --tokens 100
check "web --team: a call made now on beta is on alpha's page once pushed" wait_until 30 holds \
	"[ \"\$(wstate | jq '.totals.month.events // 0')\" = $((m0 + 1)) ] && wstate | jq -e '.view | contains(\"beta\")'"
[ "$T_FAIL" -gt 0 ] && { wstate | jq -c '.totals.month, .problem'; cat "$T/web-team.err"; } | sed 's/^/#   /'
kill -TERM "$WTPID"; wait "$WTPID"
is "$?" 0 "web --team ends with status 0 on SIGTERM"

check "alpha stops cleanly (exit 0; under ASan: no leak)" stop_d A
check "beta stops cleanly" stop_d B
done_testing
