#!/bin/bash
# make bench: agentmeterd against `cat` and the peers on generated corpora, in
# one run on this machine, plus the live figures (append latency, reports,
# concurrent clients, idle cost). Not part of `make check`.
#  1. per corpus (20 MB, 200 MB, 2 GB realistic; dense 200k small records):
#     `agentmeterd --once` into an empty ledger, cold (page cache dropped,
#     when root) and warm, `cat` of the same files, ccusage 20 and tokscale 4
#     (installed from npm into BUILD/peers when possible): paired medians of
#     wall time, peak RSS and private (anonymous) memory; totals checked
#     against the generator's, peers' totals compared with ours.
#  2. with 20 MB and with 2 GB ingested: append-to-visible latency, and the
#     daemon's CPU per appended line in paired rounds (append.sh); with 2 GB:
#     report daily/session answer times, 50 concurrent clients while ingest
#     runs (and over the socket: socket_clients.py, load-clients.c), statusline latency p50/p99 (process start included), an idle
#     daemon's CPU time and memory, and `agentmeterctl reprice` over the ledger.
# Usage: tests/bench/run.sh BUILD_DIR [--quick]   (--quick: 20 MB and a small dense corpus)
# Corpora are cached in BUILD_DIR/bench-corpora (AM_BENCH_CORPORA);
# AM_BENCH_LIVE_ONLY=1 skips part 1 (the corpora must exist).
set -eu
B=$(cd "${1:-build}" && pwd); shift || true
QUICK=${1:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CORP=${AM_BENCH_CORPORA:-$B/bench-corpora}
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}
PEERS=$B/peers
# The first scans' pairs: r200's ratio to ccusage over 8 repeats on a noisy
# VM spread 0.31-0.36 with 5 pairs, 0.32-0.35 with 11 (5 for a corpus over
# 1 GB, whose runs take seconds).
SCAN_RUNS=${AM_BENCH_SCAN_RUNS:-11}
BIG_RUNS=${AM_BENCH_BIG_RUNS:-5}
IDLE=${AM_BENCH_IDLE:-20}
M="python3 $SRC/tests/bench/measure.py"
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time (apt-get install time)"; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq"; exit 1; }
mkdir -p "$CORP" "$W"

# ---- corpora: name files mb pairs(0: by size) extra-args ------------------
CORPORA=("r20 100 20 0" "r200 609 200 0" "r2000 6507 2000 0" "dense 1000 0 200 --small")
[ "$QUICK" = --quick ] && CORPORA=("r20 100 20 0" "dsmall 100 0 200 --small") # not "dense": the cache would be replaced
# AM_BENCH_10G=1: a heavy user's 10 GB (32,000 files, the realistic shape;
# ~10 GB of disk in the corpus cache): the first scan beside the 2 GB one in
# the same run (linear in bytes?), and the live figures with it ingested
BIG=r2000
if [ -n "${AM_BENCH_10G:-}" ] && [ "$QUICK" != --quick ]; then
	CORPORA+=("r10000 32000 10000 0")
	BIG=r10000
fi
# AM_BENCH_ONLY="r20 r2000 r10000": only these corpora's first scans
if [ -n "${AM_BENCH_ONLY:-}" ]; then
	keep=()
	for spec in "${CORPORA[@]}"; do
		case " $AM_BENCH_ONLY " in *" ${spec%% *} "*) keep+=("$spec") ;; esac
	done
	CORPORA=("${keep[@]}")
fi
gen_hash=$(sha256sum "$SRC/tests/lib/gen_pi.py" | cut -c1-16)
corpus() { # name files mb pairs [args]: generates once, cached by parameters
	local name=$1 files=$2 mb=$3 pairs=$4; shift 4
	local d=$CORP/$name key="files=$files mb=$mb pairs=$pairs $* forks=10 seed=1 gen=$gen_hash"
	if [ "$(cat "$d/.done" 2>/dev/null)" != "$key" ]; then
		rm -rf "$d"; mkdir -p "$d/home/.pi/agent"
		echo "generating $name: $files files ..." >&2
		python3 "$SRC/tests/lib/gen_pi.py" corpus "$d/home/.pi/agent/sessions" --files "$files" \
			$([ "$pairs" -gt 0 ] && echo --pairs "$pairs" || echo --mb "$mb") --forks 10 --seed 1 "$@" \
			> "$d/expected.json"
		echo "$key" > "$d/.done"
	fi
}

if [ -n "${AM_BENCH_GEN_ONLY:-}" ]; then   # only fill the corpus cache
	for spec in "${CORPORA[@]}"; do read -r name files mb pairs extra <<< "$spec"; corpus "$name" "$files" "$mb" "$pairs" $extra; done
	exit 0
