#!/bin/bash
# A ledger written by the v1 row format (fixtures/ledger-v1, made by the
# release before row format v2) opens with today's binaries and reports the
# same rows, totals and sums; --rebuild-rollups recomputes identical sums.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
L=$T/ledger
mkdir -p "$L"
cp "$FIX/ledger-v1/ledger.mdb" "$L/"
export TZ=UTC

# what the old release printed, and what the reports print now, reduced to
# the fields both releases have
proj='{totals: (.totals | {events, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens, cost_usd, unpriced_events, tool_calls}), rows: [.rows[] | {key, events, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_usd, unpriced_events, tool_calls}]}'
report() { "$C" --state-dir "$L" report "$1" --json 2>/dev/null | jq -cS "$proj"; }
want() { jq -cS "$proj" "$FIX/ledger-v1/report-$1.json"; }

for r in daily model session; do
	is "$(report "$r")" "$(want "$r")" "v1 ledger: $r report equals the old release's"
done
is "$(report daily | jq .totals.events)" 53 "all 53 v1 rows read"

out=$("$D" --state-dir "$L" --rebuild-rollups 2>&1); rc=$?
is "$rc" 0 "--rebuild-rollups exits 0"
diag "$out"
for r in daily model session; do
	is "$(report "$r")" "$(want "$r")" "after --rebuild-rollups: $r report unchanged"
done

# a rebuild of a ledger the daemon then writes to: still equal to the sums
# the commits built (v2 rows and v2 sums next to the v1 ones)
mkdir -p "$HOME/.pi"
cp -a "$FIX/pi/agent" "$HOME/.pi/agent"
"$D" --state-dir "$L" --once >/dev/null 2>&1
ok $? "--once over the fixtures into the upgraded ledger"
tok='.totals | {events, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens}'
is "$("$C" --state-dir "$L" report daily --json 2>/dev/null | jq -cS "$tok")" \
	"$(jq -cS "$tok" "$FIX/ledger-v1/report-daily.json")" \
	"after the daemon wrote to it (and repriced): the same rows and tokens"
vendor='[.rows[] | select(.cost_source == "vendor-reported") | {key, cost_usd}]'
is "$("$C" --state-dir "$L" report session --json 2>/dev/null | jq -cS "$vendor")" \
	"$(jq -cS "$vendor" "$FIX/ledger-v1/report-session.json")" "vendor-priced sessions keep their costs"
before=$(for r in daily model session; do report "$r"; done)
"$D" --state-dir "$L" --rebuild-rollups >/dev/null 2>&1
after=$(for r in daily model session; do report "$r"; done)
is "$after" "$before" "rebuilt sums equal the incremental ones over v1 and v2 rows"
check "--rebuild-rollups on a new, empty state directory exits 0" \
	"$D" --state-dir "$T/new" --rebuild-rollups
done_testing
