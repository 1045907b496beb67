#!/bin/bash
# report --session ID / --project PATH (issue 26, the values completion
# offers): every kind keeps only that session's or that project's rows,
# read from the ledger directly and through the daemon alike; the JSON
# names the filter; an unfiltered report is unchanged.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
python3 "$AM_SRCDIR/tests/lib/html_corpus.py" "$HOME/.pi/agent/sessions"
"$D" --once >/dev/null 2>&1; ok $? "ingest"
sum() { "$C" report "$1" --json "${@:2}" 2>/dev/null | jq -c "$Q"; }
# each session's own figures, from the unfiltered session report
sessions=$("$C" report session --json 2>/dev/null | jq -r '.rows[].session')
check "three sessions" [ "$(wc -w <<<"$sessions")" -eq 3 ]
Q='.totals | [.events, .total_tokens, .cost_usd, .tool_calls]'
for via in ledger daemon; do
	[ $via = daemon ] && { start_daemon; ok $? "daemon starts"; }
	for s in $sessions; do
		want=$("$C" report session --json 2>/dev/null | jq -c --arg s "$s" '.rows[] | select(.session == $s) | [.events, .total_tokens, .cost_usd, .tool_calls]')
		p=$("$C" report session --json 2>/dev/null | jq -r --arg s "$s" '.rows[] | select(.session == $s) | .project')
		for k in daily weekly monthly model project blocks session; do
			is "$(sum $k --session "$s")" "$want" "$via: report $k --session ${s:0:8}: that session's sums $want"
		done
		is "$(sum daily --project "$p")" "$want" "$via: report daily --project (its project): the same sums"
		calls=$("$C" report tool --json --session "$s" 2>/dev/null | jq '[.rows[].calls] | add // 0')
		is "$calls" "$(jq '.[3]' <<<"$want")" "$via: report tool --session ${s:0:8}: its $calls tool calls"
	done
	is "$("$C" report daily --json --session "$s" --project /nowhere 2>/dev/null | jq -c '[.rows, .session, .project]')" \
		"[[],\"$s\",\"/nowhere\"]" "$via: both filters: their intersection (empty here), both named in the JSON"
	is "$("$C" report daily --json 2>/dev/null | jq -c '[has("session"), has("project")]')" "[false,false]" \
		"$via: an unfiltered report names no filter"
done
stop_daemon
"$C" report daily --session "" >/dev/null 2>&1; is $? 2 "--session with an empty value: a usage error"
done_testing
