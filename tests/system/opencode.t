#!/bin/bash
# OpenCode and Kilo end to end with the real binaries: --once over the real
# realgen/opencode-1.18.33 data directory (the figures of issue 23) and the
# project's fixtures (database era, JSON era with a torn file, both eras on
# one machine, Kilo's fork copies at cost 0), $OPENCODE_DB elsewhere; then
# live: a row inserted with zero tokens and updated in place twice by a
# writer that keeps its connection (WAL), a fork's copies, kill -9 of the
# daemon between updates, a JSON-era file rewritten in place with one torn
# write, and the per-database figures of status.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in sqlite3 jq python3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
python3 -c 'import sqlite3' 2>/dev/null || skip_all "python3 has no sqlite3 module"
new_env
OF=$FIX/opencode
EXP=$OF/expected.json
once() { "$D" --once >>"$T/once.log" 2>&1; }
# a case of its own: fresh HOME, ledger and data directory
fresh() {
	export HOME=$T/$1/home XDG_STATE_HOME=$T/$1/state XDG_DATA_HOME=$T/$1/data
	mkdir -p "$HOME" "$XDG_STATE_HOME" "$XDG_DATA_HOME"
	unset OPENCODE_DB KILO_DB
}
mkdb() { # mkdb DB [ROWS.sql]: schema.sql and the rows, by the sqlite3 CLI (WAL)
	mkdir -p "$(dirname "$1")"
	cat "$OF/schema.sql" ${2:+"$2"} | sqlite3 -bail "$1" >/dev/null
}
# the totals a case of expected.json gives, as totals_line prints them (cost:
# the vendor's plus what our table prices)
want() { jq -c --arg c "$1" '.cases[$c] | [.rows, .input, .output, .cache_read, .cache_write, .total, (((.cost_nano + (.table_cost_nano // 0)) / 1000 | round) / 1e6)]' "$EXP"; }
wantf() { jq -r --arg c "$1" ".cases[\$c].$2" "$EXP"; }

check "install records OPENCODE_DB, KILO_DB and XDG_DATA_HOME" \
	sh -c "'$D' --list-variables | cut -f1 | grep -qx OPENCODE_DB && '$D' --list-variables | cut -f1 | grep -qx KILO_DB && '$D' --list-variables | cut -f1 | grep -qx XDG_DATA_HOME"

# ---- the real data directory ---------------------------------------------------
RG=$AM_SAMPLES/realgen/opencode-1.18.33
if [ -f "$RG/data/opencode/opencode.db" ]; then
	fresh realgen
	unset XDG_DATA_HOME # the default: ~/.local/share/opencode
	mkdir -p "$HOME/.local/share"
	cp -r "$RG/data/opencode" "$HOME/.local/share/opencode" && chmod -R u+w "$HOME/.local/share/opencode"
	once; ok $? "--once over realgen/opencode-1.18.33 as ~/.local/share/opencode"
	# issue 23: 11 calls, input 32,049, output 2,001 (44 reasoning), cache read
	# 54,400, cache write 2,056, cost $0.102370 as OpenCode wrote it
	is "$(totals_line)" "[11,32049,2001,54400,2056,90506,0.10237]" "realgen: the issue's figures, the fork's copies once"
	is "$(totals reasoning_tokens)" 44 "realgen: 44 reasoning"
	is "$(totals cost_source)" vendor-reported "realgen: the cost as OpenCode wrote it"
	is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | .events] | sort')" "[1,3,7]" \
		"realgen: the forked session holds only its own call"
	is "$("$C" report tool --json 2>/dev/null | jq -c '[.rows[] | [.tool, .calls]] | sort')" '[["bash",2],["read",1]]' \
		"realgen: tool calls from the message's parts"
	once
	is "$(totals_line)" "[11,32049,2001,54400,2056,90506,0.10237]" "realgen: a second --once, the same"
else
	skip "realgen/opencode-1.18.33 not found"
fi

