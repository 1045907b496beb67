#!/bin/bash
# Daemon CPU per appended line with a small and with a large history, in
# paired rounds: this VM's CPU time for the same work drifts by a third from
# one minute to the next, so one run of each size says little about their
# ratio. Each round starts a daemon over the small ledger, then one over the
# large, and for each appends 50 lines (warm-up) and then 500 more through
# latency.py, reading the CPU of all the daemon's threads from schedstat.
# Prints each round and the medians, the ratio of the medians and the median
# of the rounds' ratios (issue 29: at most 1.25x).
# Usage: tests/bench/append.sh BUILD_DIR [SMALL LARGE]   (corpus names in
# BUILD_DIR/bench-corpora, default r20 r2000; AM_BENCH_APPEND_ROUNDS, default 8)
set -eu
B=$(cd "${1:-build}" && pwd)
SMALL=${2:-r20}; LARGE=${3:-r2000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CORP=${AM_BENCH_CORPORA:-$B/bench-corpora}
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}/append
ROUNDS=${AM_BENCH_APPEND_ROUNDS:-8}
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
for c in "$SMALL" "$LARGE"; do
	[ -d "$CORP/$c/home/.pi/agent/sessions" ] || { echo "append.sh: no corpus $CORP/$c (make bench generates it)"; exit 1; }
done
mkdir -p "$W"

daemon_env() { # corpus: the environment of a daemon over that corpus's ledger
	ENVA=(env -i PATH=/usr/bin:/bin HOME="$W/home" XDG_STATE_HOME="$W/state-$1"
		XDG_RUNTIME_DIR="$W/run" PI_CODING_AGENT_SESSION_DIR="$CORP/$1/home/.pi/agent/sessions")
}
thread_cpu_ns() { # pid: CPU time of all its threads
	local s=0 t
	for t in /proc/"$1"/task/*/schedstat; do s=$((s + $(cut -d' ' -f1 "$t"))); done
	echo "$s"
}
one() { # corpus: prints the daemon's CPU per appended line in ms
	local S="$CORP/$1/home/.pi/agent/sessions" DP t0 t1 i
	daemon_env "$1"
	rm -rf "$S/--bench--"
	"${ENVA[@]}" "$B/agentmeterd" --log-target=console 2> "$W/daemon-$1.log" &
	DP=$!
	for i in $(seq 600); do
		"${ENVA[@]}" "$B/agentmeterctl" status --json 2>/dev/null | jq -e .ingest.initial_scan_done >/dev/null && break
		sleep 0.1
	done
	sleep 1
	$PY "$SRC/tests/bench/latency.py" "$W/run/agentmeterd/control.sock" "$S/--bench--/warm.jsonl" 50 > /dev/null
	t0=$(thread_cpu_ns $DP)
	$PY "$SRC/tests/bench/latency.py" "$W/run/agentmeterd/control.sock" "$S/--bench--/b.jsonl" 500 > /dev/null
	t1=$(thread_cpu_ns $DP)
	kill $DP; wait $DP 2>/dev/null || true
	rm -rf "$S/--bench--"   # the next round starts from the same history
	$PY -c "print('%.3f' % (($t1 - $t0) / 1e6 / 500))"
}

mkdir -p "$W/run" "$W/home"; chmod 700 "$W/run"
for c in "$SMALL" "$LARGE"; do   # a fresh ledger of each history, by this build
	rm -rf "$W/state-$c"
	daemon_env "$c"
	"${ENVA[@]}" "$B/agentmeterd" --once > /dev/null 2>&1
	echo "   $c: $(du -sh "$CORP/$c" | cut -f1) of sessions, ledger $(du -sh "$W/state-$c/agentmeterd/ledger.mdb" | cut -f1)"
done
pairs=()
for r in $(seq "$ROUNDS"); do
	a=$(one "$SMALL"); b=$(one "$LARGE")
	echo "   round $r: $SMALL $a ms, $LARGE $b ms"
	pairs+=("$a $b")
done
printf '%s\n' "${pairs[@]}" | $PY -c '
import statistics as st, sys
v = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
a = st.median(x for x, _ in v); b = st.median(y for _, y in v)
r = st.median(y / x for x, y in v)
print("   daemon CPU per appended line, medians of %d rounds: %s %.3f ms, %s %.3f ms; "
      "ratio of medians %.2f, median of ratios %.2f" % (len(v), sys.argv[1], a, sys.argv[2], b, b / a, r))
' "$SMALL" "$LARGE"