fi

# ---- peers ------------------------------------------------------------------
CC=$PEERS/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
TS=$PEERS/node_modules/@tokscale/cli-linux-x64-gnu/bin/tokscale
install_peer() { # package: npm install into BUILD/peers; a failure is reported, not fatal
	command -v npm >/dev/null || return 1
	mkdir -p "$PEERS"
	timeout 600 npm install --prefix "$PEERS" --no-audit --no-fund "$1" >> "$PEERS/npm.log" 2>&1
}
[ -f "$CC" ] || install_peer ccusage@20.0.24 || true
[ -f "$TS" ] || install_peer @tokscale/cli-linux-x64-gnu@4.17.0 || true
[ -f "$CC" ] && chmod +x "$CC"   # npm leaves the native binary without x (the launcher fixes it)
HAVE_CC=0; HAVE_TS=0
[ -x "$CC" ] && "$CC" --version >/dev/null 2>&1 && HAVE_CC=1
[ -x "$TS" ] && "$TS" --version >/dev/null 2>&1 && HAVE_TS=1
[ $HAVE_CC = 1 ] || echo "ccusage 20.0.24: not installed (see $PEERS/npm.log); left out"
[ $HAVE_TS = 1 ] || echo "tokscale 4.17.0: not installed (see $PEERS/npm.log); left out"

DROP="sync; echo 3 > /proc/sys/vm/drop_caches"
if sh -c "$DROP" 2>/dev/null; then COLD=cold; else COLD=""; echo "(not root: no cold runs, page cache warm)"; fi

# ---- per corpus -------------------------------------------------------------
table=$W/table.md
{
	echo "| corpus | agentmeterd cold | agentmeterd warm | cat cold / warm | ccusage 20 (ours/it) | tokscale 4 cold / warm (ours/it) | peak RSS / private: ours, ccusage, tokscale | totals |"
	echo "|---|---|---|---|---|---|---|---|"
} > "$table"
[ -n "${AM_BENCH_LIVE_ONLY:-}" ] && CORPORA=()   # only the live figures (corpora cached)
for spec in "${CORPORA[@]}"; do
	read -r name files mb pairs extra <<< "$spec"
	corpus "$name" "$files" "$mb" "$pairs" $extra
	d=$CORP/$name; S=$d/home/.pi/agent/sessions
	rm -rf "$S/--bench--"   # the live runs' sessions, from an interrupted run
	bytes=$(du -sb "$S" | cut -f1)
	st=$W/state-$name
	ENVS="env -i PATH=$PATH HOME=$W/home XDG_STATE_HOME=$st XDG_RUNTIME_DIR=$W/run PI_CODING_AGENT_SESSION_DIR=$S"
	mkdir -p "$W/home" "$W/run" && chmod 700 "$W/run"
	ours="$ENVS $B/agentmeterd --once"
	catc="sh -c 'find $S -name \"*.jsonl\" -print0 | xargs -0 cat'"
	ccc="env HOME=$W/cchome TZ=UTC $CC pi daily --offline --json --pi-path $S"
	tsc="env HOME=$d/home TOKSCALE_PRICING_CACHE_ONLY=1 TZ=UTC $TS models --home $d/home --client pi --json --no-spinner"
	tscache=$d/home/.config/tokscale/cache
	n=$SCAN_RUNS; [ "$bytes" -gt 1000000000 ] && n=$BIG_RUNS
	echo "== $name: $(find "$S" -name '*.jsonl' | wc -l) files, $((bytes / 1000000)) MB, $(jq .events "$d/expected.json") records ($n paired runs, medians)"
	cold='{}'
	if [ -n "$COLD" ]; then
		cold=$($M -n "$n" --warmup 0 --setup "rm -rf $st; $DROP" --json -- "ours=$ours" "cat=$catc")
	fi
	args=("ours=$ours" "cat=$catc")
	[ $HAVE_CC = 1 ] && args+=("ccusage=$ccc")
	[ $HAVE_TS = 1 ] && args+=("tscold=$tsc" "tswarm=$tsc")
	warm=$($M -n "$n" --warmup 1 --before "ours=rm -rf $st" --before "tscold=rm -rf $tscache" --json -- "${args[@]}")
	echo "$cold" > "$W/cold-$name.json"; echo "$warm" > "$W/warm-$name.json"
	# the ledger of the last run: its totals against the generator's
	$ours > /dev/null 2>&1 || true
	want=$(jq -c '[.events,.input,.output,.cache_read,.cache_write,.total]' "$d/expected.json")
	got=$($ENVS "$B/agentmeterctl" report daily --json 2>/dev/null |
		jq -c '.totals|[.events,.input_tokens,.output_tokens,.cache_read_tokens,.cache_write_tokens,.total_tokens]')
	ok=$([ "$want" = "$got" ] && echo "equal to the generator's" || echo "DIFFER: $got, generator $want")
	echo "   agentmeterd totals (events, input, output, cache read, cache write, total): $ok"
	peer_note=""
	if [ $HAVE_CC = 1 ]; then
		cg=$($ccc 2>/dev/null | jq -c '.totals|[.inputTokens,.outputTokens,.cacheReadTokens,.cacheCreationTokens,.totalTokens]' || echo null)
		peer_note+="ccusage $(python3 "$SRC/tests/bench/compare.py" "$d/expected.json" "$cg")"
		echo "   ccusage totals: $(python3 "$SRC/tests/bench/compare.py" "$d/expected.json" "$cg")"
	fi
	if [ $HAVE_TS = 1 ]; then
		tg=$($tsc 2>/dev/null | jq -c '[.totalInput,.totalOutput,.totalCacheRead,.totalCacheWrite,(.totalInput+.totalOutput+.totalCacheRead+.totalCacheWrite)]' || echo null)
		peer_note+="${peer_note:+; }tokscale $(python3 "$SRC/tests/bench/compare.py" "$d/expected.json" "$tg")"
		echo "   tokscale totals: $(python3 "$SRC/tests/bench/compare.py" "$d/expected.json" "$tg")"
	fi
	python3 "$SRC/tests/bench/table.py" "$name" "$bytes" "$W/cold-$name.json" "$W/warm-$name.json" \
		"ours ${ok%%:*}; $peer_note" >> "$table"
	python3 "$SRC/tests/bench/table.py" --text "$name" "$bytes" "$W/cold-$name.json" "$W/warm-$name.json"
