# The real systemd --user tests of agentmeterd's unit, install/uninstall and
# supervised behaviour (issue 4). Sourced by harness.sh, which provides AS
# (run as the test user), H (its HOME), WORK, U, G, XDG_RUNTIME_DIR and
# start_manager/stop_manager. Prints TAP; every wait is bounded.
n=0; fail=0; dumped=
pass() { n=$((n+1)); echo "ok $n - $1"; }
flunk() { n=$((n+1)); fail=$((fail+1)); echo "not ok $n - $1"; }
# check NAME CMD: runs CMD (eval'd), shows its output as comments if it fails.
check() {
	local _o; _o=$(eval "$2" 2>&1)
	if [ $? -eq 0 ]; then pass "$1"; return 0; fi
	flunk "$1"; [ -n "$_o" ] && printf '%s\n' "$_o" | tail -n 15 | sed 's/^/#   /'
	return 1
}
# poll SECONDS CMD: true as soon as CMD succeeds.
poll() {
	local end=$(( $(date +%s%N) + $1 * 1000000000 ))
	while :; do eval "$2" >/dev/null 2>&1 && return 0
		[ "$(date +%s%N)" -ge "$end" ] && return 1; sleep 0.2; done
}
diag() { # the daemon's state, once, when a daemon step fails
	[ -n "$dumped" ] && return; dumped=1
	{ AS systemctl --user status agentmeterd --no-pager -l
	  journalctl _SYSTEMD_USER_UNIT=agentmeterd.service --no-pager -o cat | tail -n 25
	  AS journalctl --user -u agentmeterd --no-pager -o cat | tail -n 10; } 2>&1 | sed 's/^/# diag: /'
}
dcheck() { check "$@" || diag; }
prop() { AS systemctl --user show -p "$1" --value agentmeterd.service; }
# has PATTERN CMD...: CMD's output matches. Output goes through a file, not a
# pipe into `grep -q`, which under pipefail fails when the writer gets SIGPIPE.
has() { local pat=$1; shift; "$@" > "$WORK/has.out" 2>&1; grep -q -- "$pat" "$WORK/has.out"; }

UNITS=$H/.config/systemd/user
RUNUNITS=$XDG_RUNTIME_DIR/systemd/user
PI=$H/custom-pi
PREFIX=/usr/local
ROOT=$WORK/root
BIN=$ROOT$PREFIX/bin
CTL=$BIN/agentmeterctl

# ---- make install into a DESTDIR; those binaries are the ones under test
build_rel=$AM_BUILD
check "make install PREFIX=$PREFIX DESTDIR=… installs binaries, man pages and the unit" \
	"make -s -C '$AM_SRCDIR' -o all install BUILD='$build_rel' PREFIX=$PREFIX DESTDIR='$ROOT' &&
	 [ -x '$BIN/agentmeterd' ] && [ -x '$CTL' ] &&
	 [ -f '$ROOT$PREFIX/share/man/man1/agentmeterctl.1' ] && [ -f '$ROOT$PREFIX/share/man/man8/agentmeterd.8' ] &&
	 grep -qx 'ExecStart=$PREFIX/bin/agentmeterd' '$ROOT$PREFIX/lib/systemd/user/agentmeterd.service'"
if [ ! -x "$CTL" ]; then  # keep going with the built binaries
	install -d "$BIN" && install -m 0755 "$AM_BUILD/agentmeterd" "$AM_BUILD/agentmeterctl" "$BIN/"
fi

# ---- the unit file itself
mkdir -p "$WORK/verify"
sed "s|@BINDIR@|$BIN|g" "$AM_SRCDIR/systemd/agentmeterd.service.in" > "$WORK/verify/agentmeterd.service"
chmod -R a+rX "$WORK/verify"
check "systemd-analyze verify --user passes" \
	"AS systemd-analyze verify --user --man=no '$WORK/verify/agentmeterd.service'"
sec=$(AS systemd-analyze --user security --offline=true --no-pager "$WORK/verify/agentmeterd.service" 2>&1)
score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze --user security --offline=true: exposure ${score:-?}"
check "security exposure at most 2.0 (is ${score:-?})" \
	"AS systemd-analyze --user security --offline=true --threshold=20 --no-pager '$WORK/verify/agentmeterd.service'"

