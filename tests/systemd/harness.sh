#!/bin/bash
# A real `systemd --user` and a real systemd-journald for tests, on a host
# whose PID 1 is not systemd (adapted from ../shared/recipes). Run as root:
#   bash harness.sh TESTSCRIPT    (sourced; helpers: AS, start_manager, ts, el)
# Everything mount-related happens in a private mount namespace; the host's
# /run and /var/log stay untouched. All output of its own is TAP comments.
set -uo pipefail
if [ -z "${AM_IN_NS:-}" ]; then
	exec env AM_IN_NS=1 unshare --mount --propagation private -- bash "$0" "$@"
fi
ts() { date +%s%N; }
el() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))ms"; }
note() { echo "# harness: $*"; }
bail() { echo "not ok 1 - harness: $*"; echo "1..1"; exit 1; }
T0=$(ts)
TUSER=${TUSER:-amsvc}
id "$TUSER" >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin "$TUSER" ||
	bail "cannot create the test user $TUSER"
usermod -aG systemd-journal "$TUSER"                    # lets the user run journalctl --user
U=$(id -u "$TUSER"); G=$(id -g "$TUSER")
WORK=$(mktemp -d /tmp/amsvc.XXXXXX); chmod 755 "$WORK"
H=$WORK/home; install -d -m 700 -o "$U" -g "$G" "$H"    # fresh $HOME per run
# --- namespace-private mounts ---
mount --bind /run /run                                  # a non-mountpoint /run makes sandboxed units get an empty /run
mount -t tmpfs -o mode=755 tmpfs /run/systemd
mkdir -p /run/systemd/system                            # sd_booted() => true (only in this namespace)
mkdir -m 0700 /run/systemd/unit-root                    # normally made by PID 1; needed for ProtectSystem= etc.
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=persistent\nRateLimitBurst=0\n' > /run/systemd/journald.conf.d/test.conf
mkdir -p /run/systemd/journal && touch /run/systemd/journal/flushed   # per-user journal files at once
mount -t tmpfs -o mode=755 tmpfs /run/log && install -d -m 2755 -g systemd-journal /run/log/journal
mkdir -p /var/log/journal
mount -t tmpfs -o mode=2755 tmpfs /var/log/journal && chgrp systemd-journal /var/log/journal
mount -t tmpfs -o mode=755 tmpfs /run/user
export XDG_RUNTIME_DIR=/run/user/$U
install -d -m 700 -o "$U" -g "$G" "$XDG_RUNTIME_DIR"
# --- journald ---
/lib/systemd/systemd-journald > "$WORK/journald.out" 2>&1 &
JPID=$!
for i in $(seq 100); do [ -S /run/systemd/journal/stdout ] && break; sleep 0.05; done
# --- a delegated cgroup, as logind would make it; a slice of our own so
# two runs (or the recipe's own user) do not collide ---
SLICE=amsvc-$$.slice
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then       # pure cgroup2
	CGS=(/sys/fs/cgroup/$SLICE)
else                                                    # hybrid: v2 at unified, v1 name=systemd
	CGS=(/sys/fs/cgroup/unified/$SLICE /sys/fs/cgroup/systemd/$SLICE)
fi
for c in "${CGS[@]}"; do mkdir -p "$c/user@$U.service" && chown -R "$U:$G" "$c/user@$U.service"; done
UMPID=
AS() { setpriv --reuid="$U" --regid="$G" --init-groups env -i HOME="$H" USER="$TUSER" LOGNAME="$TUSER" \
	PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$@"; }
start_manager() {
	( for c in "${CGS[@]}"; do echo $BASHPID > "$c/user@$U.service/cgroup.procs"; done
	  exec setpriv --reuid="$U" --regid="$G" --init-groups \
		env -i HOME="$H" USER="$TUSER" LOGNAME="$TUSER" SHELL=/bin/sh PATH=/usr/local/bin:/usr/bin:/bin \
		XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" /lib/systemd/systemd --user --log-target=journal ) >> "$WORK/um.out" 2>&1 &
	UMPID=$!
	for i in $(seq 200); do
		[ "$(AS systemctl --user show -p SystemState --value 2>/dev/null)" = running ] && return 0
		sleep 0.05
	done
	return 1
}
stop_manager() {
	[ -n "$UMPID" ] || return 0
	AS systemctl --user exit 2>/dev/null
	for i in $(seq 50); do kill -0 "$UMPID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$UMPID" 2>/dev/null && kill -KILL "$UMPID"
	wait "$UMPID" 2>/dev/null
	UMPID=
}
cleanup() {
	stop_manager
	for c in "${CGS[@]}"; do
		[ -e "$c/user@$U.service/cgroup.kill" ] && echo 1 > "$c/user@$U.service/cgroup.kill"
	done
	sleep 0.1
	for c in "${CGS[@]}"; do find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null; done
	cp -r /var/log/journal "$WORK/journal" 2>/dev/null     # artifact: journalctl -D "$WORK/journal"
	kill "$JPID" 2>/dev/null; wait "$JPID" 2>/dev/null
	note "total $(el "$T0"); artifacts in $WORK (journal: journalctl -D $WORK/journal)"
}
trap cleanup EXIT; trap "exit 130" INT; trap "exit 143" TERM
start_manager || bail "the user manager did not reach 'running' (see $WORK/um.out)"
note "journald pid=$JPID, user manager pid=$UMPID running after $(el "$T0")"
. "$1"
