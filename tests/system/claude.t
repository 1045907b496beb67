#!/bin/bash
# Claude Code through the real binaries: the realgen 2.1.328 corpus's truth
# totals, the older public files against an independent count (jq), the
# project's fixtures, and the live daemon: a streamed response split across
# a kill -9, appends, a sub-agent directory made after start, an in-place
# rewrite and a deleted transcript.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
once() { "$D" --once 2>>"$T/once.err"; }
model_totals() { "$C" report model --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens]'; }
fresh() { rm -rf "$XDG_STATE_HOME/agentmeterd"; }

# ---- realgen: what Claude Code 2.1.328 wrote itself ----
RG=$AM_SAMPLES/realgen/claude-code-2.1.328/claude-config
if [ -d "$RG/projects" ]; then
	out=$(CLAUDE_CONFIG_DIR=$RG once); rc=$?
	is "$rc" 0 "realgen: --once exits 0"
	diag "$out"
	is "$(model_totals)" "[22,177968,860,336256,56712]" "realgen: 22 calls (20 + 2 compactions) with the truth totals"
	is "$("$C" report model --json 2>/dev/null | jq -c '[.rows[].model] | sort')" \
		'["claude-haiku-4-5","claude-opus-4-5","claude-sonnet-4-5"]' "realgen: three models"
	is "$("$C" report model --json 2>/dev/null | jq '.totals.tool_calls')" 8 "realgen: 8 tool calls"
	is "$("$C" report session --json 2>/dev/null | jq '[.rows[] | select(.session=="6841008e-2efb-4fa3-a987-edb89c3eca00") | .events] | add')" 1 \
		"realgen: the fork session has its own call only"
	out=$(CLAUDE_CONFIG_DIR=$RG once)
	check "realgen: a second run adds no rows" grep -q ' 0 rows added' <<<"$out"
	# without the cost-state lines only the 20 assistant-line calls remain
	fresh
	mkdir -p "$T/rg"; cp -r "$RG" "$T/rg/"
	find "$T/rg" -name '*.jsonl' -exec sed -i '/"type":"cost-state"/d' {} +
	CLAUDE_CONFIG_DIR=$T/rg/claude-config once >/dev/null
	is "$(model_totals)" "[20,171965,790,300480,50720]" "realgen without cost-state: the 20 assistant-line calls"
	fresh
else
	skip "no realgen samples at $RG"
fi

