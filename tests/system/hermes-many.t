#!/bin/bash
# Hermes Agent with 500 sessions, each updated in place twice while the
# daemon runs, in round-robin order (every session changes between two
# changes of any other): each session's metered totals equal its totals in
# state.db, nothing twice, nothing unmetered; a kill -9 in the middle of
# the second round and a restart change nothing of that. (Before the
# snapshots lived in the ledger only the last 6-10 changed sessions kept
# theirs: the other changes went unmetered.)
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
H=$HOME/.hermes
N=500
mkdir -p "$H"
# the writer: one connection kept open (WAL), one commit per statement
coproc W { python3 -u -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.executescript(open(sys.argv[2]).read())
n = int(sys.argv[3])
for i in range(n):
    db.execute("INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, cache_read_tokens, api_call_count) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, 1)", ("many-%03d" % i, "cli", "gpt-5", 1767225600.0 + i, 1000 + i, 10, 100 * i))
print("ready", db.execute("PRAGMA journal_mode").fetchone()[0])
for line in sys.stdin:
    lo, hi, step = map(int, line.split())
    for i in range(lo, hi):
        db.execute("UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + 1, "
                   "cache_read_tokens = cache_read_tokens + 7, api_call_count = api_call_count + 1 WHERE id = ?",
                   (step * (i + 1), "many-%03d" % i))
    print("done")
' "$H/state.db" "$FIX/hermes/schema-20.sql" "$N"; }
read -r -u "${W[0]}" ready mode
is "$ready $mode" "ready wal" "the writer holds state.db ($N sessions and the fixture's 4) in WAL mode"
# what state.db holds, and what the ledger says, per session: "id input output cache_read"
db_sessions() {
	python3 -c 'import sqlite3, sys
for r in sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute("SELECT id, input_tokens, output_tokens, cache_read_tokens FROM sessions ORDER BY id"):
    print(*r)' "$H/state.db"
}
metered_sessions() {
	"$C" report session --all --json 2>/dev/null |
		jq -r '[.rows[] | select(.harness=="hermes")] | sort_by(.session)[] | "\(.session) \(.input_tokens) \(.output_tokens) \(.cache_read_tokens)"'
}
same_as_db() { [ "$(metered_sessions)" = "$(db_sessions)" ]; }
unmetered() { "$C" status --json 2>/dev/null | jq -r '.harnesses[] | select(.id=="hermes") | .stores[0] | "\(.unmetered_changes) \(.sessions_tracked) \(.sessions_beyond)"'; }
update() { echo "$1 $2 $3" >&"${W[1]}"; read -r -u "${W[0]}" _; }

start_daemon; ok $? "daemon up"
wait_until 20 same_as_db
ok $? "first scan: every session's totals, whole"
is "$(metered_sessions | wc -l)" $((N + 4)) "  $((N + 4)) sessions metered"

# round 1: every session in turn, in slices of 50 (the daemon reads between them)
for lo in $(seq 0 50 $((N - 1))); do update "$lo" $((lo + 50)) 1; done
wait_until 20 same_as_db
ok $? "round 1 (each of $N sessions grew once, in turn): every session's metered totals equal state.db's"
is "$(unmetered)" "0 $((N + 4)) 0" "  nothing unmetered; every session's snapshot kept, none past the bound"

# round 2: half of it, a kill -9 with the writer still at work, the rest
# while the daemon is down, a restart
update 0 100 2
update 100 $((N / 2)) 2
kill -9 "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; DPID=
update $((N / 2)) "$N" 2
start_daemon; ok $? "restart after kill -9 in the middle of round 2"
wait_until 20 same_as_db
ok $? "round 2 with a kill -9 inside: every session's metered totals still equal state.db's (nothing lost, nothing twice)"
is "$(unmetered)" "0 $((N + 4)) 0" "  nothing unmetered"
want=$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT SUM(input_tokens) FROM sessions").fetchone()[0])' "$H/state.db")
is "$("$C" report model --json 2>/dev/null | jq '[.rows[] | select(.harness=="hermes") | .input_tokens] | add')" "$want" \
	"  the sum of the deltas is state.db's final input total ($want)"
exec {W[1]}>&-
wait "$W_PID" 2>/dev/null
stop_daemon; ok $? "daemon stops cleanly"
done_testing
