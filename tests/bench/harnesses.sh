#!/bin/bash
# make bench, the harnesses other than pi: Gemini CLI, Qwen Code, OpenCode,
# Copilot CLI and Droid, each on a ~100 MB corpus (20 MB with --quick) that
# tests/bench/gen_harness.py writes in the shape of the realgen samples,
# with the totals the ledger must show. Per harness, as paired medians
# (tests/bench/measure.py, warm page cache): `agentmeterd --once` into an
# empty ledger, `cat` of the same files, and ccusage 20's subcommand for that
# harness; then the ledger's totals checked against the generator's and
# ccusage's put next to them, each difference explained or called unexplained.
# Usage: tests/bench/harnesses.sh BUILD_DIR [--quick]
# Corpora are cached in BUILD_DIR/bench-corpora/h-<harness>-<MB> (regenerated
# when gen_harness.py changes); AM_BENCH_HARNESSES="gemini qwen" picks some;
# AM_BENCH_RUNS (5); AM_BENCH_DIR, AM_BENCH_CORPORA as for run.sh.
# Exits 1 when a ledger's totals differ from the generator's.
set -eu
B=$(cd "${1:-build}" && pwd); shift || true
QUICK=${1:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CORP=${AM_BENCH_CORPORA:-$B/bench-corpora}
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}/harnesses
PEERS=$B/peers
RUNS=${AM_BENCH_RUNS:-5}
HARNESSES=${AM_BENCH_HARNESSES:-gemini qwen opencode copilot droid}
PY=/usr/bin/python3   # not a pyenv shim: measure.py times whole processes
MB=100; [ "$QUICK" = --quick ] && MB=20
command -v /usr/bin/time >/dev/null || { echo "bench: needs /usr/bin/time (apt-get install time)"; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq"; exit 1; }
rm -rf "$W"; mkdir -p "$CORP" "$W/run" "$W/cchome"; chmod 700 "$W/run"

gen_hash=$(sha256sum "$SRC/tests/bench/gen_harness.py" | cut -c1-16)
corpus() { # harness: generates once, cached by parameters and generator
	local d=$CORP/h-$1-$MB key="harness=$1 mb=$MB seed=1 forks=10 gen=$gen_hash"
	if [ "$(cat "$d/.done" 2>/dev/null)" != "$key" ]; then
		rm -rf "$d"; mkdir -p "$d/home"
		echo "generating $1, $MB MB ..." >&2
		$PY "$SRC/tests/bench/gen_harness.py" "$1" "$d/home" --mb "$MB" --seed 1 --forks 10 >"$d/expected.json"
		echo "$key" >"$d/.done"
	fi
}

# ---- ccusage (installed by run.sh; installed here when run alone) -----------------
CC=$PEERS/node_modules/@ccusage/ccusage-linux-x64/bin/ccusage
if [ ! -f "$CC" ] && command -v npm >/dev/null; then
	mkdir -p "$PEERS"
	timeout 600 npm install --prefix "$PEERS" --no-audit --no-fund ccusage@20.0.24 >>"$PEERS/npm.log" 2>&1 || true
fi
[ -f "$CC" ] && chmod +x "$CC"   # npm leaves the native binary without x
HAVE_CC=0
[ -x "$CC" ] && "$CC" --version >/dev/null 2>&1 && HAVE_CC=1
[ $HAVE_CC = 1 ] || echo "ccusage 20.0.24: not installed (see $PEERS/npm.log); left out"

# where each harness keeps its data under HOME, the variable ccusage takes for
# it (its HOME is an empty directory), and the files with usage in them, the
# ones agentmeterd reads (Droid's transcripts and .bak snapshots hold none)
data_of() {
	case $1 in
	gemini) echo ".gemini GEMINI_DATA_DIR */chats/session-*.jsonl" ;;
	qwen) echo ".qwen QWEN_DATA_DIR */chats/*.jsonl" ;;
	opencode) echo ".local/share/opencode OPENCODE_DATA_DIR */opencode.db*" ;;
	copilot) echo ".copilot COPILOT_HOME */session-state/*/events.jsonl" ;;
	droid) echo ".factory/sessions DROID_SESSIONS_DIR *.settings.json" ;;
	esac
}
# every file's name, size and time: a tool that wrote into the corpus shows here
# (not SQLite's -shm, where every reader of a WAL database marks what it reads)
fingerprint() { find "$1" ! -name '*-shm' -printf '%P %s %T@\n' | sort | sha256sum | cut -c1-16; }

