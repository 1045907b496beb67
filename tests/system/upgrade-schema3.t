#!/bin/bash
# A ledger of schema 3 (fixtures/ledger-schema3, made by the release before
# rows were written as version-3 values) reads the same with today's
# binaries: read-only as it is (nothing written), then opened writable,
# which makes it schema 4 (so that release refuses it instead of failing on
# the new rows), with the old release's daily, model, session and tool
# reports each time; --rebuild-rollups gives the same sums, written as
# version-3 values; the files it came from add nothing when read again; new
# rows are version-3 values next to the old version-2 ones, and both count
# in the reports (with the tool calls of both).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v mdb_dump >/dev/null || skip_all "mdb_dump (lmdb-utils) not installed"
new_env
export TZ=UTC
FX=$FIX/ledger-schema3
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
hexof() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }
# the count of each value version in a db (DIR DB SKIP): the version is the
# byte after SKIP bytes (a row's value starts with its 16-byte content key)
versions_of() {
	mdb_dump -n -s "$2" "$1/ledger.mdb" |
		awk -v at=$(($3 * 2 + 1)) 'h && $1 != "DATA=END" && (i++ % 2) == 1 { print substr($1, at, 2) } /^HEADER=END/ { h = 1 }' |
		sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }'
}
versions() { versions_of "$1" rows 16; }
L=$T/ledger
mkdir -p "$L"
cp "$FX/ledger.mdb" "$L/"
is "$(ledger_meta "$L" schema_version)" "$(hexof 3)" "the fixture is schema 3"
n=$(ledger_entries "$L" rows)
is "$(versions "$L")" "02:$n " "  its $n rows are version-2 values"
nc=$(ledger_entries "$L" calls)
nr=$(ledger_entries "$L" rollup); ns=$(ledger_entries "$L" sessions)
is "$(versions_of "$L" rollup 0)$(versions_of "$L" sessions 0)" "02:$nr 02:$ns " \
	"  its $nr rollups and $ns session sums version-2 values"
same_reports "$L" "read-only, as it is"
is "$(ledger_meta "$L" schema_version)" "$(hexof 3)" "  a read-only open wrote nothing"

out=$("$D" --state-dir "$L" --rebuild-rollups 2>&1); rc=$?
is "$rc" 0 "a writable open (--rebuild-rollups) exits 0"
[ "$rc" -eq 0 ] || diag "$out"
is "$(ledger_meta "$L" schema_version)" "$(hexof 4)" "  schema_version 4"
same_reports "$L" "schema 4, sums rebuilt from the version-2 rows"
is "$(versions "$L")" "02:$n " "  the old rows left as they were"
is "$(versions_of "$L" rollup 0)$(versions_of "$L" sessions 0)" "03:$nr 03:$ns " \
	"  the rebuilt rollups and session sums written as version 3"

# the same files read into the upgraded ledger: nothing new
old_release_homes
out=$("$D" --state-dir "$L" --once 2>&1)
ok $? "--once over the files the old release read"
like "$out" " 0 rows added" "  0 rows added: every old row found again"
like "$out" " 0 tool calls" "  0 tool calls added"
same_reports "$L" "read again"

# new rows: version-3 values beside the old ones, both in the totals
before=$("$C" --state-dir "$L" report daily --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens]')
g=$($GEN corpus "$T/more" --files 3 --pairs 20 --small --seed 7)
new=$(jq -r .events <<<"$g")
out=$(PI_CODING_AGENT_SESSION_DIR=$T/more "$D" --state-dir "$L" --once 2>&1)
like "$out" " $new rows added" "new sessions: $new rows added"
is "$(versions "$L")" "02:$n 03:$new " "  as version-3 values, the $n old rows still version 2"
newc=$(jq -r .calls <<<"$g")
is "$("$C" --state-dir "$L" report tool --json 2>/dev/null | jq .totals.calls)" "$((nc + newc))" \
	"  the tool report counts both: $((nc + newc)) calls"
after=$("$C" --state-dir "$L" report daily --json 2>/dev/null | jq -c '.totals | [.events, .input_tokens, .output_tokens]')
want=$(jq -nc --argjson b "$before" --argjson g "$g" '[$b[0] + $g.events, $b[1] + $g.input, $b[2] + $g.output]')
is "$after" "$want" "  the totals: the old rows' plus the generator's ($want)"
sums=$(for r in daily model session tool; do report_of "$L" "$r"; done | sha256sum)
out=$("$D" --state-dir "$L" --rebuild-rollups 2>&1)
ok $? "--rebuild-rollups over both versions"
is "$(for r in daily model session tool; do report_of "$L" "$r"; done | sha256sum)" "$sums" \
	"  the same four reports after it"
out=$(PI_CODING_AGENT_SESSION_DIR=$T/more "$D" --state-dir "$L" --once 2>&1)
like "$out" " 0 rows added" "  the new files read again: each row found"
done_testing