done
if [ -f "$W/warm-r10000.json" ] && [ -f "$W/warm-r2000.json" ]; then
	python3 - "$W/warm-r2000.json" "$W/warm-r10000.json" "$CORP" <<'PY'
import json, sys, os
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def size(n):
    return json.load(open(os.path.join(sys.argv[3], n, "expected.json")))["bytes"]
ta, tb = a["ours"]["wall"], b["ours"]["wall"]
print("== linear in bytes? r10000 / r2000: time %.2fx for %.2fx the bytes (warm medians %.2f s, %.2f s; bound 5.5x)"
      % (tb / ta, size("r10000") / size("r2000"), ta, tb))
PY
fi
echo "== table (markdown, for tests/bench/README.md):"
cat "$table"

# ---- live: append latency at two history sizes, reports, clients, idle ------
[ "$QUICK" = --quick ] && LIVE=(r20) || LIVE=(r20 "$BIG")
for name in "${LIVE[@]}"; do
	d=$CORP/$name; S=$d/home/.pi/agent/sessions; st=$W/state-$name
	rm -rf "$S/--bench--"   # the latency run's session, from an earlier run
	rm -rf "$st"
	ENVA=(env -i PATH="$PATH" HOME="$W/home" XDG_STATE_HOME="$st" XDG_RUNTIME_DIR="$W/run"
		PI_CODING_AGENT_SESSION_DIR="$S" AGENTMETER_LOG_CONSOLE=1)
	"${ENVA[@]}" "$B/agentmeterd" --once > /dev/null 2>&1
	"${ENVA[@]}" "$B/agentmeterd" --log-target=console 2> "$W/daemon.log" &
	DP=$!   # env execs the daemon: this is its pid
	trap 'kill $DP 2>/dev/null; wait $DP 2>/dev/null || true' EXIT
	for i in $(seq 200); do [ -S "$W/run/agentmeterd/control.sock" ] && break; sleep 0.05; done
	for i in $(seq 600); do
		"${ENVA[@]}" "$B/agentmeterctl" status --json 2>/dev/null | jq -e .ingest.initial_scan_done >/dev/null && break
		sleep 0.1
	done
	echo "== $name ingested ($(du -sh "$st" | cut -f1) ledger): append-to-visible latency (200 appends, through the tail stream):"
	python3 "$SRC/tests/bench/latency.py" "$W/run/agentmeterd/control.sock" "$S/--bench--/bench.jsonl" 200
	if [ "$name" != r20 ] || [ "$QUICK" = --quick ]; then
		echo "== answers with $name ingested (agentmeterctl, a new process per query):"
		env HOME="$W/home" XDG_STATE_HOME="$st" XDG_RUNTIME_DIR="$W/run" PATH="$PATH" \
			python3 "$SRC/tests/bench/clients.py" "$B/agentmeterctl" "$S/--bench--/clients.jsonl"
		echo "== the daemon's own answer times, 50 socket clients x 4 (no process per query; a session report every 8th):"
		python3 "$SRC/tests/bench/socket_clients.py" "$W/run/agentmeterd/control.sock" --pid "$DP" --session-every 8
		echo "== the same from C, 50 clients x 4 at once (one thread, poll; no Python threads in the way):"
		"$B/tools/bench/load-clients" "$W/run/agentmeterd/control.sock" --pid "$DP" || true
		"$B/tools/bench/load-clients" "$W/run/agentmeterd/control.sock" --pid "$DP" --session-every 8 || true
		echo "== statusline latency with $name ingested ($(du -sh "$st/agentmeterd/ledger.mdb" | cut -f1) ledger):"
		python3 "$SRC/tests/bench/statusline.py" "$B/agentmeterctl" "$([ "$QUICK" = --quick ] && echo 100 || echo 1000)" \
			HOME="$W/home" XDG_STATE_HOME="$st" XDG_RUNTIME_DIR="$W/run"
		echo "== idle daemon tracking $(find "$S" -name '*.jsonl' | wc -l) files for $IDLE s:"
		sleep 2
		t0=$(awk '{print $14+$15}' /proc/$DP/stat)
		sleep "$IDLE"
		t1=$(awk '{print $14+$15}' /proc/$DP/stat)
		python3 - "$DP" "$t0" "$t1" "$IDLE" <<'PY'
