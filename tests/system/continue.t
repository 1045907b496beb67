#!/bin/bash
# Continue through the real binaries: the realgen cn 1.5.47 corpus's truth
# (13 calls; a --fork's copied calls once; the two meanings of
# prompt_tokens), the fixture home, $CONTINUE_GLOBAL_DIR, and live: a
# session rewritten turn by turn, forked, torn mid-write, resumed with a
# repeated prompt, and deleted after being counted.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
CX=$FIX/continue
CH=$HOME/.continue
A=aaaa0001-0000-4000-8000-000000000001
F=ffff0003-0000-4000-8000-000000000003
once() { "$D" --once 2>>"$T/once.err"; }
report() { "$C" report "${1:-model}" --json 2>/dev/null; }
tok() { # totals as [events, input, output, reasoning, cache_read, cache_write, tool_calls]
	report | jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens, .tool_calls]'
}
want() { jq -c ".$1 | [.rows, .input, .output, .reasoning, .cache_read, .cache_write, .calls]" "$CX/expected.json"; }
fresh() { stop_daemon; rm -rf "$XDG_STATE_HOME/agentmeterd" "$CH" "$T/moved"; mkdir -p "$CH/sessions"; }
# a document rewritten the way cn saves it: the whole text, in place
save() { cat "$1" >"$2"; }

# 1. the realgen corpus, written by cn 1.5.47 itself, as ~/.continue
RG=$AM_SAMPLES/realgen/continue-1.5.47/continue-home
if [ -d "$RG/sessions" ]; then
	fresh
	cp -r "$RG/." "$CH/"
	once >/dev/null
	# reasoning: 22 written apart (OpenAI provider); the Anthropic calls'
	# thinking is inside their output, not written apart
	is "$(tok)" "[13,10576,2075,22,11072,472,5]" \
		"realgen: 13 calls, input 10,576, output 2,075, cache read 11,072, cache write 472 (not the naive 13,684)"
	is "$(report | jq -c '[.rows[] | [.model, .events, (.cost_usd != null), .unpriced_events]] | sort')" \
		'[["claude-sonnet-4-5",3,true,0],["fake-gpt",10,false,10]]' \
		"realgen: claude-sonnet-4-5 3 priced, fake-gpt 10 unpriced (not \$0)"
else
	skip "realgen continue samples not present"; skip "models"
fi

# 2. the fixture home: two provider meanings, a fork, the index and the session usage never read
fresh
cp -r "$CX/home/." "$CH/"
once >/dev/null
is "$(tok)" "$(want home)" "fixture: totals as expected.json says (the fork's copies once)"
is "$(report | jq -c '[.rows[] | [.model, .events]] | sort')" "$(jq -c .models "$CX/expected.json")" \
	"fixture: one anthropic call, four openai calls"
is "$(report session | jq -c '[.rows[] | [.session, .events]] | sort')" \
	'[["aaaa0001-0000-4000-8000-000000000001",3],["bbbb0002-0000-4000-8000-000000000002",1],["ffff0003-0000-4000-8000-000000000003",1]]' \
	"fixture: the copied calls stay with the session read first (name order: the parent)"
out=$(once)
like "$out" " 0 rows added" "a second --once adds nothing"

# 3. CONTINUE_GLOBAL_DIR moves the whole home
fresh
mkdir -p "$T/moved"
cp -r "$CX/home/." "$T/moved/"
CONTINUE_GLOBAL_DIR=$T/moved once >/dev/null
is "$(tok)" "$(want home)" "CONTINUE_GLOBAL_DIR: its sessions/ is read"

# 4. live: turn by turn, the fork, a torn write, the resume, a deletion
fresh
start_daemon; ok $? "daemon up"
S=$CH/sessions/$A.json
jq '.history |= .[0:2]' "$CX/home/sessions/$A.json" >"$T/t1.json"
save "$T/t1.json" "$S"
wait_until 20 holds '[ "$(report | jq .totals.events)" = 1 ]'
is "$(report | jq .totals.events)" 1 "live: the first turn's call"
save "$CX/home/sessions/$A.json" "$S"
wait_until 20 holds '[ "$(report | jq .totals.events)" = 3 ]'
is "$(report | jq -c '[.totals.events, .totals.input_tokens]')" "[3,1676]" "live: the next turns' calls, the first not again"
cp "$CX/home/sessions/$F.json" "$CH/sessions/$F.json.tmp" && mv "$CH/sessions/$F.json.tmp" "$CH/sessions/$F.json"
wait_until 20 holds '[ "$(report | jq .totals.events)" = 4 ]'
is "$(report | jq -c '[.totals.events, .totals.input_tokens]')" "[4,2024]" "live: the fork adds only its own call"
save "$CX/later/$A.torn.json" "$S"
sleep 1
is "$(report | jq .totals.events)" 4 "live: a torn write counts nothing"
save "$CX/later/$A.resumed.json" "$S"
wait_until 20 holds '[ "$(report | jq .totals.events)" = 5 ]'
is "$(report | jq -c '[.totals.events, .totals.input_tokens]')" "[5,3024]" \
	"live: the resumed session's repeated prompt with the same usage is a new call"
rm -f "$S"
sleep 1
is "$(report | jq .totals.events)" 5 "live: a deleted session keeps its rows"
like "$("$C" status 2>/dev/null)" "Continue (continue)" "status lists Continue"
stop_daemon
done_testing
