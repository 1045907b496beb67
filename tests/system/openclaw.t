#!/bin/bash
# OpenClaw end to end with the real binaries: --once over the fixture state
# dir (OPENCLAW_STATE_DIR), a ~/.openclaw-dev profile, both; SQLite-era
# databases built here from fixtures/openclaw/schema.sql with the sqlite3
# and zstd CLIs; the upgrade dir counted once; the real samples; then live:
# rows inserted by another process (sqlite3, WAL), a JSONL line appended,
# agents appearing, a broken database reported, a half-made one read once
# its backoff ends, and every root in status.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in sqlite3 zstd jq; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
new_env
OC=$FIX/openclaw
EXP=$OC/expected.json
# expected.json sums the vendor costs; the fixture's one vendor 0 with
# tokens (gpt-5.1) would be priced by our table (tests/system/prices.t
# checks that): price it at 0 here so the totals stay the vendor ones
mkdir -p "$XDG_CONFIG_HOME/agentmeterd"
echo 'price gpt-5.1 in=0 out=0 cache_read=0' > "$XDG_CONFIG_HOME/agentmeterd/prices.conf"
NAV='{"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},"modelBytes":0,"modelWithoutCheckpointBytes":0,"withoutCustomDataBytes":0}'

# the totals a case of expected.json gives, as totals_line prints them
want() { jq -c --arg c "$1" '.cases[$c] | [.rows, .input, .output, .cache_read, .cache_write, .total, .cost_nano/1e9]' "$EXP"; }
# sum of several such lines
add_lines() { jq -s -c 'transpose | map(add) | .[6] |= (. * 1e6 | round / 1e6)' ; }
once() { "$D" --once >>"$T/once.log" 2>&1; }
# a case of its own: fresh HOME and ledger
fresh() {
	export HOME=$T/$1/home XDG_STATE_HOME=$T/$1/state
	mkdir -p "$HOME" "$XDG_STATE_HOME"
	unset OPENCLAW_STATE_DIR OPENCLAW_PROFILE
}

# build_db DB TSV...: a database made from schema.sql holding the rows of
# the fixture .tsv files (plain: event_json; zstd: event_zstd written by the
# zstd CLI; trajectory: trajectory_runtime_events)
build_db() {
	local db=$1 w i=0 mode sid seq ev tsv; shift
	mkdir -p "$(dirname "$db")"
	w=$(mktemp -d "$T/rows.XXXXXX")
	{
		cat "$OC/schema.sql"
		echo "BEGIN;"
		for tsv in "$@"; do
			while IFS=$'\t' read -r mode sid seq ev; do
				case $mode in plain|zstd|trajectory) ;; *) continue ;; esac
				i=$((i + 1))
				printf '%s' "$ev" >"$w/$i.json"
				echo "INSERT OR IGNORE INTO session_windows(session_id, session_key, created_at, updated_at) VALUES ('$sid', 'agent:main:$sid', 1, 1);"
				case $mode in
				plain) echo "INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES ('$sid', $seq, CAST(readfile('$w/$i.json') AS TEXT), 1796000000000);" ;;
				zstd)
					zstd -q -c "$w/$i.json" >"$w/$i.zst"
					echo "INSERT INTO transcript_events(session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('$sid', $seq, NULL, 1796000000000, readfile('$w/$i.zst'), $(stat -c %s "$w/$i.json"), '$NAV');" ;;
				trajectory) echo "INSERT INTO trajectory_runtime_events(session_id, seq, run_id, event_json, created_at) VALUES ('$sid', $seq, 'run', CAST(readfile('$w/$i.json') AS TEXT), 1);" ;;
				esac
			done <"$tsv"
		done
		echo "COMMIT;"
	} >"$w/load.sql"
	sqlite3 -cmd ".timeout 5000" "$db" <"$w/load.sql" >/dev/null # a writer waits for a reader, as OpenClaw does
}

# ---- JSONL era ------------------------------------------------------------
fresh state
cp -r "$OC/state" "$T/state-dir"
export OPENCLAW_STATE_DIR=$T/state-dir
once; ok $? "--once over OPENCLAW_STATE_DIR exits 0"
is "$(totals_line)" "$(want state)" "state dir: exact totals (sidecars, synthetic rows and re-appends not counted)"
is "$(totals tool_calls)" "$(jq .cases.state.calls "$EXP")" "state dir: tool calls"
is "$(totals reasoning_tokens)" "$(jq .cases.state.reasoning "$EXP")" "state dir: reasoningTokens as reasoning"
once
is "$(tail -n 1 "$T/once.log" | sed -n 's/.* \([0-9][0-9]*\) rows added.*/\1/p')" 0 "a second --once adds nothing"

