#!/bin/bash
# agentmeterd --once on generated pi sessions: exact totals, idempotent
# re-runs, tail reads of only the new bytes, forks, torn lines, rewrites,
# and garbage files that never stop a run.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions

once() { "$D" --once 2>>"$T/once.err"; }
field() { sed -n "s/.*[ (]\([0-9][0-9]*\) $1.*/\1/p" <<<"$2"; }
expect_totals() { # expect_totals GEN_JSON DESCRIPTION
	local want got
	want=$(jq -c '[.events, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' <<<"$1")
	got=$(totals_line)
	is "$got" "$want" "$2"
}
sum_json() { jq -s '{events: (map(.events)|add), input: (map(.input)|add), output: (map(.output)|add), cache_read: (map(.cache_read)|add), cache_write: (map(.cache_write)|add), total: (map(.total)|add), cost_nano: (map(.cost_nano)|add), calls: (map(.calls)|add)}'; }

g1=$($GEN corpus "$S" --files 20 --mb 2 --seed 7)
out=$(once); rc=$?
is "$rc" 0 "first --once exits 0"
diag "$out"
expect_totals "$g1" "totals equal the generator's after the first run"
is "$(field 'rows added' "$out")" "$(jq .events <<<"$g1")" "summary counts every row added"
is "$(jq .tool_calls <<<"$("$C" report daily --json | jq .totals)")" "$(jq .calls <<<"$g1")" "tool calls recorded"

# A bulk write's ledger pages leave the page cache after it (common/ledger/ledger.c,
# ledger_drop_cache, says why): not after a small growth, which the first
# run's 2 MB of sessions is ...
! grep -q "page cache dropped" "$T/once.err"
ok $? "a small scan leaves the ledger's page cache alone"
# ... and with the threshold lowered (a test hook), --once and the daemon's
# initial scan drop it, say so, and the ledger they leave reads the same
mkdir -p "$T/shed1" "$T/shed2"
XDG_STATE_HOME=$T/shed1 AGENTMETER_TEST_SHED_BYTES=4096 "$D" --once >/dev/null 2>"$T/shed1.err"
check "--once over a fresh ledger drops its page cache and says so" \
	grep -q "KB written by the scan; its page cache dropped" "$T/shed1.err"
XDG_STATE_HOME=$T/shed1 expect_totals "$g1" "... and that ledger's totals equal the generator's"
XDG_STATE_HOME=$T/shed2 AGENTMETER_TEST_SHED_BYTES=4096 start_daemon
wait_until 20 grep -q "KB written by the initial scan; its page cache dropped" "$T/daemon.log"
ok $? "the daemon's initial scan drops it too, and says so"
XDG_STATE_HOME=$T/shed2 expect_totals "$g1" "... and its answers equal the generator's after it"
stop_daemon

out=$(once)
is "$(field 'rows added' "$out")" 0 "second --once adds 0 rows"
is "$(field 'bytes read' "$out")" 0 "second --once reads no old bytes"

