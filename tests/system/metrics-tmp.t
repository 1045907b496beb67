#!/bin/bash
# The metrics textfile in a directory others can write to (install
# --metrics-dir): whatever sits at the temporary name the daemon used to
# write through (a FIFO, a hard link to someone's file, a symlink) neither
# hangs the daemon nor is opened, followed, truncated or removed; the file
# is still written, SIGTERM still stops the daemon, and a temporary file of
# ours left by a kill -9 is removed at the next start.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
TF=$T/textfile
mkdir -p "$TF"
chmod 1777 "$TF"
cp -r "$FIX/pi/agent" "$T/agent"
export PI_CODING_AGENT_DIR=$T/agent

# start and stop within a bound, whatever state the daemon is in (a daemon
# hung in open(2) fails the test instead of hanging it)
start_bounded() {
	"$D" --log-target=console "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	wait_until 10 timeout 2 "$C" version
}
# stop within a bound, whatever state the daemon is in (kill -9 after it)
stop_bounded() {
	[ -n "${DPID:-}" ] || return 1
	kill -TERM "$DPID" 2>/dev/null
	if wait_until 10 holds '! kill -0 "$DPID"'; then wait "$DPID"; local rc=$?; DPID=; return $rc; fi
	kill -9 "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=
	return 1
}
answers() { timeout 3 "$C" status --json >/dev/null; }
trap 'kill -9 ${DPID:-} 2>/dev/null; cleanup_env' EXIT

# a FIFO at the old temporary name: opening it for writing blocks until a reader comes
mkfifo "$TF/.a.prom.tmp"
start_bounded --metrics-file="$TF/a.prom"; ok $? "the daemon starts with a FIFO at the temporary name"
check "the metrics file is written" wait_until 10 test -s "$TF/a.prom"
check "... with the ledger's series" wait_until 10 grep -q '^agentmeter_events_total{' "$TF/a.prom"
check "the daemon answers" answers
sleep 1.5 # a few more metrics ticks
check "... and still answers after more writes" answers
check "the FIFO is left alone" test -p "$TF/.a.prom.tmp"
stop_bounded; ok $? "SIGTERM stops it"

# a hard link to another file, and a symlink to another, at the temporary name
echo "victim's data" >"$T/victim"
ln "$T/victim" "$TF/.b.prom.tmp"
echo "other data" >"$T/victim2"
ln -s "$T/victim2" "$TF/.c.prom.tmp"
start_bounded --metrics-file="$TF/b.prom"; ok $? "the daemon starts with a hard link at the temporary name"
check "the metrics file is written" wait_until 10 test -s "$TF/b.prom"
is "$(cat "$T/victim")" "victim's data" "the hard-linked file is not truncated or written"
is "$(stat -c %h "$T/victim")" 2 "... nor renamed away"
stop_bounded; ok $? "SIGTERM stops it"
start_bounded --metrics-file="$TF/c.prom"; ok $? "the daemon starts with a symlink at the temporary name"
check "the metrics file is written" wait_until 10 test -s "$TF/c.prom"
is "$(cat "$T/victim2")" "other data" "the symlink is not followed"
check "... and left in place" test -L "$TF/.c.prom.tmp"
check "the textfile is a plain file" sh -c "[ -f '$TF/c.prom' ] && [ ! -L '$TF/c.prom' ]"
is "$(stat -c %a "$TF/c.prom")" 644 "... readable by node_exporter"
stop_bounded; ok $? "SIGTERM stops it"

# what a kill -9 in the middle of a write leaves: our own temporary file
printf 'half' >"$TF/.c.prom.0123456789abcdef.tmp"
mkfifo "$TF/.c.prom.fedcba9876543210.tmp"
start_bounded --metrics-file="$TF/c.prom"; ok $? "the daemon starts again"
check "a stale temporary file of ours is removed" wait_until 5 holds '[ ! -e "$TF/.c.prom.0123456789abcdef.tmp" ]'
check "... a FIFO under such a name is not touched" test -p "$TF/.c.prom.fedcba9876543210.tmp"
check "the daemon answers" answers
stop_bounded; ok $? "SIGTERM stops it"
is "$(find "$TF" -name '.*.prom.????????????????.tmp' | wc -l)" 1 "no temporary file is left behind (only the planted FIFO)"
done_testing
