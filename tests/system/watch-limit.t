#!/bin/bash
# Out of inotify watches (a user namespace with max_inotify_watches=4, so
# the machine's own limit is untouched): the daemon neither crashes nor
# recurses, says so in status and the log, covers the unwatched
# directories by the periodic reconcile, and stays exact, at start and for
# directories created while it runs.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
unshare -Ur true 2>/dev/null || skip_all "needs unprivileged user namespaces (unshare -Ur)"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
parts=()
for i in $(seq 12); do parts+=("$($GEN session "$S/--p$i--/s$i.jsonl" --calls 2 --seed $((300 + i)) --small)"); done
sum() { printf '%s\n' "$@" | jq -s -c '[(map(.events)|add), (map(.input)|add), (map(.output)|add), (map(.cache_read)|add), (map(.cache_write)|add), (map(.total)|add), ((map(.cost_nano)|add)/1e9)]'; }
want=$(sum "${parts[@]}")

# the daemon in its own user namespace, where only 4 watches may exist
unshare -Ur sh -c 'echo 4 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"' \
	"$D" --log-target=console --reconcile-interval=1 >>"$T/daemon.log" 2>&1 &
DPID=$!
wait_until 10 "$C" version; ok $? "daemon comes up with 4 watches for 13 directories"
totals_are() { [ "$(totals_line)" = "$want" ]; }
wait_until 20 totals_are; ok $? "exact totals at start"
[ "$(totals_line)" = "$want" ] || diag "got $(totals_line) expected $want"
check "status says it is out of watches" sh -c "'$C' status --json | jq -e '.warnings | map(select(test(\"out of inotify watches\"))) | length == 1' >/dev/null"
n=$(grep -c "out of inotify watches" "$T/daemon.log")
is "$n" 1 "the journal/console says it once, not once per directory"

# live: new directories, which cannot be watched either, and appends there
for i in $(seq 13 20); do parts+=("$($GEN session "$S/--p$i--/s$i.jsonl" --calls 1 --seed $((300 + i)) --small)"); done
parts+=("$($GEN append "$S/--p3--/s3.jsonl" --calls 2 --seed 999 --small)")
want=$(sum "${parts[@]}")
wait_until 20 totals_are; ok $? "exact totals after live directories and appends (reconcile covers them)"
[ "$(totals_line)" = "$want" ] || diag "got $(totals_line) expected $want"
check "daemon still running" kill -0 "$DPID"
check "no sanitizer or crash report" sh -c "! grep -qE 'AddressSanitizer|runtime error|stack-overflow' '$T/daemon.log'"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
