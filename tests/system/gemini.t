#!/bin/bash
# Gemini CLI through the real binaries: the realgen 0.61.0 corpus's truth
# (15 calls, thoughts in output, two requests priced whole at the long
# card), the fixture home, and live: a 0.33 .json document rewritten in
# place while the daemon runs (one write torn: half, a pause, the rest),
# the same message id appended twice, $set without tokens, a second file of
# one session, and kill -9 between two appends.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GX=$FIX/gemini
G=$HOME/.gemini
once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
report() { "$C" report model --json 2>/dev/null; }
tok() { # totals as [events, input, output, reasoning, cache_read, cache_write, tool_calls]
	report | jq -c '.totals | [.events, .input_tokens, .output_tokens, .reasoning_tokens, .cache_read_tokens, .cache_write_tokens, .tool_calls]'
}
want_case() { # the fixture case's totals in tok's shape
	jq -c ".cases[\"$1\"] | [.rows, .input, .output, .reasoning, .cache_read, .cache_write, .calls]" "$GX/expected.json"
}
fresh() { stop_daemon; rm -rf "$XDG_STATE_HOME/agentmeterd" "$G"; mkdir -p "$G"; }

# 1. the realgen corpus, written by gemini 0.61.0 itself, as ~/.gemini
RG=$AM_SAMPLES/realgen/gemini-cli-0.61.0/gemini-home
if [ -d "$RG/tmp" ]; then
	fresh
	cp -r "$RG/." "$G/"
	once >/dev/null
	r=$(report)
	is "$(tok)" "[15,489871,2195,33,1290752,0,4]" \
		"realgen: 15 calls, input 489,871, output 2,195 (33 thoughts), cache read 1,290,752, 4 tool calls"
	is "$(jq -c '[.rows[] | [.model, .events, .cost_usd]] | sort' <<<"$r")" \
		'[["gemini-2.5-flash",2,0.004885],["gemini-2.5-pro",12,1.42054],["gemini-3.1-pro-preview",1,0.023798]]' \
		"realgen: 12 / 2 / 1 by model, each priced at list"
	# the two delta calls above 200K prompt tokens, whole at the long card
	# (2.5 / 15 / 0.25): at the base card 2.5-pro would cost 0.760349
	is "$(jq -r '.totals.cost_usd, .totals.unpriced_events' <<<"$r" | tr '\n' ' ')" "1.449223 0 " \
		"realgen: \$1.449223 in all, nothing unpriced"
	is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | [(.project | sub(".*/"; "")), .events]] | sort')" \
		'[["alpha",6],["beta",2],["delta",4],["epsilon",1],["gamma",2]]' "realgen: sessions by project (.project_root)"
else
	skip "realgen gemini samples not present"; skip "models"; skip "cost"; skip "projects"
fi

# 2. the fixture home: every rule at once; a second run reads nothing
fresh
cp -r "$GX/home/." "$G/"
out=$(once)
is "$(tok)" "$(want_case home)" "fixture home: totals as expected.json says"
is "$(report | jq -r .totals.cost_usd)" "$(jq -r '.cases.home.cost_usd_computed' "$GX/expected.json")" \
	"fixture home: priced at list, the 250K request at the long card"
is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | [.project, .events]] | sort')" \
	'[["/work/alpha",5],["/work/legacy",4]]' "fixture home: the sub-agent's call in its parent's session; the hash folder's project"
out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds nothing"
is "$(field 'bytes read' "$out")" 0 "... and reads nothing"

# 3. a 0.33 document rewritten in place while the daemon runs
cat >"$T/gemdoc.py" <<'PY'
# gemdoc.py PATH N [torn]: the document with N messages (user and gemini in
# turn), written in place as the CLI does (truncate, write; same inode);
# torn: half of it, a pause, then the rest
import json, sys, time
path, n = sys.argv[1], int(sys.argv[2])
msgs = []
for i in range(n):
    if i % 2 == 0:
        msgs.append({"id": "u-%04d" % i, "timestamp": "2026-10-01T09:00:00.000Z", "type": "user",
                     "content": [{"text": "question %d" % i}]})
    else:
        out = 10 + i % 7
        msgs.append({"id": "g-%04d" % i, "timestamp": "2026-10-01T09:%02d:00.000Z" % (i % 60), "type": "gemini",
                     "content": "answer", "thoughts": [],
                     "tokens": {"input": 1000 + i, "output": out, "cached": 500, "thoughts": i % 3, "tool": 0,
                                "total": 1000 + i + out + i % 3},
                     "model": "gemini-2.5-pro"})
doc = json.dumps({"sessionId": "cafe0033-0000-4000-8000-000000000033", "projectHash": "0" * 64,
                  "startTime": "2026-10-01T09:00:00.000Z", "lastUpdated": "2026-10-01T09:%02d:30.000Z" % (n % 60),
                  "messages": msgs, "kind": "main"}, indent=2).encode()
