#!/bin/bash
# OpenClaw SQLite era, the history outside transcript_events (issue 17): a
# state dir built here from fixtures/openclaw/archives/ the way OpenClaw
# 2026.9 stores deleted sessions (archive blobs, zstd and identity, and the
# published .jsonl.deleted.*.zst file) and cold windows (sessions/cold/*.jsonl.zst
# files and SQLite blobs, an orphan beside a restored window), read by a
# fresh --once and checked against an independent count; faults (a wrong
# sha256, a truncated cold file) reported and read once repaired; then live:
# deletion, cold storage and pruning while the daemon runs change no total,
# a new archive is read once.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in sqlite3 zstd jq python3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
python3 -c 'import sqlite3' 2>/dev/null || skip_all "needs python3's sqlite3"
new_env
# the totals are the vendor costs the files carry; a vendor 0 with tokens
# (gpt-5.1 in the JSONL-era fixture) would be priced by our table
# (tests/system/prices.t checks that): price it at 0 here
mkdir -p "$XDG_CONFIG_HOME/agentmeterd"
echo 'price gpt-5.1 in=0 out=0 cache_read=0' > "$XDG_CONFIG_HOME/agentmeterd/prices.conf"
AX=$FIX/openclaw/archives
PY=(python3 "$AM_SRCDIR/tests/system/openclaw-archives.py")
once() { "$D" --once >>"$T/once.log" 2>&1; }
# the independent count of fixture sessions, as totals_line prints it
count() { "${PY[@]}" count "${@/#/$AX/}" | jq -c '.[6] = (.[6] / 1e9 * 1e6 | round / 1e6)'; }
agent_fig() { # agent_fig AGENT FIELD: from status --json
	"$C" status --json | jq -r --arg a "$1" --arg f "$2" \
		'.harnesses[] | select(.id=="openclaw") | .agents[] | select(.agent==$a) | .[$f]'
}
fresh() {
	export HOME=$T/$1/home XDG_STATE_HOME=$T/$1/state
	mkdir -p "$HOME" "$XDG_STATE_HOME"
	A=$HOME/.openclaw/agents/main
	DB=$A/agent/openclaw-agent.sqlite
	S=$A/sessions
	mkdir -p "$S"
}

# ---- a fresh install over months of history ------------------------------------
fresh history
"${PY[@]}" db "$DB"
for s in live deleted-zstd deleted-identity cold-file cold-sqlite restored bad-sha truncated; do
	"${PY[@]}" events "$DB" "$AX/$s.jsonl"
done
"${PY[@]}" delete "$DB" "$AX/deleted-zstd.jsonl" "$S" zstd publish
"${PY[@]}" delete "$DB" "$AX/deleted-identity.jsonl" "$S" identity
"${PY[@]}" delete "$DB" "$AX/bad-sha.jsonl" "$S" zstd bad-sha
"${PY[@]}" cold "$DB" "$AX/cold-file.jsonl" "$S" file >/dev/null
"${PY[@]}" cold "$DB" "$AX/cold-sqlite.jsonl" "$S" sqlite >/dev/null
trunc=$("${PY[@]}" cold "$DB" "$AX/truncated.jsonl" "$S" file truncate)
is "$(sqlite3 "$DB" 'SELECT count(DISTINCT session_id) FROM transcript_events')" 2 \
	"built: only the live and the restored window are left in transcript_events"
is "$(ls "$S"/*.zst "$S"/cold/*.zst | wc -l)" 3 "built: a published archive and two cold files"
# a JSONL-era .deleted archive beside them stays a plain transcript
cp "$FIX/openclaw/state/agents/ops/sessions/2b1a0f9e-8d7c-4b6a-9e5d-4c3b2a1f0e16.jsonl.deleted.2026-06-03T12-00-00.000Z" "$S/"
jsonl_era=$(jq -c -s '[.[] | select(.type=="message" and .message.role=="assistant" and .message.provider!="openclaw") | .message.usage | select(.input+.output+.cacheRead+.cacheWrite > 0)] | [length, (map(.input)|add), (map(.output)|add), (map(.cacheRead)|add), (map(.cacheWrite)|add), (map(.totalTokens)|add), ((map(.cost.total*1e9|round)|add))]' "$S"/*.jsonl.deleted.2026-06-03T12-00-00.000Z)

once; ok $? "--once over the database, the archives and cold storage"
good=$(printf '%s\n' "$(count live.jsonl deleted-zstd.jsonl deleted-identity.jsonl cold-file.jsonl cold-sqlite.jsonl restored.jsonl)" \
	"$(jq -c '.[6] = (.[6] / 1e9 * 1e6 | round / 1e6)' <<<"$jsonl_era")" | jq -s -c 'transpose | map(add) | .[6] |= (. * 1e6 | round / 1e6)')
is "$(totals_line)" "$good" "every call counted once wherever it is (transcript_events, blobs, published file, cold files)"
is "$(count live.jsonl deleted-zstd.jsonl deleted-identity.jsonl cold-file.jsonl cold-sqlite.jsonl restored.jsonl | jq '.[0]')" 10 \
	"the independent count: 10 SQLite-era calls on disk in readable form"
# the restored window's cold file stays behind: an orphan
"${PY[@]}" cold "$DB" "$AX/restored.jsonl" "$S" file keep-rows >/dev/null
is "$(ls "$S"/cold/*.zst | wc -l)" 3 "an orphan cold file beside the restored window"
once
is "$(tail -n 1 "$T/once.log" | sed -n 's/.* \([0-9][0-9]*\) rows added.*/\1/p')" 0 "a second --once adds nothing (the orphan's calls are known)"
is "$(totals_line)" "$good" "totals unchanged by the orphan"

