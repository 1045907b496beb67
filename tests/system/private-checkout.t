#!/bin/bash
# `make check`, `make install` and `make run` must work from a checkout under
# a mode-0700 parent (/root/src, mktemp -d) as root: the tests that run the
# binaries as another user must not need to enter the checkout (issue 9).
# This copies the tree there and runs those tests and targets from the copy.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a test user, and a checkout only root can enter)"
for c in setpriv useradd make git tar; do
	command -v "$c" >/dev/null 2>&1 || skip_all "$c not found"
done
new_env
P=$(mktemp -d /tmp/amckout.XXXXXX)
chmod 700 "$P"
trap 'cleanup_env; rm -rf "$P"' EXIT
use_test_user
self=$(basename "$0")

SRC=$("$AM_SRCDIR/tests/lib/private-checkout.sh" "$AM_SRCDIR" "$AM_BUILD" "$P"); ok $? "tree and binaries copied under a 0700 parent"
check "the copy has the Makefile, the tests and the binaries" \
	test -f "$SRC/Makefile" -a -f "$SRC/tests/system/lib.sh" -a -x "$SRC/build/agentmeterctl"
# the premise: the test user really cannot reach into the copy
! "${RUN[@]}" test -x "$SRC/build/agentmeterctl" 2>/dev/null
ok $? "the test user cannot enter the copy (the case under test is real)"

# every system test that runs binaries as the test user, from the copy (of
# the team tests, which share lib-team.sh's copies into the test user's
# world, team-errors.t: team.t's own 19 s and team-faults.t's 25 s prove
# nothing more about the copy)
tests=$(cd "$SRC/tests/system" && grep -l '^[[:space:]]*use_test_user' -- *.t | grep -vx "$self" |
        grep -vx -e team.t -e team-faults.t)
[ -n "$tests" ]; ok $? "found the system tests that use a test user: $(echo $tests)"
for t in $tests; do
	# tests/run-all.sh runs these from such a copy itself (the normal
	# build's run of them): not twice
	case " ${AM_TESTS_FROM_COPY:-} " in *" $t "*)
		skip "$t: tests/run-all.sh runs it from a copy under a 0700 parent"; continue ;; esac
	out=$(cd "$SRC" && env AM_SRCDIR="$SRC" AM_BUILD="$SRC/build" AM_SAMPLES="$AM_SAMPLES" \
		bash "$SRC/tests/system/$t" 2>&1); rc=$?
	ok $rc "$t passes from the copy ($(grep -c '^ok' <<<"$out") ok, $(grep -c '^not ok' <<<"$out") not ok)"
	[ $rc -eq 0 ] || grep -E '^not ok|^#   |Permission denied' <<<"$out" | head -n 30 | sed 's/^/#   /'
done

# make install from the copy into a DESTDIR the test user can read
R=$T/root
out=$(make -s -C "$SRC" -o all install BUILD="$SRC/build" PREFIX=/usr/local DESTDIR="$R" 2>&1); rc=$?
ok $rc "make install DESTDIR=… from the copy"
[ $rc -eq 0 ] || sed 's/^/#   /' <<<"$out"
modes=$(cd "$R/usr/local" && stat -c '%a %n' bin/agentmeterd bin/agentmeterctl share/man/man1/agentmeterctl.1 \
	share/man/man8/agentmeterd.8 lib/systemd/user/agentmeterd.service 2>&1 | tr '\n' ' ')
is "$modes" "755 bin/agentmeterd 755 bin/agentmeterctl 644 share/man/man1/agentmeterctl.1 644 share/man/man8/agentmeterd.8 644 lib/systemd/user/agentmeterd.service " \
	"installed files are world-readable (binaries 0755, the rest 0644)"
chmod -R a+rX "$R"
v=$("${RUN[@]}" "$R/usr/local/bin/agentmeterd" --version 2>&1)
case $v in *[0-9].[0-9]*) ok 0 "the test user runs the installed agentmeterd --version ($v)" ;;
	*) ok 1 "the test user runs the installed agentmeterd --version"; diag "got: $v" ;; esac

# make run from the copy, as root, with a session to count
S=$HOME/.pi/agent/sessions
g=$(python3 "$SRC/tests/lib/gen_pi.py" session "$S/--ck--/ck.jsonl" --calls 3 --seed 9 --small)
out=$(make -s -C "$SRC" -o all run BUILD="$SRC/build" RUN_ARGS=--once 2>&1); rc=$?
ok $rc "make run RUN_ARGS=--once from the copy"
[ $rc -eq 0 ] || sed 's/^/#   /' <<<"$out"
is "$("$SRC/build/agentmeterctl" report daily --json 2>/dev/null | jq .totals.events)" "$(jq .events <<<"$g")" \
	"... and it counted the session's calls into the private state dir"
done_testing
