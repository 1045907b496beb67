#!/bin/bash
# Amp and Kimi through the real binaries, from the project's own fixtures
# (no file either harness wrote exists here: both are marked unverified in
# status): the figures every rule of format-amp.md and format-kimi.md
# gives, a counter of 2^63-1 refused and counted, $AMP_DATA_DIR and
# $KIMI_CODE_HOME, and live: an Amp thread rewritten with a new call and a
# grown one, a Kimi Code usage.record appended (its step.end not counted).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
tok() { # tok HARNESS: [events, input, output, cache read, cache write]
	"$C" report model --json --harness "$1" 2>/dev/null |
		jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens]'; }
cp -r "$FIX/amp/home/." "$HOME/"
cp -r "$FIX/kimi/home/." "$HOME/"
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$(tok amp)" = "[5,417,313,11572,4486]" ]'
is "$(tok amp)" "[5,417,313,11572,4486]" \
	"amp: 5 calls (an all-zero usage none, a message and its ledger event one), input 417, output 313, cache read 11,572, cache write 4,486"
wait_until 20 holds '[ "$(tok kimi)" = "[5,3350,545,6000,0]" ]'
is "$(tok kimi)" "[5,3350,545,6000,0]" \
	"kimi: 5 calls (step.end and a fork's copy not again, a sub-agent's own, a step's updates once), input 3,350, output 545"
st=$("$C" status --json)
is "$(jq -c '[.harnesses[] | select(.id == "amp" or .id == "kimi") | [.id, .verified]]' <<<"$st")" '[["amp",false],["kimi",false]]' \
	"status --json: both unverified"
like "$("$C" status)" "unverified" "status says so in words"
is "$(jq '.ledger.rows_refused.tokens // 0' <<<"$st")" 2 "a counter of 2^63-1 in each: refused, counted in status"
is "$(jq '[.harnesses[] | select(.id == "kimi") | .malformed] | add' <<<"$st")" 1 "kimi: the line that is not JSON, counted"
is "$("$C" report model --json --harness kimi | jq -c '[.rows[] | .model] | sort')" '["","kimi-k2-0905-preview"]' \
	"kimi: Kimi Code's model from its llm.request; Kimi CLI's unknown (empty, unpriced)"

# live: an Amp thread rewritten whole with a grown call and a new one
TH=$HOME/.local/share/amp/threads/T-aaaaaaaa-0000-4000-8000-000000000001.json
jq '.messages[1].usage.outputTokens = 260 | .messages += [{"role": "assistant", "messageId": 5, "content": [],
	"usage": {"model": "claude-sonnet-4-5", "inputTokens": 40, "outputTokens": 4, "cacheCreationInputTokens": 0,
	"cacheReadInputTokens": 100, "timestamp": "2026-12-01T10:02:00.000Z"}}]' "$TH" >"$T/th.json"
cat "$T/th.json" >"$TH"
wait_until 20 holds '[ "$(tok amp)" = "[6,457,377,11672,4486]" ]'
is "$(tok amp)" "[6,457,377,11672,4486]" "amp live: the grown call upserted (+60 output), the new one once"
# live: a Kimi Code record appended, with the step.end that repeats it
W=$HOME/.kimi-code/sessions/wd_proj_0123456789ab/session_11111111-1111-4111-8111-111111111111/agents/main/wire.jsonl
printf '%s\n' '{"type":"usage.record","model":"k2","usage":{"inputOther":9,"output":1,"inputCacheRead":0,"inputCacheCreation":0},"usageScope":"turn","time":1796112009000}' \
	'{"type":"context.append_loop_event","event":{"type":"step.end","usage":{"inputOther":9,"output":1,"inputCacheRead":0,"inputCacheCreation":0}},"time":1796112009001}' >>"$W"
wait_until 20 holds '[ "$(tok kimi)" = "[6,3359,546,6000,0]" ]'
is "$(tok kimi)" "[6,3359,546,6000,0]" "kimi live: the appended record once, its step.end never"
stop_daemon

# moved roots, recorded as install records them
rm -rf "$XDG_STATE_HOME/agentmeterd"
mkdir -p "$T/ampdata" "$T/kc"
mv "$HOME/.local/share/amp/threads" "$T/ampdata/"
mv "$HOME/.kimi-code/sessions" "$T/kc/"
AMP_DATA_DIR=$T/ampdata KIMI_CODE_HOME=$T/kc "$D" --once >/dev/null 2>&1
is "$(tok amp)" "[6,457,377,11672,4486]" "\$AMP_DATA_DIR moves Amp's threads"
is "$("$C" report model --json --harness kimi 2>/dev/null | jq .totals.events)" 6 "\$KIMI_CODE_HOME moves Kimi Code's sessions"
done_testing
