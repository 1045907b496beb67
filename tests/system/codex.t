#!/bin/bash
# Codex CLI rollouts through the real binaries: the realgen truth totals, the
# fixture rules, a corpus compressed to .jsonl.zst (as Codex does) and one
# file decompressed and appended (as resume does), a kill -9 between a
# response's token_usage_record and its token_count, a live append seen
# through inotify, and the rate-limit windows in status.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
command -v zstd >/dev/null || { echo "1..0 # SKIP zstd(1) not installed"; exit 0; }
export CODEX_HOME=$T/codex
CX=$FIX/codex
DAY=$CODEX_HOME/sessions/2026/11/30
once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
report_json() { "$C" report model --json 2>/dev/null; }
tok() { # tok: totals as [events, input, output, cache_read, cache_write, reasoning]
	report_json | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .reasoning_tokens]'
}
want_case() { # want_case NAME: the fixture case's totals in tok's shape
	jq -c ".cases[\"$1\"] | [.rows, .input, .output, .cache_read, .cache_write, .reasoning]" "$CX/expected.json"
}
fresh() { rm -rf "$XDG_STATE_HOME/agentmeterd" "$CODEX_HOME"; mkdir -p "$DAY"; }

# 1. the realgen corpus (written by codex 0.169.0 itself): the truth totals
RG=$AM_SAMPLES/realgen/codex-0.169.0/codex-home
if [ -d "$RG/sessions" ]; then
	CODEX_HOME=$RG once >/dev/null
	r=$(report_json)
	is "$(jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens]' <<<"$r")" \
		"[14,97511,430,33,130560,384]" "realgen: 14 calls, input 97,511, output 430 (reasoning 33), cache read 130,560, cache write 384"
	is "$(jq -c '[.rows[] | select(.harness=="codex") | [.model, .events]] | sort' <<<"$r")" \
		'[["gpt-5.5",13],["gpt-5.6-sol",1]]' "realgen: 13 gpt-5.5 calls and one gpt-5.6-sol call"
	is "$(jq -r '.totals.tool_calls' <<<"$r")" 2 "realgen: the two shell calls recorded"
	rm -rf "$XDG_STATE_HOME/agentmeterd"
else
	skip "realgen codex samples not present"; skip "realgen models"; skip "realgen calls"
fi

# 2. the fixture home: every rule at once, and a second run reads nothing
fresh
cp -r "$CX/home/." "$CODEX_HOME/"
out=$(once)
is "$(tok)" "$(want_case home)" "fixture home: totals as expected.json says"
out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds nothing"
is "$(field 'bytes read' "$out")" 0 "... and reads nothing"

# 3. compressed corpus: the older real rollouts (or the fixtures without them)
fresh
if ls "$AM_SAMPLES"/codex/rollout-*.jsonl >/dev/null 2>&1; then
	cp "$AM_SAMPLES"/codex/rollout-*.jsonl "$DAY/"