# ---- fixtures -------------------------------------------------------------------
fresh db
mkdb "$XDG_DATA_HOME/opencode/opencode.db" "$OF/db.sql"
check "the fixture database is in WAL mode" [ "$(sqlite3 "$XDG_DATA_HOME/opencode/opencode.db" 'PRAGMA journal_mode')" = wal ]
sum_before=$(sha256sum "$XDG_DATA_HOME/opencode/opencode.db" | cut -d' ' -f1)
once; ok $? "--once over the fixture database"
is "$(totals_line)" "$(want db)" "database era: exact totals (copies, a failed call, an unfinished step not counted)"
is "$(totals unpriced_events)" 0 "a call OpenCode wrote with cost 0 is priced by our table"
is "$(totals tool_calls)" "$(wantf db calls)" "tool calls"
is "$(sha256sum "$XDG_DATA_HOME/opencode/opencode.db" | cut -d' ' -f1)" "$sum_before" "the database file is never written"

fresh json
cp -r "$OF/json" "$XDG_DATA_HOME/opencode"
touch -d '1 minute ago' "$XDG_DATA_HOME"/opencode/storage/message/*/*.json # their writer is long done
once
is "$(totals_line)" "$(want json)" "JSON era: output includes reasoning; the torn file not counted"
is "$(tail -n 1 "$T/once.log" | sed -n 's/.*(\([0-9][0-9]*\) malformed.*/\1/p')" "$(wantf json malformed)" \
	"the torn file, its writer gone, counted malformed once"

fresh both
cp -r "$OF/both" "$XDG_DATA_HOME/opencode"
mkdb "$XDG_DATA_HOME/opencode/opencode.db" "$OF/both.sql"
once
is "$(totals_line)" "$(want both)" "both eras on one machine: each call once"

fresh kilo
mkdb "$XDG_DATA_HOME/kilo/kilo.db" "$FIX/kilo/kilo.sql"
once
is "$("$C" report daily --json --harness kilo 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens, .cost_usd]')" \
	"$(want kilo)" "Kilo: the fork's copies (cost 0) once, with their call's cost"
is "$(totals unpriced_events)" 1 "Kilo: the free model written with cost 0 is unpriced, not free"

fresh relocated
mkdb "$T/elsewhere/custom.db" "$OF/db.sql"
export OPENCODE_DB=$T/elsewhere/custom.db
once
is "$(totals_line)" "$(want db)" "OPENCODE_DB names a database elsewhere"
unset OPENCODE_DB

# ---- live -----------------------------------------------------------------------
fresh live
DB=$XDG_DATA_HOME/opencode/opencode.db
mkdb "$DB"
start_daemon --reconcile-interval=3600; ok $? "daemon starts"
coproc W { python3 "$AM_SRCDIR/tests/lib/opencode_writer.py" "$DB" 2>>"$T/writer.log"; }
say() { echo "$*" >&"${W[1]}" && read -r -t 10 _ <&"${W[0]}"; }
st() { "$C" status --json 2>/dev/null | jq -r ".harnesses[] | select(.id==\"opencode\") | .databases[0].$1"; }
totals_are() { [ "$(totals_line)" = "$1" ]; }
expect() { # expect WANT DESCRIPTION: polls up to 10 s
	if wait_until 10 totals_are "$1"; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $(totals_line), expected $1"; fi
}
t=$(($(date +%s) * 1000))
say session ses_L /home/u/live
say start msg_1 ses_L "$t" anthropic claude-sonnet-4-5
check "status: the zero-token row waits for its final tokens" wait_until 10 holds '[ "$(st waiting)" = 1 ]'
is "$(totals events)" 0 "inserted with zero tokens: nothing counted"
say final msg_1 100 25 12 5000 800 0.005
A='[1,100,37,5000,800,5937,0.005]'
expect "$A" "first update in place: the final tokens (output + reasoning), once"
say complete msg_1
check "second update (time.completed): nothing waits any more" wait_until 10 holds '[ "$(st waiting)" = 0 ]'
is "$(totals_line)" "$A" "second update: still one call, the same values"
check "status: rows read and the watermark" test "$(st rows_read)" -ge 3 -a "$(st watermark)" = 1 -a "$(st event_watermark)" -ge 3
"$C" status 2>/dev/null | grep -q "database $DB  rows read"; ok $? "status text shows the database's figures"

