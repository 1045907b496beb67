#!/bin/bash
# With the inotify queue shrunk to 16 events, a burst of 1,000 appends over
# 50 files overflows it; the daemon reconciles and ends with exact totals.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
q=/proc/sys/fs/inotify/max_queued_events
[ -w "$q" ] || skip_all "needs root to lower $q"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
old=$(cat "$q")
trap 'echo "$old" > "$q"; cleanup_env' EXIT
parts=()
for i in $(seq 50); do parts+=("$($GEN session "$S/--p$((i % 5))--/s$i.jsonl" --calls 1 --seed $((1000 + i)) --small)"); done
echo 16 > "$q"
start_daemon; ok $? "daemon starts with max_queued_events=16"
python3 - "$S" > "$T/burst.json" <<'PY'
import json, os, random, subprocess, sys
S = sys.argv[1]
gen = os.path.join(os.environ["AM_SRCDIR"], "tests/lib/gen_pi.py")
# 1,000 appends, 20 per file, written as fast as possible, interleaved
tot = {}
files = [os.path.join(S, "--p%d--" % (i % 5), "s%d.jsonl" % i) for i in range(1, 51)]
import importlib.util
spec = importlib.util.spec_from_file_location("gen", gen); g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
t = g.Totals(); rng = random.Random(77)
fds = {f: open(f, "a") for f in files}
for k in range(1000):
    f = files[k % 50]
    line = json.dumps(g.assistant(rng, 500000 + k, g.BASE_MS + 10**9 + k * 1000, t), separators=(",", ":")) + "\n"
    fds[f].write(line); fds[f].flush()
for fd in fds.values(): fd.close()
json.dump(t.t, sys.stdout)
PY
echo "$old" > "$q"
all=$( (printf '%s\n' "${parts[@]}"; cat "$T/burst.json"; echo) | jq -s '{events: (map(.events)|add), input: (map(.input)|add), output: (map(.output)|add), cache_read: (map(.cache_read)|add), cache_write: (map(.cache_write)|add), total: (map(.total)|add), cost_nano: (map(.cost_nano)|add)}')
want=$(jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' <<<"$all")
totals_are() { [ "$(totals_line)" = "$want" ]; }
wait_until 20 totals_are; ok $? "exact totals after the burst"
[ "$(totals_line)" = "$want" ] || diag "got $(totals_line) expected $want"
check "the overflow was noticed and reconciled" grep -q "overflowed" "$T/daemon.log"
done_testing
