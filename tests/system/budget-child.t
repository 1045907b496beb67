#!/bin/bash
# The budget command as a child of the daemon, and the figures it is given:
# it inherits no descriptor but stdin, stdout and stderr (not the ledger's,
# not the socket, not what the daemon's parent left open); the percent in
# its environment and in the journal line is the whole part of the one
# `status` shows (floored, capped alike); an amount too long to hold is
# refused with its line, not cut into another limit. No session bus needed.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
unset DBUS_SESSION_BUS_ADDRESS
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
S=$HOME/.pi/agent/sessions/--home-u-proj--/s.jsonl
zeros=$(printf '0%.0s' $(seq 62)) # cut to 63 bytes, 0...010000 was read as \$1

mkdir -p "$XDG_CONFIG_HOME/agentmeterd"
cat >"$XDG_CONFIG_HOME/agentmeterd/budgets.conf" <<CONF
daily \$1.00 name=day levels=50,99
daily \$0.000000001 name=tiny levels=100
daily ${zeros}10000 usd name=long
command echo "\$AGENTMETER_BUDGET \$AGENTMETER_BUDGET_LEVEL \$AGENTMETER_BUDGET_PERCENT" >> $T/cmd.log; echo \$\$ > $T/pid.\$AGENTMETER_BUDGET; exec sleep 60
CONF
# a descriptor the daemon's parent leaves open (a shell's, a supervisor's)
exec 7>"$T/parent-fd"
kids() { for f in "$T"/pid.*; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; }
trap 'kids; cleanup_env' EXIT
start_daemon; exec 7>&-
ok $? "daemon starts with a budgets file"

bst() { "$C" status --json | jq -c ".budgets$1"; }
is "$(bst '.rules | map(.name)')" '["day","tiny"]' "the rule with an over-long amount is not kept"
check "... it is reported with its line" grep -q "budgets.conf: line 3: the amount is too long" "$T/daemon.log"
is "$(bst '.errors')" '["line 3: the amount is too long (at most 63 characters)"]' "... and in status"

$CALL header "$S"
$CALL call "$S" --cost 0.9996
check "the 99% level fires" wait_until 10 grep -q "^day 99 " "$T/cmd.log"
check "... and the capped one" wait_until 10 grep -q "^tiny 100 " "$T/cmd.log"
check "the command left running says its pid" wait_until 10 test -s "$T/pid.day"
pid=$(cat "$T/pid.day")
is "$(ls /proc/"$pid"/fd | sort -n | tr '\n' ' ')" "0 1 2 " "the command holds only stdin, stdout and stderr"
check "... no descriptor of the ledger" sh -c "! readlink /proc/$pid/fd/* | grep -q 'ledger.mdb'"
is "$(readlink /proc/"$pid"/fd/0)" /dev/null "... stdin is /dev/null"

pct() { bst ".rules[] | select(.name==\"$1\") | .percent"; }
is "$(pct day)" 99.9 "status: 99.96% shown floored to a tenth (99.9, not rounded up to 100.0)"
is "$(awk '$1=="day" {print $3}' "$T/cmd.log")" 99 "the command's AGENTMETER_BUDGET_PERCENT is its whole part"
check "... the journal line too" grep -q "budget day (daily .*99% level reached: \$0.999600 of \$1.000000 (99%)" "$T/daemon.log"
check "status for people: (99.9%)" sh -c "'$C' status | grep -q '^budget  *day: .*(99.9%)'"
is "$(pct tiny)" 100000 "status: the percent is capped where the command's is"
is "$(awk '$1=="tiny" {print $3}' "$T/cmd.log")" 100000 "... the command's"
check "... the journal's" grep -q "budget tiny .*(100000%)" "$T/daemon.log"
stop_daemon; ok $? "daemon stops"
done_testing
