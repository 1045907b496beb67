#!/bin/bash
# status's per-harness counters (kept by the ingest engine as it reads,
# without a ledger read per source) equal the sum of every source's
# checkpoint counters (`sources`), through appends, a rename, garbage
# lines and a restart.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
F='bytes_read, lines, malformed, rows'
from_status() { "$C" status --json | jq -c ".harnesses[] | select(.id==\"pi\") | [.$(sed 's/, /, ./g' <<<"$F")]"; }
from_sources() { "$C" sources --json | jq -c "[.sources[] | select(.harness==\"pi\")] | [(map(.bytes_read)|add), (map(.lines)|add), (map(.malformed)|add), (map(.rows_added)|add)]"; }
same() { [ "$(from_status)" = "$(from_sources)" ]; }
agree() { # agree DESCRIPTION
	if wait_until 10 same; then ok 0 "$1"; else ok 1 "$1"; echo "#   status $(from_status), sources $(from_sources)"; fi
}

$GEN session "$S/--home-u-a--/a.jsonl" --calls 4 --seed 11 --small >/dev/null
$GEN session "$S/--home-u-b--/b.jsonl" --calls 3 --seed 12 --small >/dev/null
start_daemon --reconcile-interval=3600; ok $? "daemon starts"
check "initial scan read the rows" wait_until 10 holds '[ "$(totals events)" = 7 ]'
agree "after the initial scan: status = sum of sources"
check "the counters are not all zero" test "$(from_status | jq '.[0]')" -gt 0

$GEN append "$S/--home-u-a--/a.jsonl" --calls 2 --seed 13 --small >/dev/null
printf 'not json at all\n' >>"$S/--home-u-a--/a.jsonl"
check "appended rows counted" wait_until 10 holds '[ "$(totals events)" = 9 ]'
agree "after an append and a garbage line: status = sum of sources"
check "the garbage line is counted as malformed" test "$(from_status | jq '.[2]')" -ge 1

before=$(from_status)
mv "$S/--home-u-b--/b.jsonl" "$S/--home-u-b--/b2.jsonl"
"$C" rescan >/dev/null
sleep 0.5
agree "after a rename: status = sum of sources"
is "$(from_status)" "$before" "a rename moves the counters, it does not add them twice"

stop_daemon; ok $? "daemon stops"
start_daemon --reconcile-interval=3600; ok $? "daemon restarts"
agree "after a restart: status = sum of sources"
is "$(from_status)" "$before" "a restart keeps the counters"
done_testing