else
	cp "$CX"/home/sessions/2026/11/30/*.jsonl "$DAY/"
fi
once >/dev/null
before=$(tok)
check "corpus read: $before" [ "$(jq '.[0]' <<<"$before")" -gt 0 ]
for f in "$DAY"/*.jsonl; do touch -d '10 days ago' "$f"; zstd -q --rm "$f"; done
is "$(ls "$DAY" | grep -c '\.jsonl\.zst$')" "$(ls "$DAY" | wc -l)" "every rollout is now .jsonl.zst only"
out=$(once)
is "$(tok)" "$before" "compressed: totals unchanged"
is "$(field 'rows added' "$out")" 0 "compressed: no row added"
is "$(field 'bytes read' "$out")" 0 "compressed: nothing read again (checkpoint taken over)"
z=$(ls "$DAY"/*.zst | tail -n 1)
plain=${z%.zst}
zstd -q -d --rm "$z"
out=$(once)
is "$(tok)" "$before" "decompressed on resume: totals unchanged"
is "$(field 'bytes read' "$out")" 0 "decompressed: nothing read again"
# the resumed session makes one more call
last=$(grep '"token_count"' "$plain" | grep -v '"info":null' | tail -n 1)
line=$(jq -c '.timestamp = "2026-12-01T09:00:00.000Z"
	| .payload.info.last_token_usage = {input_tokens: 1000, cached_input_tokens: 600, output_tokens: 40, reasoning_output_tokens: 8, total_tokens: 1040}
	| .payload.info.total_token_usage.input_tokens += 1000
	| .payload.info.total_token_usage.cached_input_tokens += 600
	| .payload.info.total_token_usage.output_tokens += 40
	| .payload.info.total_token_usage.reasoning_output_tokens += 8
	| .payload.info.total_token_usage.total_tokens += 1040' <<<"$last")
printf '%s\n' "$line" >>"$plain"
out=$(once)
want=$(jq -c '[.[0] + 1, .[1] + 400, .[2] + 40, .[3] + 600, .[4], .[5] + 8]' <<<"$before")
is "$(tok)" "$want" "after the appended call: totals grow by exactly that call"
is "$(field 'bytes read' "$out")" "$(( ${#line} + 1 ))" "only the appended line is read"
# a plain sibling wins over a stale .zst of the same rollout
zstd -q -k "$plain" -o "$plain.zst.tmp" && mv "$plain.zst.tmp" "$plain.zst"
printf 'garbage, not zstd' >"$DAY/rollout-2026-01-01T00-00-00-broken.jsonl.zst"
out=$(once)
is "$(tok)" "$want" "a .zst beside its plain file and a corrupt .zst change nothing"
grep -q 'broken.jsonl.zst: cannot read source' "$T/once.err"
ok $? "the corrupt .zst is reported as a source error"

# 4. kill -9 between a response's token_usage_record and its token_count
fresh
both=$CX/home/sessions/2026/11/30/rollout-2026-11-30T13-00-00-0000000d-0000-7000-8000-00000000both.jsonl
dst=$DAY/$(basename "$both")
head -n 4 "$both" >"$dst"   # session_meta, turn_context, function_call, token_usage_record
start_daemon; ok $? "daemon up"
wait_until 20 sh -c "[ \"\$(\"$C\" report daily --json 2>/dev/null | jq .totals.events)\" = 1 ]"
ok $? "the record is counted live"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
tail -n +5 "$both" >>"$dst"
once >/dev/null
is "$(tok)" "$(want_case both)" "after kill -9 and the rest of the file: each call counted once"

# 5. a live append through inotify, and the rate limits in status
start_daemon; ok $? "daemon up again"
printf '%s\n' '{"timestamp":"2026-11-30T13:00:20.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":19500,"cached_input_tokens":5500,"cache_write_input_tokens":64,"output_tokens":500,"reasoning_output_tokens":20,"total_tokens":20000},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":500,"cache_write_input_tokens":0,"output_tokens":30,"reasoning_output_tokens":0,"total_tokens":1030}},"rate_limits":{"limit_id":"codex","primary":{"used_percent":42.5,"window_minutes":300,"resets_at":1900000000},"secondary":{"used_percent":7.0,"window_minutes":10080,"resets_at":1900500000},"plan_type":"pro"}}}' >>"$dst"
wait_until 20 sh -c "[ \"\$(\"$C\" report daily --json 2>/dev/null | jq .totals.events)\" = 5 ]"
ok $? "a live append is counted (inotify)"
is "$(tok)" "$(want_case both | jq -c '[.[0] + 1, .[1] + 500, .[2] + 30, .[3] + 500, .[4], .[5]]')" "... exactly once"
st=$("$C" status --json)
is "$(jq -c '.harnesses[] | select(.id=="codex") | .roots[0].rate_limits | [.plan_type, .primary.used_percent, .primary.window_minutes, .secondary.used_percent]' <<<"$st")" \
	'["pro",42.5,300,7]' "status --json: the latest rate-limit windows of the root"
"$C" status | grep -q 'primary (300 min): 42.5% used'
ok $? "status shows them"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
