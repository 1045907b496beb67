#!/bin/bash
# Budgets: a real dbus-daemon --session with a stand-in notification server,
# a daily limit crossed at 80% and then 100%: one warning line, one Notify
# call and one command run per level; nothing again after a restart in the
# same period; SIGHUP picks up a changed file; bad lines are reported.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v dbus-daemon >/dev/null || skip_all "dbus-daemon not installed"
/usr/bin/python3 -c 'import dbus, gi' 2>/dev/null || skip_all "python3-dbus / python3-gi not installed"
new_env
export TZ=UTC
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
S=$HOME/.pi/agent/sessions/--home-u-proj--/s.jsonl

dbus-daemon --session --nofork --nopidfile --address="unix:path=$T/bus" >"$T/dbus.log" 2>&1 &
BUSPID=$!
export DBUS_SESSION_BUS_ADDRESS="unix:path=$T/bus"
/usr/bin/python3 "$AM_SRCDIR/tests/lib/notify_listener.py" "$T/notify.log" 2>"$T/listener.log" &
LPID=$!
trap 'kill $LPID $BUSPID 2>/dev/null; cleanup_env' EXIT
check "the stand-in notification server owns its name" wait_until 10 test -e "$T/notify.log.ready"

mkdir -p "$XDG_CONFIG_HOME/agentmeterd"
cat >"$XDG_CONFIG_HOME/agentmeterd/budgets.conf" <<CONF
# test budgets
daily \$1.00 name=day
daily 100 tokens harness=nosuch name=other
weekly 5 usd levels=50,200,50
bogus line here
command echo "\$AGENTMETER_BUDGET \$AGENTMETER_BUDGET_LEVEL \$AGENTMETER_BUDGET_AMOUNT \$AGENTMETER_BUDGET_LIMIT \$AGENTMETER_BUDGET_PERIOD" >> $T/cmd.log
CONF

budget() { "$C" status --json | jq -c ".budgets.rules[] | select(.name==\"$1\") | $2"; }
amount_is() { [ "$(budget day .amount)" = "$1" ]; }
count() { grep -c "$1" "$2" 2>/dev/null || true; }

start_daemon; ok $? "daemon starts with a budgets file"
check "the bad line is reported with its number" grep -q "budgets.conf: line 5: a rule starts with daily" "$T/daemon.log"
is "$("$C" status --json | jq -c '[(.budgets.rules | length), (.budgets.errors | length)]')" "[3,1]" \
	"status lists three rules and one error"
is "$(budget weekly-4 .levels)" "[50,200]" "levels are sorted and unique"
check "status shows budgets for people" sh -c "\"$C\" status | grep -q '^budget  *day: daily total, \\\$0.000000 of \\\$1.000000 (0.0%); levels 80%,100%; fired none'"

$CALL header "$S"
$CALL call "$S" --cost 0.5
check "the spend is counted" wait_until 10 amount_is 0.5
is "$(count 'level reached' "$T/daemon.log")" 0 "50% of the daily limit fires nothing"

$CALL call "$S" --cost 0.35
check "crossing 80% logs a warning" wait_until 10 grep -q "budget day (daily .*80% level reached: \$0.850000 of \$1.000000 (85%)" "$T/daemon.log"
check "... and sends a notification" wait_until 10 holds '[ "$(count summary "$T/notify.log")" -ge 1 ]'
check "... and runs the command with the figures" wait_until 10 grep -qx "day 80 0.850000 1.000000 daily" "$T/cmd.log"
is "$(jq -c '[.app, .summary, .urgency]' "$T/notify.log")" '["agentmeterd","Daily budget at 80%",1]' "the notification says what happened"
is "$(budget day .fired)" "[80]" "status shows the 80% level fired"

$CALL call "$S" --cost 0.2
check "crossing 100% logs a warning" wait_until 10 grep -q "budget day .*100% level reached: \$1.050000 of \$1.000000 (105%)" "$T/daemon.log"
check "... and a critical notification" wait_until 10 holds '[ "$(count summary "$T/notify.log")" -ge 2 ]'
check "... and the command runs again" wait_until 10 grep -qx "day 100 1.050000 1.000000 daily" "$T/cmd.log"
is "$(tail -1 "$T/notify.log" | jq -c '[.summary, .urgency]')" '["Daily budget at 100%",2]' "the second notification is critical"

$CALL call "$S" --cost 0.01
check "more spend is counted" wait_until 10 amount_is 1.06
sleep 0.5
is "$(count 'level reached' "$T/daemon.log")" 2 "exactly one warning per level"
is "$(count summary "$T/notify.log")" 2 "exactly one notification per level"
is "$(wc -l <"$T/cmd.log")" 2 "exactly one command run per level"

stop_daemon; ok $? "daemon stops"
start_daemon; ok $? "daemon restarts in the same period"
check "the restarted daemon has the spend" wait_until 10 amount_is 1.06
is "$(budget day .fired)" "[80,100]" "the fired levels are remembered"
$CALL call "$S" --cost 0.01
check "new spend after the restart is counted" wait_until 10 amount_is 1.07
sleep 0.5
is "$(count 'level reached' "$T/daemon.log")" 2 "no warning again after the restart"
is "$(count summary "$T/notify.log")" 2 "no notification again after the restart"

# a changed limit is a new budget: from 0 to 107% at once fires only 100%
sed -i 's/^daily \$1.00 name=day/daily $1.05 name=day/' "$XDG_CONFIG_HOME/agentmeterd/budgets.conf"
kill -HUP "$DPID"
check "SIGHUP: a changed limit fires its highest crossed level" wait_until 10 grep -q "100% level reached: \$1.070000 of \$1.050000" "$T/daemon.log"
sleep 0.5
is "$(count '80% level reached' "$T/daemon.log")" 1 "... and not the lower one as well"
is "$(budget day .fired)" "[80,100]" "... both count as fired"

printf 'daily ten dollars\nmonthly 5M tokens model=model-a name=m\n' >"$XDG_CONFIG_HOME/agentmeterd/budgets.conf"
kill -HUP "$DPID"
check "SIGHUP: a bad line is reported" wait_until 10 grep -q "budgets.conf: line 1: " "$T/daemon.log"
is "$("$C" status --json | jq -c '[.budgets.rules[].name, (.budgets.errors | length)]')" '["m",1]' \
	"... and the good line is used"
is "$(budget m '[.unit, .limit, .amount]')" '["tokens",5000000,5000]' "a token budget counts total tokens"
check "the daemon is alive" wait_until 5 "$C" version
stop_daemon; ok $? "daemon stops cleanly"
done_testing
