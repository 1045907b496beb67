#!/bin/bash
# Completion inserts exactly the value or nothing (issue 52, fault 2): session
# ids and projects from files holding { } * ? [ ~ # ! blanks, quotes, $ and
# a backquote are completed in real bash, zsh and fish (each in tmux: the
# word typed, Tab, then the line turned into a printf of its words), and
# the word the shell then parses is the value; an id with a TAB or a
# newline is not offered, and a project with a newline forges nothing.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
export PATH="$AM_BUILD:$PATH"
command -v tmux >/dev/null || skip_all "no tmux"
S=$HOME/.pi/agent/sessions
# one pi session per id: header (id, cwd) and one priced call
session() { # session FILE ID CWD
	python3 - "$@" <<'PY'
import json, sys, os
path, sid, cwd = sys.argv[1:4]
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    f.write(json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-02T10:00:00Z", "cwd": cwd}) + "\n")
    f.write(json.dumps({"type": "message", "id": "m1", "timestamp": "2026-11-02T10:00:01Z",
                        "message": {"role": "assistant", "provider": "p", "model": "m", "responseId": "r-" + sid,
                                    "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                              "cost": {"total": 0.01}}}}) + "\n")
PY
}
V1='hA{a,b}*?x'
V2='hB[x]~#!y'
V3="hC it's \"q\" \$HOME \`b\` ;&|<>()"
session "$S/d1/a.jsonl" "$V1" /w/one
session "$S/d2/b.jsonl" "$V2" /w/two
session "$S/d3/c.jsonl" "$V3" "/w/p q"
session "$S/d4/d.jsonl" $'hD\tTAB' /w/four
session "$S/d5/e.jsonl" $'hE\nNL' /w/five
session "$S/d6/f.jsonl" hFplain $'/w/six\n--session FORGED\tx'
start_daemon; ok $? "daemon up"
wait_until 20 holds '[ "$("$C" report session --json 2>/dev/null | jq ".rows | length")" = 6 ]'
out=$(agentmeterctl __complete report daily --session h)
is "$(printf '%s\n' "$out" | cut -f1 | sort)" "$(printf '%s\n' "$V1" "$V2" "$V3" hFplain | sort)" \
	"__complete: the four one-line ids, not the ids with a TAB or a newline"
check "__complete: no line forged by a project's newline" sh -c "! printf '%s\n' \"\$1\" | grep -q FORGED" _ "$out"
check "__complete: at most one TAB a line" sh -c "! printf '%s\n' \"\$1\" | grep -qP '\t.*\t'" _ "$out"
is "$(printf '%s\n' "$out" | grep '^hFplain')" "hFplain" "__complete: a description that is not one line is left out"

# type: agentmeterctl report daily --session PREFIX, Tab, C-a, printf 'R<%s>\n' , Enter;
# each step waits for the pane to show its effect (polled, never a fixed sleep)
pane() { tmux -S "$T/tmux.sock" capture-pane -p -J; }
pane_until() { # pane_until SECONDS SHELL-TEST-ON-$P
	local n=$(($1 * 20)) P
	while [ "$n" -gt 0 ]; do
		P=$(pane)
		eval "$2" && return 0
		sleep 0.05; n=$((n - 1))
	done
	diag "the pane did not come to [$2]:"; printf '%s\n' "$P" | sed 's/^/# | /' >&2
	return 1
}
tmux_word() { # tmux_word SHELL-COMMAND PREFIX
	local sock=$T/tmux.sock typed word=$2
	tmux -S "$sock" kill-server 2>/dev/null
	tmux -S "$sock" new-session -d -x 250 -y 20 "$1"
	pane_until 10 '[[ $P == *[^[:space:]]* ]]'
	tmux -S "$sock" send-keys -l "agentmeterctl report daily --session $2"
	pane_until 5 '[[ $P == *"--session $word"* ]]'
	typed=$(pane)
	tmux -S "$sock" send-keys Tab
	pane_until 5 '[ "$P" != "$typed" ]'
	sleep 0.2 # a completion may be drawn in more than one write
	tmux -S "$sock" send-keys C-a
	tmux -S "$sock" send-keys -l "printf 'R<%s>\n' "
	tmux -S "$sock" send-keys Enter
	pane_until 5 'printf "%s\n" "$P" | grep -q "^R<.*>$"'
	pane | sed -n 's/^R<\(.*\)>$/\1/p' | tail -1
	tmux -S "$sock" kill-server 2>/dev/null
}
agentmeterctl completion bash >"$T/c.bash"
agentmeterctl completion zsh >"$T/_agentmeterctl"
agentmeterctl completion fish >"$T/c.fish"
printf 'PS1="$ "\nsource %q\n' "$T/c.bash" >"$T/bashrc"
mkdir -p "$T/zdot"
printf 'PS1="%%%% "\nbindkey -e\nfpath=(%q $fpath)\nautoload -Uz compinit && compinit -u -d %q\n' "$T" "$T/zcompdump" >"$T/zdot/.zshrc"
i=0
for v in "$V1" "$V2" "$V3"; do
	i=$((i + 1)); p=${v:0:2}
	is "$(tmux_word "env HOME=$HOME PATH=$PATH bash --rcfile $T/bashrc -i" "$p")" "$v" "bash: candidate $i inserted exactly"
	if command -v zsh >/dev/null; then
		is "$(tmux_word "env HOME=$HOME PATH=$PATH ZDOTDIR=$T/zdot zsh -i" "$p")" "$v" "zsh: candidate $i inserted exactly"
	else
		skip "no zsh"
	fi
	if command -v fish >/dev/null; then
		is "$(tmux_word "env HOME=$T/fishhome PATH=$PATH XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR fish --no-config -C 'source $T/c.fish'" "$p")" "$v" \
			"fish: candidate $i inserted exactly"
	else
		skip "no fish"
	fi
done
stop_daemon
done_testing
