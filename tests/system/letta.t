#!/bin/bash
# Letta Code through the real binaries: the realgen 0.32.18 corpus's truth
# (14 calls, a sub-agent's 2 among them), the fixture home (a sub-agent's
# "default" conversation named by its agent, conversation.json never read),
# $LETTA_LOCAL_BACKEND_DIR moving the root, and live: a resumed conversation
# appending to its messages.jsonl while the daemon runs, counted once.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
LX=$FIX/letta
L=$HOME/.letta
once() { "$D" --once 2>>"$T/once.err"; }
report() { "$C" report "${1:-model}" --json 2>/dev/null; }
tok() { # totals as [events, input, output, reasoning, cache_read, cache_write, tool_calls]
	report | jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens, .tool_calls]'
}
want() { jq -c ".$1 | [.rows, .input, .output, .reasoning, .cache_read, .cache_write, .calls]" "$LX/expected.json"; }
fresh() { stop_daemon; rm -rf "$XDG_STATE_HOME/agentmeterd" "$L" "$T/moved"; mkdir -p "$L"; }

# 1. the realgen corpus, written by Letta Code 0.32.18 itself, as ~/.letta
RG=$AM_SAMPLES/realgen/letta-code-0.32.18/letta-home
if [ -d "$RG/lc-local-backend/conversations" ]; then
	fresh
	cp -r "$RG/." "$L/"
	once >/dev/null
	is "$(tok)" "[14,204911,2147,22,123328,0,6]" \
		"realgen: 14 calls, input 204,911, output 2,147, cache read 123,328"
	is "$(report | jq -c '[.rows[] | [.model, .events, .cost_usd]] | sort')" \
		'[["fake-gpt",10,null],["fake-gpt-mini",4,null]]' \
		"realgen: fake-gpt 10, fake-gpt-mini 4 (the sub-agent's 2 inside), unpriced, not \$0"
	is "$(report session | jq '[.rows[] | select(.session == "default")] | length')" 0 \
		"realgen: no session is called 'default' (the sub-agent's is named by its agent)"
else
	skip "realgen letta samples not present"; skip "models"; skip "sessions"
fi

# 2. the fixture home
fresh
cp -r "$LX/home/." "$L/"
out=$(once)
is "$(tok)" "$(want home)" "fixture: totals as expected.json says (conversation.json not read)"
is "$(report session | jq -c '[.rows[] | [.session, .project, .events]] | sort')" \
	"$(jq -c .sessions "$LX/expected.json")" "fixture: the sub-agent's conversation named by its agent; projects from cwd"
out=$(once)
like "$out" " 0 rows added" "a second --once adds nothing"

# 3. the root moved by LETTA_LOCAL_BACKEND_DIR
fresh
mkdir -p "$T/moved"
cp -r "$LX/home/lc-local-backend/." "$T/moved/"
LETTA_LOCAL_BACKEND_DIR=$T/moved once >/dev/null
is "$(tok)" "$(want home)" "LETTA_LOCAL_BACKEND_DIR: the moved backend is read"
st=$(LETTA_LOCAL_BACKEND_DIR=$T/moved "$D" --list-variables 2>/dev/null | cut -f1 | grep -cx LETTA_LOCAL_BACKEND_DIR)
is "$st" 1 "LETTA_LOCAL_BACKEND_DIR is a discovery variable (install records it)"

# 4. live: the daemon running, the conversation resumed (appended to)
fresh
cp -r "$LX/home/." "$L/"
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$(tok)" = "$(want home)" ]'
is "$(tok)" "$(want home)" "live: the home as it was"
C1=$(ls -d "$L"/lc-local-backend/conversations/Y29udmVyc2F0aW9u*)/messages.jsonl
cat "$LX/resume.jsonl" >>"$C1"
wait_until 20 holds '[ "$(tok)" = "$(want resumed)" ]'
is "$(tok)" "$(want resumed)" "live: the resumed call counted once"
is "$(report session | jq -r '[.rows[] | select(.session == "local-conv-1")] | .[0].events')" 3 \
	"live: the resume belongs to the same conversation"
status=$("$C" status 2>/dev/null)
like "$status" "Letta Code (letta)" "status lists Letta Code"
stop_daemon
done_testing
