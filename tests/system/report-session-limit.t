#!/bin/bash
# report session --limit N / --all (issue 51: a heavy user's 32,000
# sessions): by default the newest 50 sessions, the text saying so; --limit
# N the newest N, --all (or --limit 0) every one; the totals and the JSON's
# rows_total are always every session's, equal to the generator's; through
# the daemon and from the ledger alike; the options are checked and
# completed.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
S=$HOME/.pi/agent/sessions
# 70 sessions, file n's calls an hour after file n-1's: the newest are the last files
g=$(python3 "$AM_SRCDIR/tests/lib/gen_pi.py" corpus "$S" --files 70 --pairs 3 --small --seed 51)
"$D" --once >/dev/null 2>&1; ok $? "ingest 70 sessions"
want=$(jq -c '[70, .events, .input, .output, (.cost_nano / 1e9 * 1e6 | round)]' <<<"$g")
J='[.rows_total, .totals.events, .totals.input_tokens, .totals.output_tokens, (.totals.cost_usd * 1e6 | round)]'
for via in ledger daemon; do
	[ $via = daemon ] && { start_daemon; ok $? "daemon starts"; }
	all=$("$C" report session --all --json 2>/dev/null)
	is "$(jq '.rows | length' <<<"$all")" 70 "$via: --all lists every session"
	is "$(jq -c '.limit' <<<"$all")" null "$via: --all: limit null"
	is "$(jq -c "$J" <<<"$all")" "$want" "$via: --all: rows_total and totals are the generator's"
	newest=$(jq -c '[.rows[-50:][] | .session]' <<<"$all")
	def=$("$C" report session --json 2>/dev/null)
	is "$(jq '.rows | length' <<<"$def")" 50 "$via: by default the newest 50"
	is "$(jq -c '[.rows[] | .session]' <<<"$def")" "$newest" "$via: ... the last 50 of --all, in its order"
	is "$(jq -c '.limit' <<<"$def")" 50 "$via: the JSON says limit 50"
	is "$(jq -c "$J" <<<"$def")" "$want" "$via: default: rows_total and totals still every session's"
	is "$(jq -c '.rows' <<<"$def")" "$(jq -c '.rows[-50:]' <<<"$all")" "$via: every field of those rows as in --all"
	five=$("$C" report session --limit 5 --json 2>/dev/null)
	is "$(jq -c '[.rows[] | .session]' <<<"$five")" "$(jq -c '[.rows[-5:][] | .session]' <<<"$all")" \
		"$via: --limit 5: the 5 newest"
	is "$(jq -c "$J" <<<"$five")" "$want" "$via: --limit 5: the totals of all 70"
	is "$("$C" report session --limit 0 --json 2>/dev/null | jq '.rows | length')" 70 "$via: --limit 0: every session"
	is "$("$C" report session --limit 500 --json 2>/dev/null | jq '.rows | length')" 70 "$via: --limit 500: the 70 there are"
	text=$("$C" report session 2>/dev/null)
	check "$via: the table says it shows the newest 50 of 70" grep -q "showing the newest 50 of 70 sessions; TOTAL is all 70" <<<"$text"
	is "$(grep -c '^[0-9a-f]\{8\}-' <<<"$text")" 50 "$via: the table has 50 session lines"
	alltext=$("$C" report session --all 2>/dev/null)
	check "$via: --all: no such line" sh -c "! grep -q 'showing the newest' <<'X'
$alltext
X"
	is "$(grep '^TOTAL' <<<"$text")" "$(grep '^TOTAL' <<<"$alltext")" "$via: the TOTAL line is the same with and without --all"
	is "$("$C" report session --csv 2>/dev/null | wc -l)" 52 "$via: CSV: a header, 50 sessions, TOTAL"
done
stop_daemon
for bad in "daily --limit 5" "model --all" "session --limit 5 --all" "session --limit x" "session --limit -1" \
	"session --limit 99999999999"; do
	"$C" report $bad >/dev/null 2>&1; is $? 2 "report $bad: a usage error"
done
is "$("$C" __complete report session --li | cut -f1)" "--limit" "completion offers --limit"
is "$("$C" __complete report session --al | cut -f1)" "--all" "completion offers --all"
check "the usage names --limit N|--all" sh -c "\"$C\" help | grep -q -- '--limit N|--all'"
done_testing