f=$(ls "$S"/*/*.jsonl | head -1)
before=$(stat -c %s "$f")
g2=$($GEN append "$f" --calls 5 --seed 99 --small)
after=$(stat -c %s "$f")
out=$(once)
is "$(field 'bytes read' "$out")" "$((after - before))" "after an append only the new bytes are read"
all=$(printf '%s\n%s\n' "$g1" "$g2" | sum_json)
expect_totals "$all" "appended calls counted exactly once"

# a fork: pi copies entries verbatim into a new file with a new header
mkdir -p "$S/--home-u-fork--"
{ echo '{"type":"session","version":3,"id":"fork-0001","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/home/u/fork","parentSession":"'"$f"'"}'; tail -n +2 "$f"; } > "$S/--home-u-fork--/fork.jsonl"
out=$(once)
is "$(field 'rows added' "$out")" 0 "a forked copy adds no rows"
expect_totals "$all" "fork counted once"

# torn last line: complete JSON without a newline is counted now, once
t=$S/--home-u-torn--/torn.jsonl
g3=$($GEN session "$t" --calls 2 --seed 31 --small)
last=$(tail -n 1 "$t"); head -n -1 "$t" > "$t.tmp"; printf '%s' "$last" >> "$t.tmp"; mv "$t.tmp" "$t"
once >/dev/null
all=$(printf '%s\n%s\n%s\n' "$g1" "$g2" "$g3" | sum_json)
expect_totals "$all" "unterminated complete last line counted"
printf '\n' >> "$t"
once >/dev/null
expect_totals "$all" "its newline arriving later does not count it twice"

# a partial line waits until it is complete
p=$S/--home-u-part--/part.jsonl
g4=$($GEN session "$p" --calls 1 --seed 41 --small)
line=$(tail -n 1 "$p"); head -n -1 "$p" > "$p.tmp"; mv "$p.tmp" "$p"
g4u=$(jq -c '.events=0|.input=0|.output=0|.cache_read=0|.cache_write=0|.total=0|.cost_nano=0|.calls=0' <<<"$g4")
printf '%s' "${line:0:100}" >> "$p"
once >/dev/null
expect_totals "$all" "a partial last line is not counted"
printf '%s\n' "${line:100}" >> "$p"
once >/dev/null
all=$(printf '%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" | sum_json)
expect_totals "$all" "the completed line is counted once"

# migration-style rewrite of the same file (truncate, same inode, new entry ids)
ino=$(stat -c %i "$f")
python3 - "$f" <<'PY'
import json, sys, random
p = sys.argv[1]
lines = open(p).read().splitlines()
out = [lines[0]]
for l in lines[1:]:
    o = json.loads(l); o["id"] = "%08x" % random.getrandbits(32); out.append(json.dumps(o, separators=(",", ":")))
with open(p, "r+") as f:
    f.truncate(0); f.write("\n".join(out) + "\n")
PY
is "$(stat -c %i "$f")" "$ino" "rewrite kept the inode"
out=$(once)
is "$(field 'rows added' "$out")" 0 "an in-place rewrite with new entry ids adds nothing"
expect_totals "$all" "totals unchanged after the rewrite"

# garbage never stops a run
G=$S/--home-u-junk--
mkdir -p "$G" "$G/dir.jsonl"
head -c 4096 /dev/urandom > "$G/binary.jsonl"
printf '{"type":"session","version":3,"id":"j1","timestamp":"2026-11-30T10:00:00Z","cwd":"/j"}\n{not json\n[1,2]\n{"type":"message"}\n' > "$G/invalid.jsonl"
: > "$G/empty.jsonl"
ln -s "$G/nowhere.jsonl" "$G/dangling.jsonl"
mkfifo "$G/fifo.jsonl"
echo '{"hello":"world"}' > "$G/notpi.jsonl"
out=$(once); rc=$?
is "$rc" 0 "garbage files: exit status stays 0"
expect_totals "$all" "garbage files: totals unchanged"
check "garbage files: malformed lines counted" [ "$(field malformed "$out")" -ge 1 ]
check "garbage files: non-transcripts counted" [ "$(sed -n 's/.*(\([0-9]*\) not transcripts.*/\1/p' <<<"$out")" -ge 2 ]

# a flat custom session dir (PI_CODING_AGENT_SESSION_DIR)
export PI_CODING_AGENT_SESSION_DIR=$T/flat
g5=$($GEN session "$T/flat/x.jsonl" --calls 3 --seed 51 --small)
once >/dev/null
all=$(printf '%s\n%s\n%s\n%s\n%s\n' "$g1" "$g2" "$g3" "$g4" "$g5" | sum_json)
expect_totals "$all" "PI_CODING_AGENT_SESSION_DIR (flat) is read"
unset PI_CODING_AGENT_SESSION_DIR
# the hand-written fixtures (fixtures/pi/expected.json, case "all"), in a fresh ledger
rm -rf "$XDG_STATE_HOME/agentmeterd"
cp -r "$FIX/pi/agent" "$T/fixture-agent"
out=$(PI_CODING_AGENT_DIR=$T/fixture-agent "$D" --once 2>>"$T/once.err")
want=$(jq -c '.cases.all | [.rows, .input, .output, .cache_read, .cache_write, .total, (.cost_nano/1e9)]' "$FIX/pi/expected.json")
is "$(totals_line)" "$want" "fixtures/pi: totals equal expected.json exactly"
is "$("$C" report daily --json 2>/dev/null | jq .totals.reasoning_tokens)" "$(jq .cases.all.reasoning "$FIX/pi/expected.json")" "fixtures/pi: reasoning kept as a subset"
is "$(field 'malformed' "$out")" "$(jq .cases.all.malformed "$FIX/pi/expected.json")" "fixtures/pi: malformed lines counted"
is "$(sed -n 's/.*(\([0-9]*\) not transcripts.*/\1/p' <<<"$out")" "$(jq .cases.all.not_source "$FIX/pi/expected.json")" "fixtures/pi: non-pi files recognised"
out=$(PI_CODING_AGENT_DIR=$T/fixture-agent "$D" --once 2>>"$T/once.err")
is "$(field 'rows added' "$out")" 0 "fixtures/pi: a second run adds 0 rows"

! grep -qiE 'AddressSanitizer|runtime error' "$T/once.err"; ok $? "no sanitizer reports"
done_testing
