#!/bin/bash
# A ledger of schema 1 (fixtures/ledger-schema1, made by the release before
# rows were appended under row ids) reads the same with today's binaries:
# read-only as it is, then moved into schema 4 by the daemon's first
# writable open (also when that move is interrupted and finished by a later
# open), with the old release's daily, model, session and tool reports each
# time; --rebuild-rollups gives the same sums; the files it came from add
# nothing when read again (every content key found through the new index).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
FX=$FIX/ledger-schema1
dbs() { mdb_stat -n -a "$1/ledger.mdb" | sed -n 's/^Status of //p' | sort | tr '\n' ' '; }
L=$T/ledger
mkdir -p "$L"
cp "$FX/ledger.mdb" "$L/"
is "$(dbs "$L")" "Main DB activity identity meta rollup sessions sources usage " "the fixture is schema 1 (usage, activity)"
same_reports "$L" "read-only, as it is"
is "$(dbs "$L")" "Main DB activity identity meta rollup sessions sources usage " "  a read-only open changed nothing"

out=$("$D" --state-dir "$L" --rebuild-rollups 2>&1); rc=$?
is "$rc" 0 "a writable open (--rebuild-rollups) exits 0"
[ "$rc" -eq 0 ] || diag "$out"
is "$(dbs "$L")" "Main DB calls identity meta rollup rowkeys rows sessions sources srcstate " "  it moved the rows and calls into schema 4"
is "$(mdb_dump -n -s meta -p "$L/ledger.mdb" | grep -A1 '^ schema_version$' | tail -1 | tr -d ' ')" 4 "  schema_version 4"
same_reports "$L" "schema 4, sums rebuilt"

# interrupted after 2 transactions of 10 rows or calls, finished by the next open
L2=$T/ledger2
mkdir -p "$L2"
cp "$FX/ledger.mdb" "$L2/"
! AGENTMETER_TEST_MIGRATE_CHUNK=10 AGENTMETER_TEST_MIGRATE_STOP=2 "$D" --state-dir "$L2" --rebuild-rollups >/dev/null 2>&1
ok $? "an interrupted move fails the open (as a crash would end it)"
check "  half moved: both layouts there" sh -c "mdb_stat -n -a '$L2/ledger.mdb' | grep -q 'Status of rows' && mdb_stat -n -a '$L2/ledger.mdb' | grep -q 'Status of usage'"
same_reports "$L2" "half moved, read-only"
AGENTMETER_TEST_MIGRATE_CHUNK=10 "$D" --state-dir "$L2" --rebuild-rollups >/dev/null 2>&1
ok $? "the next open finishes the move, 10 rows or calls a transaction"
is "$(dbs "$L2")" "Main DB calls identity meta rollup rowkeys rows sessions sources srcstate " "  schema 4"
same_reports "$L2" "finished after an interruption"

# killed (SIGKILL) after each of its transactions in turn, 8 rows or calls
# each, until a run is no longer killed: every later open reads the old
# release's sums (read-only) and the next writable open finishes the move
L3=$T/ledger3
bad=0 k=0 kills=0
while [ $k -lt 100 ]; do
	k=$((k + 1))
	rm -rf "$L3"; mkdir -p "$L3"; cp "$FX/ledger.mdb" "$L3/"
	# (the shell's "Killed" note to /dev/null too)
	rc=$({ AGENTMETER_TEST_MIGRATE_CHUNK=8 AGENTMETER_TEST_MIGRATE_KILL=$k "$D" --state-dir "$L3" --rebuild-rollups \
		>/dev/null 2>&1; echo $?; } 2>/dev/null)
	[ $rc -eq 0 ] && break
	[ $rc -eq 137 ] && kills=$((kills + 1)) || { bad=$((bad + 1)); diag "step $k: exit $rc, not killed"; }
	[ "$(report_of "$L3" daily)" = "$(old_report daily)" ] || { bad=$((bad + 1)); diag "killed at $k: read-only daily differs"; }
	"$D" --state-dir "$L3" --rebuild-rollups >/dev/null 2>&1 || { bad=$((bad + 1)); diag "killed at $k: the next open failed"; }
	[ "$(report_of "$L3" session)" = "$(old_report session)" ] || { bad=$((bad + 1)); diag "killed at $k: finished, session differs"; }
done
# 75 rows and 24 calls, 8 a transaction (10 + 3), and the version
is "$kills" 14 "the migration killed by SIGKILL after each of its 14 transactions"
is "$bad" 0 "  each time read-only the old release's sums, finished by the next open with the old release's sessions"
is "$(dbs "$L3")" "Main DB calls identity meta rollup rowkeys rows sessions sources srcstate " "  schema 4 after the last"

# the same files read into the moved ledger: nothing new
old_release_homes
out=$("$D" --state-dir "$L" --once 2>&1)
ok $? "--once over the files the old release read"
like "$out" " 0 rows added" "  0 rows added: every call found by its content key"
like "$out" " 0 tool calls" "  0 tool calls added"
tok='.totals | {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, tool_calls}'
is "$("$C" --state-dir "$L" report daily --json 2>/dev/null | jq -cS "$tok")" "$(jq -cS "$tok" "$FX/report-daily.json")" \
	"  the same tokens and calls"
is "$(report_of "$L" tool)" "$(old_report tool)" "  the same tool report"
done_testing
