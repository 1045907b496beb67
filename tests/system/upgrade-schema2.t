#!/bin/bash
# A ledger of schema 2 (fixtures/ledger-schema2, made by the release before
# the index could lag its rows) reads the same with today's binaries:
# read-only as it is (nothing written), then opened writable, which makes
# it schema 4 with the index's watermark at its last row (every row of
# schema 2 is indexed), with the old release's daily, model, session and
# tool reports each time; the files it came from add nothing when read
# again; new rows wait in the backlog (the index and watermark unmoved) and
# are still found after the process ended, then go into the index in bulk.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v mdb_dump >/dev/null || skip_all "mdb_dump (lmdb-utils) not installed"
new_env
export TZ=UTC
FX=$FIX/ledger-schema2
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
hex16() { printf '%016x' "$1"; }
L=$T/ledger
mkdir -p "$L"
cp "$FX/ledger.mdb" "$L/"
is "$(ledger_meta "$L" schema_version)" "$(printf 2 | od -An -tx1 | tr -d ' ')" "the fixture is schema 2"
is "$(ledger_meta "$L" rowkeys_through)" "" "  without a watermark"
n=$(ledger_entries "$L" rows)
is "$(ledger_entries "$L" rowkeys)" "$n" "  every one of its $n rows indexed"
same_reports "$L" "read-only, as it is"
is "$(ledger_meta "$L" rowkeys_through)" "" "  a read-only open wrote nothing"

out=$("$D" --state-dir "$L" --rebuild-rollups 2>&1); rc=$?
is "$rc" 0 "a writable open (--rebuild-rollups) exits 0"
[ "$rc" -eq 0 ] || diag "$out"
is "$(ledger_meta "$L" schema_version)" "$(printf 4 | od -An -tx1 | tr -d ' ')" "  schema_version 4"
is "$(ledger_meta "$L" rowkeys_through)" "$(hex16 "$n")" "  the watermark at its last row ($n)"
same_reports "$L" "schema 4, sums rebuilt"

# the same files read into the upgraded ledger: nothing new
old_release_homes
out=$("$D" --state-dir "$L" --once 2>&1)
ok $? "--once over the files the old release read"
like "$out" " 0 rows added" "  0 rows added: every call found through the old index"
like "$out" " 0 tool calls" "  0 tool calls added"

# new rows: in the backlog, found again by a later process, then indexed in bulk
g=$($GEN corpus "$T/more" --files 3 --pairs 20 --small --seed 5)
new=$(jq -r .events <<<"$g")
out=$(PI_CODING_AGENT_SESSION_DIR=$T/more "$D" --state-dir "$L" --once 2>&1)
like "$out" " $new rows added" "new sessions: $new rows added"
is "$(ledger_entries "$L" rows) $(ledger_entries "$L" rowkeys) $(ledger_meta "$L" rowkeys_through)" "$((n + new)) $n $(hex16 "$n")" \
	"  rows $((n + new)); the index and its watermark unmoved (the new keys wait in the backlog)"
cp -a "$T/more" "$T/copy"   # the same calls under other file names (as a fork copies them)
out=$(PI_CODING_AGENT_SESSION_DIR=$T/copy "$D" --state-dir "$L" --once 2>&1)
like "$out" " 0 rows added (" "  copies of them, read by a new process: each already counted"
is "$(ledger_entries "$L" rows)" "$((n + new))" "  still $((n + new)) rows"
g=$($GEN corpus "$T/more2" --files 2 --pairs 10 --small --seed 6)
new2=$(jq -r .events <<<"$g")
out=$(AGENTMETER_TEST_BACKLOG_KEYS=10 PI_CODING_AGENT_SESSION_DIR=$T/more2 "$D" --state-dir "$L" --once 2>&1)
like "$out" " $new2 rows added" "with the index written at 10 keys: $new2 more rows added"
rows=$(ledger_entries "$L" rows)
is "$(ledger_entries "$L" rowkeys)" "$rows" "  the backlog went into the index: $rows entries"
# the last key of db rows (after the header, keys and values alternate)
last=$(mdb_dump -n -s rows "$L/ledger.mdb" | awk 'h && $1 != "DATA=END" && (i++ % 2) == 0 { k = $1 } /^HEADER=END/ { h = 1 } END { print k }')
is "$(ledger_meta "$L" rowkeys_through)" "$last" "  the watermark at the last row id"
out=$(PI_CODING_AGENT_SESSION_DIR=$T/more2 "$D" --state-dir "$L" --once 2>&1)
like "$out" " 0 rows added" "  read again: each found in the index"
done_testing