fresh profile
cp -r "$OC/profile-dev" "$HOME/.openclaw-dev"
once; ok $? "--once with a ~/.openclaw-dev profile"
is "$(totals_line)" "$(want profile-dev)" "profile dir: exact totals"

fresh both
cp -r "$OC/profile-dev" "$HOME/.openclaw-dev"
export OPENCLAW_STATE_DIR=$T/state-dir
once
is "$(totals_line)" "$(want state+profile)" "state dir and profile at once"

# ---- SQLite era -------------------------------------------------------------
fresh sqlite
build_db "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" "$OC/sqlite/main.tsv"
build_db "$HOME/.openclaw/agents/ops/agent/openclaw-agent.sqlite" "$OC/sqlite/ops.tsv"
check "the database is in WAL mode" [ "$(sqlite3 "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" 'PRAGMA journal_mode')" = wal ]
: >"$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite.memory-reindex-4a65b883-abc2-40cb-a2e1-935d6a545b6f"
cp "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite.generation-writer.sqlite"
once; ok $? "--once over SQLite databases"
is "$(totals_line)" "$(want sqlite)" "SQLite: plain and zstd rows, exact totals (trajectory sums and sibling files not counted)"
sum_before=$(sha256sum "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" | cut -d' ' -f1)
once
is "$(sha256sum "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" | cut -d' ' -f1)" "$sum_before" "the database file is never written"
is "$(totals_line)" "$(want sqlite)" "a second run: same totals"

fresh upgrade
cp -r "$OC/upgrade" "$HOME/.openclaw"
build_db "$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite" "$OC/upgrade/main.tsv"
once
is "$(totals_line)" "$(want upgrade)" "upgrade: JSONL archives + the same entries in SQLite counted once"

# ---- real samples ------------------------------------------------------------
RG=$AM_SAMPLES/realgen/openclaw-2026.9.6
if [ -d "$RG/state/agents" ]; then
	fresh realgen
	cp -r "$RG/state" "$T/realgen-state" && chmod -R u+w "$T/realgen-state"
	export OPENCLAW_STATE_DIR=$T/realgen-state
	once
	ref=$(jq -s -c '[.[] | .event.message.usage // empty] | [length, (map(.input)|add), (map(.output)|add), (map(.cacheRead)|add), (map(.cacheWrite)|add), (map(.totalTokens)|add), ((map(.cost.total * 1e9 | round) | add) / 1e9 * 1e6 | round / 1e6)]' "$RG"/transcript_events.*.jsonl)
	is "$(jq '.[0]' <<<"$ref")" 10 "realgen dump: 10 usage records"
	is "$(totals_line)" "$ref" "realgen/openclaw-2026.9.6 databases: totals equal the transcript_events dump"
else
	skip "realgen/openclaw-2026.9.6 not found"
