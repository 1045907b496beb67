#!/bin/bash
# Documents that shrink and grow again (issue 52's surfaces): a Cline
# session document and a Continue session rewritten in place with fewer
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
done_testing