say fork ses_L ses_LF
check "the fork's copy is read" wait_until 10 holds '[ "$(st watermark)" = 2 ]'
is "$(totals_line)" "$A" "a fork's copy: not counted again"

# kill -9 between the updates of a row: nothing lost, nothing twice
say start msg_2 ses_L $((t + 2000)) anthropic claude-sonnet-4-5
check "the second row waits" wait_until 10 holds '[ "$(st waiting)" = 1 ]'
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
say final msg_2 40 6 0 5900 0 0.00279
say complete msg_2
start_daemon --reconcile-interval=3600; ok $? "restart after kill -9"
AB='[2,140,43,10900,800,11883,0.00779]'
expect "$AB" "updated while the daemon was dead: counted once with the final values"
say start msg_3 ses_L $((t + 4000)) anthropic claude-sonnet-4-5
say final msg_3 7 3 0 0 0 0.0001
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
start_daemon --reconcile-interval=3600; ok $? "restart after a second kill -9"
ABC='[3,147,46,10900,800,11893,0.00789]'
expect "$ABC" "killed right after an update: counted once"
say complete msg_3
sleep 1
is "$(totals_line)" "$ABC" "... and its completion adds nothing"
exec {W[1]}>&-
wait "$W_PID" 2>/dev/null
# messages removed (Kilo removes some; a revert does): they were billed
sqlite3 -cmd ".timeout 5000" "$DB" "DELETE FROM message WHERE id IN ('msg_1', 'msg_3')"
check "the removal is read (the row at the watermark is gone)" wait_until 10 holds '[ "$(st watermark)" = 3 ]'
is "$(totals_line)" "$ABC" "removed messages stay in the ledger"

# a JSON-era message file rewritten in place (same inode), one write torn
M=$XDG_DATA_HOME/opencode/storage/message/ses_J/msg_live.json
mkdir -p "$(dirname "$M")"
python3 - "$M" "$t" <<'PY'
import json, sys
m = {"id": "msg_live", "sessionID": "ses_J", "role": "assistant", "modelID": "claude-sonnet-4-5",
     "providerID": "anthropic", "path": {"cwd": "/home/u/j", "root": "/home/u/j"}, "cost": 0,
     "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
     "time": {"created": int(sys.argv[2]) + 9000}}
open(sys.argv[1], "w").write(json.dumps(m, indent=2))
PY
ino=$(stat -c %i "$M")
check "a started step's file is read" wait_until 10 sh -c "'$C' sources --json | jq -e '.sources[] | select(.path == \"$M\") | select(.last_commit != null)'"
python3 - "$M" "$t" <<'PY'
import json, sys, time
m = json.load(open(sys.argv[1]))
m["tokens"] = {"total": 1330, "input": 30, "output": 300, "reasoning": 20, "cache": {"read": 1000, "write": 0}}
m["cost"] = 0.0048
text = json.dumps(m, indent=2)
with open(sys.argv[1], "r+") as f:  # as OpenCode 1.1 writes: truncate, then write, same inode
    f.truncate(0)
    f.write(text[: len(text) // 2])
    f.flush()
    time.sleep(0.6)  # the daemon sees the torn half
    f.write(text[len(text) // 2:])
PY
is "$(stat -c %i "$M")" "$ino" "rewritten in place: the same inode"
ABCJ='[4,177,346,11900,800,13223,0.01269]'
expect "$ABCJ" "JSON era: rewritten with one torn write, counted once with the final values"
python3 - "$M" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["time"]["completed"] = m["time"]["created"] + 700
open(sys.argv[1], "r+").write(json.dumps(m, indent=2))
PY
sleep 1
is "$(totals_line)" "$ABCJ" "rewritten again with time.completed: nothing added"
is "$("$C" sources --json | jq ".sources[] | select(.path == \"$M\") | .malformed")" 0 "the torn read was not counted malformed"

stop_daemon; ok $? "SIGTERM: exit 0"
start_daemon --reconcile-interval=3600; ok $? "restart"
expect "$ABCJ" "after a restart: the same totals"
stop_daemon
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.log"; ok $? "no sanitizer reports"
done_testing