table=$W/table.md
{
	echo "| harness, corpus | agentmeterd warm | cat warm | ccusage 20 (ours/it) | peak RSS / private: ours, ccusage | totals |"
	echo "|---|---|---|---|---|---|"
} >"$table"
fail=0
for h in $HARNESSES; do
	corpus "$h"
	d=$CORP/h-$h-$MB; H=$d/home
	read -r sub var pat <<<"$(data_of "$h")"
	S=$H/$sub
	bytes=$(du -sb "$S" | cut -f1)
	nread=$(find "$S" -type f -path "$pat" | wc -l)
	read_bytes=$(find "$S" -type f -path "$pat" -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	st=$W/state-$h
	ours="env -i PATH=$PATH HOME=$H XDG_STATE_HOME=$st XDG_RUNTIME_DIR=$W/run $B/agentmeterd --once"
	catc="sh -c 'find $S -type f -path \"$pat\" -print0 | xargs -0 cat'"
	ccc="env HOME=$W/cchome TZ=UTC $var=$S $CC $h daily --offline --json"
	echo "== $h: $(find "$S" -type f | wc -l) files, $((bytes / 1000000)) MB; with usage: $nread files, $(awk "BEGIN { printf \"%.1f\", $read_bytes / 1e6 }") MB; $(jq .calls "$d/expected.json") calls ($RUNS paired runs, medians)"
	fp0=$(fingerprint "$H")
	args=("ours=$ours" "cat=$catc")
	[ $HAVE_CC = 1 ] && args+=("ccusage=$ccc")
	$PY "$SRC/tests/bench/measure.py" -n "$RUNS" --warmup 1 --before "ours=rm -rf $st" --json -- "${args[@]}" >"$W/warm-$h.json"
	# the ledger of one more run: its totals against the generator's
	rm -rf "$st"
	$ours >"$W/once-$h.log" 2>&1 || echo "   agentmeterd --once failed: $(tail -1 "$W/once-$h.log")"
	got=$(env -i PATH="$PATH" HOME="$H" XDG_STATE_HOME="$st" XDG_RUNTIME_DIR="$W/run" "$B/agentmeterctl" report daily --json 2>/dev/null |
		jq -c '.totals|[.events,.input_tokens,.output_tokens,.cache_read_tokens,.cache_write_tokens,.total_tokens]' || echo null)
	cg=missing
	if [ $HAVE_CC = 1 ]; then
		rc=0; $ccc >"$W/ccusage-$h.json" 2>"$W/ccusage-$h.err" || rc=$?
		if [ $rc != 0 ]; then cg=failed:$rc
		else cg=$(jq -c '.totals|[.inputTokens,.outputTokens,.cacheReadTokens,.cacheCreationTokens,.totalTokens]' \
			"$W/ccusage-$h.json" 2>/dev/null | grep '^\[' || echo none); fi
	fi
	$PY "$SRC/tests/bench/harness_report.py" "$h" "$bytes:$read_bytes" "$W/warm-$h.json" "$d/expected.json" "$got" "$cg" "$table" || fail=1
	[ "$(fingerprint "$H")" = "$fp0" ] || echo "   NOTE: the corpus changed while it was read (a tool wrote into $H)"
done
echo "== table (markdown, for tests/bench/README.md):"
cat "$table"
[ $fail = 0 ] || echo "harnesses: a ledger's totals differ from the generator's (above)"
exit $fail
