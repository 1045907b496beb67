#!/bin/bash
# Qwen Code through the real binaries: the realgen 0.24.4 corpus's truth (20
# calls: 14 with assistant records, 6 memory-extraction calls only in
# telemetry; a fork counted once; priced by request-size tier), the fixture
# home, and live: a --fork-session file appearing while the daemon runs, a
# call seen only in telemetry, kill -9 between a call's telemetry row and
# its assistant record, usage_record.jsonl never summed.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
QX=$FIX/qwen
Q=$HOME/.qwen
once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
report() { "$C" report model --json 2>/dev/null; }
tok() { # totals as [events, input, output, reasoning, cache_read, cache_write, tool_calls]
	report | jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens, .tool_calls]'
}
want_case() {
	jq -c ".cases[\"$1\"] | [.rows, .input, .output, .reasoning, .cache_read, .cache_write, .calls]" "$QX/expected.json"
}
plus() { jq -nc --argjson a "$1" --argjson b "$2" '[$a, $b] | transpose | map(add)'; }
fresh() { stop_daemon; rm -rf "$XDG_STATE_HOME/agentmeterd" "$Q"; mkdir -p "$Q"; }

# 1. the realgen corpus, written by qwen 0.24.4 itself, as ~/.qwen
RG=$AM_SAMPLES/realgen/qwen-code-0.24.4/qwen-home
if [ -d "$RG/projects" ]; then
	fresh
	cp -r "$RG/." "$Q/"
	once >/dev/null
	r=$(report)
	is "$(tok)" "[20,543007,2388,44,1397696,0,4]" \
		"realgen: 20 calls, input 543,007, output 2,388 (44 reasoning), cache read 1,397,696"
	is "$(jq -c '[.rows[] | [.model, .events, .cost_usd]] | sort' <<<"$r")" \
		'[["qwen3-coder-plus",14,4.057302],["qwen3-max",6,0.070689]]' \
		"realgen: qwen3-coder-plus 14, qwen3-max 6, priced (the two 819K-prompt calls at the 256K-1M tier)"
	is "$(jq -r '.totals.unpriced_events' <<<"$r")" 0 "realgen: nothing unpriced"
else
	skip "realgen qwen samples not present"; skip "models"; skip "unpriced"
fi

# 2. the fixture home
fresh
cp -r "$QX/home/." "$Q/"
once >/dev/null
is "$(tok)" "$(want_case home)" "fixture home: totals as expected.json says"
is "$(report | jq -r .totals.cost_usd)" "$(jq -r '.cases.home.cost_usd_computed' "$QX/expected.json")" \
	"fixture home: priced by each request's size tier"
out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds nothing"
is "$(field 'bytes read' "$out")" 0 "... and reads nothing"

# 3. live: the session, then its fork appearing beside it
fresh
CH=$Q/projects/-work-alpha/chats
mkdir -p "$CH"
S1=$QX/home/projects/-work-alpha/chats/cccc0003-3333-4333-8333-000000000003.jsonl
FK=$QX/home/projects/-work-alpha/chats/dddd0004-4444-4444-8444-000000000004.jsonl
start_daemon; ok $? "daemon up"
head -n 9 "$S1" >"$CH/${S1##*/}"  # A (telemetry, assistant), the tool call, B (both), M (telemetry only)
wait_until 20 holds '[ "$(tok)" = "[3,28444,127,11,22656,0,1]" ]'
ok $? "live: A and B from their two records each, the memory call from telemetry alone ($(tok))"
sed -n '10,13p' "$S1" >>"$CH/${S1##*/}"  # user, api_error, the torn record, C's assistant record
wait_until 20 holds '[ "$(tok)" = "[4,34444,157,11,37656,0,1]" ]'
ok $? "C's assistant record alone: one call ($(tok))"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
sed -n '14,$p' "$S1" >>"$CH/${S1##*/}"  # C's telemetry row after it, D, M2
once >/dev/null
is "$(tok)" "$(want_case session)" "kill -9 between C's assistant record and its telemetry row: each call once"
start_daemon; ok $? "daemon up again"
cp "$FK" "$CH/"
wait_until 20 holds '[ "$(tok)" = "$(want_case session+fork)" ]'
ok $? "a --fork-session file appears: only its own call is new ($(tok))"
is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | [.session[0:8], .events]] | sort')" \
	'[["cccc0003",6],["dddd0004",1]]' "the copied calls stay with the session that made them"
printf '%s\n' '{"uuid":"dddd0004-0200-4000-8000-000000000000","parentUuid":null,"sessionId":"dddd0004-4444-4444-8444-000000000004","timestamp":"2026-11-30T13:05:00.000Z","type":"system","subtype":"ui_telemetry","cwd":"/work/alpha","version":"0.24.4","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","response_id":"chatcmpl-x","model":"qwen3-coder-plus","input_token_count":9000,"output_token_count":32,"cached_content_token_count":8000,"thoughts_token_count":0,"total_token_count":9032,"subagent_name":"managed-auto-memory-extractor"}}}' >>"$CH/${FK##*/}"
want=$(plus "$(want_case session+fork)" "[1,1000,32,0,8000,0,0]")
wait_until 20 holds '[ "$(tok)" = "$want" ]'
ok $? "a call seen only in telemetry is counted ($(tok))"
printf '%s\n' '{"version":1,"sessionId":"dddd0004-4444-4444-8444-000000000004","models":{"qwen3-coder-plus":{"requests":99,"inputTokens":999999,"outputTokens":9999}}}' >>"$Q/usage_record.jsonl"
"$C" rescan >/dev/null 2>&1
sleep 0.3
is "$(tok)" "$want" "usage_record.jsonl (cumulative) is never summed"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
