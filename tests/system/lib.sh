# Shared helpers for the system tests: TAP output, an isolated HOME/XDG
# environment per test, starting and stopping the real daemon, polling.
# Sourced by tests/system/*.t; AM_BUILD names the build directory whose
# binaries are under test (derived from where the test is run from).

set -u
: "${AM_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if [ -z "${AM_BUILD:-}" ]; then
	# run as $BUILD/system/x.t (a link made by tests/run-all.sh) or directly
	here=$(cd "$(dirname "$0")" && pwd)
	if [ -x "$here/../agentmeterd" ]; then AM_BUILD=$(cd "$here/.." && pwd); else AM_BUILD=$AM_SRCDIR/build; fi
fi
: "${AM_SAMPLES:=$AM_SRCDIR/../shared/samples}"
export AM_SRCDIR AM_BUILD AM_SAMPLES
# Debian's python3 for the helpers (see tests/run-all.sh: a pyenv shim first
# in PATH costs about 0.35 s a start)
case :$PATH: in :/usr/bin:*) ;; *) [ -x /usr/bin/python3 ] && export PATH=/usr/bin:$PATH ;; esac
D=$AM_BUILD/agentmeterd
C=$AM_BUILD/agentmeterctl
FIX=$AM_SRCDIR/fixtures
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

T_N=0
T_FAIL=0
ok() { # ok COND_STATUS DESCRIPTION
	T_N=$((T_N + 1))
	if [ "$1" -eq 0 ]; then echo "ok $T_N - $2"; else echo "not ok $T_N - $2"; T_FAIL=$((T_FAIL + 1)); fi
}
check() { # check DESCRIPTION CMD...
	local d=$1; shift
	if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi
}
is() { # is GOT EXPECTED DESCRIPTION
	if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got '$1', expected '$2'"; fi
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N # SKIP $*"; }
diag() { echo "# $*"; }
like() { # like GOT PART DESCRIPTION: GOT contains PART
	case $1 in *"$2"*) ok 0 "$3" ;; *) ok 1 "$3"; diag "$1" ;; esac
}
done_testing() { echo "1..$T_N"; [ "$T_FAIL" -eq 0 ]; exit $?; }

# A fresh, private environment: nothing of the real user leaks in.
new_env() {
	T=$(mktemp -d /tmp/amsys.XXXXXX)
	chmod 755 "$T"
	export HOME=$T/home XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config
	mkdir -p "$HOME" "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"
	chmod 700 "$XDG_RUNTIME_DIR"
	# every discovery variable the adapters declare (but HOME), as the daemon lists them
	unset $("$D" --list-variables 2>/dev/null | cut -f1 | grep -vx HOME) STATE_DIRECTORY RUNTIME_DIRECTORY \
		AGENTMETER_INSTALL_VARS AGENTMETER_INSTALL_TIME JOURNAL_STREAM NOTIFY_SOCKET WATCHDOG_USEC
	export AGENTMETER_LOG_CONSOLE=1
	trap 'cleanup_env' EXIT
}
cleanup_env() {
	stop_daemon >/dev/null 2>&1
	[ -n "${KEEP:-}" ] || rm -rf "$T" 2>/dev/null
}

