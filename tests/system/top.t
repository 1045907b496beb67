#!/bin/bash
# `agentmeterctl top` in a real terminal (tmux): totals follow rows as they
# are appended, g switches the grouping, a resize redraws to the new width,
# q and SIGTERM restore the terminal; piped, it is a plain line stream.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v tmux >/dev/null || skip_all "tmux not installed"
new_env
export TZ=UTC LANG=C.UTF-8 TERM=xterm-256color
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
S=$HOME/.pi/agent/sessions/--home-u-proj--/s.jsonl
$CALL header "$S" --cwd /home/u/proj
$CALL call "$S" --cost 0.25 --model model-a --tokens 1000
# a broken OpenClaw database: a source with an error
mkdir -p "$HOME/.openclaw/agents/broken/agent"
head -c 8192 /dev/urandom >"$HOME/.openclaw/agents/broken/agent/openclaw-agent.sqlite"
start_daemon; ok $? "daemon starts"

TM=(tmux -S "$T/tmux.sock" -f /dev/null)
"${TM[@]}" new-session -d -s top -x 140 -y 45 "env PS1='PROMPT\$ ' bash --norc --noprofile"
trap '"${TM[@]}" kill-server 2>/dev/null; cleanup_env' EXIT
screen() { "${TM[@]}" capture-pane -p -t top; }
shows() { screen | grep -qE -- "$1"; }
alt() { "${TM[@]}" display -p -t top '#{alternate_on}'; }
expect_screen() { # expect_screen REGEX DESCRIPTION: polls up to 10 s
	if wait_until 10 shows "$1"; then ok 0 "$2"; else ok 1 "$2"; screen | sed 's/^/#   /'; fi
}
check "the shell is up" wait_until 10 shows 'PROMPT\$'

"${TM[@]}" send-keys -t top "$C top" Enter
expect_screen '^Today +\$0\.250000 +1,000 +1$' "top shows today's spend"
is "$(alt)" 1 "top uses the alternate screen"
expect_screen '^pi +\$0\.250000 +\$0\.250000 +\$0\.250000 +1,000$' "grouped by harness"
expect_screen 'model-a +1,000 +\$0\.250000 +proj' "the last calls start with the ledger's history"
expect_screen '5-hour block  [0-9:]+-[0-9:]+, .* left: \$0\.250000 in 1 calls' "the active block from the ledger's history"

$CALL call "$S" --cost 1.5 --model model-b --tokens 3000
expect_screen '^Today +\$1\.750000 +4,000 +2$' "an appended row shows in the totals"
expect_screen '^This month +\$1\.750000' "... in every period"
expect_screen 'pi +model-b +3,000 +\$1\.500000 +proj' "... and in the last calls"
expect_screen 'in 2 calls, 4,000 tokens' "... and in the block"
expect_screen '^Sources with errors \(1\)' "sources with errors are listed"
expect_screen 'broken/agent/openclaw-agent\.sqlite: ' "... with their path and error"

"${TM[@]}" send-keys -t top g
expect_screen '^By model ' "g groups by model"
expect_screen '^pi prov/model-b +\$1\.500000' "... with the model's own sum"
"${TM[@]}" send-keys -t top g
expect_screen '^By project' "g again groups by project"
expect_screen '^/home/u/proj +\$1\.750000' "... with the project's sum"
"${TM[@]}" send-keys -t top g
expect_screen '^By harness' "and back to harness"

$CALL call "$S" --cost 0.01 --model "$(printf '模型%.0s' $(seq 30))" --tokens 10
expect_screen '模型模型' "a model name in wide characters is drawn"
"${TM[@]}" resize-window -t top -x 70 -y 20
expect_screen '^Today +\$1\.760000' "after a resize the totals are still drawn (with the wide-named call's \$0.01)"
widest=$(screen | python3 -c 'import sys, unicodedata as u; print(max(sum(2 if u.east_asian_width(c) in "WF" else 1 for c in l.rstrip("\n")) for l in sys.stdin))')
check "... within the new width ($widest columns)" [ "$widest" -le 70 ]
"${TM[@]}" resize-window -t top -x 140 -y 45

# hostile text from a file is escaped, never sent to the terminal raw
$CALL call "$S" --cost 0.01 --model $'evil\x1b]2;pwned\x07model' --tokens 10
expect_screen 'evil\\x1b\]2;pwned\\x07model' "control characters in a model name are shown escaped"

"${TM[@]}" send-keys -t top q
expect_screen 'PROMPT\$ *$' "q quits back to the shell prompt"
is "$(alt)" 0 "... and leaves the alternate screen"
"${TM[@]}" send-keys -t top "echo rc=\$?" Enter
expect_screen '^rc=0 *$' "... with exit status 0"

"${TM[@]}" send-keys -t top "clear; $C top" Enter
expect_screen '^Today +\$1\.770000' "top runs again"
stop_daemon
expect_screen 'daemon gone, reconnecting' "the daemon stopping is shown"
start_daemon; ok $? "daemon starts again"
hides() { ! shows "$1"; }
check "top reconnects" wait_until 10 hides 'daemon gone'
$CALL call "$S" --cost 0.02 --model model-a --tokens 10
expect_screen '^Today +\$1\.790000 +4,030 +5$' "... and follows the new daemon"
pane=$("${TM[@]}" display -p -t top '#{pane_pid}')
toppid=$(pgrep -P "$pane" | head -1)
kill -TERM "$toppid"
expect_screen 'PROMPT\$ *$' "SIGTERM: back to the prompt"
is "$(alt)" 0 "... with the alternate screen left"
"${TM[@]}" send-keys -t top "stty -a | grep -o -- ' -*echo ' | head -1" Enter
expect_screen '^ echo *$' "... and echo on again"

# piped: a plain line stream
"$C" top >"$T/plain.out" 2>&1 &
PPID_TOP=$!
check "plain stream starts with the totals" wait_until 10 grep -q '^totals: today \$1\.790000 (4,030 tokens)' "$T/plain.out"
$CALL call "$S" --cost 0.04 --model model-a --tokens 90
check "... prints the new row" wait_until 10 grep -q 'pi  prov/model-a .*total 90' "$T/plain.out"
check "... and the new totals" wait_until 10 grep -q '^totals: today \$1\.830000 (4,120 tokens)' "$T/plain.out"
$CALL call "$S" --cost 0.01 --model $'evil\x1b[2Jmodel' --tokens 10
check "... with control characters escaped" wait_until 10 grep -qF 'prov/evil\x1b[2Jmodel' "$T/plain.out"
kill -INT "$PPID_TOP"; wait "$PPID_TOP"; rc=$?
is "$rc" 0 "SIGINT ends the plain stream cleanly"
check "no escape sequences in the plain stream" sh -c "! grep -q \"$(printf '\033')\" '$T/plain.out'"

stop_daemon
"$C" top >/dev/null 2>"$T/nodaemon.err"; rc=$?
is "$rc" 3 "no daemon: exit status 3"
check "... with a message" grep -q "no agentmeterd is answering" "$T/nodaemon.err"
done_testing
