#!/bin/bash
# A user's files can be anything: a 100 MB line, a file that grows and
# shrinks, a directory replaced by a file, permissions removed, symlink
# loops, binary junk. The daemon logs, counts, skips, keeps running, and
# does not spin.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
mkdir -p "$S"
use_test_user
W() { "${RUN[@]}" "$@"; }
g1=$($GEN session "$S/--ok--/ok.jsonl" --calls 2 --seed 1 --small)
[ -n "${AS_USER:-}" ] && chown -R "$AS_USER" "$T"
want=$(jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' <<<"$g1")
start_daemon; ok $? "daemon up"
totals_are() { [ "$(totals_line)" = "$want" ]; }
wait_until 10 totals_are; ok $? "baseline counted"

# a 100 MB line in the middle of a session, then a normal call
big=$S/--big--/big.jsonl
g2=$($GEN session "$big" --calls 1 --seed 2 --small)
python3 -c '
import sys
with open(sys.argv[1], "a") as f:
    f.write("{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"" + "x" * (100 << 20) + "\"}}\n")
' "$big"
g3=$($GEN append "$big" --calls 1 --seed 3 --small)
[ -n "${AS_USER:-}" ] && chown -R "$AS_USER" "$T"
want=$(printf '%s\n%s\n%s\n' "$g1" "$g2" "$g3" | jq -s -c '[(map(.events)|add), (map(.input)|add), (map(.output)|add), (map(.cache_read)|add), (map(.cache_write)|add), (map(.total)|add), ((map(.cost_nano)|add)/1e9)]')
wait_until 30 totals_are; ok $? "the calls around a 100 MB line are counted"
check "the over-long line was counted as skipped" wait_until 5 sh -c "${RUN[*]} '$C' sources --json | jq -e '[.sources[].oversized]|add >= 1' >/dev/null"

# grows and shrinks
gs=$S/--gs--/gs.jsonl
g4=$($GEN session "$gs" --calls 3 --seed 4 --small)
[ -n "${AS_USER:-}" ] && chown -R "$AS_USER" "$T"
for i in 1 2 3; do
	head -n 2 "$gs" > "$gs.tmp"; cat "$gs.tmp" > "$gs"; sleep 0.1
	$GEN session "$gs.tmp" --calls 3 --seed 4 --small >/dev/null; cat "$gs.tmp" > "$gs"; sleep 0.1
done
rm -f "$gs.tmp"
want=$(printf '%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" | jq -s -c '[(map(.events)|add), (map(.input)|add), (map(.output)|add), (map(.cache_read)|add), (map(.cache_write)|add), (map(.total)|add), ((map(.cost_nano)|add)/1e9)]')
wait_until 10 totals_are; ok $? "a file that grows and shrinks: exact totals"

# a session directory replaced by a file, and back
mv "$S/--gs--" "$T/gs-away"; echo junk > "$S/--gs--"; sleep 0.3
rm "$S/--gs--"; mv "$T/gs-away" "$S/--gs--"; sleep 0.3
check "directory replaced by a file: still alive" kill -0 "$DPID"
wait_until 10 totals_are; ok $? "... and totals still exact"

# permissions removed (meaningful when not effectively root)
if [ -n "${AS_USER:-}" ] || [ "$(id -u)" -ne 0 ]; then
	np=$S/--np--/np.jsonl
	g5=$($GEN session "$np" --calls 1 --seed 5 --small)
	chmod 000 "$np"; [ -n "${AS_USER:-}" ] && chown -R "$AS_USER" "$S/--np--"
	sleep 0.5
	check "unreadable file: still alive" kill -0 "$DPID"
	check "unreadable file: reported in sources" wait_until 5 sh -c "${RUN[*]} '$C' sources --json | jq -e '.sources[] | select(.path|endswith(\"np.jsonl\")) | .error != null' >/dev/null"
	chmod 644 "$np"; touch "$np"
	want=$(printf '%s\n%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" "$g5" | jq -s -c '[(map(.events)|add), (map(.input)|add), (map(.output)|add), (map(.cache_read)|add), (map(.cache_write)|add), (map(.total)|add), ((map(.cost_nano)|add)/1e9)]')
	W "$C" rescan >/dev/null
	wait_until 15 totals_are; ok $? "readable again: counted"
else
	skip "permissions cannot be tested as root without a test user"
fi

# symlink loops and junk
mkdir -p "$S/--loop--"; ln -s "$S/--loop--" "$S/--loop--/self"; ln -s a.jsonl "$S/--loop--/b.jsonl"; ln -s b.jsonl "$S/--loop--/a.jsonl"
head -c 100000 /dev/urandom > "$S/--loop--/junk.jsonl"
[ -n "${AS_USER:-}" ] && chown -h -R "$AS_USER" "$S/--loop--"
W "$C" rescan >/dev/null; sleep 0.5
check "symlink loops and junk: still alive" kill -0 "$DPID"
wait_until 10 totals_are; ok $? "... totals unchanged"

# no busy loop: an idle daemon with all of that around uses ~no CPU
W "$C" rescan >/dev/null; sleep 1
t0=$(awk '{print $14+$15}' /proc/$DPID/stat); sleep 3; t1=$(awk '{print $14+$15}' /proc/$DPID/stat)
check "idle for 3 s: under 0.3 s of CPU (no spinning)" [ $((t1 - t0)) -lt 30 ]
diag "cpu ticks in 3 s idle: $((t1 - t0))"
stop_daemon; ok $? "clean stop"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
