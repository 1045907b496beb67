#!/bin/bash
# Documents that shrink and grow again (issue 52's surfaces): a Cline
# session document, a Continue session and a Gemini CLI 0.33 session
# document (chats/session-*.json) rewritten in place with fewer
# messages (a rolled-back or truncated history), then with all of them
# again, then with one more: the ledger keeps what it counted, counts each
# call once, and counts the new one; while the daemon runs.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
report() { "$C" report model --json 2>/dev/null | jq -c '[.totals.events, .totals.input_tokens, .totals.output_tokens]'; }
# the versions of a document the daemon has read (sources: lines)
versions() { "$C" sources --json 2>/dev/null | jq --arg p "$1" '[.sources[] | select(.path == $p) | .lines] | add // 0'; }
# write FILE's text over DOC in place, then wait until the daemon read it
rewrite() { # rewrite FILE DOC
	local v; v=$(versions "$2")
	cat "$1" >"$2"
	wait_until 20 holds "[ \$(versions '$2') -gt $v ]"
	ok $? "the daemon read the new version of ${2##*/}"
}

# ---- Cline: <session>/<session>.messages.json, rewritten in place
P=1800000300000_plain
DD=$T/cline/data/sessions/$P
mkdir -p "$DD"
cp "$FIX/cline/data/sessions/$P/$P.json" "$DD/"
M=$DD/$P.messages.json
ORIG=$FIX/cline/data/sessions/$P/$P.messages.json
export CLINE_DATA_DIR=$T/cline/data
start_daemon; ok $? "daemon up"
cp "$ORIG" "$M"
full=$(jq -c '[[.messages[] | select(.metrics)] | length, (map(.metrics.inputTokens - (.metrics.cacheReadTokens // 0) - (.metrics.cacheWriteTokens // 0)) | add), (map(.metrics.outputTokens) | add)]' "$ORIG")
wait_until 20 holds '[ "$(report)" = "$full" ]'
is "$(report)" "$full" "cline: the session counted ($full)"
jq '.messages |= .[0:2]' "$ORIG" >"$T/short.json"; rewrite "$T/short.json" "$M"
is "$(report)" "$full" "cline: shrunk to one call: nothing lost, nothing added"
jq . "$ORIG" >"$T/again.json"; rewrite "$T/again.json" "$M"
is "$(report)" "$full" "cline: grown back to the same messages: nothing counted twice"
jq '.messages += [.messages[3] | .id = "msg_E4new" | .ts = 1800000300900 | .metrics.inputTokens = 700 | .metrics.outputTokens = 9]' \
	"$ORIG" >"$T/long.json"
cat "$T/long.json" >"$M"
want=$(jq -c --argjson f "$full" -n '[$f[0] + 1, $f[1] + 700, $f[2] + 9]')
wait_until 20 holds '[ "$(report)" = "$want" ]'
is "$(report)" "$want" "cline: grown past it: the new call, once"
stop_daemon
unset CLINE_DATA_DIR

# ---- Continue: sessions/<id>.json, rewritten in place
rm -rf "$XDG_STATE_HOME/agentmeterd"
A=aaaa0001-0000-4000-8000-000000000001
CS=$HOME/.continue/sessions
mkdir -p "$CS"
start_daemon; ok $? "daemon up again"
cp "$FIX/continue/home/sessions/$A.json" "$CS/$A.json"
wait_until 20 holds '[ "$(report)" = "[3,1676,90]" ]'
is "$(report)" "[3,1676,90]" "continue: three calls"
jq '.history |= .[0:2]' "$FIX/continue/home/sessions/$A.json" >"$T/c-short.json"; rewrite "$T/c-short.json" "$CS/$A.json"
is "$(report)" "[3,1676,90]" "continue: shrunk to one call: nothing lost, nothing added"
rewrite "$FIX/continue/home/sessions/$A.json" "$CS/$A.json"
is "$(report)" "[3,1676,90]" "continue: grown back: nothing counted twice"
cat "$FIX/continue/later/$A.resumed.json" >"$CS/$A.json"
wait_until 20 holds '[ "$(report)" = "[4,2676,110]" ]'
is "$(report)" "[4,2676,110]" "continue: grown past it: the new call, once"
stop_daemon

