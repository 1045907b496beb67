#!/bin/bash
# Numbers and text from files (issue 13.5): rows with a cost, token count or
# time out of bounds are refused and counted in status (never wrapping or
# subtracting from a total); sums saturate instead of wrapping; control
# characters in names reach the terminal only as visible escapes.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
S=$HOME/.pi/agent/sessions
mkdir -p "$S/--n--"
# line KIND...: a pi session with one assistant message per argument
python3 - "$S/--n--/n.jsonl" <<'PY'
import json, sys
out = [{"type": "session", "version": 3, "id": "n-1", "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": "/home/u/\u001b[2Jproj\u0007"}]
def msg(i, usage, ts="2026-11-30T10:%02d:00.000Z", ms=None, model="m-ok"):
    t = ts % (i % 60) if "%" in ts else ts
    return {"type": "message", "id": "x%d" % i, "parentId": None, "timestamp": t,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "r"}],
                        "api": "a", "provider": "p", "model": model, "usage": usage,
                        "stopReason": "stop", "timestamp": ms if ms is not None else 1796032800000 + i * 60000}}
def u(inp, outp, cost):
    return {"input": inp, "output": outp, "cacheRead": 0, "cacheWrite": 0, "totalTokens": inp + outp if isinstance(inp, int) and isinstance(outp, int) and inp + outp < 2**62 else 0, "cost": {"total": cost}}
out.append(msg(1, u(100, 10, 0.5)))                         # good
out.append(msg(2, u(100, 10, 1e10)))                        # cost: $10 billion
out.append(msg(3, u(100, 10, -5)))                          # cost: negative
out.append(msg(4, u(9000000000000000000, 10, 0.1)))         # tokens: 9e18
out.append(msg(5, u(2**41, 10, 0.1)))                       # tokens: just past 2^40
out.append(msg(6, u(10, 1e30, 0.1)))                        # tokens: beyond int64
out.append(msg(7, u(-50, 10, 0.1)))                         # tokens: negative
out.append(msg(8, u(100, 10, 0.1), ts="1969-12-31T23:59:59.000Z", ms=-1000))   # time: 1969
out.append(msg(9, u(200, 20, 1.25), model="m\u001b]0;pwned\u0007\u001b[2J"))  # good, hostile model
with open(sys.argv[1], "w") as f:
    for o in out:
        f.write(json.dumps(o) + "\n")
PY
"$D" --once >"$T/once.out" 2>&1; ok $? "--once reads the file"
R=$("$C" report daily --json 2>/dev/null)
is "$(jq -c '.totals | [.events, .input_tokens, .output_tokens, .cost_usd]' <<<"$R")" "[2,300,30,1.75]" \
	"only the two rows in bounds are counted: nothing wrapped, nothing subtracted"
start_daemon; ok $? "daemon up"
st=$("$C" status --json 2>/dev/null)
is "$(jq -c '.ledger.rows_refused' <<<"$st")" '{"total":7,"tokens":4,"cost":2,"time":1}' \
	"status --json counts the refused rows by reason"
check "status says so in words" grep -q "^refused rows  7 (numbers out of bounds: tokens 4, cost 2, time 1)" <<<"$("$C" status 2>/dev/null)"
stop_daemon
"$D" --once >/dev/null 2>&1
start_daemon
is "$("$C" status --json 2>/dev/null | jq .ledger.rows_refused.total)" 7 "a second run reads nothing again and counts nothing twice"

# the live daemon refuses and counts the same way, appended line by line
python3 - "$S/--n--/n.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "a") as f:
    for i, cost in enumerate([1e10, -0.000001, 2.0]):
        f.write(json.dumps({"type": "message", "id": "live%d" % i, "parentId": None, "timestamp": "2026-11-30T11:00:00.000Z",
            "message": {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m-ok",
                        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"total": cost}},
                        "stopReason": "stop", "timestamp": 1796036400000 + i}}) + "\n")
