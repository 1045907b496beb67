#!/bin/bash
# Shell completion (issue 26). bash's completion function, as
# `agentmeterctl completion bash` defines it, completes commands, report
# kinds, options, every adapter id the daemon knows, zone names found on
# the machine, and session ids and projects from the daemon, which it never
# waits on for long. The zsh and fish scripts parse; fish completes through
# its own engine (complete -C) and zsh registers the function.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
export PATH="$AM_BUILD:$PATH" # the scripts run `agentmeterctl` as typed
command -v agentmeterctl | grep -qx "$C" || skip_all "agentmeterctl on PATH is not $C"
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
SA=$HOME/.pi/agent/sessions/--work-alpha--/a.jsonl SB=$HOME/.pi/agent/sessions/--work-my-project--/b.jsonl
$CALL header "$SA" --cwd /work/alpha; $CALL call "$SA" --cost 1
$CALL header "$SB" --cwd "/work/my project"; $CALL call "$SB" --cost 2

agentmeterctl completion bash > "$T/agentmeterctl.bash"
check "the bash script parses" bash -n "$T/agentmeterctl.bash"
fn=$(bash -c "source '$T/agentmeterctl.bash'; complete -p agentmeterctl" | sed -n 's/^complete -F \([^ ]*\) agentmeterctl$/\1/p')
check "it registers a completion function for agentmeterctl ($fn)" [ -n "$fn" ]
# comp LINE: what bash's completion would offer at the end of LINE (words
# split at blanks, as COMP_WORDS holds them when no = or : is typed)
comp() {
	bash -c '
		source "$1"; line=$2
		read -ra COMP_WORDS <<<"$line"; [[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_LINE=$line COMP_POINT=${#line} COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		"$3" agentmeterctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$T/agentmeterctl.bash" "$1" "$fn" | sort
}
words() { printf '%s\n' "$@" | sort; }

is "$(comp 'agentmeterctl rep')" "$(words report reprice)" "'agentmeterctl rep' completes to report (and reprice)"
is "$(comp 'agentmeterctl repo')" "report" "'agentmeterctl repo': report alone"
# every kind the usage text names
kinds=$(agentmeterctl help | sed -n 's/^ *report \([a-z|]*\) .*/\1/p' | tr '|' ' ')
check "the usage names the report kinds ($kinds)" [ "$(wc -w <<<"$kinds")" -ge 8 ]
is "$(comp 'agentmeterctl report ')" "$(words $kinds)" "'agentmeterctl report ' offers every kind"
is "$(comp 'agentmeterctl report w')" "weekly" "'report w': weekly"
is "$(comp 'agentmeterctl report daily --b')" "$(printf -- '--breakdown\n--by')" "'report daily --b': --breakdown and --by"
is "$(comp 'agentmeterctl report daily --bre')" "--breakdown" "'report daily --bre': --breakdown"
is "$(comp 'agentmeterctl report daily --by ')" "$(printf 'machine\nuser')" "'--by ': machine and user"
is "$(comp 'agentmeterctl team ')" "init" "'team ': init"
out=$(comp 'agentmeterctl status --')
check "status takes --json and the global options, not report's" \
	sh -c "echo '$out' | grep -qx -- --json && echo '$out' | grep -qx -- --socket && ! echo '$out' | grep -qx -- --tz"
is "$(comp 'agentmeterctl report daily --cost ')" "$(words auto vendor computed)" "--cost: its three modes"
is "$(comp 'agentmeterctl completion ')" "$(words bash fish zsh)" "completion: the three shells"

# zones: the machine's tz database (and $TZDIR's, where it points)
out=$(comp 'agentmeterctl report daily --tz Europe/Be')
check "'--tz Europe/Be' completes to Europe/Berlin" grep -qx Europe/Berlin <<<"$out"
check "... and offers only zones under /usr/share/zoneinfo starting so ($(wc -l <<<"$out"))" \
	sh -c "for z in $(tr '\n' ' ' <<<"$out"); do case \$z in Europe/Be*) [ -f /usr/share/zoneinfo/\$z ] || exit 1 ;; *) exit 1 ;; esac; done"
mkdir -p "$T/zi/Mars" && cp /usr/share/zoneinfo/UTC "$T/zi/Mars/Olympus" && printf 'not a zone' > "$T/zi/Mars/Notes"
is "$(TZDIR=$T/zi comp 'agentmeterctl report --tz Mars/')" "Mars/Olympus" \
	"zones come from the files found (TZDIR): a TZif file is a zone, another file is not"
is "$(bash -c '
	source "$1"
	COMP_WORDS=(agentmeterctl report daily --tz = Europe/Berl) COMP_CWORD=5
	COMP_LINE="agentmeterctl report daily --tz=Europe/Berl" COMP_POINT=${#COMP_LINE}
	"$2" agentmeterctl Europe/Berl =; printf "%s\n" "${COMPREPLY[@]}"' _ "$T/agentmeterctl.bash" "$fn")" \
	"Europe/Berlin" "'--tz=Europe/Berl' (bash splits at =) completes the part after ="

start_daemon; ok $? "daemon starts"
wait_until 10 holds '[ "$(totals events)" = 2 ]'; ok $? "the two sessions are in the ledger"
# every adapter id, as the daemon's registry lists them
ids=$(agentmeterctl status --json | jq -r '.harnesses[].id')
check "the daemon lists its adapters ($(echo $ids))" [ "$(wc -w <<<"$ids")" -ge 5 ]
is "$(comp 'agentmeterctl report daily --harness ')" "$(words $ids)" "'--harness ' offers every adapter id"
is "$(comp 'agentmeterctl report --harness pi,c')" "$(printf 'pi,%s\n' $(printf '%s\n' $ids | grep '^c') | sort)" \
	"'--harness pi,c' completes the list's last element"
sessions=$(agentmeterctl report session --json | jq -r '.rows[].session')
is "$(comp 'agentmeterctl report daily --session ')" "$(words $sessions)" "'--session ' offers the daemon's sessions"
sa=$(head -c 4 <<<"$sessions")
check "'--session $sa' narrows them" sh -c "[ \"\$(echo '$(comp "agentmeterctl report daily --session $sa")' | wc -l)\" -ge 1 ] && echo '$(comp "agentmeterctl report daily --session $sa")' | grep -q '^$sa'"
is "$(comp 'agentmeterctl report --project /work/a')" "/work/alpha" "'--project /work/a' completes to /work/alpha"
is "$(comp 'agentmeterctl report --project /work/m')" '/work/my\ project' "a project with a blank comes quoted for the shell"
check "... and that project filters the report (its \$2 call alone)" \
	sh -c "[ \"\$(agentmeterctl report daily --json --project '/work/my project' | jq -c '[.totals.events, .totals.cost_usd, .project]')\" = '[1,2,\"/work/my project\"]' ]"
kill -STOP "$DPID"
out=$(timeout 10 "$C" __complete report daily --session ""); rc=$?
kill -CONT "$DPID"
check "a daemon that does not answer: no session offered, and no hang (exit $rc)" sh -c "[ $rc -eq 0 ] && [ -z '$out' ]"
stop_daemon
out=$(timeout 10 "$C" __complete report daily --session ""); rc=$?
check "no daemon: nothing offered (the ledger is not read for it)" sh -c "[ $rc -eq 0 ] && [ -z '$out' ]"
mkdir -p "$T/somedir"
is "$(cd "$T" && comp 'agentmeterctl --state-dir som')" "somedir" "--state-dir completes directories"

# zsh and fish
if command -v zsh >/dev/null; then
	agentmeterctl completion zsh > "$T/_agentmeterctl"
	check "the zsh script parses (zsh -n)" zsh -n "$T/_agentmeterctl"
	is "$(zsh -f -c "autoload -Uz compinit && compinit -u -d '$T/zcompdump' && source '$T/_agentmeterctl' && print -r -- \$_comps[agentmeterctl]" 2>&1)" \
		"_agentmeterctl" "zsh: sourced after compinit, it registers _agentmeterctl"
else
	skip "no zsh"; skip "no zsh"
fi
if command -v fish >/dev/null; then
	agentmeterctl completion fish > "$T/agentmeterctl.fish"
	check "the fish script parses (fish -n)" fish -n "$T/agentmeterctl.fish"
	fc() { HOME=$T/fishhome fish --no-config -c "source '$T/agentmeterctl.fish'; complete -C'$1'" 2>/dev/null | cut -f1 | sort; }
	is "$(fc 'agentmeterctl rep')" "$(words report reprice)" "fish: 'agentmeterctl rep' completes to report"
	is "$(fc 'agentmeterctl report ')" "$(words $kinds)" "fish: every kind"
	is "$(fc 'agentmeterctl report --harness ')" "$(words $ids)" "fish: every adapter id"
	check "fish: '--tz Europe/Be' completes to Europe/Berlin" grep -qx Europe/Berlin <(fc 'agentmeterctl report --tz Europe/Be')
else
	skip "no fish"; skip "no fish"; skip "no fish"; skip "no fish"; skip "no fish"
fi
check "completion for another shell: a usage error" sh -c "agentmeterctl completion tcsh 2>/dev/null; [ \$? -eq 2 ]"
done_testing
