# The real systemd --user tests of agentmeterd's unit, install/uninstall and
# supervised behaviour (issue 4), and OpenClaw/PicoClaw data found through
# variables recorded at install time. Sourced by harness.sh, which provides AS
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
# nice (field 19 of /proc/PID/task/TID/stat; the comm has no blank) of the
# daemon's main thread, then of each thread named agentmeter-read
worker_nice() {
	local pid t; pid=$(prop MainPID)
	awk '{print "main", $19}' "/proc/$pid/stat"
	for t in /proc/"$pid"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = agentmeter-read ] && awk '{print "worker", $19}' "$t/stat"
	done
}
nice_ok() {
	worker_nice > "$WORK/nice.out"; cat "$WORK/nice.out"
	awk '$1 == "main" { m = $2 } $1 == "worker" { n++; w = m + 10 > 19 ? 19 : m + 10; if ($2 != w) bad++ }
	     END { exit !(n >= 1 && !bad) }' "$WORK/nice.out"
}
dcheck "its read workers (agentmeter-read) run 10 nice steps below it, in the sandbox" "poll 5 nice_ok; nice_ok"
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

# ---- a second install cycle: OpenClaw and PicoClaw data in directories named
# by variables recorded at install time, read by the sandboxed daemon
OCS=$H/oc-state                # OPENCLAW_STATE_DIR: under $HOME (ProtectHome=read-only)
PCH=$WORK/pico-home            # PICOCLAW_HOME: outside $HOME (ProtectSystem=strict)
install -d -o "$U" -g "$G" "$PCH"
mkdir -p "$RUNUNITS/agentmeterd.service.d"
printf '[Service]\nWatchdogSec=3s\nRestartSec=200ms\nTimeoutStartSec=20s\nTimeoutStopSec=10s\nLimitCORE=0\n' \
	> "$RUNUNITS/agentmeterd.service.d/90-test.conf"