# use_test_user: as root, run the binaries as an unprivileged user, so
# permission checks mean something (root reads everything). The checkout may
# sit under a directory that user cannot enter (/root/src, mktemp -d), so the
# binaries under test are copied into the test's own world-readable $T/bin
# and the helpers of tests/lib into $T/testlib ($TLIB) first; anything else
# the user must read is copied into $T by the test.
RUN=()
TLIB=$AM_SRCDIR/tests/lib # the test helpers (gen_pi.py...); a readable copy for the test user
use_test_user() {
	[ "$(id -u)" -eq 0 ] || return 0
	# tests run in parallel (prove -j): another may add the user first
	id amtestsys >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin amtestsys 2>/dev/null ||
		id amtestsys >/dev/null
	local u; u=$(id -u amtestsys)
	install -d -m 0755 "$T/bin" "$T/testlib"
	install -m 0755 "$D" "$C" "$T/bin/"
	install -m 0644 "$AM_SRCDIR"/tests/lib/*.py "$T/testlib/"
	D=$T/bin/agentmeterd C=$T/bin/agentmeterctl TLIB=$T/testlib
	chown -R "$u:$u" "$T"
	RUN=(setpriv --reuid="$u" --regid="$u" --clear-groups env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" XDG_CONFIG_HOME="$XDG_CONFIG_HOME")
	AS_USER=amtestsys
}
# start_daemon [ARGS...]: runs agentmeterd in the background, waits for its socket.
start_daemon() {
	"${RUN[@]}" "$D" --log-target=console "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	local i
	for i in $(seq 200); do
		[ -S "$XDG_RUNTIME_DIR/agentmeterd/control.sock" ] && "${RUN[@]}" "$C" version >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "# daemon did not come up; log:"; sed 's/^/#   /' "$T/daemon.log"
	return 1
}
stop_daemon() {
	[ -n "${DPID:-}" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID"
	local rc=$?
	DPID=
	return $rc
}
# cached NAME DIR FUNC: FUNC ROOT makes a tree (a generated corpus) under
# ROOT and prints what it made; here into DIR. Under tests/run-all.sh
# ($AM_TEST_CACHE, one directory a run) FUNC runs once: the same test in
# the other build copies its tree and output. Copies keep the files' times.
cached() {
	local name=$1 dir=$2 fn=$3 c
	if [ -z "${AM_TEST_CACHE:-}" ] || [ ! -d "$AM_TEST_CACHE" ]; then "$fn" "$dir"; return; fi
	c=$AM_TEST_CACHE/$name
	(
		flock 9 || exit 1
		[ -f "$c/made" ] && exit 0
		rm -rf "$c" && mkdir -p "$c" && "$fn" "$c/tree" >"$c/out" && touch "$c/made"
	) 9>>"$AM_TEST_CACHE/$name.lock" || return 1
	mkdir -p "$dir" && cp -a "$c/tree/." "$dir/" && cat "$c/out"
}
# holds 'SHELL TEXT': runs the text as a command, evaluated anew at each call:
# wait_until 10 holds '[ "$(totals events)" = 7 ]' (a "$(...)" written among
# wait_until's own arguments would be expanded once, before the first poll)
holds() { eval "$1"; }
# wait_until SECONDS CMD...: polls CMD every 20 ms until it succeeds.
wait_until() {
	local limit=$1; shift
	local end=$(( $(date +%s%N) + limit * 1000000000 ))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.02
	done
	return 1
}
# totals FIELD: a field of `report daily --json` totals ("null" when null)
totals() {
	"${RUN[@]}" "$C" report daily --json 2>/dev/null | jq -r ".totals.$1"
}
totals_line() {
	"${RUN[@]}" "$C" report daily --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens, .cost_usd]'
}

# An earlier release's ledger, fixtures/ledger-*/ (set FX to it): a report of
# a ledger directory as `agentmeterctl --state-dir DIR report WHAT --json`
# prints it, and as that release printed it (report-WHAT.json), both with
# the parts that release had (totals without events_by_kind, the rows)
REPORT_PROJ='{totals: (.totals | del(.events_by_kind)), rows: .rows}'
report_of() { "$C" --state-dir "$1" report "$2" --json 2>/dev/null | jq -cS "$REPORT_PROJ"; }
old_report() { jq -cS "$REPORT_PROJ" "$FX/report-$1.json"; }
same_reports() { # same_reports DIR WHAT: daily, model, session and tool reports
	for r in daily model session tool; do
		is "$(report_of "$1" "$r")" "$(old_report "$r")" "$2: $r report equals the old release's"
	done
}
# ledger_meta DIR KEY: a db meta value of DIR's ledger as mdb_dump prints
# it in hex; ledger_entries DIR DB: the entries of one of its dbs
ledger_meta() {
	mdb_dump -n -s meta "$1/ledger.mdb" | awk -v k="$(printf %s "$2" | od -An -tx1 | tr -d ' \n')" \
		'f { print substr($1, 1); exit } $1 == k { f = 1 }'
}
ledger_entries() { mdb_stat -n -s "$2" "$1/ledger.mdb" | sed -n 's/^ *Entries: //p'; }
# The harness fixtures those ledgers were made from, into $HOME
old_release_homes() {
	mkdir -p "$HOME/.pi"
	cp -a "$FIX/picoclaw/user/." "$HOME/"
	cp -a "$FIX/pi/agent" "$HOME/.pi/agent"
	cp -a "$FIX/openclaw/state" "$HOME/.openclaw"
	cp -a "$FIX/claude/config" "$HOME/.claude"
	cp -a "$FIX/codex/home" "$HOME/.codex"
}
