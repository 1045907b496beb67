#!/bin/bash
# Cline CLI 3.x through the real binaries: the realgen corpus Cline 3.0.65
# wrote itself as ~/.cline (the issue's figures), the project's fixtures
# with the manifests' totals and a sessions.db and hub event log repeating
# them beside the documents (counted once), and the live daemon: a session
# document rewritten in place by its hub, one write torn (half written, a
# pause, the rest), a kill -9 between two rewrites, a fork seeded with the
# source's messages.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
once() { "${RUN[@]}" "$D" --once 2>>"$T/once.err"; }
fresh() { rm -rf "$XDG_STATE_HOME/agentmeterd"; }
model_json() { "${RUN[@]}" "$C" report model --json 2>/dev/null; }
sums() { model_json | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens]'; }
GEN=$AM_SRCDIR/tests/lib/gen_cline.py

# ---- realgen: what Cline 3.0.65 wrote itself, as ~/.cline ----
RG=$AM_SAMPLES/realgen/cline-3.0.65/cline-home
if [ -d "$RG/data/sessions" ]; then
	cp -r "$RG" "$HOME/.cline"; chmod -R u+w "$HOME/.cline"
	out=$(once); rc=$?
	is "$rc" 0 "realgen: --once exits 0"
	diag "$out"
	is "$(sums)" "[8,31530,270,12800,784,45384]" "realgen: 8 calls, input 31,530, output 270, cache read 12,800, cache write 784"
	is "$(model_json | jq -c '.totals | [.cost_usd, .unpriced_events, .reasoning_tokens]')" "[0.052437,3,0]" \
		"realgen: Cline's own \$0.052437, 3 calls unpriced, reasoning not stored apart"
	is "$(model_json | jq -c '[.rows[] | [.model, .events, .cost_source, .unpriced_events]] | sort')" \
		'[["claude-sonnet-4-5",2,"vendor-reported",0],["fake-gpt",3,null,3],["gpt-4.1",3,"vendor-reported",0]]' \
		"realgen: the 5 priced calls are Cline's figures, the 3 fake-gpt calls unpriced"
	is "$("${RUN[@]}" "$C" report project --json 2>/dev/null | jq -c '[.rows[] | [(.key | sub(".*/"; "")), .events]] | sort')" \
		'[["alpha",6],["beta",2]]' "realgen: projects from the manifests' cwd"
	is "$("${RUN[@]}" "$C" report session --json 2>/dev/null | jq '.rows | length')" 5 \
		"realgen: 5 sessions with calls (the failed one has none)"
	out=$(once)
	check "realgen: a second run adds no rows" grep -q ' 0 rows added' <<<"$out"
	rm -rf "$HOME/.cline"; fresh
else
	skip "no realgen samples at $RG"
fi

