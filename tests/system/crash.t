#!/bin/bash
# kill -9 in the middle of ingesting a large corpus, then restart: the
# totals must equal the generator's exactly (rows and checkpoint are one
# transaction: nothing lost, nothing counted twice). Each kill lands while
# the daemon is reading: after it committed rows of its own and before it
# committed them all (asserted, so the test cannot pass by killing an idle
# daemon). The index's backlog is written into it every 5,000 keys here
# (64k by default), so kills land before, between and after those writes;
# and one run is killed between two pieces of such a write (each piece is
# its own txn after the rows' commit).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v mdb_stat >/dev/null || skip_all "mdb_stat (lmdb-utils) not installed"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
g=$($GEN corpus "$S" --files 40 --pairs 2000 --small --seed 11)
want=$(jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' <<<"$g")
total=$(jq -r .events <<<"$g")
# the rows committed, read from the ledger file itself (a reader beside the
# daemon, as LMDB allows): no wait for an answer of a daemon busy scanning
events() { mdb_stat -n -s rows "$XDG_STATE_HOME/agentmeterd/ledger.mdb" 2>/dev/null | sed -n 's/^ *Entries: //p'; }
export AGENTMETER_TEST_BACKLOG_KEYS=5000
mid=0
prev=0
for i in 1 2 3 4 5; do
	"$D" --log-target=console >>"$T/daemon.log" 2>&1 &
	pid=$!
	# kill as soon as this run has committed rows of its own
	for _ in $(seq 1500); do
		now=$(events)
		[ -n "$now" ] && [ "$now" -gt "$prev" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.005
	done
	kill -9 "$pid" 2>/dev/null; killed=$?
	wait "$pid" 2>/dev/null
	rows=$("$C" report daily --json 2>/dev/null | jq -r '.totals.events // 0')
	diag "kill $i: $rows of $total rows committed"
	[ "$killed" -eq 0 ] && [ "$rows" -gt "$prev" ] && [ "$rows" -lt "$total" ] && mid=$((mid + 1))
	prev=$rows
done
ok $(( mid >= 3 ? 0 : 1 )) "at least three of the five kills landed mid-ingest ($mid)"
start_daemon; ok $? "restart after five kill -9"
wait_until 60 sh -c "\"$C\" status --json | jq -e '.ingest.initial_scan_done' >/dev/null"
ok $? "initial scan completes"
is "$(totals_line)" "$want" "totals exactly equal a clean ingest"
stop_daemon
indexed=$(mdb_stat -n -s rowkeys "$XDG_STATE_HOME/agentmeterd/ledger.mdb" | sed -n 's/^ *Entries: //p')
ok $(( indexed > 0 && indexed <= $(events) ? 0 : 1 )) "  the index took entries, none beyond the rows ($indexed of $(events) rows indexed)"
# killed between two pieces of the backlog's write into the index: the next
# run reads the backlog back from the rows, finds the keys of those pieces
# indexed already (the same rows), counts them as written, loses nothing
rm -rf "$XDG_STATE_HOME/agentmeterd"
AGENTMETER_TEST_BACKLOG_PIECE_KEYS=500 AGENTMETER_TEST_BACKLOG_PIECE_KILL=3 "$D" --once >/dev/null 2>&1 &
wait $! 2>/dev/null
is "$?" 137 "--once killed (SIGKILL) right after the third piece of its first write into the index"
keys() { mdb_stat -n -s rowkeys "$XDG_STATE_HOME/agentmeterd/ledger.mdb" | sed -n 's/^ *Entries: //p'; }
is "$(keys)" 1500 "  the index holds those three pieces' keys (1,500), their rows committed ($(events))"
"$D" --once >/dev/null 2>&1
ok $? "  --once again: the rest read, the backlog written again"
is "$(totals_line)" "$want" "  totals exactly equal a clean ingest"
indexed=$(keys)
ok $(( indexed > 1500 && indexed <= $(events) ? 0 : 1 )) "  the index went on, none beyond the rows ($indexed of $(events))"
# and a clean ingest of the same corpus from scratch agrees
unset AGENTMETER_TEST_BACKLOG_KEYS
rm -rf "$XDG_STATE_HOME/agentmeterd"
"$D" --once >/dev/null 2>&1
is "$(totals_line)" "$want" "a clean --once gives the same totals"
done_testing
