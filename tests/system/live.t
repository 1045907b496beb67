#!/bin/bash
# The live daemon: roots that appear after start, appends, renames,
# deletes, truncation, rewrites (same inode and new inode), the tail
# stream, SIGTERM, and refusing a second instance. Exact totals each time.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
sum_json() { jq -s '{events: (map(.events)|add), input: (map(.input)|add), output: (map(.output)|add), cache_read: (map(.cache_read)|add), cache_write: (map(.cache_write)|add), total: (map(.total)|add), cost_nano: (map(.cost_nano)|add)}'; }
want_of() { jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (if .events == 0 then null else .cost_nano/1e9 end)]' <<<"$1"; }
totals_are() { [ "$(totals_line)" = "$1" ]; }
expect() { # expect GEN_JSON DESCRIPTION: polls up to 10 s for exact totals
	local want; want=$(want_of "$1")
	if wait_until 10 totals_are "$want"; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $(totals_line), expected $want"; fi
}

start_daemon --reconcile-interval=3600; ok $? "daemon starts with no pi directory at all"
check "socket is mode 0600" [ "$(stat -c %a "$XDG_RUNTIME_DIR/agentmeterd/control.sock")" = 600 ]
"$D" --log-target=console >"$T/second.log" 2>&1; rc=$?
check "a second daemon refuses to start" [ "$rc" -ne 0 ]
check "... and says why" grep -q "already running on the state directory" "$T/second.log"
check "the first one still answers" "$C" version

# the first pi run creates the tree: watched from the nearest ancestor
g1=$($GEN session "$S/--home-u-a--/a.jsonl" --calls 3 --seed 1 --small)
expect "$g1" "a session directory created after start is picked up"

"$C" tail --json > "$T/tail.out" 2>&1 &
TPID=$!
sleep 0.3
g2=$($GEN append "$S/--home-u-a--/a.jsonl" --calls 2 --seed 2 --small)
all=$(printf '%s\n%s\n' "$g1" "$g2" | sum_json)
expect "$all" "appended lines are visible"
check "tail streamed the new rows" wait_until 5 holds '[ "$(grep -c "\"harness\":\"pi\"" "$T/tail.out")" -ge 2 ]'
kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null

# rename (OpenClaw-style archive): nothing new, nothing re-read
read_before=$("$C" status --json | jq '[.harnesses[] | select(.id=="pi") | .bytes_read] | add')
mv "$S/--home-u-a--/a.jsonl" "$S/--home-u-a--/b.jsonl"
# the daemon has seen the rename: the new name carries the checkpoint
# (offset at its end, the rows it counted) and the log says it moved
size_b=$(stat -c %s "$S/--home-u-a--/b.jsonl")
moved() { "$C" sources --json | jq -e --arg p "$S/--home-u-a--/b.jsonl" --argjson n "$size_b" \
	'.sources[] | select(.path == $p and .offset == $n and .rows_added > 0)' >/dev/null; }
check "the renamed file took its checkpoint along" wait_until 10 moved
check "... as the log says" grep -q "b.jsonl: renamed from .*a.jsonl: checkpoint kept" "$T/daemon.log"
expect "$all" "a rename changes nothing"
"$C" rescan >/dev/null; sleep 0.5
read_after=$("$C" status --json | jq '[.harnesses[] | select(.id=="pi") | .bytes_read] | add')
is "$read_after" "$read_before" "a rename re-reads no bytes"

# delete: the ledger keeps what it saw (once the daemon has seen the delete)
rm "$S/--home-u-a--/b.jsonl"
"$C" rescan >/dev/null
check "the daemon saw the delete" wait_until 10 grep -q "b.jsonl: source is gone; its rows stay in the ledger" "$T/daemon.log"
known_b() { "$C" sources --json | jq -e --arg p "$S/--home-u-a--/b.jsonl" '.sources[] | select(.path == $p)' >/dev/null; }
check "... and dropped it from its table" wait_until 10 holds '! known_b'
expect "$all" "a delete keeps the rows"

# truncate and write new content in place
g3=$($GEN session "$S/--home-u-c--/c.jsonl" --calls 2 --seed 3 --small)
all=$(printf '%s\n%s\n%s\n' "$g1" "$g2" "$g3" | sum_json)
expect "$all" "another session"
g4=$($GEN session "$T/c2.jsonl" --calls 2 --seed 4 --small)
cat "$T/c2.jsonl" > "$S/--home-u-c--/c.jsonl"   # same inode, truncated + rewritten
all=$(printf '%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" | sum_json)
expect "$all" "truncate + rewrite in place: new calls counted, old ones kept"

# same-name rewrite with a new inode (temp + rename), old calls plus new ones
cp "$S/--home-u-c--/c.jsonl" "$T/c3.jsonl"
g5=$($GEN append "$T/c3.jsonl" --calls 2 --seed 5 --small)
mv "$T/c3.jsonl" "$S/--home-u-c--/c.jsonl"
all=$(printf '%s\n%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" "$g5" | sum_json)
expect "$all" "new inode under the same name: exact totals"

# same-size in-place rewrite (bytes change, size does not)
python3 - "$S/--home-u-c--/c.jsonl" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.rfind(b'"id":"') + 6
b[i:i+8] = b"deadbeef"
open(p, "r+b").write(b)
PY
sleep 0.5
expect "$all" "same-size rewrite: exact totals"

stop_daemon; rc=$?
is "$rc" 0 "SIGTERM: exit status 0"
check "stopping was logged" grep -q "stopped; ledger synced" "$T/daemon.log"
check "socket removed on exit" [ ! -e "$XDG_RUNTIME_DIR/agentmeterd/control.sock" ]
start_daemon; ok $? "restart"
expect "$all" "after a restart: same totals"
check "restart added no rows" wait_until 5 sh -c "tail -n 5 '$T/daemon.log' | grep -q 'initial scan done: .* 0 rows added'"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
