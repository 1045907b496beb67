#!/bin/bash
# SQLite sources under attack (issue 52), through OpenCode's database with the
# real daemon: (1) pages corrupted in the middle of the database, and a
# corrupt table beside a good one; (2) token values that are text, negative,
# fractional, 2^63-1 or null, typed columns holding junk; (3) a WAL that keeps
# growing (never checkpointed, a reader holding it open, thousands of
# commits, then restarted from its start); (4) the .db replaced by rename:
# by a copy with the same rows (other rowids) and new ones, then by a
# different database. Each time: the daemon lives, status names the database
# and what is wrong, every call is counted once, nothing counted is lost.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in jq python3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
python3 -c 'import sqlite3' 2>/dev/null || skip_all "python3 has no sqlite3 module"
new_env
OC_T0=$(( ($(date +%s) - 14400) * 1000 )) # call i at OC_T0 + i s: ids below 14400 are in the past
export OC_T0
rows() { python3 "$AM_SRCDIR/tests/lib/opencode_rows.py" "$@"; }
export XDG_DATA_HOME=$T/data
DB=$XDG_DATA_HOME/opencode/opencode.db
mkdir -p "$XDG_DATA_HOME/opencode" "$T/work"
# what rows A..B add up to (call i: input i): [events, input tokens]
want() { echo "[$(($2 - $1 + 1)),$(( ($1 + $2) * ($2 - $1 + 1) / 2 ))]"; }
plus() { jq -nc --argjson a "$1" --argjson b "$2" '[$a[0] + $b[0], $a[1] + $b[1]]'; }
got() { "$C" report daily --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens]'; }
got_is() { [ "$(got)" = "$1" ]; }
expect() { # expect WANT DESCRIPTION: polls up to 20 s
	if wait_until 20 got_is "$1"; then ok 0 "$2"; else ok 1 "$2"; diag "got $(got), expected $1"; fi
}
src() { "$C" sources --json 2>/dev/null | jq -r --arg p "$DB" ".sources[] | select(.path == \$p) | .$1"; }
alive() { kill -0 "$DPID" 2>/dev/null && "$C" version >/dev/null 2>&1; }
# overwrite pages FIRST..LAST (1-based) of a database file with 0xff bytes
smash() {
	python3 - "$@" <<'PY'
import sys
path, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    hdr = f.read(100)
    size = int.from_bytes(hdr[16:18], "big") or 65536
    for p in range(first, last + 1):
        f.seek((p - 1) * size)
        f.write(b"\xff" * size)
PY
}
pages() { python3 -c 'import sys,os; s=open(sys.argv[1],"rb").read(100); print(os.path.getsize(sys.argv[1]) // (int.from_bytes(s[16:18],"big") or 65536))' "$1"; }
rootpage() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT rootpage FROM sqlite_master WHERE name=?", (sys.argv[2],)).fetchone()[0])' "$1" "$2"; }

start_daemon --reconcile-interval=3600; ok $? "daemon starts"

# ---- (1) corruption --------------------------------------------------------------
rows make "$T/work/good.db" 1 3000 pad=300 >/dev/null
cp "$T/work/good.db" "$DB"
expect "$(want 1 3000)" "3000 rows counted from a good database"
n=$(pages "$T/work/good.db")
cp "$T/work/good.db" "$T/work/bad.db"
smash "$T/work/bad.db" $((n * 2 / 5)) $((n * 3 / 5))
mv "$T/work/bad.db" "$DB" # restored from a corrupt backup: another inode, read from the start
check "status: the database's error is set" wait_until 20 holds '[ -n "$(src error)" ]'
like "$(src error)" "corrupt" "sources: the error says the database is corrupt"
check "the daemon lives" alive
st=$("$C" status 2>/dev/null)
like "$st" "database $DB" "status names the database"
like "$st" "corrupt" "status says it is corrupt"
is "$(got)" "$(want 1 3000)" "nothing counted before is lost, nothing doubled by the rows read before the bad pages"
# a good copy comes back, with ten more rows
rows make "$T/work/good2.db" 1 3010 pad=300 >/dev/null
mv "$T/work/good2.db" "$DB"
expect "$(want 1 3010)" "the good copy back: its ten new rows counted, none of the 3000 twice"
check "the error is gone" wait_until 20 holds '[ "$(src error)" = null ]'