# ---- Gemini CLI 0.33: tmp/<project>/chats/session-*.json, rewritten in place
# (the adapter skips the messages a rewrite keeps byte for byte, found by a
# hash of them: a shorter version, one that holds only that region, and
# the region coming back must each be read right)
rm -rf "$XDG_STATE_HOME/agentmeterd" "$CS"
GH=7542a27b500a3fbe093358d093a035e71a027fbcede398ac18d18a8174935c2b
GORIG=$FIX/gemini/home/tmp/$GH/chats/session-2026-10-01T09-00-bbbb0002.json
GD=$HOME/.gemini/tmp/$GH/chats
GM=$GD/session-2026-10-01T09-00-bbbb0002.json
mkdir -p "$GD"
cp "$FIX/gemini/home/projects.json" "$HOME/.gemini/"
start_daemon; ok $? "daemon up a third time"
cp "$GORIG" "$GM"
# a call: a gemini message; input less the cached part, output with the thoughts
gsum='[[.messages[] | select(.type == "gemini" and .tokens)] | length, (map(.tokens.input - .tokens.cached + .tokens.tool) | add), (map(.tokens.output + .tokens.thoughts) | add)]'
gfull=$(jq -c "$gsum" "$GORIG")
wait_until 20 holds '[ "$(report)" = "$gfull" ]'
is "$(report)" "$gfull" "gemini: the session counted ($gfull)"
jq '.messages |= .[0:2] | .lastUpdated = "2026-10-01T09:00:06.000Z"' "$GORIG" >"$T/g-short.json"
rewrite "$T/g-short.json" "$GM"
is "$(report)" "$gfull" "gemini: shrunk to one call: nothing lost, nothing added"
rewrite "$GORIG" "$GM"
is "$(report)" "$gfull" "gemini: grown back to the same bytes: nothing counted twice"
# the last call rolled back: the version holds exactly the messages the
# adapter remembered from the last one (all but the last)
jq '.messages |= .[0:5] | .lastUpdated = "2026-10-01T09:00:19.000Z"' "$GORIG" >"$T/g-cut.json"
rewrite "$T/g-cut.json" "$GM"
is "$(report)" "$gfull" "gemini: its last call rolled back: nothing lost, nothing added"
rewrite "$GORIG" "$GM"
is "$(report)" "$gfull" "gemini: the call back again: still once"
jq '.messages += [.messages[5] | .id = "7e2d0004-0000-4000-8000-000000000004" | .timestamp = "2026-10-01T09:00:30.000Z" | .tokens = {input: 700, output: 9, cached: 0, thoughts: 0, tool: 0, total: 709}] | .lastUpdated = "2026-10-01T09:00:30.000Z"' \
	"$GORIG" >"$T/g-long.json"
cat "$T/g-long.json" >"$GM"
gwant=$(jq -c --argjson f "$gfull" -n '[$f[0] + 1, $f[1] + 700, $f[2] + 9]')
wait_until 20 holds '[ "$(report)" = "$gwant" ]'
is "$(report)" "$gwant" "gemini: grown past it: the new call, once"
# shrunk to nothing but the header, then the whole history back with one more
jq '.messages = [] | .lastUpdated = "2026-10-01T09:00:31.000Z"' "$GORIG" >"$T/g-empty.json"
rewrite "$T/g-empty.json" "$GM"
is "$(report)" "$gwant" "gemini: emptied: nothing lost"
jq '.messages += [.messages[5] | .id = "7e2d0005-0000-4000-8000-000000000005" | .tokens = {input: 50, output: 5, cached: 0, thoughts: 0, tool: 0, total: 55}] | .lastUpdated = "2026-10-01T09:00:40.000Z"' \
	"$T/g-long.json" >"$T/g-longer.json"
cat "$T/g-longer.json" >"$GM"
gwant2=$(jq -c --argjson f "$gwant" -n '[$f[0] + 1, $f[1] + 50, $f[2] + 5]')
wait_until 20 holds '[ "$(report)" = "$gwant2" ]'
is "$(report)" "$gwant2" "gemini: filled again with one call more: that call once, the others not again"
is "$("$C" sources --json 2>/dev/null | jq -c --arg p "$GM" '.sources[] | select(.path == $p) | [.kind, .malformed]')" \
	'["document",0]' "gemini: every version read as a document, none malformed"
stop_daemon
done_testing
