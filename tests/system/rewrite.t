#!/bin/bash
# A file rewritten in place is read again, wherever the change sits: the
# same length with the first line and the 64 bytes before the offset kept
# (dd conv=notrunc, `cat new > F`), at the start, the middle and the end;
# a change deep in a large file that also grew is found by a rescan. The
# changed call is counted, nothing is counted twice.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
S=$HOME/.pi/agent/sessions/--p--
F=$S/s.jsonl

# mutate FILE N MODE: changes the output tokens of the N-th assistant line
# (1-based; -1 the last) to another number of the same digits, in place
# (MODE notrunc: rewrite those bytes only; catgt: truncate and rewrite the
# whole file, as `cat new > F`). Prints the changed call's new output.
mutate() {
	python3 - "$@" <<'PY'
import re, sys
path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
lines = data.split(b"\n")
idx = [i for i, l in enumerate(lines) if b'"role":"assistant"' in l and b'"usage"' in l]
i = idx[n - 1] if n > 0 else idx[n]
m = re.search(rb'"output":(\d+)', lines[i])
old = m.group(1)
new = str(int(old) + 1).encode() if len(str(int(old) + 1)) == len(old) else str(int(old) - 1).encode()
lines[i] = lines[i][:m.start(1)] + new + lines[i][m.end(1):]
out = b"\n".join(lines)
assert len(out) == len(data)
if mode == "notrunc":
    off = sum(len(l) + 1 for l in lines[:i])
    with open(path, "r+b") as f:
        f.seek(off); f.write(lines[i])
else:
    with open(path, "wb") as f:
        f.write(out)
print(int(new))
PY
}
once() { "$D" --once >>"$T/once.log" 2>&1; }
ev() { totals events; }

for place in 1 2 -1; do
	for mode in notrunc catgt; do
		rm -rf "$XDG_STATE_HOME/agentmeterd" "$S"
		$GEN session "$F" --calls 3 --seed 41 --small >/dev/null
		touch -d '-1 hour' "$F"  # the rewrite below gives a new mtime, as any write does
		once
		e0=$(ev); o0=$(totals output_tokens)
		ino0=$(stat -c %i "$F")
		newout=$(mutate "$F" "$place" "$mode")
		same=no; [ "$ino0" = "$(stat -c %i "$F")" ] && same=yes
		once
		is "$(ev)" "$((e0 + 1))" "rewrite of call $place ($mode, same inode: $same, same size): the changed call is counted"
		is "$(totals output_tokens)" "$((o0 + newout))" "output grows by exactly the changed call's ($place, $mode)"
		once
		is "$(ev)" "$((e0 + 1))" "a further run counts nothing twice ($place, $mode)"
	done
done

# A large file (many 64 KiB blocks): a change deep inside plus an append.
# The append is read at once; the change is found by a rescan, which checks
# every consumed byte.
rm -rf "$XDG_STATE_HOME/agentmeterd" "$S"
$GEN session "$F" --calls 400 --seed 42 >/dev/null
check "the large file spans several blocks" [ "$(stat -c %s "$F")" -gt 300000 ]
start_daemon; ok $? "daemon starts"
wait_until 20 sh -c "[ \"\$('$C' report daily --json | jq .totals.events)\" = 400 ]"; ok $? "400 calls read"
o0=$(totals output_tokens)
newout=$(mutate "$F" 3 notrunc)
app=$($GEN append "$F" --calls 1 --seed 43 | jq .output)
wait_until 20 sh -c "[ \"\$('$C' report daily --json | jq .totals.events)\" -ge 401 ]"; ok $? "the appended call is read live"
"$C" rescan >/dev/null; ok $? "rescan accepted"
wait_until 20 sh -c "[ \"\$('$C' report daily --json | jq .totals.events)\" = 402 ]"; ok $? "the rewritten call deep in the file is counted after the rescan"
is "$(totals output_tokens)" "$((o0 + newout + app))" "output: old calls + the changed call + the appended call, nothing twice"
stop_daemon; ok $? "daemon stops"
done_testing
