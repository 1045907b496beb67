#!/bin/bash
# Trust (issue 13.4): agentmeterctl talks only to a daemon of its own user
# (socket directory, socket owner, SO_PEERCRED), which matters without
# XDG_RUNTIME_DIR where the socket is under /tmp; and one daemon per state
# directory (an flock), however many start at once or on which socket.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
$GEN session "$HOME/.pi/agent/sessions/--t--/t.jsonl" --calls 3 --seed 1 --small >/dev/null
LOCK=$XDG_STATE_HOME/agentmeterd/agentmeterd.lock
mkdir -m 0700 "$T/run2"

# ---- one daemon per state directory
start_daemon; ok $? "the first daemon runs"
"$D" --log-target=console --socket "$T/run2/other.sock" >"$T/second.log" 2>&1; rc=$?
is "$rc" 1 "a second daemon on another --socket but the same state directory exits 1"
check "... saying another one (its pid) holds the state directory" grep -q "another agentmeterd (pid $DPID) is already running on the state directory" "$T/second.log"
check "... and it left no socket behind" test ! -e "$T/run2/other.sock"
"$D" --once >"$T/once.out" 2>&1; rc=$?
is "$rc" 1 "--once while the daemon runs is refused the same way"
check "... with the same reason" grep -q "already running on the state directory" "$T/once.out"
check "the first daemon still answers" "$C" version
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
check "after a SIGKILL the lock is free again (a stale pid in the file does not matter)" test -s "$LOCK"
"$D" --once >/dev/null 2>&1; ok $? "--once runs after the daemon is gone"

# started at the same moment: exactly one runs, every time
trials=10 good=0
for i in $(seq "$trials"); do
	rm -f "$XDG_RUNTIME_DIR/agentmeterd/control.sock"
	"$D" --log-target=console >"$T/race1.log" 2>&1 & p1=$!
	"$D" --log-target=console --socket "$T/run2/race.sock" >"$T/race2.log" 2>&1 & p2=$!
	wait_until 10 sh -c "! kill -0 $p1 2>/dev/null || ! kill -0 $p2 2>/dev/null"
	sleep 0.2
	alive=0; for p in $p1 $p2; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	kill -TERM "$p1" "$p2" 2>/dev/null; wait "$p1" "$p2" 2>/dev/null
	[ "$alive" -eq 1 ] && grep -q "already running" "$T/race1.log" "$T/race2.log" && good=$((good + 1))
	[ "$alive" -eq 1 ] || { diag "trial $i: $alive alive"; sed "s/^/#   /" "$T/race1.log" "$T/race2.log"; }
done
is "$good" "$trials" "two daemons started at the same moment: exactly one runs ($good of $trials trials)"

# ---- the client trusts only its own user's daemon
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "needs root and setpriv for the other-user socket checks"
	done_testing
fi
use_test_user
V=$(id -u amtestsys)
id amtestother >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin amtestother
A=$(id -u amtestother)
AS_A() { setpriv --reuid="$A" --regid="$A" --clear-groups "$@"; }
# the victim's client without XDG_RUNTIME_DIR looks in /tmp/agentmeterd-UID
VRUN=(setpriv --reuid="$V" --regid="$V" --clear-groups env -u XDG_RUNTIME_DIR HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME")
FD=/tmp/agentmeterd-$V
rm -rf "$FD"
trap 'cleanup_env; pkill -KILL -f "$FD/control.sock" 2>/dev/null; [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null; rm -rf "$FD"' EXIT
# a server that answers anything with escape codes for the terminal
serve() { # serve SOCKET (as whoever runs it)
	/usr/bin/python3 -c '
import os, socket, sys
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o666); s.listen(8)
while True:
    c, _ = s.accept()
    c.recv(65536)
    c.sendall(b"{\"v\":1,\"ok\":true,\"result\":{\"version\":\"\\u001b]0;pwned\\u0007\\u001b[2J\"}}\n")
    c.close()' "$1"
}
start_fake() { # start_fake RUNNER...: the server, run by RUNNER, on $FD/control.sock
	rm -f "$FD/control.sock"
	"$@" bash -c "$(declare -f serve); serve '$FD/control.sock'" >/dev/null 2>&1 &
	SPID=$!
	wait_until 5 test -S "$FD/control.sock"
}
# SPID is the subshell running AS_A: the server under setpriv is its child,
# so it goes by its socket path (on its command line), not by SPID alone
stop_fake() { pkill -KILL -f "$FD/control.sock" 2>/dev/null; kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=; }
refused_by_client() { # refused_by_client DESCRIPTION PATTERN
	out=$("${VRUN[@]}" "$C" version 2>&1); rc=$?
	[ "$rc" -ne 0 ] && grep -q "$2" <<<"$out"; ok $? "$1 (exit $rc)"
	! grep -q $'\e' <<<"$out"; ok $? "... and no escape code reached the terminal"
}

# another user was first: its directory, its socket
AS_A mkdir -m 0755 "$FD"
start_fake AS_A
refused_by_client "another user's /tmp/agentmeterd-UID and socket: refused" "not a socket of yours"
stop_fake
# the victim's own socket file, in a directory anyone can write
chown "$V:$V" "$FD"; chmod 0777 "$FD"
start_fake AS_A; chown "$V:$V" "$FD/control.sock"
refused_by_client "a socket in a directory others can write: refused" "not a private directory"
# directory and socket the victim's, but the server is another user
chmod 0700 "$FD"
refused_by_client "the victim's directory and socket, another user listening: refused by SO_PEERCRED" "runs as uid $A"
stop_fake
rm -rf "$FD"

# the real thing without XDG_RUNTIME_DIR: the victim's daemon, the victim's client
chown -R "$V:$V" "$T"
"${VRUN[@]}" "$D" --log-target=console >>"$T/daemon.log" 2>&1 &
DPID=$!
wait_until 10 "${VRUN[@]}" "$C" version; ok $? "the user's own daemon under /tmp/agentmeterd-UID is trusted"
is "$(stat -c '%u %a' "$FD")" "$V 700" "... its directory is the user's, mode 0700"
is "$("${VRUN[@]}" "$C" report daily --json 2>/dev/null | jq .totals.events)" 3 "... and it answers reports"
stop_daemon; ok $? "clean stop"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
