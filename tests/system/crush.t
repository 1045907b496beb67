#!/bin/bash
# Crush's crush.db through the real binaries: the public store found through
# projects.json gives its cost exactly ($0.95773 over 3 root sessions) and
# presents no leftover tokens as totals; a session overwritten three times
# while the daemon runs in WAL mode gives three calls with their exact
# tokens; status says what each store holds.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export CRUSH_GLOBAL_DATA=$T/crush-global
mkdir -p "$CRUSH_GLOBAL_DATA"
rep() { "$C" report model --json 2>/dev/null; }
cr() { # events, input, output, cost of the crush rows
	rep | jq -c '[.rows[] | select(.harness=="crush")] | [(map(.events) | add), (map(.input_tokens) | add), (map(.output_tokens) | add), (map(.cost_usd) | add)]'
}
project() { # project DIR: listed in projects.json as Crush lists them
	printf '{"projects":[{"path":"%s","data_dir":"%s/.crush","last_accessed":"2026-01-01T00:00:00Z"}]}\n' "$1" "$1" \
		>"$CRUSH_GLOBAL_DATA/projects.json"
}

# 1. the public store
PUB=$AM_SAMPLES/public/crush/gleicon+mcpfier@ff38f5d09f9f/.crush
if [ -f "$PUB/crush.db" ]; then
	P=$T/mcpfier
	mkdir -p "$P/.crush"
	cp "$PUB"/crush.db "$PUB"/crush.db-wal "$PUB"/crush.db-shm "$P/.crush/"
	chmod u+w "$P"/.crush/crush.db*
	project "$P"
	start_daemon
	wait_until 10 holds '[ "$(rep | jq -c "[.rows[] | select(.harness==\"crush\") | .cost_usd] | add")" = 0.95773 ]'
	ok $? "public store: \$0.95773, its 3 root sessions' cost as Crush wrote it"
	is "$(rep | jq -c '[.rows[] | select(.harness=="crush") | .input_tokens] | unique')" "[null]" \
		"no leftover tokens presented as the sessions' totals (—)"
	"$C" status 2>/dev/null | grep -q "crush.db: 0 calls seen live; 3 root sessions, cost \$0.957730 as Crush wrote it; first scan: the last call of 2 sessions (35038 tokens) kept apart"
	ok $? "status: the roots' cost and the leftovers kept apart"
	stop_daemon
	rm -rf "$XDG_STATE_HOME/agentmeterd"
else
	for i in 1 2 3; do skip "public Crush store not present"; done
fi

# 2. live, WAL mode: a writer connection kept open, a session's last-call
# tokens overwritten three times, each one call
P=$T/live
mkdir -p "$P/.crush"
project "$P"
coproc W { python3 -u -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.executescript(open(sys.argv[2]).read())
db.executescript(open(sys.argv[3]).read())
print("ready", db.execute("PRAGMA journal_mode").fetchone()[0])
for line in sys.stdin:
    db.execute(line)
    print("done")
' "$P/.crush/crush.db" "$FIX/crush/schema.sql" "$FIX/crush/history.sql"; }
read -r -u "${W[0]}" ready mode
is "$ready $mode" "ready wal" "the writer holds crush.db in WAL mode"
start_daemon; ok $? "daemon up"
wait_until 10 holds '[ "$(cr | jq -c ".[3]")" = 0.98 ]'
ok $? "first scan: the roots' cost (0.48 + 0.5), the child's not again"
is "$(cr | jq -c '.[1:3]')" "[null,null]" "first scan: no tokens from history (—)"
ev0=$(cr | jq '.[0]')
want_in=0 want_out=0
for i in 1 2 3; do
	echo "UPDATE sessions SET prompt_tokens = $((20000 + i)), completion_tokens = $((i * 10)), cost = cost + 0.01 WHERE id = 'r-1'" >&"${W[1]}"
	read -r -u "${W[0]}" _
	want_in=$((want_in + 20000 + i)) want_out=$((want_out + i * 10))
	wait_until 10 holds "[ \"\$(cr | jq -c '[.[0], .[1], .[2]]')\" = \"[$((ev0 + i)),$want_in,$want_out]\" ]"
	ok $? "overwrite $i: one call, its tokens exactly"
done
is "$(cr | jq -c '.[3]')" 1.01 "the root's cost grew with them (0.98 + 3 x 0.01)"
"$C" status --json 2>/dev/null | jq -e '.harnesses[] | select(.id=="crush") | .stores[0] | .calls == 3 and .leftover_sessions == 3 and .root_sessions == 3' >/dev/null
ok $? "status --json: three calls seen live, three leftovers, three roots"
"$C" status --json 2>/dev/null | jq -e '.harnesses[] | select(.id=="crush") | .token_classes | test("v0.36.0") and test("does not say which release")' >/dev/null
ok $? "status --json says why a call's tokens are not split into cache classes (the v0.36 formula, no version in crush.db)"
exec {W[1]}>&-
wait "$W_PID" 2>/dev/null
stop_daemon; ok $? "daemon stops cleanly"
done_testing