start_daemon --reconcile-interval=3600; ok $? "daemon starts over the same ledger"
check "status: calls from archives for agent main" [ "$(agent_fig main archive_calls)" = 3 ]
check "status: calls from cold storage for agent main (the orphan adds none)" [ "$(agent_fig main cold_calls)" = 3 ]
is "$(agent_fig main archive_faults)" 2 "status: the wrong-sha256 blob and the truncated cold file are faults"
check "sources: the truncated cold file has an error" sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path | endswith(\"$trunc\")) | select(.error != null)' >/dev/null"
check "sources: the published archive was read without error" sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path | test(\"deleted.*g1.zst\$\")) | select(.error == null and .last_commit != null)' >/dev/null"
"$C" status >"$T/status.txt"
check "status for people shows the agent's archive line" grep -q "agent main  calls from archives 3, from cold storage 3, 2 archives not readable" "$T/status.txt"

# the faults repaired: each read on change
python3 - "$DB" <<'EOF'
import hashlib, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for rowid, blob in c.execute("SELECT rowid, archive_blob FROM session_transcript_archives").fetchall():
    c.execute("UPDATE session_transcript_archives SET archive_sha256=? WHERE rowid=?", (hashlib.sha256(blob).hexdigest(), rowid))
EOF
rm "$S/cold/$trunc"
sqlite3 -cmd '.timeout 5000' "$DB" "DELETE FROM session_transcript_cold_archives WHERE session_id='a8000000-0000-4000-8000-000000000008'"
"${PY[@]}" cold "$DB" "$AX/truncated.jsonl" "$S" file >/dev/null
all=$(printf '%s\n%s\n' "$good" "$(count bad-sha.jsonl truncated.jsonl)" | jq -s -c 'transpose | map(add) | .[6] |= (. * 1e6 | round / 1e6)')
if wait_until 10 sh -c "[ \"\$(\"$C\" report daily --json | jq -c '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens, .cost_usd]')\" = '$all' ]"; then
	ok 0 "repaired blob and cold file are read (the rest was never held back)"
else
	ok 1 "repaired blob and cold file are read"; echo "#   got $(totals_line), expected $all"
fi
check "status: no archive faults after the repair" wait_until 10 sh -c "[ \"\$('$C' status --json | jq '.harnesses[] | select(.id==\"openclaw\") | .agents[] | select(.agent==\"main\") | .archive_faults')\" = 0 ]"
stop_daemon; ok $? "daemon stops cleanly"

# ---- live: deletion, cold storage, pruning ---------------------------------------
fresh live
"${PY[@]}" db "$DB"
"${PY[@]}" events "$DB" "$AX/live.jsonl"
"${PY[@]}" events "$DB" "$AX/restored.jsonl"
start_daemon --reconcile-interval=3600; ok $? "daemon starts"
base=$(count live.jsonl restored.jsonl)
totals_are() { [ "$(totals_line)" = "$1" ]; }
expect() {
	if wait_until 10 totals_are "$1"; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $(totals_line), expected $1"; fi
}
expect "$base" "initial scan: two live sessions"
"${PY[@]}" delete "$DB" "$AX/live.jsonl" "$S" zstd publish
check "the published archive is read" wait_until 10 sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path | test(\"deleted.*zst\$\")) | select(.last_commit != null)' >/dev/null"
sleep 1 # the database's own archive pass too
expect "$base" "a session deleted while the daemon runs changes no total"
"${PY[@]}" cold "$DB" "$AX/restored.jsonl" "$S" file >/dev/null
check "the cold file is read" wait_until 10 sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path | test(\"/cold/.*zst\$\")) | select(.last_commit != null)' >/dev/null"
sleep 1
expect "$base" "a session moved to cold storage changes no total"
is "$(agent_fig main archive_calls),$(agent_fig main cold_calls)" "0,0" "status: nothing new came from archives"
"${PY[@]}" cold "$DB" "$AX/cold-file.jsonl" "$S" file >/dev/null
base=$(printf '%s\n%s\n' "$base" "$(count cold-file.jsonl)" | jq -s -c 'transpose | map(add) | .[6] |= (. * 1e6 | round / 1e6)')
expect "$base" "a cold window never seen before is counted"
check "status: its calls come from cold storage" wait_until 5 sh -c "[ \"\$('$C' status --json | jq '.harnesses[] | select(.id==\"openclaw\") | .agents[] | select(.agent==\"main\") | .cold_calls')\" = 2 ]"
read_rows=$("$C" sources --json | jq '[.sources[] | select(.path | endswith(".zst")) | .rows_added] | add')
touch "$S"/cold/*.zst
sqlite3 -cmd '.timeout 5000' "$DB" "INSERT INTO session_windows(session_id, session_key, created_at, updated_at) VALUES ('poke', 'k', 1, 1)"
sleep 1
is "$("$C" sources --json | jq '[.sources[] | select(.path | endswith(".zst")) | .rows_added] | add')" "$read_rows" \
	"archive files touched and the database written: nothing counted again"
"${PY[@]}" prune "$DB" "$S"
sleep 1
is "$(totals_line)" "$base" "pruned archives and cold files remove nothing from the ledger"
stop_daemon; ok $? "daemon stops cleanly"
check "no daemon errors about the archives" sh -c "! grep -i 'assert\|sanitizer' '$T/daemon.log'"
done_testing