# ---- the sandbox really applies in a user unit: a probe with the same [Service]
AS mkdir -p "$PI" "$WORK/userdir" 2>/dev/null; install -d -o "$U" -g "$G" "$WORK/userdir"
AS sh -c "echo readable > '$PI/readme'"
cat > "$WORK/probe.sh" <<'PROBE'
#!/bin/sh
out="$STATE_DIRECTORY/result"; : > "$out" || exit 1
r() { echo "$1=$2" >> "$out"; }
cat "$PROBE_READ" >/dev/null 2>&1 && r home_read ok || r home_read denied
touch "$HOME/probe-write" 2>/dev/null && r home_write ok || r home_write denied
touch "$PROBE_TMPDIR/probe-write" 2>/dev/null && r tmp_write ok || r tmp_write denied
touch "$RUNTIME_DIRECTORY/probe" 2>/dev/null && r runtime_write ok || r runtime_write denied
r nnp "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status)"
r seccomp "$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)"
r uid_map_lines "$(wc -l < /proc/self/uid_map)"
PROBE
chmod 755 "$WORK/probe.sh"
mkdir -p "$RUNUNITS"
sed -e 's|^Type=notify|Type=oneshot|' -e '/^NotifyAccess=/d' -e '/^WatchdogSec=/d' -e '/^Restart/d' \
    -e '/^ExecReload=/d' -e "s|^ExecStart=.*|ExecStart=/bin/sh $WORK/probe.sh|" -e 's|agentmeterd$|amprobe|' \
    -e "/^\[Service\]/a Environment=PROBE_READ=$PI/readme PROBE_TMPDIR=$WORK/userdir" \
    "$AM_SRCDIR/systemd/agentmeterd.service.in" > "$RUNUNITS/amprobe.service"
chown -R "$U:$G" "$XDG_RUNTIME_DIR/systemd"
AS systemctl --user daemon-reload
check "a unit with agentmeterd's sandbox runs in the user manager" "AS systemctl --user start amprobe.service"
res=$H/.local/state/amprobe/result
check "sandbox: harness files under \$HOME readable, \$HOME and /tmp read-only" \
	"cat '$res' && grep -qx home_read=ok '$res' && grep -qx home_write=denied '$res' && grep -qx tmp_write=denied '$res'"
check "sandbox: its state directory and RuntimeDirectory writable" \
	"grep -qx runtime_write=ok '$res' && [ -d '$H/.local/state/amprobe' ]"
check "sandbox: own user namespace, no new privileges, seccomp filter" \
	"cat '$res' && grep -qx nnp=1 '$res' && grep -qx seccomp=2 '$res' && grep -qx uid_map_lines=1 '$res'"
rm -f "$RUNUNITS/amprobe.service"; rm -rf "$H/.local/state/amprobe"

# ---- test-only settings: a short watchdog, bounded start, no core files
mkdir -p "$RUNUNITS/agentmeterd.service.d"
printf '[Service]\nWatchdogSec=3s\nRestartSec=200ms\nTimeoutStartSec=20s\nTimeoutStopSec=10s\nLimitCORE=0\n' \
	> "$RUNUNITS/agentmeterd.service.d/90-test.conf"
chown -R "$U:$G" "$XDG_RUNTIME_DIR/systemd"