import os, sys
pid, t0, t1, idle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
st = {l.split(":")[0]: l.split()[1] for l in open("/proc/%s/status" % pid) if ":" in l and len(l.split()) > 1}
print("   CPU time %.3f s over %d s; RSS %.1f MB: private (anon) %.1f MB, file-backed (ledger map) %.1f MB"
      % ((t1 - t0) / os.sysconf("SC_CLK_TCK"), idle, int(st["VmRSS"]) / 1024, int(st["RssAnon"]) / 1024,
         int(st["RssFile"]) / 1024))
PY
		echo "== agentmeterctl reprice over the whole ledger (vendor rows: walked, none changed):"
		r0=$(date +%s%N)
		env HOME="$W/home" XDG_STATE_HOME="$st" XDG_RUNTIME_DIR="$W/run" PATH="$PATH" \
			"$B/agentmeterctl" reprice | sed 's/^/   /'
		r1=$(date +%s%N)
		python3 -c "print('   %.3f s' % (($r1 - $r0) / 1e9))"
	fi
	kill $DP; wait $DP 2>/dev/null || true
	trap - EXIT
	rm -rf "$S/--bench--"
done

# ---- live: daemon CPU per appended line, small and large history paired ------
# (one run of each says little on this VM: see append.sh)
echo "== daemon CPU per appended line, ${LIVE[0]} against ${LIVE[${#LIVE[@]}-1]} ingested, paired rounds (append.sh):"
AM_BENCH_CORPORA=$CORP AM_BENCH_DIR=$W \
	AM_BENCH_APPEND_ROUNDS=${AM_BENCH_APPEND_ROUNDS:-$([ "$QUICK" = --quick ] && echo 2 || echo 8)} \
	"$SRC/tests/bench/append.sh" "$B" "${LIVE[0]}" "${LIVE[${#LIVE[@]}-1]}"

# ---- private memory as the tracked files grow (memory.py) -------------------
# A corpus of many small pi sessions (the file count matters, not the bytes):
# the daemon's peak RssAnon during its first scan and idle after it, and
# --once's peak, paired medians; AM_BENCH_MEMORY=0 leaves it out.
if [ "${AM_BENCH_MEMORY:-1}" != 0 ]; then
	[ "$QUICK" = --quick ] && mfiles=2000 || mfiles=${AM_BENCH_MEMORY_FILES:-32000}
	corpus "m$mfiles" "$mfiles" 0 4 --small
	echo "== private memory with $mfiles small sessions tracked (memory.py):"
	python3 "$SRC/tests/bench/memory.py" --runs "$([ "$QUICK" = --quick ] && echo 1 || echo 3)" \
		"$CORP/m$mfiles/home" "$B"
	if [ "$BIG" = r10000 ]; then
		echo "== private memory with r10000 (10 GB) tracked (memory.py, one run):"
		python3 "$SRC/tests/bench/memory.py" --runs 1 "$CORP/r10000/home" "$B"
	fi
fi