# ---- the older files: the last record per message.id, counted by jq ----
for f in short.jsonl tool_heavy.jsonl 4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-acompact-e1f845.jsonl; do
	src=$AM_SAMPLES/claude-code/$f
	if [ ! -f "$src" ]; then skip "no sample $f"; continue; fi
	fresh
	mkdir -p "$T/old/projects/-p"; rm -f "$T/old/projects/-p/"*; cp "$src" "$T/old/projects/-p/s.jsonl"
	want=$(jq -c -s '[.[] | select(.type=="assistant" and .message.usage != null and .message.model != "<synthetic>")]
		| group_by(.message.id) | map(last.message.usage)
		| [length, (map(.input_tokens)|add), (map(.output_tokens)|add), (map(.cache_read_input_tokens)|add), (map(.cache_creation_input_tokens)|add)]' "$src")
	CLAUDE_CONFIG_DIR=$T/old once >/dev/null
	is "$(model_totals)" "$want" "$f: equals the final records ($want)"
done

# ---- the project's fixtures ----
fresh
out=$(CLAUDE_CONFIG_DIR=$FIX/claude/config once)
E=$FIX/claude/expected.json
is "$(model_totals)" "$(jq -c '.all | [.rows, .input, .output, .cache_read, .cache_write]' "$E")" "fixtures: totals equal expected.json"
check "fixtures: the malformed line counted" grep -q "($(jq .all.malformed "$E") malformed" <<<"$out"
check "fixtures: the non-transcript recognised" grep -q "($(jq .all.not_source "$E") not transcripts" <<<"$out"
is "$("$C" report daily --json 2>/dev/null | jq .totals.tool_calls)" "$(jq .all.calls "$E")" "fixtures: tool calls"
out=$(CLAUDE_CONFIG_DIR=$FIX/claude/config once)
check "fixtures: a second run adds no rows" grep -q ' 0 rows added' <<<"$out"
CLAUDE_CONFIG_DIR=$FIX/claude/config start_daemon; ok $? "daemon on the fixtures"
is "$("$C" status --json | jq -c '.harnesses[] | select(.id=="claude") | .unmetered')" \
	"$(jq -c '{runs: .all.unmetered_runs, tokens: .all.unmetered_tokens, sessions: ["11111111-1111-4111-8111-111111111111"]}' "$E")" \
	"status: the call seen only in the cost totals, with its session"
check "status (text) says so" sh -c "\"$C\" status | grep -q 'unmetered  1 cost-state differences (12 tokens)'"
stop_daemon

# ---- live, under ~/.claude (the default), created after the daemon starts ----
fresh
P=$HOME/.claude/projects/-home-u-live
S1=$P/live-1.jsonl
line() { # line MSG_ID OUTPUT [TOOL_ID]
	local c='{"type":"text","text":"t"}'
	[ -n "${3:-}" ] && c='{"type":"tool_use","id":"'"$3"'","name":"Bash","input":{}}'
	printf '{"parentUuid":null,"isSidechain":false,"type":"assistant","sessionId":"live-1","cwd":"/home/u/live","timestamp":"2026-11-30T12:00:%02d.000Z","requestId":"req_%s","message":{"id":"%s","model":"claude-opus-4-6","role":"assistant","content":[%s],"usage":{"input_tokens":47,"cache_creation_input_tokens":1115,"cache_read_input_tokens":26504,"output_tokens":%d}}}\n' \
		"$2" "$1" "$1" "$c" "$2"
}
out_is() { [ "$("$C" report daily --json 2>/dev/null | jq -c '.totals | [.events, .output_tokens, .tool_calls]')" = "$1" ]; }
expect() { # expect '[events,output,calls]' DESCRIPTION
	if wait_until 10 out_is "$1"; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $("$C" report daily --json 2>/dev/null | jq -c '.totals | [.events, .output_tokens, .tool_calls]'), expected $1"; fi
}
start_daemon --reconcile-interval=3600; ok $? "daemon starts without ~/.claude"
mkdir -p "$P"
line msg_live1 25 toolu_1 > "$S1"
expect "[1,25,1]" "a first (partial) line of a response shows up"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
line msg_live1 173 toolu_2 >> "$S1"
start_daemon --reconcile-interval=3600; ok $? "restart after kill -9"
expect "[1,173,2]" "the final line after the restart: output 173, not 25 + 173; both tool calls"
line msg_live2 9 >> "$S1"
expect "[2,182,2]" "a live append is counted"
mkdir -p "$P/live-1/subagents"
printf '{"type":"assistant","isSidechain":true,"agentId":"a9","sessionId":"live-1","cwd":"/home/u/live","timestamp":"2026-11-30T12:01:00.000Z","message":{"id":"msg_sub","model":"claude-haiku-4-5","usage":{"input_tokens":5,"output_tokens":3}}}\n' > "$P/live-1/subagents/agent-a9.jsonl"
expect "[3,185,2]" "a sub-agent file in a directory made after start"
is "$("$C" report session --json 2>/dev/null | jq -r '[.rows[].session] | unique | join(",")')" "live-1" "the sub-agent's call belongs to its parent session"
cp "$S1" "$T/s1.copy"; { cat "$T/s1.copy"; line msg_live3 4; } > "$S1"   # rewritten in place (resume)
expect "[4,189,2]" "an in-place rewrite: the old calls once, the new one added"
rm "$S1"; sleep 0.3
expect "[4,189,2]" "a deleted transcript keeps its rows"
check "status lists the claude root" sh -c "\"$C\" status --json | jq -e '.harnesses[] | select(.id==\"claude\") | .roots[] | select(.path==\"$HOME/.claude/projects\")' >/dev/null"
is "$("$C" status --json | jq -r '.harnesses[] | select(.id=="claude") | .capabilities | [.tokens, .cost, .activity] | join(",")')" "exact,computed,exact" "status: capabilities"
stop_daemon
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.err"; ok $? "no sanitizer reports"
done_testing
