#!/bin/bash
# The control socket: 0600, other uids refused by SO_PEERCRED, malformed,
# oversized and half-sent requests answered with errors or a clean close,
# while other clients keep working.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
start_daemon; ok $? "daemon up"
SOCK=$XDG_RUNTIME_DIR/agentmeterd/control.sock
check "socket mode 0600" [ "$(stat -c %a "$SOCK")" = 600 ]
check "socket owned by us" [ "$(stat -c %u "$SOCK")" = "$(id -u)" ]

req() { # req BYTES [hold-seconds]: sends raw bytes, prints the first reply line
	python3 - "$SOCK" "$1" "${2:-0}" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
time.sleep(float(sys.argv[3]))
s.settimeout(5)
buf = b""
try:
    while b"\n" not in buf:
        d = s.recv(65536)
        if not d: break
        buf += d
except Exception as e:
    print("EXC", e)
print(buf.split(b"\n")[0].decode(errors="replace"))
PY
}
r=$(req 'this is not json\n')
is "$(jq -r '.ok' <<<"$r")" false "malformed request gets ok:false"
is "$(jq -r '.error.code' <<<"$r")" bad-request "... with code bad-request"
r=$(req '{"v":1,"cmd":"frobnicate"}\n')
is "$(jq -r '.error.code' <<<"$r")" unknown-command "unknown command answered"
r=$(req '{"v":99,"cmd":"status"}\n')
is "$(jq -r '.ok' <<<"$r")" false "unsupported protocol version refused"
r=$(req '{"v":1,"cmd":"report","report":"daily","since":"2026-13-45"}\n')
is "$(jq -r '.ok' <<<"$r")" false "bad report date answered with an error"
big=$(python3 -c 'print("{\\\"cmd\\\":\\\"" + "x"*100000 + "\\\"}")')
r=$(req "$big")
is "$(jq -r '.error.code' <<<"$r" 2>/dev/null)" too-large "oversized request: too-large"
# a half-sent request held open while another client works
python3 - "$SOCK" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"v":1,"cmd":"sta'); time.sleep(2); s.close()
PY
HP=$!
sleep 0.2
check "another client works while one is half-sent" "$C" status
wait $HP
r=$(req '{"v":1,"cmd":"version"}\n')
is "$(jq -r '.ok' <<<"$r")" true "daemon healthy after the bad clients"
# many clients at once
cpids=()
for i in $(seq 20); do "$C" version >/dev/null 2>&1 & cpids+=($!); done
wait "${cpids[@]}"
check "20 concurrent clients served, daemon alive" kill -0 "$DPID"

# another uid: the directory and the socket mode stop it; opened up on
# purpose, SO_PEERCRED still refuses it
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	id amtestother >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin amtestother
	OU=$(id -u amtestother)
	chmod 755 "$T" "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/agentmeterd"
	out=$(setpriv --reuid="$OU" --regid="$OU" --clear-groups "$C" --socket "$SOCK" version 2>&1); rc=$?
	check "other uid cannot connect to the 0600 socket" [ "$rc" -ne 0 ]
	chmod 666 "$SOCK"
	out=$(setpriv --reuid="$OU" --regid="$OU" --clear-groups "$C" --socket "$SOCK" version 2>&1); rc=$?
	check "other uid: agentmeterctl refuses a socket that is not its own" [ "$rc" -ne 0 ]
	check "... and says so" grep -q "not a socket of yours" <<<"$out"
	# a raw client of the other uid reaches the daemon, which refuses it
	out=$(setpriv --reuid="$OU" --regid="$OU" --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5)
print(s.makefile("rb").readline().decode(errors="replace"))' "$SOCK" 2>&1)
	check "other uid refused by SO_PEERCRED even with the socket opened up" grep -q '"ok":false' <<<"$out"
	check "... and told why" grep -qi "own user" <<<"$out"
	check "the refusal was logged" grep -q "refused a control client of uid $OU" "$T/daemon.log"
	chmod 600 "$SOCK"
else
	skip "needs root and setpriv for the other-uid checks"
fi
check "daemon still alive" kill -0 "$DPID"
stop_daemon; ok $? "clean stop"
# a socket directory that is not private is refused
mkdir -p "$T/open" && chmod 755 "$T/open"
"$D" --log-target=console --socket "$T/open/control.sock" >"$T/open.log" 2>&1; rc=$?
check "a non-private socket directory is refused" [ "$rc" -ne 0 ]
check "... with a reason" grep -q "not a private directory" "$T/open.log"
check "... and no socket left there" [ ! -e "$T/open/control.sock" ]
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
