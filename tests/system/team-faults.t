#!/bin/bash
# The team push when it is cut short, against a real PostgreSQL: the daemon
# killed -9 at each point of a batch (AGENTMETER_TEST_TEAM_KILL, see
# daemon/team-push/kill-point.h: before BEGIN, inside the transaction
# before any row, in the middle of the rows' COPY, after the COPY ends
# before the COMMIT's answer, after the COMMIT before the ledger's ack),
# then started again; and the connection cut by a proxy
# (tests/system/pg-cut-proxy.py) in the middle of a COPY, in the second
# batch of a connection, and between the COMMIT and its answer, the daemon
# retrying by itself. Each round meters a new set of sessions (mostly one
# batch of ~150 KiB of COPY text) and asserts that the server holds every
# row once: its row and call counts, token and cost sums equal the local
# ledger's report, the rows the server counted received equal the rows
# metered (nothing sent twice), and nothing is left in the backlog.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
. "$(dirname "$(readlink -f "$0")")/lib-pg.sh"
pg_have || skip_all "no PostgreSQL 15 server binaries ($PGBIN; Debian: postgresql-15)"
command -v jq >/dev/null || skip_all "no jq"
new_env
PXPID=
trap '[ -n "$PXPID" ] && kill "$PXPID" 2>/dev/null; pg_cleanup; cleanup_team' EXIT
pg_init || { echo "1..0 # SKIP postgres would not start"; exit 0; }
use_test_user
. "$(dirname "$(readlink -f "$0")")/lib-team.sh"

mk_home A alpha alice
PROJ=$T/A/home/.claude/projects/-home-u-faults
mkdir -p "$PROJ"
CALLS=700 # calls per round: ~150 KiB of COPY text, more than one 64 KiB chunk
# session ROUND [CALLS]: a Claude Code session of $CALLS calls of its own
# (every fifth with a tool call), different tokens in each
session() {
	python3 - "$PROJ" "$1" "${2:-$CALLS}" <<'PY'
import json, sys
proj, rnd, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sid = "5555555%d-5555-4555-8555-55555555555%d" % (rnd, rnd)
with open("%s/%s.jsonl" % (proj, sid), "w") as f:
    for i in range(n):
        content = [{"type": "text", "text": "x"}]
        if i % 5 == 0:
            content.append({"type": "tool_use", "id": "toolu_%d_%d" % (rnd, i), "name": "Bash",
                            "input": {"command": "true"}})
        f.write(json.dumps({"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/home/u/faults", "sessionId": sid, "version": "2.1.50", "type": "assistant",
            "uuid": "u-%d-%d" % (rnd, i),
            "timestamp": "2026-11-%02dT%02d:%02d:%02d.000Z" % (20 + rnd, i // 60 % 24, i % 60, rnd),
            "message": {"model": "claude-sonnet-4-5", "id": "msg_%d_%d" % (rnd, i), "type": "message",
                "role": "assistant", "content": content, "stop_reason": "end_turn",
                "usage": {"input_tokens": i % 50 + rnd, "cache_creation_input_tokens": i % 3 * 10,
                          "cache_read_input_tokens": i * 13 % 1000, "output_tokens": i * 7 % 300 + 1,
                          "service_tier": "standard"}},
            "requestId": "req_%d_%d" % (rnd, i)}) + "\n")
PY
}
fix_owner
out=$(team_init A 2>&1)
is "$?" 0 "team init creates the schema"

# meter: the server's rows/calls received and cursor for alpha (0/0/0 before it registers)
meter() {
	local m; m=$(pg_q "SELECT rows_received || '/' || calls_received || '/' || acked_seq FROM agentmeter.meters WHERE machine = 'alpha'")
	echo "${m:-0/0/0}"
}
# the server's rows and calls, and their sums (tokens as the report counts them, cost)
SERVER_SUMS="SELECT count(*), sum(input), sum(output), sum(cache_read), sum(cache_write), sum(total),
 div(sum(cost_nano) FILTER (WHERE cost_source <> 0) + 500, 1000), (SELECT count(*) FROM agentmeter.calls)
 FROM agentmeter.usage"
# the same from the local ledger's report (the cost in micro-dollars, as the report rounds it)
local_sums() {
	local r t
	r=$(ctl A report daily --json --tz UTC) || return 1
	t=$(ctl A report tool --json --tz UTC) || return 1
	printf '%s|%s\n' \
		"$(jq -r '.totals | [.events, .input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .total_tokens, (.cost_usd * 1e6 | round)] | join("|")' <<<"$r")" \
		"$(jq -r '[.rows[].calls] | add // 0' <<<"$t")"
}
LOG=$T/A.log
: >"$LOG"
# every_row_once WHAT: after a round, the server holds what the ledger holds, once
every_row_once() {
	local what=$1 events
	check "$what: the daemon sends its backlog" wait_until 60 holds 'drained A'
	events=$(local_events A)
	is "$(pg_q "$SERVER_SUMS")" "$(local_sums)" \
		"$what: the server's rows, token sums, cost and calls equal the local ledger's ($events rows)"
	is "$(pg_q "SELECT rows_received FROM agentmeter.meters WHERE machine = 'alpha'")" "$events" \
		"$what: the server received each row once (none sent twice)"
	is "$(team_rep A daily)" "$(ctl A report daily --json --tz UTC | jq -cS "$proj")" \
		"$what: report daily --team equals the local report"
	is "$(tstat A backlog)" 0 "$what: nothing left unpushed"
}
# new_round N [CALLS]: the daemon stopped, a new session metered into the outbox (--once: no push)
new_round() {
	stop_d A
	session "$@"
	fix_owner
	as_d A "$D" --once >/dev/null 2>&1
}

# ---- kill -9 at each point of a batch ----------------------------------------------
round=0
for point in before-begin after-begin mid-copy copy-end before-ack; do
	round=$((round + 1))
	new_round $round
	before=$(meter)
	logn=$(wc -l <"$LOG")
	as_cmd A
	rm -f "$T/rc" "$T/dpid"
	# (a subshell keeps bash's "Killed" off the output, and keeps the status)
	( "${AS[@]}" AGENTMETER_TEST_TEAM_KILL=$point "$D" --log-target=console >>"$LOG" 2>&1 &
	  echo $! >"$T/dpid"; wait $!; echo $? >"$T/rc" ) 2>/dev/null &
	check "$point: the daemon kills itself at the point" wait_until 60 holds \
		"tail -n +$((logn + 1)) '$LOG' | grep -q 'TEAM_KILL: killed at $point\$'"
	wait_until 10 test -s "$T/rc" || { kill -TERM "$(cat "$T/dpid")"; wait_until 10 test -s "$T/rc"; }
	is "$(cat "$T/rc")" 137 "$point: by SIGKILL"
	after=$(meter)
	case $point in
	before-begin | after-begin | mid-copy)
		is "$after" "$before" "$point: the server committed nothing of the batch" ;;
	before-ack)
		check "$point: the server had committed the batch ($before -> $after)" [ "$after" != "$before" ] ;;
	*) diag "$point: the server's meter $before -> $after" ;;
	esac
	start_d A
	every_row_once "$point"
