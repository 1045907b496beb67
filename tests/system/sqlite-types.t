#!/bin/bash
# Token and cost columns of the wrong type in the stores that keep totals
# per session (issue 52's surfaces), with the real daemon: Hermes's
# state.db, Goose's sessions.db and Crush's crush.db built with sqlite3 from
# the fixtures' schemas, one session of each given, in turn, text, a
# negative number, a REAL, NULL, 2^53 + 1 and 2^64 (written as text: SQLite
# keeps it as a REAL) where a count belongs, and text or a negative amount
# where a cost belongs, then a good value again. A refused value counts
# nothing and never resets the session (its next good value is measured
# against the last good one, never counted whole again); it is malformed
# once in sources and, for Hermes and Goose, a refused session in status;
# NULL reports nothing; a REAL counts without its fraction. Every write
# also grows a beacon session by one token, so the test knows the daemon
# read that version.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in jq sqlite3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
new_env
export HERMES_HOME=$T/hermes GOOSE_PATH_ROOT=$T/goose CRUSH_GLOBAL_DATA=$T/crush-global
HDB=$HERMES_HOME/state.db
GDB=$GOOSE_PATH_ROOT/data/sessions/sessions.db
P=$T/proj
CDB=$P/.crush/crush.db
mkdir -p "$HERMES_HOME" "$(dirname "$GDB")" "$P/.crush" "$CRUSH_GLOBAL_DATA"
printf '{"projects":[{"path":"%s","data_dir":"%s/.crush","last_accessed":"2026-01-01T00:00:00Z"}]}\n' "$P" "$P" \
	>"$CRUSH_GLOBAL_DATA/projects.json"
sqlite3 "$HDB" <"$FIX/hermes/schema-20.sql" >/dev/null
sqlite3 "$GDB" <"$FIX/goose/schema.sql" >/dev/null
cat "$FIX/crush/schema.sql" "$FIX/crush/history.sql" | sqlite3 "$CDB" >/dev/null

got() { # got HARNESS: [input, output, cost in micro-USD] of its rows
	"$C" report model --json 2>/dev/null | jq -c --arg h "$1" \
		'[.rows[] | select(.harness == $h)] | [(map(.input_tokens // 0) | add), (map(.output_tokens // 0) | add), (map(.cost_usd // 0) | add * 1000000 | round)]'
}
# got_is HARNESS WANT: WANT of two figures compares input and output only
# (Goose's rows are priced from the price table, not by Goose)
got_is() { [ "$(got "$1" | jq -c --argjson w "$2" '.[0:($w | length)]')" = "$2" ]; }
plus() { jq -nc --argjson a "$1" --argjson b "$2" '[$a, $b] | transpose | map(add)'; }
malformed() { "$C" sources --json 2>/dev/null | jq --arg p "$1" '[.sources[] | select(.path == $p) | .malformed] | add // 0'; }
refused() { "$C" status --json 2>/dev/null | jq --arg h "$1" '.harnesses[] | select(.id == $h) | .stores[0].sessions_refused'; }
alive() { kill -0 "$DPID" 2>/dev/null && "$C" version >/dev/null 2>&1; }
# write DB SQL HARNESS WANT DESCRIPTION: one transaction; waits until the
# harness's rows add up to WANT (the beacon's token in it says the daemon
# read this version)
write() {
	sqlite3 -cmd ".timeout 10000" "$1" "BEGIN; $2; COMMIT;" || { ok 1 "$5: the write"; return; }
	if wait_until 20 got_is "$3" "$4"; then ok 0 "$5"; else ok 1 "$5"; diag "got $(got "$3"), expected $4"; fi
}

start_daemon --reconcile-interval=3600; ok $? "daemon up"
# first scans: Hermes's four sessions (input 1480, output 314), Goose's
# two (11000, 400), Crush's roots' cost (0.48 + 0.5) without tokens
for h in hermes:'[1480,314]' goose:'[11000,400]' crush:'[0,0,980000]'; do
	if wait_until 20 got_is "${h%%:*}" "${h#*:}"; then ok 0 "${h%%:*}: first scan ${h#*:}"; else ok 1 "${h%%:*}: first scan"; diag "got $(got "${h%%:*}")"; fi
done

# ---- Hermes: s-root (input 1000, estimated cost $0.0451); the beacon:
# s-actual's input and the provider's cost (a millionth of a dollar), so
# no row of either is priced from the price table
HB="UPDATE sessions SET input_tokens = input_tokens + 1, actual_cost_usd = actual_cost_usd + 0.000001 WHERE id = 's-actual'"
want=$(got hermes) n=0
hermes_case() { # hermes_case COLUMN VALUE WHAT REFUSED(0/1)
	local m0
	m0=$(malformed "$HDB")
	want=$(plus "$want" '[1,0,1]')
	write "$HDB" "UPDATE sessions SET $1 = $2 WHERE id = 's-root'; $HB" hermes "$want" "hermes: $3: nothing counted"
	is "$(malformed "$HDB")" $((m0 + $4)) "hermes: $3: $([ "$4" = 1 ] && echo "malformed once" || echo "not malformed")"
	is "$(refused hermes)" "$4" "hermes: $3: sessions_refused $4 in status"
	# good again: grown by 100 tokens and a cent over the last good values
	n=$((n + 1))
	want=$(plus "$want" '[101,0,10001]')
	write "$HDB" "UPDATE sessions SET input_tokens = $((1000 + 100 * n))${5:-}, output_tokens = 200, cache_read_tokens = 5000, reasoning_tokens = 50, estimated_cost_usd = $((451 + 100 * n)) / 10000.0 WHERE id = 's-root'; $HB" \
		hermes "$want" "hermes: $3, then good again: only the growth (100 tokens, a cent), nothing twice"
	is "$(malformed "$HDB")" $((m0 + $4)) "hermes: $3: malformed still $((m0 + $4))"
	is "$(refused hermes)" 0 "hermes: $3: none refused now"
}
hermes_case input_tokens "'lots'" "input as text" 1
hermes_case input_tokens -5 "input negative" 1
hermes_case input_tokens NULL "input NULL (nothing reported)" 0
hermes_case output_tokens 9007199254740993 "output 2^53 + 1" 1
hermes_case cache_read_tokens "'18446744073709551616'" "cache read 2^64 as text" 1
hermes_case reasoning_tokens "X'00ff'" "reasoning a blob" 1
hermes_case estimated_cost_usd "'free'" "cost as text" 1
hermes_case estimated_cost_usd -2.5 "cost negative" 1
hermes_case estimated_cost_usd NULL "cost NULL (nothing reported)" 0
hermes_case title "'a REAL next'" "then a REAL (.75 tokens)" 0 .75

