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
# As root, the normal build's system tests that run the binaries as the
# test user (use_test_user) run from a copy of the tree and the build under
# a mode-0700 parent, which that user cannot enter (issue 9: /root/src,
# mktemp -d); the sanitizer build runs them from the checkout. So both
# places are tested and nothing runs twice: private-checkout.t, which
# re-ran them from such a copy (~55 s), leaves out those listed in
# AM_TESTS_FROM_COPY.
from_copy=() copy_parent=
# (at the end, or when interrupted: the copy removed, the normal build's
# links to the tests again)
drop_copy() {
	[ -n "$copy_parent" ] || return 0
	rm -rf "$copy_parent"
	for n in "${from_copy[@]}"; do ln -sf "../../tests/system/$n" "$build/system/$n"; done
}
trap drop_copy EXIT
if [ "$(id -u)" -eq 0 ] && [ -x "$build/agentmeterd" ]; then
	copy_parent=$(mktemp -d /tmp/amckout.XXXXXX) && chmod 700 "$copy_parent" &&
		copy=$(tests/lib/private-checkout.sh "$PWD" "$build" "$copy_parent") &&
		mapfile -t from_copy < <(cd tests/system && grep -l '^[[:space:]]*use_test_user' -- *.t | grep -vx private-checkout.t)
	# where the harness captures are, as seen from the checkout (lib.sh's
	# default is relative to AM_SRCDIR, the copy's)
	export AM_SAMPLES=${AM_SAMPLES:-$PWD/../shared/samples}
	export AM_TESTS_FROM_COPY="${from_copy[*]}"
fi
for b in "$build" "$asan"; do
	[ -d "$b" ] || continue
	mkdir -p "$b/system"
	rm -f "$b/system"/*.t
	for t in tests/system/*.t; do
		n=$(basename "$t")
		if [ "$b" = "$build" ] && [ -x "$t" ] && [[ " ${from_copy[*]} " == *" $n "* ]]; then
			printf '#!/bin/bash\n# written by tests/run-all.sh: %s, run from the private copy of the tree\ncd %q && exec env AM_SRCDIR=%q AM_BUILD=%q bash %q\n' \
				"$n" "$copy" "$copy" "$copy/build" "$copy/tests/system/$n" >"$b/system/$n"
			chmod +x "$b/system/$n"
		else
			ln -sf "../../$t" "$b/system/$n"
		fi
	done
	for t in "$b"/tests/test-*; do [ -x "$t" ] && list+=("$t"); done
	for t in "$b"/system/*.t; do
		# private-checkout.t checks make install and make run from a copy of
		# the tree (and, run alone, the tests above from it): once (normal
		# build) is enough
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
# what tests may make once and share in this run (lib-pg.sh: an initdb'd
# PostgreSQL cluster each team test copies)
AM_TEST_CACHE=$(mktemp -d); chmod 755 "$AM_TEST_CACHE"; export AM_TEST_CACHE
prove --exec "$PWD/tests/lib/keep-output.sh" --timer -j"$jobs" "${list[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# what each failed program said: its "not ok" lines and diagnostics (prove
# shows only their numbers)
sed -n 's/^\([^ ]*\) *(Wstat.*/\1/p' "$log" | while read -r t; do
	echo "---- $t: its failures and diagnostics (the last 60)"
	grep -E '^not ok|^#' "$AM_TEST_LOGS/$(printf '%s' "$t" | tr '/' '_').log" 2>/dev/null | tail -n 60
done
rm -rf "$AM_TEST_LOGS" "$AM_TEST_CACHE"
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
