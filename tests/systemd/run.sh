#!/bin/bash
# Entry point of the real systemd --user tests (issue 4): checks that this
# machine can run them, then runs test-service.sh inside harness.sh.
# Usage: tests/systemd/run.sh BUILD_DIR   (TAP on stdout; skips cleanly)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$src/$build ;; esac
skip() { echo "1..0 # SKIP $*"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "needs root (a private mount namespace and a test user)"
for c in unshare setpriv useradd usermod systemctl systemd-analyze journalctl jq sqlite3 make; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
[ -x /lib/systemd/systemd ] || skip "no /lib/systemd/systemd"
[ -x /lib/systemd/systemd-journald ] || skip "no /lib/systemd/systemd-journald"
[ -d /run/systemd/system ] && skip "PID 1 is systemd here: this harness is for hosts without it"
[ -f /sys/fs/cgroup/cgroup.controllers ] || [ -d /sys/fs/cgroup/unified ] ||
	skip "no cgroup2 hierarchy to delegate"
unshare --mount --propagation private true 2>/dev/null || skip "unshare --mount is not permitted"
[ -x "$build/agentmeterd" ] && [ -x "$build/agentmeterctl" ] || skip "no binaries in $build (run make)"
# Run from a copy under a mode-0700 parent (as /root/src or mktemp -d would
# be): the test user must never need to enter the checkout (issue 9).
P=$(mktemp -d /tmp/amsvc-src.XXXXXX); chmod 700 "$P"
copy=$("$src/tests/lib/private-checkout.sh" "$src" "$build" "$P") || skip "could not copy the tree to $P"
echo "# running from a copy under a 0700 parent: $copy"
# The package test-package.sh installs: `make deb` and lintian (~45 s of
# compiling, then ~13 s) run in the background while the service and
# web tests wait on systemd; test-package.sh waits for them (AM_DEB_JOB).
debpid=
if [ "${AM_SYSTEMD_TEST:-test-service.sh}" = test-service.sh ] && [ -z "${AM_DEB:-}" ]; then
	export AM_DEB_JOB=$P/deb-job
	mkdir -p "$AM_DEB_JOB"
	( cd "$AM_DEB_JOB" || exit 1
	  deb=
	  if make -s -C "$copy" deb BUILD="$copy/build-pkg" >deb.out 2>&1; then
		deb=$(tail -n 1 deb.out); case $deb in /*) ;; *) deb=$copy/$deb ;; esac
		lintian --info --display-info --pedantic --tag-display-limit 0 "$deb" >lintian.out 2>&1
	  fi
	  echo "$deb" >done ) </dev/null >/dev/null 2>&1 &
	debpid=$!
fi
# AM_SYSTEMD_TEST=test-web.sh runs one part alone
env AM_BUILD="$copy/build" AM_SRCDIR="$copy" bash "$copy/tests/systemd/harness.sh" \
	"$copy/tests/systemd/${AM_SYSTEMD_TEST:-test-service.sh}"
rc=$?
[ -n "$debpid" ] && wait "$debpid"
rm -rf "$P"
exit $rc