done
# the server saw the partial COPY end with the connection
check "mid-copy: the server saw the rows' COPY stop in the middle" \
	grep -q "COPY am_rows, line [1-9][0-9]" "$PGD/server.log"

# ---- the connection cut: in the middle of a COPY, and before the COMMIT's answer ----
# the daemon stays up: it retries by itself, through a proxy that cuts once
# proxy_round WHAT CUT [CALLS]: a new round through a proxy cutting at CUT (pg-cut-proxy.py)
proxy_round() {
	local what=$1 px=$T/px-$1
	round=$((round + 1))
	new_round $round ${3:-}
	[ -n "$PXPID" ] && { kill "$PXPID"; wait "$PXPID" 2>/dev/null; PXPID=; }
	mkdir -p "$px"
	chmod 755 "$px"
	python3 "$AM_SRCDIR/tests/system/pg-cut-proxy.py" "$px/.s.PGSQL.5432" "$PGD/.s.PGSQL.5432" "$2" "$px/cut" &
	PXPID=$!
	check "$what: the proxy listens" wait_until 10 test -S "$px/.s.PGSQL.5432"
	printf 'url = host=%s dbname=team user=postgres\nmachine = alpha\nuser = alice\n' "$px" \
		>"$T/A/config/agentmeterd/team.conf"
	fix_owner
	pglog=$(wc -l <"$PGD/server.log")
	logn=$(wc -l <"$LOG")
	before=$(meter)
	start_d A
	check "$what: the proxy cut the connection" wait_until 60 test -s "$px/cut"
	every_row_once "$what"
	check "$what: the daemon logged the lost connection, then connected again" holds \
		"tail -n +$((logn + 1)) '$LOG' | grep -A100 'warning: team ledger' | grep -q 'team ledger .*: connected'"
}
# 100,000 bytes: the handshake and the query (~9 KB), the first 64 KiB of rows, and into the next
proxy_round cut-mid-copy 100000
check "cut-mid-copy: the server saw the rows' COPY stop in the middle" holds \
	"tail -n +$((pglog + 1)) '$PGD/server.log' | grep -q 'COPY am_rows, line [1-9][0-9]'"
# 6,000 calls and 1,200 tool calls: two batches on one connection (5,000
# entries, ~1 MB, then the rest, read while the first is in flight); the cut
# at 1.3 MB falls in the second one's COPY, the first committed
proxy_round cut-second-batch 1300000 6000
diag "cut-second-batch: the server saw $(tail -n +$((pglog + 1)) "$PGD/server.log" | grep -o 'COPY am_[a-z]*, line [0-9]*' | head -1)"
proxy_round cut-commit-answer commit
diag "cut-commit-answer: the server's meter $before -> $(meter)"
is "$(tstat A rows_sent)" 0 "cut-commit-answer: the daemon took the server's cursor, sent no row again"

check "alpha stops cleanly (exit 0; under ASan: no leak)" stop_d A
done_testing
