#!/bin/bash
# make bench: the figures the issues ask for, measured on this machine.
#  1. cold `agentmeterd --once` over ~1,000 pi files / ~200 MB: MB/s, peak RSS
#  2. append-to-visible latency p50/p99 over 1,000 appends (live daemon)
#  3. an idle daemon tracking 1,000 files for 60 s: CPU time and RSS
#  4. `agentmeterctl reprice` walking the whole ledger
# Usage: tests/bench/run.sh BUILD_DIR [--quick]
set -eu
B=${1:-build}; shift || true
QUICK=${1:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}
FILES=1000; MB=200; IDLE=60; APPENDS=1000
[ "$QUICK" = --quick ] && { FILES=100; MB=20; IDLE=5; APPENDS=200; }
mkdir -p "$W"
corpus=$W/corpus-$FILES-$MB
if [ ! -f "$corpus/.done" ]; then
	rm -rf "$corpus"; mkdir -p "$corpus"
	echo "generating $FILES files, $MB MB in $corpus ..."
	python3 "$SRC/tests/lib/gen_pi.py" corpus "$corpus/sessions" --files "$FILES" --mb "$MB" --seed 1 > "$corpus/expected.json"
	touch "$corpus/.done"
fi
rm -rf "$corpus/sessions/--bench--"   # the latency run's session, from an earlier run
bytes=$(du -sb "$corpus/sessions" | cut -f1)
ENV=(env -i PATH="$PATH" HOME="$W/home" XDG_STATE_HOME="$W/state" XDG_RUNTIME_DIR="$W/run"
	PI_CODING_AGENT_SESSION_DIR="$corpus/sessions" AGENTMETER_LOG_CONSOLE=1)
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time (apt-get install time)"; exit 1; }
rm -rf "$W/state" "$W/home" "$W/run"; mkdir -p "$W/home" "$W/run"; chmod 700 "$W/run"
sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
/usr/bin/time -f '%e %M' -o "$W/time.txt" "${ENV[@]}" "$B/agentmeterd" --once > "$W/once.txt" 2>/dev/null
read -r secs rss_kb < "$W/time.txt"
echo "== --once, empty ledger, page cache dropped: $(cat "$W/once.txt")"
python3 - "$bytes" "$secs" "$rss_kb" <<'PY'
import sys
b, s, rss = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print("   corpus %.1f MB in %.3f s wall: %.0f MB/s; peak RSS %.1f MB" % (b / 1e6, s, b / 1e6 / max(s, 1e-3), rss / 1024))
PY
# the same from the page cache (files just read): parsing speed without the disk
rm -rf "$W/state"
/usr/bin/time -f '%e %M' -o "$W/time2.txt" "${ENV[@]}" "$B/agentmeterd" --once > /dev/null 2>&1
read -r secs2 rss2_kb < "$W/time2.txt"
python3 - "$bytes" "$secs2" "$rss2_kb" <<'PY'
import sys
b, s, rss = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print("   warm page cache, empty ledger: %.3f s wall: %.0f MB/s; peak RSS %.1f MB" % (s, b / 1e6 / max(s, 1e-3), rss / 1024))
PY
want=$(jq -c '[.events,.input,.output,.cache_read,.cache_write,.total]' "$corpus/expected.json")
got=$("${ENV[@]}" "$B/agentmeterctl" report daily --json 2>/dev/null | jq -c '.totals|[.events,.input_tokens,.output_tokens,.cache_read_tokens,.cache_write_tokens,.total_tokens]')
echo "   totals match the generator: $([ "$want" = "$got" ] && echo yes || echo "NO ($got vs $want)")"

# warm start: the daemon over the already-ingested corpus, then latency
"${ENV[@]}" "$B/agentmeterd" --log-target=console 2>"$W/daemon.log" &
DP=$!   # env execs the daemon: this is its pid
trap 'kill $DP 2>/dev/null; wait $DP 2>/dev/null || true' EXIT
for i in $(seq 200); do [ -S "$W/run/agentmeterd/control.sock" ] && break; sleep 0.05; done
for i in $(seq 600); do
	"${ENV[@]}" "$B/agentmeterctl" status --json 2>/dev/null | jq -e .ingest.initial_scan_done >/dev/null && break
	sleep 0.1
done
echo "== append-to-visible latency ($APPENDS appends, measured through the tail stream):"
python3 "$SRC/tests/bench/latency.py" "$W/run/agentmeterd/control.sock" "$corpus/sessions/--bench--/bench.jsonl" "$APPENDS"
echo "== idle daemon tracking $(find "$corpus/sessions" -name '*.jsonl' | wc -l) files for $IDLE s:"
sleep 2
t0=$(awk '{print $14+$15}' /proc/$DP/stat)
sleep "$IDLE"
t1=$(awk '{print $14+$15}' /proc/$DP/stat)
rss=$(awk '/VmRSS/{print $2}' /proc/$DP/status)
hz=$(getconf CLK_TCK)
python3 -c "print('   CPU time %.3f s over $IDLE s; RSS %.1f MB' % (($t1-$t0)/$hz, $rss/1024))"
echo "== agentmeterctl reprice over the whole ledger (vendor rows: walked, none changed):"
r0=$(date +%s%N)
"${ENV[@]}" "$B/agentmeterctl" reprice | sed 's/^/   /'
r1=$(date +%s%N)
python3 -c "print('   %.3f s' % (($r1 - $r0) / 1e9))"
