#!/bin/bash
# A client slot is freed by its client leaving, not by the daemon getting
# round to the hang-up: 64 clients that came and went while the daemon was
# busy (here: stopped) do not make it refuse the clients after them with
# "busy". A daemon really holding 64 clients still refuses the 65th.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
start_daemon; ok $? "daemon up"
SOCK=$XDG_RUNTIME_DIR/agentmeterd/control.sock

# slots.py MODE: 64 connections the daemon accepts; then, with the daemon
# stopped, they leave (MODE gone) or stay (MODE held), and 8 new clients
# ask for the version; the daemon goes on; prints "ok busy other" counts.
cat > "$T/slots.py" <<'PY'
import json, os, signal, socket, sys, time
sock, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
held = []
for _ in range(64):
    s = socket.socket(socket.AF_UNIX); s.connect(sock); held.append(s)
time.sleep(0.5)                      # all 64 accepted: the daemon is idle
os.kill(pid, signal.SIGSTOP)
try:
    if mode == "gone":
        for s in held:
            s.close()
    new = []
    for _ in range(8):               # within the listen backlog (CONTROL_LISTEN_BACKLOG, 64)
        s = socket.socket(socket.AF_UNIX); s.connect(sock)
        s.sendall(b'{"v":1,"cmd":"version"}\n'); new.append(s)
finally:
    os.kill(pid, signal.SIGCONT)
counts = {"ok": 0, "busy": 0, "other": 0}
for s in new:
    s.settimeout(10)
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    try:
        r = json.loads(buf)
        k = "ok" if r.get("ok") else "busy" if r.get("error", {}).get("code") == "busy" else "other"
    except ValueError:
        k = "other"
    counts[k] += 1
print(counts["ok"], counts["busy"], counts["other"])
PY

for round in 1 2 3; do
	is "$(python3 "$T/slots.py" "$SOCK" "$DPID" gone)" "8 0 0" \
		"round $round: 64 clients gone while the daemon was stopped: the 8 after them are answered"
done
is "$(python3 "$T/slots.py" "$SOCK" "$DPID" held)" "0 8 0" \
	"64 clients still connected: the 8 after them are refused with busy"
check "... and once they left, the daemon answers" wait_until 5 "$C" version

! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
