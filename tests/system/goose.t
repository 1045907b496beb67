#!/bin/bash
# Goose's sessions.db through the real binaries (a fixture store written
# from its schema: no captured one exists): the accumulated sums of each
# session, a sub-agent's session, a session updated three times while the
# daemon runs in WAL mode (three exact deltas), and status saying the
# adapter is unverified.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export GOOSE_PATH_ROOT=$T/goose
DB=$GOOSE_PATH_ROOT/data/sessions/sessions.db
mkdir -p "$(dirname "$DB")"
tok() { # events, input, output of the goose rows
	"$C" report model --json 2>/dev/null |
		jq -c '[.rows[] | select(.harness=="goose")] | [(map(.events) | add), (map(.input_tokens) | add), (map(.output_tokens) | add)]'
}
coproc W { python3 -u -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.executescript(open(sys.argv[2]).read())
print("ready", db.execute("PRAGMA journal_mode").fetchone()[0])
for line in sys.stdin:
    db.execute(line)
    print("done")
' "$DB" "$FIX/goose/schema.sql"; }
read -r -u "${W[0]}" ready mode
is "$ready $mode" "ready wal" "the writer holds sessions.db in WAL mode"
start_daemon; ok $? "daemon up"
wait_until 10 holds '[ "$(tok)" = "[2,11000,400]" ]'
ok $? "two sessions with usage: the accumulated sums (the sub-agent's too)"
want=11000
for i in 1 2 3; do
	echo "UPDATE sessions SET accumulated_input_tokens = accumulated_input_tokens + $((i * 1000)), accumulated_output_tokens = accumulated_output_tokens + 9, updated_at = datetime('now') WHERE id = '20260105_1'" >&"${W[1]}"
	read -r -u "${W[0]}" _
	want=$((want + i * 1000))
	wait_until 10 holds "[ \"\$(tok)\" = \"[$((2 + i)),$want,$((400 + 9 * i))]\" ]"
	ok $? "update $i in place: one more step, exactly the growth"
done
"$C" status 2>/dev/null | grep -q "unverified  written from Goose's public schema"
ok $? "status says Goose is unverified"
"$C" status --json 2>/dev/null | jq -e '.harnesses[] | select(.id=="goose") | .stores[0] | .steps == 5 and .unmetered_changes == 0' >/dev/null
ok $? "status --json: five steps, nothing unmetered"
exec {W[1]}>&-
wait "$W_PID" 2>/dev/null
stop_daemon; ok $? "daemon stops cleanly"
done_testing