PY
check "appended: one good row counted, two refused" wait_until 10 sh -c "'$C' status --json | jq -e '.ledger.rows_refused.cost == 4' >/dev/null && '$C' report daily --json | jq -e '.totals.events == 3 and .totals.cost_usd == 3.75' >/dev/null"
stop_daemon; ok $? "clean stop"

# sums saturate: 9,300 rows of the largest cost allowed ($1,000,000) add up
# past int64 nano-USD; the total stays at its ceiling, never negative
python3 - "$S/--big--/big.jsonl" <<'PY'
import json, os, sys
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": "big", "timestamp": "2026-11-29T10:00:00.000Z", "cwd": "/big"}) + "\n")
    for i in range(9300):
        f.write(json.dumps({"type": "message", "id": "b%d" % i, "parentId": None, "timestamp": "2026-11-29T10:00:00.000Z",
            "message": {"role": "assistant", "content": [], "api": "a", "provider": "p", "model": "m-big",
                        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"total": 1000000}},
                        "stopReason": "stop", "timestamp": 1795946400000 + i}}) + "\n")
PY
"$D" --once >/dev/null 2>&1
big=$("$C" report model --json 2>/dev/null | jq '.rows[] | select(.model == "m-big") | .cost_usd')
jqt() { jq -e -n "$1" >/dev/null; }
check "9,300 x \$1,000,000: the sum saturates near \$9.22e9 (got $big), not negative" \
	jqt "$big > 9.2e9 and $big < 9.3e9"
tot=$("$C" report daily --json 2>/dev/null | jq '.totals.cost_usd')
check "the grand total saturates too (got $tot)" jqt "$tot > 9.2e9"

# text: control characters in model and project names, and in a file name
touch "$S/--n--/evil"$'\e'"]0;x"$'\a'".jsonl"
start_daemon; ok $? "daemon up"
for v in "report model" "report session" "report model --csv" "report session --csv" "sources" "status"; do
	out=$("$C" $v 2>&1)
	! grep -q $'[\x01-\x08\x0b-\x0c\x0e-\x1f\x7f]' <<<"$out"; ok $? "$v: no control character reaches the terminal"
done
check "report model shows the hostile model name escaped" grep -qF 'm\x1b]0;pwned\x07\x1b[2J' <<<"$("$C" report model 2>/dev/null)"
check "report session --csv shows the project escaped" grep -qF '/home/u/\x1b[2Jproj\x07' <<<"$("$C" report session --csv 2>/dev/null)"
check "report model --csv escapes it too" grep -qF 'm\x1b]0;pwned\x07\x1b[2J' <<<"$("$C" report model --csv 2>/dev/null)"
check "sources shows the file name escaped" grep -qF 'evil\x1b]0;x\x07.jsonl' <<<"$("$C" sources 2>/dev/null)"
is "$("$C" report model --json 2>/dev/null | jq -r '.rows[] | select(.model | startswith("m\u001b")) | .model' | od -An -c | tr -s ' ' | head -1)" \
	"$(printf 'm\e]0;pwned\a\e[2J\n' | od -An -c | tr -s ' ' | head -1)" "--json keeps the exact name (json-c escapes it)"
# --json into a pipe prints the daemon's text as it came; without a daemon
# the client builds the report itself and prints json-c's parse: the same bytes
KINDS="daily weekly monthly project session model tool"
for k in $KINDS; do "$C" report $k --json --since 2026-11-01 >"$T/live-$k.json" 2>/dev/null; done
stop_daemon; ok $? "clean stop"
same=0
for k in $KINDS; do
	"$C" report $k --json --since 2026-11-01 >"$T/offline-$k.json" 2>/dev/null
	if [ -s "$T/live-$k.json" ] && cmp -s "$T/live-$k.json" "$T/offline-$k.json"; then same=$((same + 1)); else diag "report $k differs: $(cmp "$T/live-$k.json" "$T/offline-$k.json" 2>&1)"; fi
done
is "$same" 7 "report --json, all seven kinds: the daemon's text as it came = the client's own print, byte for byte"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