with open(path, "r+b" if len(sys.argv) > 3 else "wb") as f:
    f.truncate(0)
    if len(sys.argv) > 3:
        f.write(doc[: len(doc) // 2])
        f.flush()
        time.sleep(1.0)
        f.write(doc[len(doc) // 2 :])
    else:
        f.write(doc)
PY
want_doc() { # the totals of N messages, in tok's shape
	python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
g = [i for i in range(n) if i % 2]
print("[%d,%d,%d,%d,%d,0,0]" % (len(g), sum(500 + i for i in g), sum(10 + i % 7 + i % 3 for i in g),
                                 sum(i % 3 for i in g), 500 * len(g)))
PY
}
fresh
DOC=$G/tmp/0000000000000000000000000000000000000000000000000000000000000000/chats/session-2026-10-01T09-00-cafe0033.json
mkdir -p "$(dirname "$DOC")"
python3 "$T/gemdoc.py" "$DOC" 8
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$(tok)" = "$(want_doc 8)" ]'
ok $? "a document: its 4 calls counted"
ino=$(stat -c %i "$DOC")
for n in 9 10 11 12; do python3 "$T/gemdoc.py" "$DOC" $n; done
wait_until 20 holds '[ "$(tok)" = "$(want_doc 12)" ]'
ok $? "rewritten in place after each message: every call once ($(tok))"
python3 "$T/gemdoc.py" "$DOC" 16 torn &
TORN=$!
sleep 0.5
is "$(tok)" "$(want_doc 12)" "while a rewrite is torn (half written): nothing counted from it"
wait "$TORN"
is "$(stat -c %i "$DOC")" "$ino" "the same inode throughout"
wait_until 20 holds '[ "$(tok)" = "$(want_doc 16)" ]'
ok $? "the finished write: the new calls once ($(tok))"
src=$("$C" sources --json | jq -c --arg p "$DOC" '.sources[] | select(.path==$p) | [.kind, .malformed]')
is "$src" '["document",0]' "the torn version was waited for, not counted malformed"

# 4. JSONL, live: the same id twice, $set without tokens, a second file, kill -9
J=$G/tmp/alpha/chats/session-2026-11-30T10-00-aaaa0001.jsonl
mkdir -p "$(dirname "$J")"
printf '%s\n' "/work/alpha" >"$G/tmp/alpha/.project_root"
L=$GX/home/tmp/alpha/chats/session-2026-11-30T10-00-aaaa0001.jsonl
base=$(want_doc 16)
plus() { # plus A B: element-wise sum of two totals
	jq -nc --argjson a "$1" --argjson b "$2" '[$a, $b] | transpose | map(add)'
}
head -n 8 "$L" >"$J"   # header, $set, user, g1, $set, user, g2 without its tool call
wait_until 20 holds '[ "$(tok)" = "$(plus "$base" "[2,15140,102,12,8960,0,0]")" ]'
ok $? "live JSONL: two calls ($(tok))"
sed -n '9,10p' "$L" >>"$J"   # $set, the same g2 id again with its toolCalls
wait_until 20 holds '[ "$(tok)" = "$(plus "$base" "[2,15140,102,12,8960,0,1]")" ]'
ok $? "the same id appended again: still two calls, its tool call added"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
sed -n '11,18p' "$L" >>"$J"   # user, g3, info, $rewindTo, header again, $set messages, $set sessionId
tail -n 1 "$L" >>"$J"         # g5
cp "$GX/home/tmp/alpha/chats/session-2026-11-30T10-05-aaaa0001.jsonl" "$G/tmp/alpha/chats/"
out=$(once)
want=$(plus "$base" "$(want_case alpha)")
is "$(tok)" "$want" "after kill -9 and more appends: each call once ($want)"
start_daemon; ok $? "daemon up again"
printf '%s\n' '{"$set":{"messages":[{"id":"9f1c0001-0000-4000-8000-000000000001","type":"gemini","tokens":{"input":99999,"output":1}}]}}' >>"$J"
printf '%s\n' '{"$set":{"lastUpdated":"2026-11-30T10:06:00.000Z"}}' >>"$J"
printf '%s\n' '{"id":"9f1c0099-0000-4000-8000-000000000099","timestamp":"2026-11-30T10:06:01.000Z","type":"gemini","content":"x","tokens":{"input":100,"output":1,"cached":0,"thoughts":0,"tool":0,"total":101},"model":"gemini-2.5-flash"}' >>"$J"
wait_until 20 holds '[ "$(tok)" = "$(plus "$want" "[1,100,1,0,0,0,0]")" ]'
ok $? "\$set lists (even with tokens) are never a call; the message after them is ($(tok))"
is "$("$C" report session --json 2>/dev/null | jq -c '[.rows[] | select(.project=="/work/alpha") | .events]')" "[5]" \
	"two files of one session: one session, its calls once"
stop_daemon; ok $? "daemon stops cleanly"
done_testing
