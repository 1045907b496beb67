#!/bin/bash
# A full disk under the state directory (a 1 MB tmpfs mounted by the test):
# the daemon says once what is wrong (the ledger, not the session files),
# shows it in status, loses nothing, and resumes by itself as soon as a
# commit can succeed (the tmpfs is grown), ending exact.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to mount a small tmpfs"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
want=$($GEN corpus "$S" --files 40 --mb 6 --seed 21 --small | jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]')
mount -t tmpfs -o size=1m amtest "$XDG_STATE_HOME" || skip_all "cannot mount a tmpfs here"
trap 'stop_daemon >/dev/null 2>&1; umount "$XDG_STATE_HOME" 2>/dev/null; cleanup_env' EXIT
start_daemon; ok $? "daemon starts on a 1 MB state directory"
full() { "$C" status --json | jq -e '.ledger.write_error != null' >/dev/null; }
wait_until 30 full; ok $? "status says the ledger cannot be written"
"$C" status | grep -q "CANNOT WRITE"; ok $? "the human status says so too"
sleep 2
# said once, not at every retry: never twice without a resume between (a
# commit small enough to fit the last free pages is a resume, and the next
# one that does not fit is then said again)
n=$(grep -E "the ledger cannot be written|writable again" "$T/daemon.log" | sed 's/.*writable again.*/W/; s/.*cannot be written.*/E/' | tr -d '\n')
case $n in E|EWE|EWEWE) ok 0 "said once in the log (each time it stopped: $n)" ;;
	*) ok 1 "said once in the log"; diag "sequence: $n" ;; esac
is "$(grep -c 'cannot read source' "$T/daemon.log")" 0 "no session file is blamed"
check "daemon alive while the disk is full" kill -0 "$DPID"
mount -o remount,size=256m "$XDG_STATE_HOME"
eq() { [ "$(totals_line)" = "$want" ]; }
wait_until 30 eq; ok $? "resumes by itself once there is room, and ends exact"
[ "$(totals_line)" = "$want" ] || diag "got $(totals_line) expected $want"
check "status no longer reports a write error" sh -c "'$C' status --json | jq -e '.ledger.write_error == null' >/dev/null"
check "the log says it resumed" grep -q "writable again" "$T/daemon.log"
stop_daemon; ok $? "daemon stops"
done_testing