# a corrupt table beside a good one: the event table's root page smashed in
# place while rows are added to the message table
rows make "$T/work/ev.db" 3011 3100 events >/dev/null
cp "$T/work/ev.db" "$T/work/ev-good.db"
mv "$T/work/ev.db" "$DB"
expect "$(want 1 3100)" "a database with an event table: counted"
smash "$DB" "$(rootpage "$T/work/ev-good.db" event)" "$(rootpage "$T/work/ev-good.db" event)"
check "status: a corrupt event table is an error" wait_until 20 holds '[ -n "$(src error)" ] && [ "$(src error)" != null ]'
like "$(src error)" "corrupt" "... that says corrupt"
check "the daemon lives" alive
is "$(got)" "$(want 1 3100)" "nothing lost, nothing doubled"
cp "$T/work/ev-good.db" "$DB" # repaired in place (the same inode)
rows grow "$DB" 3101 3105 >/dev/null
expect "$(want 1 3110)" "repaired in place and grown: the new rows counted once"

# ---- (2) hostile values ------------------------------------------------------------
# rows 3201..3209 (tests/lib/opencode_rows.py HOSTILE): tokens as text, -5000,
# 2^63-1, null, a cache read of -1, 1e300, and a cost of -2.5 are refused (six
# for tokens, one for cost); 40.4 tokens are read as 40; junk in the typed
# columns time_created/time_updated is not used (the data's times are); three
# data values that are not messages (a number, a blob, JSON null) malformed
BASE=$(want 1 3110)
refused() { "$C" status --json 2>/dev/null | jq -c '.ledger.rows_refused | [.tokens, .cost]'; }
rows hostile "$DB" >/dev/null
expect "$(plus "$BASE" '[2,47]')" "hostile values: only the fractional (40.4 -> 40) and the junk-column row (7) counted"
is "$(refused)" "[6,1]" "six rows refused for their tokens, one for its negative cost, in status"
is "$(src malformed)" 3 "three data values that are not messages: malformed"
is "$("$C" report daily --json 2>/dev/null | jq '[.totals | (.input_tokens, .output_tokens, .total_tokens, .cost_usd) | select(. < 0)] | length')" 0 \
	"no negative total"
is "$(src error)" null "hostile values are not a database error"
BASE=$(plus "$BASE" '[2,47]')

# ---- (3) a WAL that keeps growing ---------------------------------------------------
# 3000 commits of one row each, never checkpointed (a reader holds the WAL),
# the daemon killed -9 in the middle and started again; then the WAL written
# from its start again with five rows more
rows grow "$DB" 4001 7000 >"$T/grow.out" &
GROW=$!
wait_until 20 holds '[ "$(got | jq ".[0]")" -gt 3200 ]'
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
start_daemon --reconcile-interval=3600; ok $? "restart after kill -9 while the WAL grows"
wait "$GROW"; ok $? "the writer made 3000 commits, then 5 more in a restarted WAL"
check "the -wal grew past 8 MB" [ "$(cat "$T/grow.out")" -gt 8000000 ]
expect "$(plus "$BASE" "$(want 4001 7005)")" "every row of the growing WAL once (count and sum)"
BASE=$(plus "$BASE" "$(want 4001 7005)")

# ---- (4) the .db replaced by rename -----------------------------------------------
# a copy with the same calls under other rowids (reverse order) and 20 new ones
resets0=$(src resets)
rows copy "$DB" "$T/work/copy.db" 9001 9020 >/dev/null
mv "$T/work/copy.db" "$DB"
expect "$(plus "$BASE" "$(want 9001 9020)")" "replaced by a copy (other rowids) with 20 new calls: those 20 counted, nothing twice"
BASE=$(plus "$BASE" "$(want 9001 9020)")
# then a different database altogether
rows make "$T/work/other.db" 10001 10050 >/dev/null
mv "$T/work/other.db" "$DB"
expect "$(plus "$BASE" "$(want 10001 10050)")" "replaced by a different database: its 50 calls counted, none lost from before"
check "sources: the two replacements are resets of the source" test "$(src resets)" -ge $((resets0 + 2))
is "$(src error)" null "no error left"

stop_daemon; ok $? "SIGTERM: exit 0"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