chown -R "$U:$G" "$XDG_RUNTIME_DIR/systemd"
out=$(AS env OPENCLAW_STATE_DIR="$OCS" PICOCLAW_HOME="$PCH" "$CTL" install --force 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   install --force: /'
check "install --force (OPENCLAW_STATE_DIR, PICOCLAW_HOME set) replaces the foreign unit" \
	"[ $rc -eq 0 ] && grep -q 'replaced (--force)' <<< \"\$out\" &&
	 head -1 '$UNITS/agentmeterd.service' | grep -q '^# Written by agentmeterctl install' &&
	 grep -q 'recorded OPENCLAW_STATE_DIR=$OCS' <<< \"\$out\" && grep -q 'recorded PICOCLAW_HOME=$PCH' <<< \"\$out\""
check "drop-in records OPENCLAW_STATE_DIR and PICOCLAW_HOME, and lists both" \
	"grep -qx 'Environment=\"OPENCLAW_STATE_DIR=$OCS\"' '$D' &&
	 grep -qx 'Environment=\"PICOCLAW_HOME=$PCH\"' '$D' &&
	 grep -qx 'Environment=\"AGENTMETER_INSTALL_VARS=OPENCLAW_STATE_DIR,PICOCLAW_HOME\"' '$D' &&
	 ! grep -q 'PI_CODING_AGENT_DIR' '$D'"
dcheck "the daemon runs with the new record" \
	"poll 10 '[ \"\$(prop SubState)\" = running ]' && has 'OPENCLAW_STATE_DIR=$OCS' prop Environment &&
	 has 'PICOCLAW_HOME=$PCH' prop Environment"

# an OpenClaw SQLite-era agent database (WAL), built by the user with the
# sqlite3 CLI from the schema and the plain rows of sqlite/main.tsv
OCF=$AM_SRCDIR/fixtures/openclaw
OCDB=$OCS/agents/main/agent/openclaw-agent.sqlite
mkdir -p "$WORK/ocrows"
awk -F'\t' '$1 == "plain"' "$OCF/sqlite/main.tsv" > "$WORK/ocrows/plain.tsv"
{
	cat "$OCF/schema.sql"; echo "BEGIN;"; i=0
	while IFS=$'\t' read -r mode sid seq ev; do
		i=$((i + 1)); printf '%s' "$ev" > "$WORK/ocrows/$i.json"
		echo "INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, updated_at) VALUES ('$sid', 'agent:main:$sid', 1, 1);"
		echo "INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES ('$sid', $seq, CAST(readfile('$WORK/ocrows/$i.json') AS TEXT), 1796000000000);"
	done < "$WORK/ocrows/plain.tsv"
	echo "COMMIT;"
} > "$WORK/ocrows/load.sql"
chmod -R a+rX "$WORK/ocrows"
AS mkdir -p "$(dirname "$OCDB")"
# the daemon may read the new file while it is being made: as a writer should,
# sqlite3 waits for the reader's lock (switching to WAL takes an exclusive one)
SQL="sqlite3 -bail -cmd '.timeout 5000'"
check "the user builds a WAL-mode OpenClaw database under OPENCLAW_STATE_DIR with sqlite3" \
	"AS $SQL '$OCDB' < '$WORK/ocrows/load.sql' && [ \"\$(stat -c %u '$OCDB')\" = $U ] &&
	 [ \"\$(AS sqlite3 '$OCDB' 'PRAGMA journal_mode')\" = wal ] &&
	 [ \"\$(AS sqlite3 '$OCDB' 'SELECT count(*) FROM transcript_events')\" = \"\$(wc -l < '$WORK/ocrows/plain.tsv')\" ]"
# the expected totals, computed here: assistant messages with nonzero usage,
# OpenClaw's own synthetic (provider "openclaw") rows left out
OCQ='[.[] | select(.type == "message" and .message.role == "assistant" and .message.provider != "openclaw")
      | .message | select(.usage != null and (.usage.input + .usage.output + .usage.cacheRead + .usage.cacheWrite) > 0)]
     | [length, (map(.usage.input) | add), (map(.usage.output) | add), (map(.usage.cacheRead) | add),
        (map(.usage.cacheWrite) | add), (map(.usage.totalTokens) | add),
        ((map(.usage.cost.total * 1e9 | round) | add) / 1e3 | round / 1e6),
        (map([.content[]? | select(.type == "toolCall")] | length) | add)]'
oc_want=$(cut -f4 "$WORK/ocrows/plain.tsv" | jq -s -c "$OCQ")
echo "# OpenClaw expected [events, input, output, cache_read, cache_write, total, cost_usd, tool_calls]: $oc_want"
RT='.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens, .cost_usd, .tool_calls]'
oc_got() { AS "$CTL" report daily --json --harness openclaw 2>/dev/null | jq -c "$RT" 2>/dev/null; }

# a PicoClaw session under PICOCLAW_HOME's default workspace (no config.json)
PCF=$AM_SRCDIR/fixtures/picoclaw/user/agents/workspace/sessions/sk_v1_86319e35ca45b729f361caadefd3b7d1a8558260a95ebb0516e52e26c9b32231.jsonl
AS mkdir -p "$PCH/workspace/sessions"
# the checkout may be under a directory the test user cannot enter: stage the
# fixture in the world-readable $WORK and let the user copy it from there
install -d -m 0755 "$WORK/pcfix" && install -m 0644 "$PCF" "$WORK/pcfix/"
AS cp "$WORK/pcfix/${PCF##*/}" "$PCH/workspace/sessions/"
pc_want=$(jq -s -c '[.[] | select(.role == "assistant")] | [length, (map(.tool_calls // [] | length) | add)]' "$PCF")
echo "# PicoClaw expected [events, tool_calls]: $pc_want"
pc_got() { AS "$CTL" report daily --json --harness picoclaw 2>/dev/null | jq -c '.totals | [.events, .tool_calls]' 2>/dev/null; }

dcheck "report --harness openclaw: the database's events within 15 s" \
	"poll 15 '[ \"\$(oc_got)\" = \"\$oc_want\" ]'; echo \"got \$(oc_got), expected \$oc_want\"; [ \"\$(oc_got)\" = \"\$oc_want\" ]"
dcheck "report --harness picoclaw: the session's events within 15 s" \
	"poll 15 '[ \"\$(pc_got)\" = \"\$pc_want\" ]'; echo \"got \$(pc_got), expected \$pc_want\"; [ \"\$(pc_got)\" = \"\$pc_want\" ]"
AS env OPENCLAW_STATE_DIR="$OCS" PICOCLAW_HOME="$PCH" "$CTL" status --json > "$WORK/status2.json" 2> "$WORK/status2.err"
root_is() { # root_is HARNESS PATH VAR: that root, moved by VAR from the install record
	jq -e --arg h "$1" --arg p "$2" --arg v "$3" '[.harnesses[] | select(.id == $h) | .roots[]
		| select(.path == $p and .reason == "env" and .env_var == $v and .from_install_record == true)]
		| length == 1' "$WORK/status2.json"
}
dcheck "status --json: openclaw root OPENCLAW_STATE_DIR, reason env, from the install record" \
	"root_is openclaw '$OCS' OPENCLAW_STATE_DIR || jq -c '.harnesses[] | select(.id == \"openclaw\") | .roots' '$WORK/status2.json'"
dcheck "status --json: picoclaw root under PICOCLAW_HOME, reason env, from the install record" \
	"root_is picoclaw '$PCH/workspace/sessions' PICOCLAW_HOME || jq -c '.harnesses[] | select(.id == \"picoclaw\") | .roots' '$WORK/status2.json'"

# one more row, inserted by the user's sqlite3 while the daemon runs
ev='{"type":"message","id":"systemd-live-0001","parentId":null,"timestamp":"2026-11-30T12:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"live"}],"api":"openai-responses","provider":"openai","model":"gpt-5.1","usage":{"input":1000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":1010,"cost":{"total":0.002}},"stopReason":"stop","timestamp":1796040000000}}'
printf '%s' "$ev" > "$WORK/ocrows/live.json"; chmod a+r "$WORK/ocrows/live.json"
oc_want=$({ cut -f4 "$WORK/ocrows/plain.tsv"; printf '%s\n' "$ev"; } | jq -s -c "$OCQ")
check "the user's sqlite3 inserts a row while the daemon runs (WAL kept)" \
	"AS $SQL '$OCDB' \"INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES ('b3a2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c01', 11, CAST(readfile('$WORK/ocrows/live.json') AS TEXT), 1796040000000);\" &&
	 [ \"\$(AS sqlite3 '$OCDB' 'PRAGMA journal_mode')\" = wal ]"
dcheck "the inserted row shows in report --harness openclaw within 15 s" \
	"poll 15 '[ \"\$(oc_got)\" = \"\$oc_want\" ]'; echo \"got \$(oc_got), expected \$oc_want\"; [ \"\$(oc_got)\" = \"\$oc_want\" ]"
dcheck "still active (running), no restarts" \
	"[ \"\$(prop SubState)\" = running ] && [ \"\$(prop NRestarts)\" = 0 ]"

# ---- budgets: one structured journald warning per level crossed
AS mkdir -p "$H/.config/agentmeterd" "$H/.pi/agent/sessions/--work-budget-test--"
AS sh -c "printf 'daily 1000 tokens project=/work/budget-test name=sysd\n' > '$H/.config/agentmeterd/budgets.conf'"
dcheck "reload picks up budgets.conf" \
	"AS systemctl --user reload agentmeterd && poll 10 'AS \"$CTL\" status --json | jq -e \".budgets.rules[0].name == \\\"sysd\\\"\"'"
BS=$H/.pi/agent/sessions/--work-budget-test--/budget.jsonl
# the checkout may be under a directory the test user cannot enter: the
# helper runs from a copy in the world-readable $WORK
install -d -m 0755 "$WORK/testlib" && install -m 0644 "$AM_SRCDIR/tests/lib/pi_call.py" "$WORK/testlib/"
AS /usr/bin/python3 "$WORK/testlib/pi_call.py" header "$BS" --cwd /work/budget-test
AS /usr/bin/python3 "$WORK/testlib/pi_call.py" call "$BS" --cost 0.01 --tokens 900
bj() { journalctl AGENTMETER_BUDGET=sysd -o json --no-pager 2>/dev/null | jq -s -c "$1"; }
dcheck "80%: one journal entry with AGENTMETER_BUDGET, _LEVEL, _AMOUNT, _LIMIT" \
	"poll 10 '[ \"\$(bj length)\" = 1 ]'; bj 'map([.AGENTMETER_BUDGET_LEVEL, .AGENTMETER_BUDGET_AMOUNT, .AGENTMETER_BUDGET_LIMIT, .AGENTMETER_BUDGET_UNIT, .PRIORITY])';
	 [ \"\$(bj 'map([.AGENTMETER_BUDGET_LEVEL, .AGENTMETER_BUDGET_AMOUNT, .AGENTMETER_BUDGET_LIMIT, .AGENTMETER_BUDGET_UNIT, .PRIORITY])')\" = '[[\"80\",\"900\",\"1000\",\"tokens\",\"4\"]]' ]"
AS /usr/bin/python3 "$WORK/testlib/pi_call.py" call "$BS" --cost 0.01 --tokens 200
dcheck "100%: exactly one more entry" \
	"poll 10 '[ \"\$(bj length)\" = 2 ]'; sleep 1; bj 'map(.AGENTMETER_BUDGET_LEVEL)'; [ \"\$(bj 'map(.AGENTMETER_BUDGET_LEVEL)')\" = '[\"80\",\"100\"]' ]"
AS systemctl --user restart agentmeterd
dcheck "after a restart in the same period nothing fires again" \
	"poll 10 '[ \"\$(prop SubState)\" = running ]' && sleep 1 && [ \"\$(bj length)\" = 2 ]"

rm -rf "$RUNUNITS/agentmeterd.service.d"
out=$(AS "$CTL" uninstall 2>&1); rc=$?
check "uninstall after the second cycle exits 0 and leaves no unit behind" \
	"[ $rc -eq 0 ] && left=\$(find '$UNITS' -name 'agentmeterd*' 2>/dev/null); echo \"\$left\"; [ -z \"\$left\" ]"

# ---- the web dashboard's socket activation (issue 50)
. "$(dirname "${BASH_SOURCE[0]}")/test-web.sh"

# ---- the Debian package (issue 26)
. "$(dirname "${BASH_SOURCE[0]}")/test-package.sh"

echo "1..$n"
exit $(( fail > 0 ? 1 : 0 ))
