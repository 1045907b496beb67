#!/bin/bash
# `report daily|monthly --chart`: bars drawn from the same report, scaled to
# $COLUMNS when not a terminal, with the figure beside each bar; the JSON is
# what it was; --chart refuses the formats and reports it cannot draw.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
S=$HOME/.pi/agent/sessions/--home-u-proj--/s.jsonl
$CALL header "$S"
$CALL call "$S" --cost 3.0 --ago $((2 * 86400))
$CALL call "$S" --cost 1.5 --ago 86400
$CALL call "$S" --cost 0.75
"$D" --once >/dev/null 2>&1; ok $? "ingest once"

COLUMNS=70 "$C" report daily --chart >"$T/chart.out" 2>"$T/chart.err"; rc=$?
is "$rc" 0 "report daily --chart works without a daemon (ledger read directly)"
sed 's/^/#   /' "$T/chart.out"
is "$(grep -c '^20[0-9-]* ' "$T/chart.out")" 3 "one bar line per day"
bars() { sed -n "$1p" "$T/chart.out" | grep -o '█' | wc -l; }
b1=$(bars 1); b2=$(bars 2); b3=$(bars 3)
check "bars scale with the cost ($b1, $b2, $b3 cells)" [ "$b2" -ge $((b1 / 2 - 1)) -a "$b2" -le $((b1 / 2 + 1)) -a "$b3" -ge $((b1 / 4 - 1)) -a "$b3" -le $((b1 / 4 + 1)) ]
check "the figure is beside the bar" grep -q '█ *\$3\.000000$' "$T/chart.out"
check "a TOTAL line" grep -q '^TOTAL  *\$5\.250000$' "$T/chart.out"
widest=$(head -4 "$T/chart.out" | python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin))')
check "bar lines fit in \$COLUMNS ($widest)" [ "$widest" -le 70 ]
COLUMNS=140 "$C" report daily --chart >"$T/wide.out" 2>/dev/null
wide=$(sed -n 1p "$T/wide.out" | grep -o '█' | wc -l)
check "a wider terminal, longer bars ($wide > $b1)" [ "$wide" -gt "$b1" ]
"$C" report monthly --chart >"$T/monthly.out" 2>/dev/null
check "report monthly --chart: a bar per month" grep -q '^20[0-9][0-9]-[0-9][0-9] *█' "$T/monthly.out"
check "... and the same TOTAL" grep -q '^TOTAL  *\$5\.250000$' "$T/monthly.out"

start_daemon; ok $? "daemon starts"
COLUMNS=70 "$C" report daily --chart >"$T/chart2.out" 2>/dev/null
check "the daemon's answer draws the same chart" cmp -s "$T/chart.out" "$T/chart2.out"
is "$("$C" report daily --json | jq -c '[.rows[].cost_usd]')" "[3,1.5,0.75]" "the JSON is unchanged"
"$C" report daily --chart --json >/dev/null 2>"$T/err"; rc=$?
is "$rc" 2 "--chart with --json is a usage error"
"$C" report session --chart >/dev/null 2>"$T/err"; rc=$?
is "$rc" 2 "--chart on a session report is a usage error"
check "... that says why" grep -q "daily, weekly and monthly" "$T/err"
done_testing