fi
if [ -d "$AM_SAMPLES/openclaw" ]; then
	fresh samples
	s=$HOME/.openclaw/agents/main/sessions
	mkdir -p "$s"
	for f in "$AM_SAMPLES"/openclaw/*; do cp "$f" "$s/${f##*_}"; done
	once
	ref=$(cat "$s"/*.jsonl* | jq -s -c '[.[] | objects | select(.type=="message" and .message.role=="assistant" and .message.provider!="openclaw") | .message.usage | select(. != null and (.input + .output + .cacheRead + .cacheWrite) > 0)] | [length, (map(.input)|add), (map(.output)|add), (map(.cacheRead)|add), (map(.cacheWrite)|add), (map(.totalTokens)|add), ((map(.cost.total * 1e9 | round) | add) / 1e9 * 1e6 | round / 1e6)]' 2>/dev/null)
	is "$(totals_line)" "$ref" "samples/openclaw: totals equal an independent count (the .lock ignored)"
else
	skip "samples/openclaw not found"
fi

# ---- live ---------------------------------------------------------------------
fresh live
M=$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite
build_db "$M" "$OC/sqlite/main.tsv"
build_db "$HOME/.openclaw/agents/ops/agent/openclaw-agent.sqlite" "$OC/sqlite/ops.tsv"
cp -r "$OC/profile-dev" "$HOME/.openclaw-dev"
base=$(printf '%s\n%s\n' "$(want sqlite)" "$(want profile-dev)" | add_lines)
totals_are() { [ "$(totals_line)" = "$1" ]; }
expect() { # expect WANT DESCRIPTION: polls up to 10 s
	if wait_until 10 totals_are "$1"; then ok 0 "$2"; else ok 1 "$2"; echo "#   got $(totals_line), expected $1"; fi
}
start_daemon --reconcile-interval=3600; ok $? "daemon starts"
expect "$base" "initial scan: databases and profile"

S1=b3a2c1d0-9e8f-4a7b-8c6d-5e4f3a2b1c01
ev='{"type":"message","id":"live-0001","parentId":null,"timestamp":"2026-11-30T12:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"live"}],"api":"openai-responses","provider":"openai","model":"gpt-5.1","usage":{"input":1000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":1010,"cost":{"total":0.002}},"stopReason":"stop","timestamp":1796040000000}}'
printf '%s' "$ev" >"$T/live1.json"
sqlite3 -cmd '.timeout 5000' "$M" "INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES ('$S1', 11, CAST(readfile('$T/live1.json') AS TEXT), 1796040000000);"
check "the writer left the database in WAL mode" [ "$(sqlite3 -cmd '.timeout 5000' "$M" 'PRAGMA journal_mode')" = wal ]
base=$(printf '%s\n%s\n' "$base" '[1,1000,10,0,0,1010,0.002]' | add_lines)
expect "$base" "a row inserted by another process (sqlite3, WAL) is counted"

# a zstd compaction without a model of its own: the session's model carries
ev='{"type":"compaction","id":"live-0002","parentId":"live-0001","timestamp":"2026-11-30T12:01:00.000Z","summary":"s","firstKeptEntryId":"x","tokensBefore":9,"usage":{"input":500,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":505,"cost":{"total":0.001}}}'
printf '%s' "$ev" >"$T/live2.json"
zstd -q -c "$T/live2.json" >"$T/live2.zst"
sqlite3 -cmd '.timeout 5000' "$M" "INSERT INTO transcript_events(session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES ('$S1', 12, NULL, 1796040060000, readfile('$T/live2.zst'), $(stat -c %s "$T/live2.json"), '$NAV');"
base=$(printf '%s\n%s\n' "$base" '[1,500,5,0,0,505,0.001]' | add_lines)
expect "$base" "a zstd row inserted live is counted"
is "$("$C" report model --json 2>/dev/null | jq -r '[.rows[] | select(.model=="gpt-5.1")] | length > 0')" true "its model is the session's (gpt-5.1)"

# a JSONL line appended to the profile's transcript
H=$HOME/.openclaw-dev/agents/main/sessions/4f3e2d1c-0b9a-4877-a665-544332211018.jsonl
echo '{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-30T12:02:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"appended"}],"api":"openai-completions","provider":"openrouter","model":"anthropic/claude-haiku-4.5","usage":{"input":70,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":77,"cost":{"total":0.0001}},"stopReason":"stop","timestamp":1796040120000}}' >>"$H"
base=$(printf '%s\n%s\n' "$base" '[1,70,7,0,0,77,0.0001]' | add_lines)
expect "$base" "a JSONL line appended is counted"

# openclaw doctor moves an imported transcript into the archive, /reset renames: no new data
read_before=$("$C" status --json | jq '[.harnesses[] | select(.id=="openclaw") | .bytes_read] | add')
AR=$HOME/.openclaw-dev/agents/main/session-sqlite-import-archive
mkdir -p "$AR"
mv "$H" "$AR/agent_main_main.${H##*/}.imported-1796040300000"
I=$HOME/.openclaw-dev/agents/work/sessions/6e5d4c3b-2a19-4087-9f6e-5d4c3b2a1019.jsonl
mv "$I" "$I.reset.2026-11-30T12-05-00.000Z"
check "the renamed files are picked up" wait_until 10 sh -c \
	"'$C' sources --json | jq -e '[.sources[] | select(.path | test(\"imported-1796040300000$|reset.2026-11-30T12-05-00.000Z$\")) | select(.last_commit != null)] | length == 2'"
expect "$base" "moved into session-sqlite-import-archive/ and renamed .reset: nothing added"
is "$("$C" status --json | jq '[.harnesses[] | select(.id=="openclaw") | .bytes_read] | add')" "$read_before" \
	"... and nothing re-read"

