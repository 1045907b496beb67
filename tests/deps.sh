#!/bin/sh
# Installs the Debian packages agentmeterd builds and tests with, when missing.
# Silent when everything is there; needs root (or sudo) otherwise.
pkgs="gcc make pkg-config libsystemd-dev libjson-c-dev liblmdb-dev lmdb-utils libzstd-dev \
libxxhash-dev libsqlite3-dev sqlite3 zstd python3 perl jq mandoc util-linux systemd dbus time \
libncurses-dev tmux python3-dbus python3-gi prometheus prometheus-node-exporter curl \
libpq-dev postgresql-15 postgresql-client-15"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || exit 1
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
