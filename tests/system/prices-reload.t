#!/bin/bash
# A big price override (31,775 entries, the 1 MiB bound) and a storm of
# SIGHUPs: the override loads in linear time, SIGHUPs that come while a
# reload waits are joined into it (at most one reload a second), and the
# daemon answers all along; the override written last is the one in effect
# after the storm. Bounds are generous: before, each load took seconds.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v jq >/dev/null || skip_all "needs jq"
new_env
export PI_CODING_AGENT_DIR=$T/pi
cp -a "$FIX/prices/pi" "$PI_CODING_AGENT_DIR"
OV=$XDG_CONFIG_HOME/agentmeterd/prices.conf
mkdir -p "$(dirname "$OV")"
gen() { # gen N: N models, one line each
	python3 -c "import sys
n = int(sys.argv[1])
sys.stdout.write(''.join('price vendor-m%05d in=1 out=%d\n' % (i, 1 + i % 7) for i in range(n)))" "$1"
}
gen 31775 >"$OV"
entries() { timeout 5 "$C" status --json | jq -r .prices.override.entries; }
# one answer, bounded: prints its wall time in ms, fails past 3 s (a load
# takes ~0.1 s, ~0.5 s under ASan, more when the suite runs two tests at
# once on two cores; the fault this guards against took seconds a load,
# one after another, and blocked every answer behind them)
answer_ms() {
	local t0; t0=$(date +%s%N)
	timeout 5 "$C" version >/dev/null || return 1
	local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "$ms"
	[ "$ms" -lt 3000 ]
}

start_daemon; ok $? "the daemon starts with a 31,775-entry override"
is "$(entries)" 31775 "every entry is applied"

# 40 SIGHUPs, one every 50 ms, with the override rewritten half way; an
# answer asked for after each
worst=0 slow=0
for i in $(seq 40); do
	[ "$i" -eq 20 ] && gen 31000 >"$OV"
	kill -HUP "$DPID"
	ms=$(answer_ms) || slow=$((slow + 1))
	[ "${ms:-5000}" -gt "$worst" ] && worst=${ms:-5000}
	[ "$slow" -ge 3 ] && break # a stalled daemon: fail, not wait for 40 timeouts
	sleep 0.05
done
is "$slow" 0 "the daemon answers within 3 s throughout the storm (slowest: $worst ms)"
check "the override written last is in effect after the storm" wait_until 10 holds '[ "$(entries)" = 31000 ]'
reloads=$(grep -c 'reloading: ' "$T/daemon.log")
diag "40 SIGHUPs in about $(( 40 * 60 / 1000 + 1 )) s: $reloads reloads"
check "... and at least one reload" test "$reloads" -ge 1
# 40 SIGHUPs at once (how many loads that makes depends on nothing but the
# daemon: not one per signal); then the daemon still answers and reloads
before=$reloads
for i in $(seq 40); do kill -HUP "$DPID"; done
check "a burst of 40 SIGHUPs: at least one reload" wait_until 10 holds \
	'[ "$(grep -c "reloading: " "$T/daemon.log")" -gt '"$before"' ]'
sleep 1
burst=$(( $(grep -c 'reloading: ' "$T/daemon.log") - before ))
check "SIGHUPs are joined: fewer reloads ($burst) than signals (40)" test "$burst" -lt 20
check "the daemon is alive" sh -c "timeout 5 '$C' version >/dev/null"
stop_daemon; ok $? "daemon stops"
done_testing
