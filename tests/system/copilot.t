#!/bin/bash
# GitHub Copilot CLI event logs through the real binaries: the realgen
# corpus (written by Copilot CLI 1.0.102 itself) as ~/.copilot with the
# issue's figures, the fixture home's rules through $COPILOT_HOME, status
# (premium requests, the session-store.db cross-check, the legacy files),
# a kill -9 between two records, a record written in two halves while the
# daemon runs, and a live append.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
FX=$FIX/copilot
once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
report_json() { "$C" report model --json 2>/dev/null; }
tok() { # events, input, output, cache read, cache write, reasoning, total
	report_json | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .reasoning_tokens, .total_tokens]'
}
want_case() {
	jq -c ".cases[\"$1\"] | [.rows, .input, .output, .cache_read, .cache_write, .reasoning, .total]" "$FX/expected.json"
}
fresh() { rm -rf "$XDG_STATE_HOME/agentmeterd" "$HOME/.copilot" "$T/ch"; unset COPILOT_HOME; }

# 1. the realgen corpus as ~/.copilot: the issue's figures, priced at list
RG=$AM_SAMPLES/realgen/copilot-cli-1.0.102/copilot-home
if [ -d "$RG/session-state" ]; then
	cp -r "$RG" "$HOME/.copilot"
	once >/dev/null
	r=$(report_json)
	is "$(jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens]' <<<"$r")" \
		"[14,96833,557,55,72896,320]" "realgen: 14 calls, input 96,833, output 557 (55 reasoning), cache read 72,896, cache write 320"
	is "$(jq -c '[.rows[] | select(.harness=="copilot") | [.model, .events]] | sort' <<<"$r")" \
		'[["claude-sonnet-4-5",3],["gpt-4.1",9],["gpt-5-mini",2]]' "realgen: gpt-4.1 9, claude-sonnet-4-5 3, gpt-5-mini 2"
	# list prices: gpt-4.1 $0.152150, claude-sonnet-4-5 (Copilot's claude-sonnet-4.5) $0.062393, gpt-5-mini $0.004279
	is "$(jq -c '[.totals.cost_usd, .totals.cost_source, .totals.unpriced_events]' <<<"$r")" '[0.218822,"computed",0]' \
		"realgen: every call priced at list, \$0.218822"
	is "$(jq -c '[.rows[] | [.model, .cost_usd]] | sort' <<<"$r")" \
		'[["claude-sonnet-4-5",0.062393],["gpt-4.1",0.15215],["gpt-5-mini",0.004279]]' "realgen: per model at list"
	is "$(jq -r '.totals.tool_calls' <<<"$r")" 7 "realgen: the seven tool calls of the records' toolCounts"
	is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | select(.harness=="copilot")] | length')" 5 \
		"realgen: five sessions with calls (the failed one has none)"
	start_daemon; ok $? "daemon up on the realgen home"
	st=$("$C" status --json)
	is "$(jq -c '.harnesses[] | select(.id=="copilot") | [.usage_records, .premium_requests, .session_stores[0].calls, .session_stores[0].input_tokens, .session_stores[0].cache_read_tokens]' <<<"$st")" \
		'[14,0,14,96833,72896]' "status: 14 records, 0 premium requests (BYOK), session-store.db mirrors the same 14 calls"
	"$C" status | grep -q 'session-store.db mirrors 14 calls, input 96833, output 557, cache read 72896, cache write 320 (a cross-check, not counted)'
	ok $? "status text shows the cross-check"
	stop_daemon; ok $? "daemon stops"
	is "$(tok | jq '.[0]')" 14 "the running daemon counted nothing twice"
else
	for i in 1 2 3 4 5 6 7 8 9 10; do skip "realgen copilot samples not present"; done
fi

# 2. the fixture home through COPILOT_HOME: every rule, and a second run reads nothing
fresh
export COPILOT_HOME=$T/ch
cp -r "$FX/home" "$COPILOT_HOME"
out=$(once)
is "$(tok)" "$(want_case home)" "fixture home: totals as expected.json says"
is "$(field 'not transcripts' "$out")" 1 "the file that is no event log is not a transcript"
is "$(field malformed "$out")" 2 "the two torn lines are counted malformed"
out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds nothing"
# only the unterminated last record of the torn session is looked at again
# (complete JSON without its newline: counted, the offset stays before it)
last=$(tail -n 1 "$COPILOT_HOME/session-state/cccccccc-0000-4000-8000-000000000003/events.jsonl")
is "$(field 'bytes read' "$out")" "${#last}" "... and reads nothing but the unterminated last line"
is "$(report_json | jq -c '[.rows[] | select(.model=="gpt-5-mini") | .events] | add')" 2 \
	"the sub-agent's two calls are counted once, under its own model"
start_daemon; ok $? "daemon up on the fixture home"
st=$("$C" status --json)
is "$(jq -c '.harnesses[] | select(.id=="copilot") | [.legacy_files_unmetered, .premium_requests, .github_billed_records, .capabilities.cost]' <<<"$st")" \
	'[1,4,3,"computed"]' "status: one legacy file not metered, 4 premium requests (not dollars), 3 records billed by GitHub"
"$C" status | grep -q '3 of them billed by GitHub (not your own key): their dollars are an API-equivalent estimate'
ok $? "status text says the GitHub-billed calls' dollars are an estimate"
"$C" status | grep -q '1 legacy history-session-state file found, not metered'
ok $? "status text says the legacy file is not metered"
stop_daemon

# 3. kill -9 between two records, then a record written in two halves
fresh
export COPILOT_HOME=$T/ch
src=$FX/home/session-state/aaaaaaaa-0000-4000-8000-000000000001/events.jsonl
dst=$COPILOT_HOME/session-state/aaaaaaaa-0000-4000-8000-000000000001/events.jsonl
mkdir -p "$(dirname "$dst")"
head -n 3 "$src" >"$dst"   # session.start, user.message, the first record
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$(totals events)" = 1 ]'
ok $? "the first record is counted live"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
sed -n 4,5p "$src" >>"$dst"  # assistant.message, the second record
once >/dev/null
is "$(totals events)" 2 "after kill -9 and one more record: two calls, none twice"
start_daemon; ok $? "daemon up again"
rest=$(tail -n +6 "$src")
half=$(( ${#rest} / 2 ))
printf '%s' "${rest:0:$half}" >>"$dst"   # a torn write: half the lines, the last one cut
sleep 0.3
printf '%s\n' "${rest:$half}" >>"$dst"   # and the rest
wait_until 20 holds '[ "$(totals events)" = 5 ]'
ok $? "the records written in two halves are counted"
is "$(tok)" "$(want_case sub)" "... each exactly once, with its whole numbers"
# a live append of a fork's copy (the same apiCallId) and a new call
fork=$COPILOT_HOME/session-state/dddddddd-0000-4000-8000-000000000004/events.jsonl
mkdir -p "$(dirname "$fork")"
cp "$FX/home/session-state/dddddddd-0000-4000-8000-000000000004/events.jsonl" "$fork"
wait_until 20 holds '[ "$(totals events)" = 6 ]'
ok $? "a new session file is found live (inotify)"
is "$(tok)" "$(want_case 'sub+fork')" "the fork's copies are counted once"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
