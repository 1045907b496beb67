#!/bin/bash
# The first scan's read pool while the files change under it (issue 52's
# surfaces): 20,000 tiny pi sessions, and while the daemon's workers read
# them, 1,000 each appended to, renamed, truncated and rewritten (their
# call again and one more), and deleted. When the daemon is idle, every
# session that is still there has exactly what a serial --once of the
# final tree finds in it (nothing lost, nothing twice), a deleted one at
# most its one call, and the daemon answers.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
S=$HOME/.pi/agent/sessions
N=${AM_CHURN_FILES:-20000}
K=$((N / 20))
tree() { # tree ROOT: N sessions of one call each
	python3 - "$1" "$N" <<'PY'
import json, os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "--p%d--" % (i % 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "s%05d.jsonl" % i), "w") as f:
        f.write('{"type":"session","version":3,"id":"sess-%05d","timestamp":"2026-11-02T10:00:00.000Z","cwd":"/w/p%d"}\n' % (i, i % 50))
        f.write('{"type":"message","id":"m%05da","timestamp":"2026-11-02T10:00:01.000Z","message":{"role":"assistant","provider":"p","model":"m","responseId":"r-%05d-a","usage":{"input":%d,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"total":0.001}}}}\n' % (i, i, 10 + i, 11 + i))
PY
}
cached "scan-churn-$N" "$S" tree
ok $? "$N sessions of one call each"

# the churn, as fast as Python goes, from the moment the daemon starts
cat >"$T/churn.py" <<'PY'
import os, random, sys, time
root, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def path(i): return os.path.join(root, "--p%d--" % (i % 50), "s%05d.jsonl" % i)
def call(i, tag, t):
    return ('{"type":"message","id":"m%05d%s","timestamp":"2026-11-02T10:00:%02d.000Z","message":{"role":"assistant",'
            '"provider":"p","model":"m","responseId":"r-%05d-%s","usage":{"input":%d,"output":2,"cacheRead":0,'
            '"cacheWrite":0,"totalTokens":%d,"cost":{"total":0.002}}}}\n' % (i, tag, t, i, tag, 100 + i, 102 + i))
ids = random.Random(5).sample(range(n), 4 * k)
ops = [("append", i) for i in ids[:k]] + [("rename", i) for i in ids[k:2 * k]] + \
      [("rewrite", i) for i in ids[2 * k:3 * k]] + [("delete", i) for i in ids[3 * k:]]
random.Random(6).shuffle(ops)
os.makedirs(os.path.join(root, "--moved--"), exist_ok=True)
with open(sys.argv[4], "w") as log:
    for op, i in ops:
        p = path(i)
        if op == "append":
            with open(p, "a") as f: f.write(call(i, "b", 2))
        elif op == "rename":
            os.rename(p, os.path.join(root, "--moved--", "s%05d.jsonl" % i))
        elif op == "rewrite":   # the same inode, truncated, then the call again and one more
            with open(p, "r") as f: text = f.read()
            with open(p, "w") as f: f.write(text + call(i, "c", 3))
        else:
            os.unlink(p)
        log.write("%s sess-%05d\n" % (op, i)); log.flush()
        time.sleep(0.0005)      # ~3 s in all: the daemon starts in the middle of it
PY
python3 "$T/churn.py" "$S" "$N" "$K" "$T/ops.log" &
CP=$!
sleep 0.3
start_daemon; ok $? "daemon up while the files change"
at_start=$(wc -l <"$T/ops.log")
check "the daemon finishes its first scan" wait_until 60 holds \
	'[ "$("$C" status --json 2>/dev/null | jq -r .ingest.initial_scan_done)" = true ]'
at_scan=$(wc -l <"$T/ops.log")
wait "$CP"; ok $? "the churn ran ($(wc -l <"$T/ops.log") operations)"
check "files changed while the first scan ran ($at_start operations when the daemon answered, $at_scan when its scan was done)" \
	test "$at_scan" -gt "$at_start"

# the reference: a serial ingest (one read thread) of the final tree
mkdir -p "$T/ref"
"$D" --once --read-threads 1 --state-dir "$T/ref" >/dev/null 2>&1; ok $? "a serial --once of the final tree"
sessions() { # sessions [CTL ARGS]: "id events input output" per session, sorted
	"$C" "$@" report session --all --json 2>/dev/null |
		jq -r '.rows[] | "\(.session) \(.events) \(.input_tokens) \(.output_tokens)"' | sort
}
sessions --socket "$T/none.sock" --state-dir "$T/ref" >"$T/ref.txt"
deleted() { awk '$1 == "delete" {print $2}' "$T/ops.log" | sort; }
live_kept() { sessions | grep -v -F -f <(deleted | sed 's/$/ /'); }
check "every session still there equals the serial ingest's" wait_until 60 holds \
	'[ "$(live_kept)" = "$(cat "$T/ref.txt")" ]'
# the daemon idle: one report of its 20,000 sessions for the checks below
# (each took 2-3 s under ASan)
sessions >"$T/live.txt"
live_now() { grep -v -F -f <(deleted | sed 's/$/ /') "$T/live.txt"; }
[ "$(live_now)" = "$(cat "$T/ref.txt")" ] || diff <(live_now) "$T/ref.txt" | head -n 10 | sed 's/^/#   /'
is "$(wc -l <"$T/ref.txt")" "$((N - K))" "the serial ingest has every session but the deleted ones ($((N - K)))"
# a deleted session: its one call if it was read in time, never more
bad=$(grep -F -f <(deleted | sed 's/$/ /') "$T/live.txt" | awk '$2 != 1' | wc -l)
is "$bad" 0 "no deleted session counted with more than its one call"
appended=$(awk '$1 == "append" || $1 == "rewrite" {print $2}' "$T/ops.log" | sort)
is "$(grep -F -f <(sed 's/$/ /' <<<"$appended") "$T/live.txt" | awk '$2 == 2' | wc -l)" "$((2 * K))" \
	"each appended or rewritten session: both its calls"
st=$("$C" status --json)
is "$(jq -c '.harnesses[] | select(.id == "pi") | [.malformed, .oversized, .lines > 0]' <<<"$st")" "[0,0,true]" \
	"no line read as malformed or over-long (a truncation or a rename seen mid-read)"
check "the daemon still answers" sh -c "'$C' version >/dev/null"
stop_daemon; ok $? "daemon stops"
done_testing
