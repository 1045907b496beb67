#!/bin/bash
# Replays every fuzz target once over its seeds (the fixtures, the target's
# seeds in tests/fuzz/seeds/, the kept regressions, and hand-made hostile
# inputs written here): nothing crashes or trips the sanitizers. `make
# fuzz` does the long runs.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
ls "$AM_BUILD"/fuzz/replay-* >/dev/null 2>&1 || skip_all "no replay binaries in $AM_BUILD/fuzz"
H=$T/hostile
mkdir -p "$H"
# lines that have hurt line parsers elsewhere: deep nesting, huge numbers,
# negative and NaN-like values, control bytes, truncated UTF-8, NULs
python3 - "$H" <<'PY'
import os, sys
h = sys.argv[1]
cases = {
  "deep": "[" * 5000 + "]" * 5000,
  "bignum": '{"type":"message","message":{"role":"assistant","usage":{"input":1e400,"output":-5,"totalTokens":18446744073709551616,"cost":{"total":1e10}}}}',
  "ctrl": '{"type":"message","message":{"role":"assistant","model":"\\u001b]0;pwned\\u0007","provider":"\\u0000x","usage":{"input":1}}}',
  "utf8": b'{"type":"session","id":"\xc3","cwd":"\xff\xfe"}'.decode("latin-1"),
  "glued": '{"a":1}{"b":2}{"type":"message"' * 50,
  "ts": '{"type":"message","timestamp":"-99999-01-01T00:00:00Z","message":{"role":"assistant","usage":{"input":1}}}',
  "req": '{"v":1,"cmd":"report","kind":"daily","since":"9999-99-99","tz":"../../etc/passwd","harness":"' + "x," * 2000 + '"}',
}
for k, v in cases.items():
    with open(os.path.join(h, k), "wb") as f:
        f.write(v.encode("latin-1", "replace") if isinstance(v, str) else v)
PY
for bin in "$AM_BUILD"/fuzz/replay-*; do
	t=${bin##*/replay-}
	seeds=("$AM_SRCDIR/fixtures" "$H")
	[ -d "$AM_SRCDIR/tests/fuzz/seeds/$t" ] && seeds+=("$AM_SRCDIR/tests/fuzz/seeds/$t")
	[ -d "$AM_SRCDIR/tests/fuzz/regressions/$t" ] && seeds+=("$AM_SRCDIR/tests/fuzz/regressions/$t")
	out=$("$bin" "${seeds[@]}" 2>&1)
	rc=$?
	ok $rc "replay $t: ${out##*$'\n'}"
	[ $rc -eq 0 ] || echo "$out" | tail -20 | sed 's/^/#   /'
done
done_testing
