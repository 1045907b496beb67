#!/bin/bash
# Hermes Agent's state.db through the real binaries: the public store (its
# -wal holding everything) gives the issue's figures; a schema-22 store's
# auxiliary calls are metered beside its sessions; a session row updated
# in place three times while the daemon runs in WAL mode gives three exact
# deltas; status says what an event is and what each store holds.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
H=$HOME/.hermes
tok() { # events, input, output, reasoning, cache read, cache write
	"$C" report model --json 2>/dev/null |
		jq -c '[.rows[] | select(.harness=="hermes")] | [(map(.events) | add), (map(.input_tokens) | add), (map(.output_tokens) | add), (map(.reasoning_tokens) | add), (map(.cache_read_tokens) | add), (map(.cache_write_tokens) | add)]'
}

# 1. the public store, a copy with its -wal and -shm
PUB=$AM_SAMPLES/public/hermes/Satyabrat99+hermesstore@ff6e6589ab1b/.hermes
if [ -f "$PUB/state.db" ]; then
	mkdir -p "$H"
	cp "$PUB"/state.db "$PUB"/state.db-wal "$PUB"/state.db-shm "$H/"
	chmod u+w "$H"/state.db*
	start_daemon
	wait_until 10 holds '[ "$(tok)" = "[7,52807,546,124,175872,0]" ]'
	ok $? "public store: 7 sessions, input 52,807, output 546 (124 reasoning), cache read 175,872"
	is "$("$C" report model --json 2>/dev/null | jq -r '[.rows[] | select(.harness=="hermes") | .model] | unique | join(",")')" \
		"mimo-v2.5-pro" "the model from session_model_usage"
	"$C" status 2>/dev/null | grep -q "state.db: 7 steps folding 14 API calls, 0 resets, 0 changes not metered"
	ok $? "status: 7 steps folding 14 API calls"
	stop_daemon
	rm -rf "$H" "$XDG_STATE_HOME/agentmeterd"
else
	for i in 1 2 3; do skip "public Hermes store not present"; done
fi

# 2. a profile's state.db of the oldest schema (input and output only)
mkdir -p "$H/profiles/dev"
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())' \
	"$H/profiles/dev/state.db" "$FIX/hermes/schema-6.sql"
"$D" --once >/dev/null 2>>"$T/once.err"
is "$(tok)" "[1,1234,56,0,0,0]" "a profile's state.db of schema 6: read"
rm -rf "$H" "$XDG_STATE_HOME/agentmeterd"

# 2b. schema 22: the auxiliary calls of session_model_usage (task not '') metered beside the sessions
mkdir -p "$H"
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript(open(sys.argv[2]).read())' \
	"$H/state.db" "$FIX/hermes/schema-22.sql"
"$D" --once >/dev/null 2>>"$T/once.err"
is "$(tok)" "[5,12050,1142,30,9000,500]" "schema 22: two sessions and three auxiliary calls (compression, title, vision)"
is "$("$C" report model --json 2>/dev/null | jq -c '[.rows[] | select(.harness=="hermes" and .model=="claude-haiku-4-5") | .input_tokens] | add')" \
	8150 "  the auxiliary model's own tokens (compression and title)"
"$C" status --socket /nonexistent --json 2>/dev/null | jq -e '.harnesses[] | select(.id=="hermes") | .stores[0] | .steps == 2 and .aux_steps == 3 and .aux_calls == 4' >/dev/null
ok $? "  status --json: 2 session steps, 3 auxiliary steps folding 4 calls"
rm -rf "$H" "$XDG_STATE_HOME/agentmeterd"

# 3. live, WAL mode: one writer connection kept open (the -wal stays), a row
# updated in place three times, each read as its own exact delta
mkdir -p "$H"
coproc W { python3 -u -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.executescript(open(sys.argv[2]).read())
print("ready", db.execute("PRAGMA journal_mode").fetchone()[0])
for line in sys.stdin:
    db.execute(line)
    print("done")
' "$H/state.db" "$FIX/hermes/schema-20.sql"; }
read -r -u "${W[0]}" ready mode
is "$ready $mode" "ready wal" "the writer holds state.db in WAL mode"
start_daemon; ok $? "daemon up"
wait_until 10 holds '[ "$(tok)" = "[4,1480,314,54,12000,300]" ]'
ok $? "the fixture's four sessions, the compression child too"
want_in=1480
for i in 1 2 3; do
	echo "UPDATE sessions SET input_tokens = input_tokens + $((i * 100)), output_tokens = output_tokens + $i, api_call_count = api_call_count + 1 WHERE id = 's-child'" >&"${W[1]}"
	read -r -u "${W[0]}" _
	want_in=$((want_in + i * 100))
	wait_until 10 holds "[ \"\$(tok | jq -c '.[0:2]')\" = \"[$((4 + i)),$want_in]\" ]"
	ok $? "update $i in place: one more event, input +$((i * 100)) exactly"
done
is "$(tok)" "[7,2080,320,54,12000,300]" "three updates: three deltas, nothing twice"
"$C" status --json 2>/dev/null | jq -e '.harnesses[] | select(.id=="hermes") | .stores[0] | .steps == 7 and .calls == 10 and .unmetered_changes == 0' >/dev/null
ok $? "status --json: 7 steps folding 10 calls, nothing unmetered"
"$C" report model 2>/dev/null | grep -q 'events of Hermes Agent (hermes): snapshot steps'
ok $? "the report says what Hermes's events are"
exec {W[1]}>&-
wait "$W_PID" 2>/dev/null
stop_daemon; ok $? "daemon stops cleanly"
done_testing
