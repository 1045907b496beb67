#!/bin/bash
# `agentmeterd --once` progress: on a terminal (script(1) gives it a pty) a
# line with files, bytes, rows, rate and ETA, redrawn in place and erased
# before the summary; nothing of it when stderr is not a terminal, and
# nothing for a scan that ends within a moment.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v script >/dev/null || skip_all "script (util-linux) not installed"
new_env
python3 "$AM_SRCDIR/tests/lib/gen_pi.py" corpus "$HOME/.pi/agent/sessions" --files 40 --mb 40 --seed 7 >"$T/gen.json"
rows=$(jq .events "$T/gen.json")

# the line's delay lowered to 0 by the test hook, so a 40 MB scan shows it
AGENTMETER_TEST_PROGRESS_MS=0 script -qfec "$D --once" "$T/tty.out" >/dev/null 2>&1; rc=$?
is "$rc" 0 "--once on a terminal succeeds"
tr '\r' '\n' <"$T/tty.out" >"$T/tty.lines"
check "a progress line with files, bytes, rows, rate and ETA" \
	grep -qE 'scan: [0-9]+/40 files, [0-9.]+ [KMG]?i?B of [0-9.]+ MiB \([0-9]+%\), [0-9,]+ rows, [0-9.]+ [KMG]?i?B/s, ETA [0-9?:]+' "$T/tty.lines"
check "it is redrawn in place (carriage return, erase line)" grep -q $'\r\033\\[K' "$T/tty.out"
last_scan=$(grep -c 'scan: ' "$T/tty.lines")
diag "$last_scan progress redraws"
# the summary comes after the last erase, on a clean line
tail_part=$(awk 'BEGIN{RS="\033\\[K"} {last=$0} END{print last}' "$T/tty.out")
check "the line is erased before the summary" sh -c "printf '%s' \"\$1\" | grep -q '^agentmeterd: 40 files' && ! printf '%s' \"\$1\" | grep -q 'scan:'" _ "$tail_part"
check "all rows were ingested" grep -q "$rows rows added" "$T/tty.out"

rm -rf "$XDG_STATE_HOME/agentmeterd"
AGENTMETER_TEST_PROGRESS_MS=0 "$D" --once >"$T/out" 2>"$T/err"; rc=$?
is "$rc" 0 "--once without a terminal succeeds"
check "... and shows no progress line" sh -c "! grep -q 'scan:' '$T/err' '$T/out'"
check "... nor escape sequences" sh -c "! grep -q \"$(printf '\033')\" '$T/err' '$T/out'"

# a short scan with the normal one-second delay: no line at all
rm -rf "$XDG_STATE_HOME/agentmeterd" "$HOME/.pi"
python3 "$AM_SRCDIR/tests/lib/gen_pi.py" session "$HOME/.pi/agent/sessions/--p--/a.jsonl" --calls 2 --small >/dev/null
script -qfec "$D --once" "$T/short.out" >/dev/null 2>&1
check "a scan that ends within a moment draws no progress line" sh -c "! grep -q 'scan:' '$T/short.out'"
check "... and still prints its summary" grep -q "^agentmeterd: 1 files" "$T/short.out"
done_testing
