#!/bin/bash
# PicoClaw end to end with the real binaries: discovery through config.json
# (custom workspace, named agents), activity rows with tokens and cost
# unavailable (null, never 0), the tool report, and the live daemon through
# compaction (temp file + rename), rollback and re-stamp rewrites.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
EXP=$FIX/picoclaw/expected.json
cp -a "$FIX/picoclaw/user/." "$HOME/"
case_of() { jq -c --arg n "$1" '.cases[] | select(.name | startswith($n))' "$EXP"; }
home=$(case_of "home:")

"$D" --once >"$T/once.out" 2>"$T/once.err"; rc=$?
is "$rc" 0 "--once over a PicoClaw home exits 0"
rep=$("$C" report daily --harness picoclaw --json 2>/dev/null)
is "$(jq .totals.events <<<"$rep")" "$(jq .events <<<"$home")" "events equal expected.json"
is "$(jq .totals.tool_calls <<<"$rep")" "$(jq .tool_calls <<<"$home")" "tool calls equal expected.json"
is "$(jq -c '.totals | [.input_tokens, .output_tokens, .total_tokens, .cost_usd]' <<<"$rep")" "[null,null,null,null]" "tokens and cost are null (unavailable), not 0"
is "$(jq .totals.unpriced_events <<<"$rep")" "$(jq .events <<<"$home")" "every event counted as unpriced"
tools=$("$C" report tool --harness picoclaw --json 2>/dev/null | jq -c '[.rows[] | {(.tool): .calls}] | add | to_entries | sort_by(.key) | from_entries')
is "$tools" "$(jq -c '.tools | to_entries | sort_by(.key) | from_entries' <<<"$home")" "tool report: calls per tool name"
is "$("$C" report tool --harness picoclaw --json 2>/dev/null | jq -c '[.rows[].cost_share_usd] | unique')" "[null]" "tool report: no cost share invented"
table=$("$C" report daily --harness picoclaw 2>/dev/null)
check "table shows — for tokens and cost" grep -q "TOTAL.*—.*—" <<<"$table"
models=$("$C" report model --harness picoclaw --json 2>/dev/null | jq -c '[.rows[] | {(.key): .events}] | add | to_entries | sort_by(.key) | from_entries')
# report keys are provider/model, or the model alone when there is no provider
is "$models" "$(jq -c '.models | to_entries | map(.key |= sub("^/"; "")) | sort_by(.key) | from_entries' <<<"$home")" "model aliases mapped through model_list"
out=$("$D" --once 2>/dev/null)
check "second run adds nothing" grep -q " 0 rows added" <<<"$out"

# live: rewrites by temp file + rename, and a rollback to fewer lines
start_daemon; ok $? "daemon up"
S=$HOME/$(jq -r '.roots[0].path | sub("^user/"; "")' <<<"$home")   # the config's workspace
check "the configured workspace is a root in status" sh -c "'$C' status --json | jq -e --arg p '$S' '[.harnesses[].roots[].path] | index(\$p)' >/dev/null"
events() { "$C" report daily --harness picoclaw --json 2>/dev/null | jq .totals.events; }
base=$(events)
for c in "compaction:" "rollback:" "re-stamp:"; do
	cs=$(case_of "$c")
	n=$(jq '.steps | length' <<<"$cs")
	for i in $(seq 0 $((n - 1))); do
		src=$FIX/picoclaw/$(jq -r ".steps[$i].source" <<<"$cs")
		name=$(basename "$src")
		cp "$src" "$S/.tmp-$$-$i"          # PicoClaw's atomic write: temp + rename
		mv "$S/.tmp-$$-$i" "$S/$name"
		want=$((base + $(jq ".steps[$i].events" <<<"$cs")))
		is_events() { [ "$(events)" = "$want" ]; }
		wait_until 10 is_events; ok $? "$c step $((i + 1)): $want events"
	done
	base=$want
done
stop_daemon; ok $? "clean stop"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.err"; ok $? "no sanitizer reports"
done_testing
