#!/bin/bash
# Factory Droid snapshots through the real binaries: the realgen corpus
# (written by Droid 0.225.2 itself) as ~/.factory with the issue's figures,
# the fixture rules (two sessions with the same usage, a .bak, custom
# models, a torn snapshot), a snapshot replaced by rename three times while
# the daemon runs (ends at the last snapshot), one rewritten in place in
# two halves, a rollback and regrowth, a kill -9 between two replacements, and what status
# and the report table say the events of Droid are.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
FX=$FIX/droid
once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
tok() { # input, output, cache read, cache write
	"$C" report model --json 2>/dev/null | jq -c '.totals | [.input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens]'
}
fresh() { rm -rf "$XDG_STATE_HOME/agentmeterd" "$HOME/.factory"; }
S=$HOME/.factory/sessions/-work-live
ID=99999999-0000-4000-8000-000000000009
F=$S/$ID.settings.json
# snap IN OUT CACHE_READ CACHE_WRITE: a snapshot document like Droid's
snap() {
	jq -n --argjson i "$1" --argjson o "$2" --argjson r "$3" --argjson w "$4" \
		'{assistantActiveTimeMs: 100, model: "custom:My-Claude-0", systemPrompt: "Do the task.",
		  tokenUsage: {inputTokens: $i, outputTokens: $o, cacheCreationTokens: $w, cacheReadTokens: $r, thinkingTokens: 0, factoryCredits: 0},
		  inclusiveTokenUsage: {inputTokens: ($i * 3), outputTokens: $o, cacheCreationTokens: $w, cacheReadTokens: $r, thinkingTokens: 0, factoryCredits: 0},
		  providerLock: "anthropic", lastCallTokenUsage: {inputTokens: 1, outputTokens: 1, cacheReadTokens: 0}}'
}
# replace IN OUT CR CW: as Droid does: the old one to .bak, the new one renamed in
replace() {
	[ -f "$F" ] && cp "$F" "$F.bak"
	snap "$@" >"$F.tmp.$$" && mv "$F.tmp.$$" "$F"
}

# 1. the realgen corpus as ~/.factory: the sum of the nine final snapshots
RG=$AM_SAMPLES/realgen/droid-0.225.2/factory-home
if [ -d "$RG/sessions" ]; then
	cp -r "$RG" "$HOME/.factory"
	out=$(once)
	is "$(tok)" "[89487,596,88512,64]" "realgen: input 89,487, output 596, cache read 88,512, cache write 64"
	is "$(field 'files' "$out")" 9 "realgen: nine snapshot files read (no .bak, no transcript)"
	r=$("$C" report model --json 2>/dev/null)
	is "$(jq -c '[.rows[] | select(.harness=="droid") | [.model, .events]] | sort' <<<"$r")" \
		'[["claude-sonnet-4-5",2],["fake-gpt",5],["gpt-5-mini",1]]' \
		"realgen: custom models mapped by name (fake-gpt is no priced model)"
	is "$(jq -c '[.rows[] | select(.model=="claude-sonnet-4-5") | .cost_usd] | add' <<<"$r")" 0.069217 \
		"realgen: the Claude steps priced at list"
	is "$(jq -c '.totals.unpriced_events' <<<"$r")" 5 "realgen: fake-gpt stays unpriced (not free)"
	is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | select(.harness=="droid")] | length')" 8 \
		"realgen: eight sessions with usage, identical ones apart"
else
	for i in 1 2 3 4 5 6; do skip "realgen droid samples not present"; done
fi

# 2. the fixture home: every rule at once
fresh
cp -r "$FX/factory" "$HOME/.factory"
find "$HOME/.factory" -type f -exec touch -d '-1 hour' {} +   # a writer long done: the torn one is broken
out=$(once)
is "$(tok)" "$(jq -c '.cases.home | [.input, .output, .cache_read, .cache_write]' "$FX/expected.json")" \
	"fixture home: totals as expected.json says"
is "$("$C" report model --json 2>/dev/null | jq -c '.totals | [.events, .cost_usd, .unpriced_events]')" \
	"[4,$(jq '.cases.home.cost_usd' "$FX/expected.json"),1]" "four steps, the mapped ones priced, custom:Gone-0 unpriced"
is "$(field malformed "$out")" 1 "the torn snapshot is counted malformed once"
out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds nothing"
"$C" sources --json 2>/dev/null | jq -e '[.sources[].path | select(endswith(".bak") or endswith(".jsonl"))] | length == 0' >/dev/null
ok $? "neither the .bak nor the transcripts are sources"
"$C" report session 2>/dev/null | grep -q 'events of Factory Droid (droid): snapshot steps'
ok $? "the report table says what Droid's events are"

# 3. live: a snapshot replaced by rename three times ends at the last one
fresh
mkdir -p "$S"
replace 1000 10 500 0
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$(tok)" = "[1000,10,500,0]" ]'
ok $? "the first snapshot is counted"
replace 2500 25 1500 64
wait_until 20 holds '[ "$(tok)" = "[2500,25,1500,64]" ]'
ok $? "replaced by rename: the second"
replace 4000 40 3000 64
wait_until 20 holds '[ "$(tok)" = "[4000,40,3000,64]" ]'
ok $? "replaced by rename: the third, the ledger at the last snapshot"
is "$(totals events)" 3 "three snapshot steps"
st=$("$C" status --json)
is "$(jq -c '.harnesses[] | select(.id=="droid") | [.capabilities.events, .capabilities.activity, .snapshot_sessions]' <<<"$st")" \
	'["snapshot-steps","none",1]' "status: events are snapshot steps, no activity, one session"
"$C" status | grep -q 'reasoning subset-of-output, events snapshot-steps'
ok $? "status text shows the events capability"

# rewritten in place in two halves (a torn write): counted once, with the final values
new=$(snap 5000 50 3500 64)
half=$(( ${#new} / 2 ))
printf '%s' "${new:0:$half}" >"$F"
sleep 0.5
printf '%s\n' "${new:$half}" >>"$F"
wait_until 20 holds '[ "$(tok)" = "[5000,50,3500,64]" ]'
ok $? "a snapshot written in two halves ends at its final values"
is "$(totals events)" 4 "... one step for it"

# 4. kill -9 between two replacements: nothing lost, nothing twice
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
replace 6000 60 4000 64
once >/dev/null
is "$(tok)" "[6000,60,4000,64]" "after kill -9 and a replacement: the last snapshot, nothing twice"
out=$(once)
is "$(field 'rows added' "$out")" 0 "the same snapshot again adds nothing"

# 5. a rollback (the totals went down: an older snapshot written back), then
# regrowth to the old totals and past them: each call once
start_daemon; ok $? "daemon up again"
replace 300 3 0 0
sleep 1
is "$(tok)" "[6000,60,4000,64]" "a rollback adds nothing"
replace 6000 60 4000 64
replace 6500 65 4000 64
wait_until 20 holds '[ "$(tok)" = "[6500,65,4000,64]" ]'
ok $? "regrowth counts only what rises above the highest totals"
is "$("$C" status --json | jq '.harnesses[] | select(.id=="droid") | .snapshot_rollbacks')" 1 "status counts the rollback"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
