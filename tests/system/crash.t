#!/bin/bash
# kill -9 in the middle of ingesting a large corpus, at random points,
# then restart: the totals must equal the generator's exactly (rows and
# checkpoint are one transaction: nothing lost, nothing counted twice).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
g=$($GEN corpus "$S" --files 60 --mb 60 --seed 11)
want=$(jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' <<<"$g")
RANDOM=4242
for i in 1 2 3 4 5; do
	"$D" --log-target=console >>"$T/daemon.log" 2>&1 &
	pid=$!
	# die somewhere between 20 ms and 400 ms into the ingest
	sleep "0.$(printf '%03d' $((20 + RANDOM % 380)))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rows=$("$C" report daily --json 2>/dev/null | jq '.totals.events')
	diag "kill $i: $rows rows committed so far"
done
start_daemon; ok $? "restart after five kill -9"
wait_until 60 sh -c "\"$C\" status --json | jq -e '.ingest.initial_scan_done' >/dev/null"
ok $? "initial scan completes"
is "$(totals_line)" "$want" "totals exactly equal a clean ingest"
stop_daemon
# and a clean ingest of the same corpus from scratch agrees
rm -rf "$XDG_STATE_HOME/agentmeterd"
"$D" --once >/dev/null 2>&1
is "$(totals_line)" "$want" "a clean --once gives the same totals"
done_testing
