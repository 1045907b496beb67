# Helpers of the team ledger tests: several daemons, each with its own home,
# state, runtime and config directories ($T/NAME/...), run as the test user
# when root (use_test_user first), and the ledger of their union.
declare -A DPIDS
proj='{rows: .rows, totals: .totals}'
# mk_home NAME [MACHINE USER]: the directories, and a team.conf when named
mk_home() {
	local n=$1
	mkdir -p "$T/$n/home" "$T/$n/state" "$T/$n/run" "$T/$n/config/agentmeterd"
	chmod 700 "$T/$n/run"
	[ -n "${2:-}" ] && printf 'url = %s\nmachine = %s\nuser = %s\n' "$PGURL" "$2" "$3" \
		>"$T/$n/config/agentmeterd/team.conf"
	return 0
}
fix_owner() { [ -n "${AS_USER:-}" ] && chown -R "$AS_USER:" "$T"; return 0; }
# as_cmd NAME: the command prefix running as NAME's user in NAME's directories
as_cmd() {
	local n=$1
	AS=(env HOME="$T/$n/home" XDG_STATE_HOME="$T/$n/state" XDG_RUNTIME_DIR="$T/$n/run"
		XDG_CONFIG_HOME="$T/$n/config")
	[ -n "${AS_USER:-}" ] && AS=(setpriv --reuid="$AS_USER" --regid="$(id -g "$AS_USER")" --clear-groups "${AS[@]}")
	return 0
}
as_d() { local n=$1; shift; as_cmd "$n"; "${AS[@]}" "$@"; }
ctl() { local n=$1; shift; as_d "$n" "$C" "$@"; }
start_d() {
	local n=$1 i
	as_cmd "$n"
	"${AS[@]}" "$D" --log-target=console >>"$T/$n.log" 2>&1 & # $!: the daemon (setpriv and env exec)
	DPIDS[$n]=$!
	for i in $(seq 600); do # up to 30 s: a loaded VM running two test programs at once
		[ -S "$T/$n/run/agentmeterd/control.sock" ] && ctl "$n" version >/dev/null 2>&1 && return 0
		kill -0 "${DPIDS[$n]}" 2>/dev/null || break
		sleep 0.05
	done
	echo "# daemon $n did not come up:"; sed 's/^/#   /' "$T/$n.log"
	return 1
}
stop_d() {
	local n=$1
	[ -n "${DPIDS[$n]:-}" ] || return 0
	kill -TERM "${DPIDS[$n]}" 2>/dev/null; wait "${DPIDS[$n]}" 2>/dev/null
	local rc=$?
	DPIDS[$n]=
	return $rc
}
stop_all() { local n; for n in "${!DPIDS[@]}"; do stop_d "$n"; done; }
cleanup_team() { stop_all; cleanup_env; }
# tstat NAME FIELD: a field of status's team object ("" when null)
tstat() { ctl "$1" status --json 2>/dev/null | jq -r ".team.$2 // empty"; }
drained() {
	local st; st=$(ctl "$1" status --json 2>/dev/null) || return 1
	[ "$(jq -r '.team.state + "/" + (.team.backlog|tostring) + "/" + (.team.filling|tostring)' <<<"$st")" = connected/0/false ]
}
team_init() { ctl "$1" team init; }
local_events() { ctl "$1" report daily --json 2>/dev/null | jq .totals.events; }
union_once() { as_d U "$D" --once >/dev/null 2>&1; }
# team_rep NAME KIND [ARGS]: the team report's rows and totals
team_rep() { local n=$1 k=$2; shift 2; ctl "$n" report "$k" "$@" --team --json --tz UTC | jq -cS "$proj"; }
# union_rep KIND [ARGS]: the same from the union's ledger (read directly)
union_rep() {
	local k=$1; shift
	as_d U "$C" --socket "$T/U/none.sock" report "$k" "$@" --json --tz UTC 2>/dev/null | jq -cS "$proj"
}
# new_call NAME MSG_ID OUTPUT: a Claude Code call appended to the shared session
NEW_CALLS=0
new_call() {
	local f="$T/$1/home/.claude/projects/-home-u-proj/11111111-1111-4111-8111-111111111111.jsonl"
	local sec; sec=$(printf '%02d' $(( $(printf '%d' "'${2: -1}") % 60 )))
	jq -nc --arg id "$2" --argjson out "$3" --arg ts "2026-11-30T12:00:$sec.000Z" '{parentUuid: null,
		isSidechain: false, userType: "external", cwd: "/home/u/proj",
		sessionId: "11111111-1111-4111-8111-111111111111", version: "2.1.50", type: "assistant",
		uuid: ("u-" + $id), timestamp: $ts, message: {model: "claude-sonnet-4-5", id: $id,
		type: "message", role: "assistant", content: [{type: "text", text: "x"}], stop_reason: "end_turn",
		usage: {input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
		output_tokens: $out, service_tier: "standard"}}, requestId: ("req_" + $id)}' >>"$f"
}
