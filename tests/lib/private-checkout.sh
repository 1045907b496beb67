#!/bin/bash
# Copies this checkout (tracked and untracked-but-not-ignored files, as they
# are in the work tree), a build's two binaries and its test helpers into DEST/src, so tests can
# prove they pass from a checkout whose parents another user cannot enter.
# Usage: tests/lib/private-checkout.sh SRCDIR BUILDDIR DEST   (prints DEST/src)
set -euo pipefail
src=$1 build=$2 dest=$3
out=$dest/src
mkdir -p "$out/build"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# files deleted in the work tree but still tracked are left out
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -x -C "$out"
else
	# a tarball without .git: everything but the build directories
	(cd "$src" && tar --exclude='./build' --exclude='./build-*' -cf - .) | tar -x -C "$out"
fi
# the binaries under test, not a rebuild: the point is where the tree lives
cp -p "$build/agentmeterd" "$build/agentmeterctl" "$out/build/"
[ -d "$build/tools" ] && cp -rp "$build/tools" "$out/build/" # test helpers (tests/lib/*.c)
echo "$out"