# ---- the project's fixtures, with everything beside them that repeats them ----
E=$FIX/cline/expected.json
cp -r "$FIX/cline/data" "$T/data"
# the half-written document's writer is long gone
touch -d '1 hour ago' "$T"/data/sessions/*/*
# what Cline keeps beside the documents: sessions.db rows (the manifest as
# columns, totals in metadata_json) and the hub's event log of running totals
python3 - "$T/data" <<'PY'
import glob, json, os, sqlite3, sys
d = sys.argv[1]
os.makedirs(os.path.join(d, "db"), exist_ok=True)
s = sqlite3.connect(os.path.join(d, "db", "sessions.db"))
s.execute("pragma journal_mode=wal")
s.execute("create table sessions (session_id text primary key, status text, provider text, model text, cwd text, metadata_json text)")
h = sqlite3.connect(os.path.join(d, "db", "hub-events-hub-production.db"))
h.execute("create table hub_events (sequence integer primary key, event text, session_id text, envelope_json text, created_at integer)")
for m in sorted(glob.glob(os.path.join(d, "sessions", "*", "*.json"))):
    if m.endswith(".messages.json"):
        continue
    j = json.load(open(m))
    s.execute("insert into sessions values (?,?,?,?,?,?)", (j["session_id"], j["status"], j["provider"], j["model"], j["cwd"], json.dumps(j["metadata"])))
    for k in range(3):
        h.execute("insert into hub_events (event, session_id, envelope_json, created_at) values (?,?,?,?)",
                  ("session.updated", j["session_id"], json.dumps({"usage": j["metadata"]["usage"]}), k))
s.commit(); h.commit()
PY
out=$(CLINE_DATA_DIR=$T/data once); rc=$?
is "$rc" 0 "fixtures: --once exits 0"
is "$(sums)" "$(jq -c '.all | [.rows, .input, .output, .cache_read, .cache_write, .total]' "$E")" \
	"fixtures: totals equal expected.json (manifest totals, sessions.db and the event log not added)"
is "$(model_json | jq -c '.totals | [.cost_usd, .unpriced_events, .tool_calls]')" "$(jq -c '.all | [.cost_usd, .unpriced_rows, .calls]' "$E")" \
	"fixtures: Cline's cost, the table's, the unpriced, the tool calls"
check "fixtures: the half-written document counted malformed" grep -q "($(jq .all.malformed "$E") malformed" <<<"$out"
check "fixtures: the fork's copies already counted" grep -q "($(jq .all.fork_copies "$E") already counted" <<<"$out"
is "$("${RUN[@]}" "$C" report session --json 2>/dev/null | jq -c '[.rows[] | [.session, .events]] | sort')" \
	"$(jq -c '[.sessions | to_entries[] | select(.value.rows > 0) | [.key, .value.rows]] | sort' "$E")" \
	"fixtures: calls per session (the fork has its own call only)"
fresh

# ---- live: a session the hub rewrites in place under $CLINE_DIR ----
export CLINE_DIR=$T/cl
S=1800001000000_livea
SD=$CLINE_DIR/data/sessions/$S
doc() { python3 "$GEN" doc "$SD/$S.messages.json" "$S" /home/u/live "$@"; }
# the expected totals of the scripted conversation's first n calls (gen_cline.py live_messages)
want() { python3 -c "
n=$1
print('[%d,%d,%d,%d,0,%d]' % (n, sum(1000+10*i for i in range(n)) - 500*max(n-1,0), sum(10+i for i in range(n)),
      500*max(n-1,0), sum(1000+10*i for i in range(n)) + sum(10+i for i in range(n))))"; }
cost_is() { [ "$(model_json | jq -c '.totals.cost_usd')" = "$1" ]; }
expect() { # expect N DESCRIPTION
	local w; w=$(want "$1")
	if wait_until 10 holds '[ "$(sums)" = "$w" ]'; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $(sums), expected $w"; fi
}
start_daemon --reconcile-interval=3600; ok $? "daemon starts before ~/.cline exists"
mkdir -p "$SD"
python3 "$GEN" manifest "$SD/$S.json" "$S" /home/u/live 0
doc 0
doc 1
expect 1 "the first call of a new session"
is "$("${RUN[@]}" "$C" report project --json 2>/dev/null | jq -r '.rows[0].key')" /home/u/live "its project: the manifest's cwd"
ino=$(stat -c %i "$SD/$S.messages.json")
doc 2 --torn-pause 1.0
expect 2 "rewritten in place with one torn write: the second call, counted once"
if wait_until 10 cost_is 0.003; then ok 0 "  with its final values (\$0.001 + \$0.002)"; else ok 1 "  final values"; diag "cost $(model_json | jq -c .totals.cost_usd)"; fi
is "$(stat -c %i "$SD/$S.messages.json")" "$ino" "  (the same inode: written in place)"
is "$("${RUN[@]}" "$C" sources --json | jq ".sources[] | select(.path == \"$SD/$S.messages.json\") | .malformed")" 0 \
	"  the half-written version waited: not counted malformed"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
doc 3
start_daemon --reconcile-interval=3600; ok $? "restart after kill -9"
expect 3 "the rewrite made while it was down: nothing lost, nothing counted twice"
doc 4
expect 4 "one more step while it runs"
# a fork: a new session seeded with this one's messages, then its own call
F=1800002000000_forkx
python3 - "$SD/$S.messages.json" "$CLINE_DIR/data/sessions/$F" "$F" <<'PY'
import json, os, sys
src, fd, fid = sys.argv[1:4]
d = json.load(open(src))
d["sessionId"] = fid
d["origin"]["sessionId"] = fid
d["messages"].append({"id": "msg_F0000001", "role": "assistant", "ts": 1800002000500,
                      "content": [{"type": "text", "text": "fork"}],
                      "modelInfo": {"id": "claude-sonnet-4-5", "provider": "anthropic"},
                      "metrics": {"inputTokens": 70, "outputTokens": 7, "cacheReadTokens": 0, "cacheWriteTokens": 0, "cost": 0.5}})
os.makedirs(fd, exist_ok=True)
json.dump({"session_id": fid, "cwd": "/home/u/live", "metadata": {"fork": {"forkedFromSessionId": "x"}}}, open(os.path.join(fd, fid + ".json"), "w"))
open(os.path.join(fd, fid + ".messages.json"), "w").write(json.dumps(d, indent=2) + "\n")
PY
w4=$(want 4)
fork_sums() { [ "$(sums)" = "$(jq -c '.[0] += 1 | .[1] += 70 | .[2] += 7 | .[5] += 77' <<<"$w4")" ]; }
if wait_until 10 fork_sums; then ok 0 "a fork: its own call added, the copied four not again"; else ok 1 "fork"; diag "got $(sums)"; fi
is "$("${RUN[@]}" "$C" report session --json 2>/dev/null | jq -c '[.rows[] | [.session, .events]] | sort')" \
	"[[\"$S\",4],[\"$F\",1]]" "  the copies stay with the session that made them"
is "$("${RUN[@]}" "$C" status --json | jq -r '.harnesses[] | select(.id=="cline") | [.capabilities.tokens, .capabilities.cost, .capabilities.activity, .capabilities.reasoning, .roots[0].env_var] | join(",")')" \
	"exact,vendor-reported,exact,none,CLINE_DIR" "status: capabilities, and the root CLINE_DIR moved"
stop_daemon
unset CLINE_DIR
check "the daemon lists Cline's variables for install" sh -c "\"$D\" --list-variables | cut -f1 | tr '\n' ' ' | grep -q 'CLINE_SESSION_DATA_DIR CLINE_DATA_DIR CLINE_DIR'"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.err"; ok $? "no sanitizer reports"
done_testing
