#!/bin/bash
# agentmeterctl statusline as Claude Code runs it: JSON on stdin, one line
# out. This session's and today's cost from the ledger, the active block,
# rate limits handed to the daemon (status shows them); the fallback line
# when stdin is not JSON, when stdin never closes, when the daemon is
# stopped or frozen: always an answer, never a hang.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
S=$HOME/.pi/agent/sessions
mkdir -p "$S/--w-app--"
# a pi session whose calls are 2 h and 1 h old (today's cost, an active block)
python3 - "$S/--w-app--/now.jsonl" "$AM_SRCDIR/tests/lib/gen_pi.py" >"$T/gen.json" <<'PY'
import importlib.util, json, random, sys, time
spec = importlib.util.spec_from_file_location("gen", sys.argv[2]); g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
now = int(time.time() * 1000)
# keep both calls on today's date (UTC and local): start at most 2 h back, not before midnight
lt = time.localtime(now / 1000); midnight = int(time.mktime(lt[:3] + (0, 0, 0) + lt[6:9]) * 1000)
start = max(now - 2 * 3600 * 1000, midnight + 60000, (now // 86400000) * 86400000 + 60000)
rng, tot = random.Random(7), g.Totals()
with open(sys.argv[1], "w") as f:
    f.write(json.dumps(g.header("sess-now", "/w/app", start), separators=(",", ":")) + "\n")
    g.write_calls(f, rng, 2, tot, start, (0, 1), seq0=1)
json.dump(tot.t, sys.stdout)
PY
start_daemon --reconcile-interval=3600; ok $? "daemon starts"
check "the session is ingested" wait_until 10 holds '[ "$(totals events)" = 2 ]'
want_cost=$(jq -r '.cost_nano / 1e9 | . * 100 | round / 100' "$T/gen.json")
input='{"session_id":"sess-now","model":{"id":"x","display_name":"Opus 4.5"},"cwd":"/w/app","rate_limits":{"five_hour":{"used_percentage":23.5,"resets_at":4102444800},"seven_day":{"used_percentage":41.2,"resets_at":4102444800}}}'
line=$(printf '%s' "$input" | "$C" statusline --harness pi)
diag "line: $line"
check "starts with the model" grep -q '^Opus 4.5 | ' <<<"$line"
check "this session's cost from the ledger" grep -q "session \$$(printf '%.2f' "$want_cost")" <<<"$line"
check "today's cost from the ledger" grep -q "today \$$(printf '%.2f' "$want_cost")" <<<"$line"
check "the active block with its burn rate and time left" grep -qE 'block \$[0-9.]+ \(\$[0-9.]+/h, [0-9]+h [0-9]+m left\)' <<<"$line"
check "the real 5-hour and weekly limits Claude Code sent" grep -q '5h 24% (resets in .*) | 7d 41%' <<<"$line"
j=$(printf '%s' "$input" | "$C" statusline --harness pi --json)
is "$(jq -r .daemon <<<"$j")" true "--json: answered by the daemon"
is "$(jq -r '.block.active' <<<"$j")" true "--json: the block is active"
is "$(jq -r '.session_cost_usd' <<<"$j")" "$("$C" report session --json | jq -r '.rows[] | select(.session=="sess-now") | .cost_usd')" \
	"--json: session cost = the session report's"
is "$("$C" status --json | jq -r '.rate_limits.pi.five_hour.used_percentage')" 23.5 \
	"the daemon keeps the rate limits it was handed, per harness (status shows them)"
is "$("$C" report blocks --json | jq -r '.rate_limits.pi.seven_day.used_percentage')" 41.2 \
	"report blocks carries the real windows the daemon was handed"
check "... and its table names them" sh -c "'$C' report blocks | grep -q 'pi reported its real 5-hour window: 23.5% used'"
is "$(echo '{}' | "$C" statusline --harness 'p\x1bi' --json | jq -r .fallback)" "agentmeterd refused the request" \
	"a harness id outside [a-z0-9_-] is refused by the daemon"
is "$(printf '%s' "$input" | "$C" statusline --harness pi --format '[{model}] {today} {limit_7d} {nope}')" \
	"[Opus 4.5] \$$(printf '%.2f' "$want_cost") 41% (resets in $(printf '%s' "$input" | "$C" statusline --format '{limit_7d}' | sed 's/.*resets in //; s/)$//')) {nope}" \
	"--format: named fields, unknown ones left as written"
# what Claude Code hands on from a model or a directory name: ESC, a CSI in
# C1 (U+009B), a right-to-left override (U+202E), invalid UTF-8
printf '{"model":{"display_name":"A\\u001b[2JB\\u009b1mC"},"cwd":"/w/\\u202egpj.exe","workspace":{"project_dir":"/p\xff\xc3("}}' >"$T/hostile.json"
is "$("$C" statusline --harness pi --format '{model}|{cwd}|{project}' <"$T/hostile.json")" \
	'A\x1b[2JB\xc2\x9b1mC|/w/\xe2\x80\xaegpj.exe|/p\xff\xc3(' \
	"controls (C0 and C1), bidi overrides and invalid UTF-8 from the input are escaped"
is "$(kill -STOP "$DPID"; "$C" statusline <"$T/hostile.json"; kill -CONT "$DPID")" \
	'A\x1b[2JB\xc2\x9b1mC | agentmeter: agentmeterd is busy' "... in the fallback line too"

# not JSON, nothing, a pipe that never closes: the fallback, at once
is "$(echo 'this is not json' | "$C" statusline)" "agentmeter: status input is not JSON" "stdin not JSON: the fallback line"
is "$(printf '\xff\xfe{' | "$C" statusline; echo "rc=$?")" "$(printf 'agentmeter: status input is not JSON\nrc=0')" "binary garbage: fallback, exit 0"
out=$( { sleep 5; echo '{}'; } | timeout 3 "$C" statusline; echo "rc=$?")
is "$out" "$(printf 'agentmeter: no status input\nrc=0')" "stdin that stays open: the fallback line, no hang"

# a frozen daemon (accepts, never answers) and a stopped one
kill -STOP "$DPID"
out=$(printf '%s' "$input" | timeout 3 "$C" statusline; echo "rc=$?")
kill -CONT "$DPID"
is "$out" "$(printf 'Opus 4.5 | agentmeter: agentmeterd is busy\nrc=0')" "a frozen daemon: the fallback line within the bound"
# ... whose queue of connections is full as well: connect(2) itself waits
kill -STOP "$DPID"
python3 - "$XDG_RUNTIME_DIR/agentmeterd/control.sock" >"$T/held" <<'PY' &
import socket, sys, time
held = []
while len(held) < 1000:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:
        print("full", len(held), flush=True)  # the listener's queue takes no more
        break
    held.append(s)
time.sleep(60)
PY
FILLPID=$!
check "the frozen daemon's queue of connections is full" wait_until 5 grep -q '^full' "$T/held"
t0=$(date +%s%N)
out=$(printf '%s' "$input" | timeout 10 "$C" statusline; echo "rc=$?")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$FILLPID"; wait "$FILLPID" 2>/dev/null
kill -CONT "$DPID"
is "$out" "$(printf 'Opus 4.5 | agentmeter: agentmeterd is busy\nrc=0')" "a frozen daemon with a full queue: the fallback line"
check "... within 2 s, connect included (took $ms ms)" test "$ms" -lt 2000
stop_daemon
out=$(printf '%s' "$input" | timeout 3 "$C" statusline; echo "rc=$?")
is "$out" "$(printf 'Opus 4.5 | agentmeter: agentmeterd is not running\nrc=0')" "no daemon: the fallback line"
is "$(printf '%s' "$input" | "$C" statusline --json | jq -c '[.daemon, .fallback, .rate_limits.five_hour.used_percentage]')" \
	'[false,"agentmeterd is not running",23.5]' "--json fallback: says why, still shows the limits it was given"
done_testing
