#!/bin/sh
# Installs the Debian packages agentmeterd builds and tests with, when missing.
# Silent when everything is there; needs root (or sudo) otherwise.
#   tests/deps.sh        everything make check needs (the build, the package
#                        and the tests)
#   tests/deps.sh deb    what make deb needs: the build and the packaging tools
#   tests/deps.sh fuzz   make check's, and clang with its libFuzzer runtime (make fuzz)
build="gcc make pkg-config libsystemd-dev libjson-c-dev liblmdb-dev libzstd-dev libxxhash-dev \
libsqlite3-dev libncurses-dev libpq-dev libmicrohttpd-dev"
deb="debhelper dpkg-dev lintian"
# chromium renders the HTML report and poppler-utils its print (tests/system/html.t);
# zsh, fish and bash-completion check the completion scripts (tests/system/completion.t);
# postgresql-15 is the team ledger's server in tests/system/team*.t
# nodejs (with its npm) runs puppeteer-core against chromium in tests/system/web.t, which
# installs puppeteer-core into $BUILD/node itself (and skips that part without npm)
test="lmdb-utils sqlite3 zstd python3 perl jq mandoc util-linux systemd dbus time tmux python3-dbus \
python3-gi prometheus prometheus-node-exporter curl chromium fonts-dejavu-core poppler-utils zsh fish bash-completion \
postgresql-15 postgresql-client-15 nodejs"
case ${1:-} in
deb) pkgs="$build $deb" ;;
fuzz) pkgs="$build $deb $test clang libclang-rt-dev" ;;
*) pkgs="$build $deb $test" ;;
esac
# one dpkg-query for all of them (one a package took 7 s on a loaded VM;
# make check, make run and make deb start here)
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null | sed -n 's/ .*ok installed$//p')
missing=""
for p in $pkgs; do
	printf '%s\n' "$installed" | grep -qx -- "$p" || missing="$missing $p"
done
# web.t drives Chromium from npm's puppeteer-core: Debian's nodejs comes
# without npm; a nodejs from elsewhere (nodesource's) brings its own, which
# Debian's npm package would conflict with
if [ "${1:-}" != deb ] && ! command -v npm >/dev/null 2>&1; then
	missing="$missing npm"
fi
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null || exit 1
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
