#!/bin/bash
# Runs the whole suite as one prove run: unit tests and system tests under
# the normal build and under the ASan/UBSan build, then the real
# systemd --user tests. Usage: tests/run-all.sh BUILD ASAN_BUILD
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
asan=${2:-build-asan}
# the real systemd --user tests first: the longest program (~70 s) starts
# beside the others instead of running alone at the end of the -j2 run
list=()
[ -x tests/systemd/run.t ] && list+=(tests/systemd/run.t)
for b in "$build" "$asan"; do
	[ -d "$b" ] || continue
	mkdir -p "$b/system"
	rm -f "$b/system"/*.t
	for t in tests/system/*.t; do
		ln -sf "../../$t" "$b/system/$(basename "$t")"
	done
	for t in "$b"/tests/test-*; do [ -x "$t" ] && list+=("$t"); done
	for t in "$b"/system/*.t; do
		# private-checkout.t re-runs other system tests from a copy of the
		# tree to prove where the tree lives does not matter; the sanitizer
		# build runs those tests directly, so once (normal build) is enough
		[ "$b" = "$asan" ] && [ "$(basename "$t")" = private-checkout.t ] && continue
		list+=("$t")
	done
done
# the read pool's workers and their writer under ThreadSanitizer
[ -x build-tsan/tests/test-read-pool ] && list+=(build-tsan/tests/test-read-pool)
# a test program that cannot be executed (a new .t committed without its
# x bit) is one failure, said by name, not the end of the whole run
unexec=0 runnable=()
for t in "${list[@]}"; do
	if [ -x "$(readlink -f "$t")" ]; then runnable+=("$t"); else echo "not executable: $t" >&2; unexec=$((unexec + 1)); fi
done
list=("${runnable[@]}")
export AM_SRCDIR=$PWD
# The tests' helpers run under Debian's python3 (tests/deps.sh installs it,
# with python3-dbus and python3-gi): a version manager's shim found first in
# PATH (pyenv's) costs about 0.35 s a start, and the suite starts thousands.
[ -x /usr/bin/python3 ] && export PATH=/usr/bin:$PATH
# Two test programs at a time by default (AM_PROVE_JOBS overrides; 1 runs
# them one by one): the system tests spend much of their time waiting on
# the daemon, a shell or a server, and each has its own directories,
# sockets and ports, so they can overlap.
jobs=${AM_PROVE_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 2 ] && jobs=2
log=$(mktemp)
AM_TEST_LOGS=$(mktemp -d); export AM_TEST_LOGS
prove --exec "$PWD/tests/lib/keep-output.sh" --timer -j"$jobs" "${list[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# what each failed program said: its "not ok" lines and diagnostics (prove
# shows only their numbers)
sed -n 's/^\([^ ]*\) *(Wstat.*/\1/p' "$log" | while read -r t; do
	echo "---- $t: its failures and diagnostics (the last 60)"
	grep -E '^not ok|^#' "$AM_TEST_LOGS/$(printf '%s' "$t" | tr '/' '_').log" 2>/dev/null | tail -n 60
done
rm -rf "$AM_TEST_LOGS"
# A plain closing line for CI, counting test programs.
total=${#list[@]}
failed=$(grep -cE '^[^ ]+ \.+.*(Failed|Dubious|No plan)|^[^ ]+ \(Wstat' "$log")
bad=$(sed -n 's/^Failed \([0-9]*\)\/\([0-9]*\) test programs.*/\1/p' "$log" | tail -1)
[ -n "$bad" ] && failed=$bad
[ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
failed=$((failed + unexec))
[ "$unexec" -gt 0 ] && rc=1
rm -f "$log"
echo "$((total + unexec - failed)) passed, $failed failed"
exit "$rc"
