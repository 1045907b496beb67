#!/bin/bash
# Compressed sources that hurt (issue 27, items 1 and 3): a Codex rollout
# .zst that decodes to tens of MB and ends in a cut frame is decoded once,
# reported once, and not decoded again by later reconciles until it changes;
# an OpenClaw cold file and a cold blob holding one 60 MiB record of small
# numbers (a few KB compressed) cost a bounded amount of memory: the record
# is skipped as over-long and counted, the calls beside it counted.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
command -v zstd >/dev/null || skip_all "no zstd"

# ---- a cut .zst, decoded once ----------------------------------------------
DAY=$HOME/.codex/sessions/2026/11/30
mkdir -p "$DAY"
cut=$DAY/rollout-2026-11-30T09-00-00-0000000c-0000-7000-8000-0000000000ct.jsonl.zst
python3 - "$T/big.jsonl" <<'PY'
import json, sys
line = json.dumps({"timestamp": "2026-11-30T09:00:01.000Z", "type": "event_msg",
                   "payload": {"type": "agent_message", "message": "x" * 400}}) + "\n"
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"timestamp": "2026-11-30T09:00:00.000Z", "type": "session_meta",
                        "payload": {"id": "0000000c-0000-7000-8000-0000000000ct", "cwd": "/w"}}) + "\n")
    for _ in range((32 << 20) // len(line)):
        f.write(line)
PY
zstd -q -1 -c "$T/big.jsonl" > "$T/big.zst"
size=$(stat -c %s "$T/big.zst")
head -c $((size - 64)) "$T/big.zst" > "$cut"
start_daemon --reconcile-interval=1; ok $? "daemon up, reconciling every second"
failed() { grep -q "rollout-.*ct.jsonl.zst: cannot read source.*Bad message" "$T/daemon.log"; }
check "the cut stream is reported" wait_until 30 failed
decoded_of() { "$C" sources --json | jq -r --arg p "$cut" '.sources[] | select(.path == $p) | .decoded_bytes | numbers'; }
b1=$(decoded_of)
ok $(( ${b1:-0} > 30000000 ? 0 : 1 )) "it was decoded once: ${b1:-no} bytes decoded"
sleep 3.5 # three reconciles
b2=$(decoded_of)
is "$b2" "$b1" "three reconciles later it was not decoded again"
is "$(grep -c 'ct.jsonl.zst: cannot read source' "$T/daemon.log")" 1 "... and reported once"
check "answers meanwhile" "$C" status
commit_of() { "$C" sources --json | jq -r --arg p "$cut" '.sources[] | select(.path == $p) | .last_commit'; }
c1=$(commit_of)
sleep 1.1
touch "$cut"
check "touched: decoded again (its checkpoint written anew)" wait_until 15 holds '[ "$(commit_of)" != "$c1" ]'
check "... still reported as not decoding" holds '"$C" sources --json | jq -e --arg p "$cut" ".sources[] | select(.path == \$p) | .error != null" >/dev/null'
stop_daemon

# ---- a 60 MiB record of small numbers in a cold file and a cold blob ---------
rm -rf "$HOME/.codex" "$XDG_STATE_HOME/agentmeterd"
A=$HOME/.openclaw/agents/main
mkdir -p "$A/sessions/cold" "$A/agent"
python3 - "$T/cold.jsonl" <<'PY'
import json, sys
hdr = {"type": "session", "version": 3, "id": "cold-1", "timestamp": "2026-11-30T10:00:00.000Z", "cwd": "/w"}
def call(i):
    return {"type": "message", "id": "%08x" % i, "timestamp": "2026-11-30T10:00:0%d.000Z" % i,
            "message": {"role": "assistant", "content": [], "provider": "p", "model": "m",
                        "usage": {"input": 100 + i, "output": 1, "cost": {"total": 0.001}},
                        "timestamp": 1796000000000 + i}}
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"kind": "header", "version": 1}) + "\n")
    f.write(json.dumps({"kind": "event", "row": {"seq": 0, "event_json": json.dumps(hdr)}}) + "\n")
    f.write(json.dumps({"kind": "event", "row": {"seq": 1, "event_json": json.dumps(call(1))}}) + "\n")
    # one record of 60 MiB of small numbers: a tree of it costs gigabytes
    f.write('{"kind":"index","row":{"seq":2,"v":[')
    chunk = "0," * (1 << 20)
    for _ in range(30):
        f.write(chunk)
    f.write('0]}}\n')
    f.write(json.dumps({"kind": "event", "row": {"seq": 3, "event_json": json.dumps(call(2))}}) + "\n")
PY
zstd -q -19 -c "$T/cold.jsonl" > "$A/sessions/cold/$(printf '%064d' 7).jsonl.zst"
diag "cold file: $(stat -c %s "$A/sessions/cold/$(printf '%064d' 7).jsonl.zst") bytes compressed, $(stat -c %s "$T/cold.jsonl") decoded"
/usr/bin/time -f '%M' -o "$T/rss" "$D" --once >"$T/once.out" 2>"$T/once.err"; rc=$?
is "$rc" 0 "--once over the cold file"
rss=$(tail -n 1 "$T/rss")
diag "peak RSS: $rss KB"
ok $(( rss < 200000 ? 0 : 1 )) "peak memory stays bounded ($rss KB; a tree of the record took 2.3 GB)"
check "the record was skipped as over-long" grep -q "1 over-long skipped" "$T/once.out"
is "$(totals events)" 2 "the calls beside it are counted"

# the same records as a cold-storage blob inside the database
rm -rf "$XDG_STATE_HOME/agentmeterd" "$A/sessions/cold"
DB=$A/agent/openclaw-agent.sqlite
python3 "$AM_SRCDIR/tests/system/openclaw-archives.py" db "$DB" >/dev/null
python3 - "$DB" "$T/cold.jsonl" <<'PY'
import hashlib, sqlite3, subprocess, sys
raw = open(sys.argv[2], "rb").read()
blob = subprocess.run(["zstd", "-q", "-c", "-19"], input=raw, stdout=subprocess.PIPE, check=True).stdout
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("INSERT INTO session_transcript_cold_archives(session_id, generation, archive_name, archive_sha256, "
          "event_count, raw_bytes, archive_bytes, last_seq, archived_at, storage, archive_blob) "
          "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
          ("cold-1", "g1", "cold-1.jsonl.zst", hashlib.sha256(blob).hexdigest(), 4, len(raw), len(blob), 3,
           1796000000000, "sqlite", blob))
c.close()
PY
/usr/bin/time -f '%M' -o "$T/rss" "$D" --once >"$T/once.out" 2>"$T/once.err"; rc=$?
is "$rc" 0 "--once over the database with the cold blob"
rss=$(tail -n 1 "$T/rss")
diag "peak RSS: $rss KB"
ok $(( rss < 200000 ? 0 : 1 )) "peak memory stays bounded for the blob too ($rss KB)"
is "$(totals events)" 2 "the calls beside the record are counted"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.err"; ok $? "no sanitizer reports"
done_testing
