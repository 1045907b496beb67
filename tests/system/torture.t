#!/bin/bash
# Crash torture: kill -9 at random moments during a cold ingest, during
# live appends written in pieces (lines split across writes), and during a
# rescan; after each kill `agentmeterd --once` finishes from the stored
# checkpoints and the totals must equal the generators' exactly. The
# sources: pi sessions and three compressed Codex rollouts (.jsonl.zst, 21 MB
# decoded each, read over several slices). 20 rounds here (make check);
# AM_TORTURE_ROUNDS=1000 in `make torture`.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v zstd >/dev/null || skip_all "zstd(1) not installed"
new_env
ROUNDS=${AM_TORTURE_ROUNDS:-20}
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
P=$T/parts.jsonl
export CODEX_HOME=$T/codex
CXD=$CODEX_HOME/sessions/2026/11/30
# corpus ROOT: the pi sessions (ROOT/pi) and compressed Codex rollouts, as
# Codex leaves them after a week idle (ROOT/codex); their totals on stdout
corpus() {
	$GEN corpus "$1/pi" --files 24 --mb 8 --seed 7 || return 1
	for seed in 3 4 5; do
		python3 "$AM_SRCDIR/tests/lib/gen_codex.py" rollout "$1/codex" --calls 1200 --seed "$seed" || return 1
	done
	for f in "$1"/codex/*.jsonl; do zstd -q --rm "$f" && touch -d '10 days ago' "$f.zst"; done
}
cached torture-corpus "$T/corpus" corpus >"$P"
mkdir -p "$S" "$CXD" && mv "$T"/corpus/pi/* "$S/" && mv "$T"/corpus/codex/* "$CXD/"
check "three compressed Codex rollouts" test "$(ls "$CXD"/*.jsonl.zst | wc -l)" = 3
mapfile -t files < <(find "$S" -name '*.jsonl' | sort)
want() { jq -s -c '[(map(.events)|add), (map(.input)|add), (map(.output)|add), (map(.cache_read)|add), (map(.cache_write)|add), (map(.total)|add), ((map(.cost_nano)|add)/1e9)]' "$P"; }
RANDOM=${AM_TORTURE_SEED:-2026}
all=$(jq -s 'map(.events) | add' "$P") # rows of the corpus before any append
lost=0 mid=0
for i in $(seq "$ROUNDS"); do
	mode=$((i % 3))
	[ $mode -eq 0 ] && rm -rf "$XDG_STATE_HOME/agentmeterd"   # cold: from nothing
	"$D" --log-target=console --reconcile-interval=1 >>"$T/daemon.log" 2>&1 &
	pid=$!
	case $mode in
	0)	# a cold ingest: killed at a random moment after its first commit
		# (not before: an ASan build starts slower than any fixed sleep)
		wait_until 10 holds '[ "$("$C" status --json 2>/dev/null | jq -r ".ledger.rows // 0")" -gt 0 ]'
		sleep "0.0$(printf '%02d' $((RANDOM % 60)))" ;;
	1)	# live: appends in pieces while the daemon tails them
		f=${files[$((RANDOM % ${#files[@]}))]}
		$GEN append "$f" --calls 3 --seed $((5000 + i)) --small --split 0.003 >>"$P" &
		apid=$!
		sleep "0.$(printf '%03d' $((5 + RANDOM % 60)))" ;;
	2)	wait_until 5 "$C" version && "$C" rescan >/dev/null 2>&1
		sleep "0.0$((RANDOM % 10))" ;;
	esac
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ $mode -eq 1 ] && wait "$apid"
	out=$("$D" --once 2>&1)
	echo "$out" >>"$T/once.log"
	added=$(sed -n 's/.* \([0-9]*\) rows added.*/\1/p' <<<"$out" | tail -1)
	# the kill of a cold round landed mid-ingest: the daemon committed some rows, --once the rest
	[ $mode -eq 0 ] && [ "${added:-0}" -gt 0 ] && [ "${added:-0}" -lt "$all" ] && mid=$((mid + 1))
	got=$(totals_line) exp=$(want)
	if [ "$got" != "$exp" ]; then
		lost=$((lost + 1))
		diag "round $i (mode $mode): got $got expected $exp"
	fi
done
is "$lost" 0 "$ROUNDS rounds of kill -9 (cold ingest, split live appends, rescan; pi and compressed Codex): every one exact"
check "kills landed mid-ingest in $mid of $((ROUNDS / 3)) cold rounds" test "$mid" -ge 1
check "no sanitizer report" sh -c "! grep -qE 'AddressSanitizer|runtime error' '$T/daemon.log' '$T/once.log'"
done_testing