# ---- Goose: 20260105_1 (accumulated input 9000); beacon 20260105_2's
GB="UPDATE sessions SET accumulated_input_tokens = accumulated_input_tokens + 1 WHERE id = '20260105_2'"
want='[11000,400]' n=0
goose_case() { # goose_case VALUE WHAT REFUSED [FRACTION]
	local m0
	m0=$(malformed "$GDB")
	want=$(plus "$want" '[1,0]')
	write "$GDB" "UPDATE sessions SET accumulated_input_tokens = $1 WHERE id = '20260105_1'; $GB" goose "$want" \
		"goose: $2: nothing counted"
	is "$(malformed "$GDB")" $((m0 + $3)) "goose: $2: $([ "$3" = 1 ] && echo "malformed once" || echo "not malformed")"
	is "$(refused goose)" "$3" "goose: $2: sessions_refused $3 in status"
	n=$((n + 1))
	want=$(plus "$want" '[101,0]')
	write "$GDB" "UPDATE sessions SET accumulated_input_tokens = $((9000 + 100 * n))${4:-} WHERE id = '20260105_1'; $GB" goose "$want" \
		"goose: $2, then good again: only the growth (100), nothing twice"
	is "$(malformed "$GDB")" $((m0 + $3)) "goose: $2: malformed still $((m0 + $3))"
}
goose_case "'lots'" "text" 1
goose_case -5 "negative" 1
goose_case NULL "NULL (nothing reported)" 0
goose_case 9007199254740993 "2^53 + 1" 1
goose_case "'18446744073709551616'" "2^64 as text" 1
goose_case "accumulated_input_tokens" "then a REAL (.5 tokens)" 0 .5

# ---- Crush: r-1's last call (prompt, completion) and its cost ($0.48);
# beacon r-3's last call (prompt k, completion 1). Its schema says NOT NULL:
# no NULL case. A refused save takes neither a call nor the cost; the next
# good save carries the cost as Crush accumulated it (both cents).
want='[0,0,980000]' k=0 cost=480000
crush_case() { # crush_case PROMPT COST WHAT
	local m0 good
	m0=$(malformed "$CDB")
	k=$((k + 1))
	want=$(plus "$want" "[$k,1,0]")
	write "$CDB" "UPDATE sessions SET prompt_tokens = $1, completion_tokens = 10, cost = $2 WHERE id = 'r-1'; UPDATE sessions SET prompt_tokens = $k, completion_tokens = 1 WHERE id = 'r-3'" \
		crush "$want" "crush: $3: neither a call nor a cost taken"
	is "$(malformed "$CDB")" $((m0 + 1)) "crush: $3: malformed once"
	k=$((k + 1)) good=$((16000 + k)) cost=$((cost + 20000))
	want=$(plus "$want" "[$((good + k)),11,0]")
	want=$(jq -nc --argjson w "$want" --argjson c "$cost" '[$w[0], $w[1], $c + 500000]') # r-1's and r-2's
	write "$CDB" "UPDATE sessions SET prompt_tokens = $good, completion_tokens = 10, cost = $(jq -n "$cost / 1000000") WHERE id = 'r-1'; UPDATE sessions SET prompt_tokens = $k, completion_tokens = 1 WHERE id = 'r-3'" \
		crush "$want" "crush: $3, then a good save: one call, the cost as written"
	is "$(malformed "$CDB")" $((m0 + 1)) "crush: $3: malformed still $((m0 + 1))"
}
crush_case "'lots'" "cost + 0.01" "prompt as text"
crush_case -5 "cost + 0.01" "prompt negative"
crush_case 9007199254740993 "cost + 0.01" "prompt 2^53 + 1"
crush_case "'18446744073709551616'" "cost + 0.01" "prompt 2^64 as text"
crush_case 100 "'free'" "cost as text"
crush_case 100 -1 "cost negative"

check "the daemon lives" alive
is "$("$C" report daily --json 2>/dev/null | jq '[.totals | (.input_tokens, .output_tokens, .total_tokens, .cost_usd) | select(. < 0)] | length')" 0 \
	"no negative total"
is "$("$C" status --json 2>/dev/null | jq -c '.ledger.rows_refused | [.tokens, .cost]')" "[0,0]" \
	"nothing reached the ledger to be refused there (2^53 is not clamped into a row)"
"$C" status 2>/dev/null | grep -q "sessions refused (a token sum that is text, negative or past 10^15"
ok $? "status says what a refused Goose session is"
for db in "$HDB" "$GDB" "$CDB"; do
	is "$("$C" sources --json 2>/dev/null | jq -r --arg p "$db" '.sources[] | select(.path == $p) | .error')" null \
		"${db##*/}: wrong types are not a database error"
done
stop_daemon; ok $? "SIGTERM: exit 0"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
