#!/bin/bash
# A damaged ledger (truncated, overwritten, emptied, removed) is refused by
# the daemon, by --once and by the client's read-only fallback with a clear
# error naming the file and what to do: no SIGBUS, nothing overwritten,
# nothing rebuilt silently. Moving it aside as told rebuilds it.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions
for i in 1 2 3 4 5 6; do $GEN session "$S/--p$i--/s$i.jsonl" --calls 40 --seed "$i" >/dev/null; done
L=$XDG_STATE_HOME/agentmeterd/ledger.mdb
M=$XDG_STATE_HOME/agentmeterd/ledger.created
"$D" --once >/dev/null 2>"$T/once.err"; ok $? "a ledger is made"
events=$("$C" report daily --json 2>/dev/null | jq .totals.events)
check "it has rows ($events) and its marker" test "$events" -gt 100 -a -f "$M"
cp "$L" "$T/good.mdb"
pages=$(( $(stat -c %s "$L") / 4096 ))

# refused KIND: --once, the daemon and the client all refuse, with the reason
# and the guidance, exit codes that are not signals, and the file unchanged
refused() {
	local kind=$1 want=$2 sum; sum=$(md5sum "$L" 2>/dev/null | cut -d" " -f1)
	"$D" --once >/dev/null 2>"$T/e1"; local r1=$?
	timeout 20 "$D" --log-target=console >/dev/null 2>"$T/e2"; local r2=$?
	"$C" report daily >/dev/null 2>"$T/e3"; local r3=$?
	[ "$r1" -eq 1 ] && [ "$r2" -eq 1 ]; ok $? "$kind: --once and the daemon exit 1 (got $r1, $r2)"
	[ "$r3" -ne 0 ] && [ "$r3" -lt 128 ]; ok $? "$kind: the client's read-only fallback fails cleanly (exit $r3)"
	grep -q "$want" "$T/e1" && grep -q "$want" "$T/e2" && grep -q "$want" "$T/e3"
	ok $? "$kind: all three say: $want"
	grep -q "$L" "$T/e1" && grep -q "$L" "$T/e3"; ok $? "$kind: ... naming the file"
	is "$(md5sum "$L" 2>/dev/null | cut -d" " -f1)" "$sum" "$kind: the ledger file is left exactly as it was"
	! grep -qiE 'AddressSanitizer|runtime error' "$T/e1" "$T/e2" "$T/e3"; ok $? "$kind: no sanitizer reports"
}
restore() { cp "$T/good.mdb" "$L"; rm -f "$L-lock"; }

truncate -s 8192 "$L";                      refused "truncate -s 8192" "truncated"
restore; truncate -s $(( pages / 2 * 4096 )) "$L"; refused "cut to half its pages" "truncated"
restore; truncate -s 100001 "$L";           refused "cut inside a page" "whole number"
# the main database's root page, from the newest meta page (LMDB 64-bit layout)
root=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(8192)
metas = [struct.unpack_from("<QQ", d, off + 16 + 120) for off in (0, 4096)]  # last_pg, txnid
cur = 0 if metas[0][1] >= metas[1][1] else 4096
print(struct.unpack_from("<Q", d, cur + 16 + 24 + 48 + 40)[0])' "$L")
restore; head -c 4096 /dev/urandom | dd of="$L" bs=4096 seek="$root" conv=notrunc status=none
                                            refused "random bytes over the root page ($root)" "is damaged"
restore; printf 'XXXX' | dd of="$L" bs=1 seek=16 conv=notrunc status=none
                                            refused "meta page magic overwritten" "not LMDB"
restore; : > "$L";                          refused "truncated to 0" "empty"
rm -f "$L";                                 refused "removed" "missing"
check "... and no ledger was created in its place" test ! -e "$L"

# following the guidance: move it aside and remove the marker, then rebuild
restore; truncate -s 8192 "$L"
"$D" --once >/dev/null 2>"$T/e1"
guide=$(grep -o "mv [^;]*; rm [^;]*;" "$T/e1" | head -1)
check "the error gives the commands to move it aside" test -n "$guide"
(eval "${guide%;}") ; ok $? "running them: $guide"
check "the damaged file is kept for the user" test -f "$L.damaged"
"$D" --once >/dev/null 2>>"$T/once.err"; ok $? "agentmeterd --once rebuilds from the session files"
is "$("$C" report daily --json 2>/dev/null | jq .totals.events)" "$events" "... to the same totals"
done_testing