# agents that appear while running: a JSONL one and a SQLite one
mkdir -p "$HOME/.openclaw/agents/newbie/sessions"
head -n 1 "$OC/state/sessions/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c17.jsonl" >"$T/new.jsonl"
tail -n 1 "$OC/state/sessions/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c17.jsonl" >>"$T/new.jsonl"
mv "$T/new.jsonl" "$HOME/.openclaw/agents/newbie/sessions/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c17.jsonl"
base=$(printf '%s\n%s\n' "$base" '[1,100,50,0,0,150,0.0009]' | add_lines)
expect "$base" "a new agent's transcript is found live"
build_db "$T/late.sqlite" "$OC/upgrade/main.tsv"
mkdir -p "$HOME/.openclaw/agents/late/agent"
mv "$T/late.sqlite" "$HOME/.openclaw/agents/late/agent/openclaw-agent.sqlite"
base=$(printf '%s\n%s\n' "$base" "$(want upgrade)" | add_lines)
# upgrade/main.tsv holds J, K (4 calls) and L (1): none of them seen before
expect "$base" "a new agent's database is found live"

# a broken database: reported, retried, never a crash
mkdir -p "$HOME/.openclaw/agents/broken/agent"
head -c 8192 /dev/urandom >"$HOME/.openclaw/agents/broken/agent/openclaw-agent.sqlite"
check "the broken database is reported in sources" wait_until 10 sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path | endswith(\"broken/agent/openclaw-agent.sqlite\")) | select(.error != null and .kind == \"table\")'"
expect "$base" "totals unchanged by the broken database"

# a database caught half-made (a table, not yet transcript_events: a schema we
# do not know) is read again when its backoff ends, though the rest of it was
# written during the backoff and the reconcile is an hour away
HM=$HOME/.openclaw/agents/halfmade/agent/openclaw-agent.sqlite
mkdir -p "$(dirname "$HM")"
sqlite3 -bail -cmd '.timeout 5000' "$HM" "PRAGMA journal_mode=WAL; CREATE TABLE memo(a);" >/dev/null
check "the half-made database is reported" wait_until 10 sh -c \
	"'$C' sources --json | jq -e '.sources[] | select(.path == \"$HM\") | select(.error != null)'"
ev='{"type":"message","id":"half-0001","parentId":null,"timestamp":"2026-11-30T12:10:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"half"}],"api":"openai-responses","provider":"openai","model":"gpt-5.1","usage":{"input":300,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":303,"cost":{"total":0.0003}},"stopReason":"stop","timestamp":1796040600000}}'
S3=d5c4b3a2-1f0e-4d9c-8b7a-6f5e4d3c2b99
{
	printf 'plain\t%s\t0\t{"type":"session","version":4,"id":"%s","timestamp":"2026-11-30T12:09:00.000Z","cwd":"/home/u/.openclaw/workspace"}\n' "$S3" "$S3"
	printf 'plain\t%s\t1\t%s\n' "$S3" "$ev"
} >"$T/half.tsv"
build_db "$HM" "$T/half.tsv"
base=$(printf '%s\n%s\n' "$base" '[1,300,3,0,0,303,0.0003]' | add_lines)
expect "$base" "completed during its backoff: read when the backoff ends"

# status: every profile and agent root
st=$("$C" status --json)
labels=$(jq -r '[.harnesses[] | select(.id=="openclaw") | .roots[] | .label] | join("|")' <<<"$st")
for l in "state" "agent main" "agent ops" "profile dev" "profile dev: agent main" "profile dev: agent work"; do
	check "status shows root '$l'" grep -qF "|$l|" <<<"|$labels|"
done
is "$(jq -r '.harnesses[] | select(.id=="openclaw") | .capabilities | [.tokens, .cost, .activity, .reasoning] | join(",")' <<<"$st")" \
	"exact,vendor-reported,exact,subset-of-output" "status shows OpenClaw's capabilities"
kill -HUP "$DPID"
check "after a reload (SIGHUP) the agents that appeared are roots too" wait_until 5 sh -c \
	"'$C' status --json | jq -e '[.harnesses[] | select(.id==\"openclaw\") | .roots[] | .label] | index(\"agent late\")'"

# our own reads touch the -wal/-shm the daemon watches: it must settle
sleep 1
t0=$(awk '{print $14 + $15}' "/proc/$DPID/stat")
sleep 2
t1=$(awk '{print $14 + $15}' "/proc/$DPID/stat")
check "idle daemon does not spin on its own SQLite reads ($((t1 - t0)) ticks in 2 s)" [ $((t1 - t0)) -lt 40 ]

stop_daemon; ok $? "SIGTERM: exit 0"
start_daemon; ok $? "restart"
expect "$base" "after a restart: same totals, nothing counted twice"
stop_daemon
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log" "$T/once.log"; ok $? "no sanitizer reports"
done_testing
