#!/bin/bash
# The file lifecycle matrix, against one live daemon run as an unprivileged
# user (as root, the permission case means nothing): every way a harness, a
# log rotator or a user changes session files, each followed by an exact
# total (every distinct call ever written counted once; rows of files that
# shrink or vanish stay, as the ledger keeps what it observed).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
use_test_user
GEN="python3 $TLIB/gen_pi.py"
R=$HOME/.pi/agent/sessions
P=$T/parts.jsonl
touch "$P"; chmod 666 "$P"
seed=100
u() { if [ ${#RUN[@]} -gt 0 ]; then "${RUN[@]}" "$@"; else "$@"; fi; }
gen() { # gen session|append FILE CALLS [ARGS]: writes calls as the user, remembers their totals
	seed=$((seed + 1))
	u $GEN "$1" "$2" --calls "$3" --seed $seed --small "${@:4}" >>"$P"
}
# same_size_change FILE: the file deleted and written again with the same
# size and one call changed (output and total tokens +1), as a harness that
# rewrites a session does; the inode is usually reused. Adds that call.
same_size_change() {
	u python3 - "$1" >>"$P" <<'PY'
import json, os, re, sys
p = sys.argv[1]
d = open(p, "rb").read().split(b"\n")
i = max(k for k, l in enumerate(d) if b'"role":"assistant"' in l)
m = json.loads(d[i])
u = m["message"]["usage"]
def bump(line, key):
    mm = re.search(rb'"' + key + rb'":(\d+)', line)
    v = int(mm.group(1)); nv = v + 1 if len(str(v + 1)) == len(str(v)) else v - 1
    return line[:mm.start(1)] + str(nv).encode() + line[mm.end(1):], nv - v
d[i], do = bump(d[i], b"output")
d[i], dt = bump(d[i], b"totalTokens")
os.unlink(p)
open(p, "wb").write(b"\n".join(d))
print(json.dumps({"events": 1, "input": u["input"], "output": u["output"] + do,
                  "cache_read": u["cacheRead"], "cache_write": u["cacheWrite"],
                  "total": u["totalTokens"] + dt, "cost_nano": round(u["cost"]["total"] * 1e9)}))
PY
}
want() { jq -s -c '[(map(.events)|add // 0), (map(.input)|add // 0), (map(.output)|add // 0), (map(.cache_read)|add // 0), (map(.cache_write)|add // 0), (map(.total)|add // 0), ((map(.cost_nano)|add // 0)/1e9)]' "$P"; }
exact() { # exact CASE: the totals reach the expected ones
	local w; w=$(want)
	eq() { [ "$(totals_line)" = "$w" ]; }
	wait_until 15 eq
	ok $? "$1: exact"
	[ "$(totals_line)" = "$w" ] || diag "got $(totals_line) expected $w"
}
n_cases=0

u mkdir -p "$R/--a--"
gen session "$R/--a--/s1.jsonl" 2
start_daemon --reconcile-interval=2; ok $? "daemon starts"
exact "initial scan"

gen append "$R/--a--/s1.jsonl" 3 --split 0.01
exact "append in pieces (lines split across writes)"

# a partial line across a restart
stop_daemon
seed=$((seed + 1))
u $GEN session "$T/one.jsonl" --calls 1 --seed $seed --small >"$T/one.tot"
tail -n 2 "$T/one.jsonl" >"$T/two.lines"
half=$(( $(wc -c <"$T/two.lines") / 2 ))
head -c "$half" "$T/two.lines" | u tee -a "$R/--a--/s1.jsonl" >/dev/null
start_daemon --reconcile-interval=2; ok $? "restart with a partial line at the end"
sleep 0.3
tail -c +$((half + 1)) "$T/two.lines" | u tee -a "$R/--a--/s1.jsonl" >/dev/null
cat "$T/one.tot" >>"$P"
exact "partial line across a restart"

u truncate -s 0 "$R/--a--/s1.jsonl"
sleep 0.2
gen session "$R/--a--/s1.jsonl" 2   # a header and new calls, as a harness restarts a file
exact "truncate and regrow"

u cp "$R/--a--/s1.jsonl" "$R/--a--/s1.jsonl.1"
u truncate -s 0 "$R/--a--/s1.jsonl"
gen session "$R/--a--/s1.jsonl" 2
exact "copytruncate"

u mv "$R/--a--/s1.jsonl" "$R/--a--/s1-renamed.jsonl"
gen append "$R/--a--/s1-renamed.jsonl" 1
exact "rename, then append"

gen session "$R/--a--/s2.jsonl" 2
exact "new file"
same_size_change "$R/--a--/s2.jsonl"
exact "delete and recreate with the same size (inode reused or not)"

u mkdir -p "$R/--b--"
gen session "$R/--b--/s3.jsonl" 1
exact "new directory"
u mv "$R/--b--" "$T/home/moved-out"
gen append "$T/home/moved-out/s3.jsonl" 1
u mv "$T/home/moved-out" "$R/--b--"
exact "directory moved out, written to, moved back"

u mv "$R" "$T/home/old-root"
exact "root gone: nothing removed"
u mkdir -p "$R/--c--"
gen session "$R/--c--/s4.jsonl" 2
exact "root recreated"

# a symlinked root retargeted
u mv "$R" "$T/home/root-a"
u mkdir -p "$T/home/root-b/--d--"
seed=$((seed + 1))
u $GEN session "$T/home/root-b/--d--/s6.jsonl" --calls 1 --seed $seed --small >"$T/s6.tot"
u ln -s "$T/home/root-a" "$R"
exact "root is a symlink"
u ln -sfn "$T/home/root-b" "$R.new"; u mv -T "$R.new" "$R"
cat "$T/s6.tot" >>"$P"
"${RUN[@]}" "$C" rescan >/dev/null
exact "symlinked root retargeted"
u rm "$R"; u mv "$T/home/root-a" "$R"

if [ -n "${AS_USER:-}" ]; then
	u chmod 000 "$R/--c--/s4.jsonl"
	chmod 644 "$R/--c--/s4.jsonl" && gen append "$R/--c--/s4.jsonl" 1 && chmod 000 "$R/--c--/s4.jsonl"
	sleep 0.5
	u chmod 644 "$R/--c--/s4.jsonl"
	exact "permissions removed and restored"
else
	skip "permissions: needs root to run the daemon as another user"
fi

u rm "$R/--c--/s4.jsonl"; u mkdir "$R/--c--/s4.jsonl"
gen session "$R/--c--/s5.jsonl" 1
exact "file replaced by a directory"

# many files created and deleted: the source table shrinks again
N=${AM_CHURN_FILES:-20000}
nfiles() { "${RUN[@]}" "$C" status --json 2>/dev/null | jq '.ingest.files'; }
base=$(nfiles)
u python3 - "$R/--e--" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(os.path.join(d, "c%d.jsonl" % i), "w") as f:
        f.write('{"type":"session","version":3,"id":"x%d","timestamp":"2026-11-30T00:00:00Z","cwd":"/p"}\n' % i)
PY
seen_all() { [ "$(nfiles)" -ge $((base + N)) ]; }
wait_until 60 seen_all; ok $? "$N new files are in the source table ($(nfiles))"
u rm -rf "$R/--e--"
gone() { [ "$(nfiles)" -le "$base" ]; }
wait_until 60 gone; ok $? "$N files deleted: their sources are dropped from the table ($(nfiles) left, $base before)"
exact "after the churn"
check "daemon alive" kill -0 "$DPID"
stop_daemon; ok $? "daemon stops"
done_testing