# ---- agentmeterctl install with a relocating variable
out=$(AS env PI_CODING_AGENT_DIR="$PI" "$CTL" install 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   install: /'
if [ $rc -eq 0 ]; then pass "agentmeterctl install (PI_CODING_AGENT_DIR set) exits 0"
else flunk "agentmeterctl install (PI_CODING_AGENT_DIR set) exits 0 (rc=$rc)"; diag; fi
check "install prints what it recorded and did" \
	"grep -q 'recorded PI_CODING_AGENT_DIR=$PI' <<< \"\$out\" &&
	 grep -q '+ systemctl --user enable agentmeterd.service' <<< \"\$out\""
D=$UNITS/agentmeterd.service.d/50-environment.conf
check "drop-in records PI_CODING_AGENT_DIR, the names and the time" \
	"grep -qx 'Environment=\"PI_CODING_AGENT_DIR=$PI\"' '$D' &&
	 grep -qx 'Environment=\"AGENTMETER_INSTALL_VARS=PI_CODING_AGENT_DIR\"' '$D' &&
	 grep -q '^Environment=\"AGENTMETER_INSTALL_TIME=20[0-9-]*T[0-9:]*Z\"$' '$D' &&
	 head -1 '$D' | grep -q '^# Written by agentmeterctl install'"
check "unit written with the marker and ExecStart=the installed agentmeterd" \
	"head -1 '$UNITS/agentmeterd.service' | grep -q '^# Written by agentmeterctl install' &&
	 grep -qx 'ExecStart=$BIN/agentmeterd' '$UNITS/agentmeterd.service'"
check "the manager loaded the environment record" \
	"has 'PI_CODING_AGENT_DIR=$PI' prop Environment"
check "enabled" "[ \"\$(AS systemctl --user is-enabled agentmeterd.service)\" = enabled ]"

# ---- the supervised daemon
dcheck "active (running)" "poll 10 '[ \"\$(prop SubState)\" = running ]'; prop ActiveState; prop SubState; [ \"\$(prop SubState)\" = running ]"
dcheck "StatusText set" "poll 5 '[ -n \"\$(prop StatusText)\" ]'; prop StatusText; [ -n \"\$(prop StatusText)\" ]"
echo "# StatusText: $(prop StatusText)"
SOCK=$XDG_RUNTIME_DIR/agentmeterd/control.sock
dcheck "control socket in RUNTIME_DIRECTORY, mode 0600, owned by the user" \
	"[ -S '$SOCK' ] && [ \"\$(stat -c '%a %u' '$SOCK')\" = '600 $U' ]"

# a pi session under the relocated directory
AS mkdir -p "$PI/sessions/--x--"
AS sh -c "cat > '$PI/sessions/--x--/2026-11-30T10-00-00-000Z_systemd-test.jsonl'" <<'JSONL'
{"type":"session","version":3,"id":"0194f1c2-aaaa-7bbb-8ccc-00000000abcd","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/work/systemd-test"}
{"type":"model_change","id":"1a2b3c4d","parentId":null,"timestamp":"2026-11-30T10:00:00.100Z","provider":"fakeoai","modelId":"fake-gpt"}
{"type":"message","id":"2b3c4d5e","parentId":"1a2b3c4d","timestamp":"2026-11-30T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}],"api":"openai-completions","provider":"fakeoai","model":"fake-gpt","usage":{"input":1000,"output":234,"cacheRead":0,"cacheWrite":0,"totalTokens":1234,"cost":{"input":0.01,"output":0.0023,"cacheRead":0,"cacheWrite":0,"total":0.0123}},"stopReason":"toolUse","timestamp":1796032801000,"responseId":"resp-systemd-test-1"}}
JSONL
tokens() { AS "$CTL" report daily --json 2>/dev/null | jq -e '.totals.total_tokens' 2>/dev/null; }
dcheck "a session written under PI_CODING_AGENT_DIR shows in report --json within 10 s" \
	"poll 10 '[ \"\$(tokens)\" = 1234 ]'; echo \"total_tokens: \$(tokens)\"; [ \"\$(tokens)\" = 1234 ]"
st=$(AS "$CTL" status 2>&1); rc=$?
dcheck "agentmeterctl status works as the user" "[ $rc -eq 0 ] && grep -q '^agentmeterd ' <<< \"\$st\""
dcheck "status: the root was moved by PI_CODING_AGENT_DIR from the install record" \
	"grep -q 'moved by PI_CODING_AGENT_DIR (from install record)' <<< \"\$st\""
dcheck "status --json: the ledger holds the install record" \
	"AS '$CTL' status --json | jq -e '.install_record.recorded_at != null and .install_record.vars.PI_CODING_AGENT_DIR == \"$PI\"'"
dcheck "status warns when this shell's PI_CODING_AGENT_DIR differs from the daemon's" \
	"has 'PI_CODING_AGENT_DIR=/elsewhere but the daemon sees PI_CODING_AGENT_DIR=$PI' AS env PI_CODING_AGENT_DIR=/elsewhere '$CTL' status"
dcheck "no warning from the shell that installed" \
	"! has 'the daemon sees' AS env PI_CODING_AGENT_DIR='$PI' '$CTL' status"
dcheck "agentmeterctl sources lists the session file" \
	"has 'systemd-test.jsonl' AS '$CTL' sources"
dcheck "journalctl --user -u agentmeterd (as the user) shows AGENTMETER_* fields" \
	"poll 5 'has \"^ *AGENTMETER_[A-Z_]*=\" AS journalctl --user -u agentmeterd -o verbose --no-pager'"
dcheck "journal (as root): AGENTMETER_ADAPTER= with _SYSTEMD_USER_UNIT=agentmeterd.service" \
	"poll 5 'has \"^ *AGENTMETER_ADAPTER=\" journalctl _SYSTEMD_USER_UNIT=agentmeterd.service -o verbose --no-pager'"

# ---- reload (HUP) and the watchdog
P=$(prop MainPID)
dcheck "systemctl --user reload (SIGHUP) keeps the same daemon running" \
	"AS systemctl --user reload agentmeterd && sleep 0.3 && [ \"\$(prop SubState)\" = running ] && [ \"\$(prop MainPID)\" = '$P' ]"
if [ -n "$P" ] && [ "$P" != 0 ]; then kill -STOP "$P"; fi
dcheck "watchdog restarts a SIGSTOPped daemon (NRestarts >= 1)" \
	"poll 12 '[ \"\$(prop NRestarts)\" -ge 1 ]'; echo NRestarts=\$(prop NRestarts); [ \"\$(prop NRestarts)\" -ge 1 ]"
dcheck "journal: watchdog timeout" \
	"poll 3 'has \"Watchdog timeout\" journalctl USER_UNIT=agentmeterd.service --no-pager -o cat'"
dcheck "running again, a new process" \
	"poll 10 '[ \"\$(prop SubState)\" = running ]' && [ \"\$(prop MainPID)\" != '$P' ]"
dcheck "the ledger kept the tokens across the watchdog kill" "poll 5 '[ \"\$(tokens)\" = 1234 ]'"

# ---- a new manager (a re-login) starts the enabled unit
stop_manager
if start_manager; then pass "a new user manager starts"; else flunk "a new user manager starts"; fi
dcheck "the enabled unit starts with it" "poll 10 '[ \"\$(prop SubState)\" = running ]'"

# ---- stop: SIGTERM exits 0
dcheck "systemctl --user stop: exit status 0" \
	"AS systemctl --user stop agentmeterd && [ \"\$(prop Result)\" = success ] && [ \"\$(prop ExecMainStatus)\" = 0 ]"

# ---- no daemon
out=$(AS "$CTL" status 2>&1); rc=$?
check "status without a daemon: exit 3 and how to start it" \
	"[ $rc -eq 3 ] && grep -q 'no agentmeterd is answering on .*systemctl --user start agentmeterd' <<< \"\$out\""
out=$(AS "$CTL" report daily --json 2>"$WORK/report.err"); rc=$?
check "report without a daemon reads the ledger read-only and says so" \
	"[ $rc -eq 0 ] && printf '%s' \"\$out\" | jq -e '.totals.total_tokens == 1234' && grep -q 'read the ledger' '$WORK/report.err'"

# ---- uninstall
rm -rf "$RUNUNITS/agentmeterd.service.d"
out=$(AS "$CTL" uninstall 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   uninstall: /'
check "agentmeterctl uninstall exits 0" "[ $rc -eq 0 ]"
check "uninstall leaves no unit, drop-in or enable link behind" \
	"left=\$(find '$UNITS' -name 'agentmeterd*' 2>/dev/null); echo \"\$left\"; [ -z \"\$left\" ]"
check "the manager no longer knows the unit" "[ \"\$(prop LoadState)\" = not-found ]"
check "uninstall leaves the ledger alone" "[ -f '$H/.local/state/agentmeterd/ledger.mdb' ]"

# ---- install refuses a unit it did not write
AS mkdir -p "$UNITS"
AS sh -c "printf '[Service]\nExecStart=/bin/true\n' > '$UNITS/agentmeterd.service'"
out=$(AS "$CTL" install --no-start 2>&1); rc=$?
check "install refuses to overwrite a foreign unit (exit 1, unit untouched)" \
	"[ $rc -eq 1 ] && grep -q 'refusing' <<< \"\$out\" && [ \"\$(head -1 '$UNITS/agentmeterd.service')\" = '[Service]' ]"
rm -f "$UNITS/agentmeterd.service"

echo "1..$n"
exit $(( fail > 0 ? 1 : 0 ))
