#!/bin/bash
# Fleet export end to end: two agentmeterd instances (different HOMEs and
# corpora: fixtures/pi and fixtures/openclaw) write Prometheus textfiles; a
# real node_exporter (textfile collector, loopback) serves them and a real
# Prometheus (private config and data, loopback, 1 s scrapes) scrapes it.
# PromQL sums equal the two ledgers' report totals; appends show up at the
# next scrape; a daemon restart leaves every counter where it was.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
NE=$(command -v prometheus-node-exporter || true)
PROM=$(command -v prometheus || true)
PT=$(command -v promtool || true)
[ -n "$NE" ] && [ -n "$PROM" ] && [ -n "$PT" ] ||
	skip_all "needs Debian's prometheus and prometheus-node-exporter (tests/deps.sh installs them as root)"
command -v curl >/dev/null || skip_all "needs curl"
new_env
GEN="python3 $AM_SRCDIR/tests/lib/gen_pi.py"
TF=$T/textfile
mkdir -p "$TF"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- two users' daemons ------------------------------------------------------
declare -A DP
inst_vars() { # the environment of instance $1
	echo HOME="$T/$1/home" XDG_STATE_HOME="$T/$1/state" XDG_RUNTIME_DIR="$T/$1/run" \
		XDG_CONFIG_HOME="$T/$1/config" PI_CODING_AGENT_DIR="$T/$1/agent" \
		OPENCLAW_STATE_DIR="$T/$1/openclaw"
}
inst_env() { # inst_env NAME CMD...: runs CMD in instance NAME's environment
	local n=$1; shift
	# shellcheck disable=SC2046 # the paths hold no blanks (mktemp)
	env $(inst_vars "$n") "$@"
}
start_inst() { # start_inst NAME USER (env execs the daemon: $! is its pid)
	# shellcheck disable=SC2046
	env $(inst_vars "$1") "$D" --log-target=console --metrics-file="$TF/agentmeterd-$1.prom" \
		--metrics-user="$2" >>"$T/$1.log" 2>&1 &
	DP[$1]=$!
	local i
	for i in $(seq 200); do
		inst_env "$1" "$C" version >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	sed 's/^/#   /' "$T/$1.log"
	return 1
}
stop_inst() { kill -TERM "${DP[$1]}" 2>/dev/null; wait "${DP[$1]}"; }
for n in a b; do
	mkdir -p "$T/$n/home" "$T/$n/state" "$T/$n/run" "$T/$n/config"
	chmod 700 "$T/$n/run"
done
cp -r "$FIX/pi/agent" "$T/a/agent"
cp -r "$FIX/openclaw/state" "$T/b/openclaw"

NEPID= PPID_= 
cleanup_all() {
	for n in a b; do [ -n "${DP[$n]:-}" ] && kill -TERM "${DP[$n]}" 2>/dev/null; done
	[ -n "$NEPID" ] && kill "$NEPID" 2>/dev/null
	[ -n "$PPID_" ] && kill "$PPID_" 2>/dev/null
	wait 2>/dev/null
	cleanup_env
}
trap cleanup_all EXIT

start_inst a "alice@laptop"; ok $? "agentmeterd for alice (fixtures/pi) starts"
start_inst b "bob@buildbox"; ok $? "agentmeterd for bob (fixtures/openclaw) starts"
check "alice's textfile appears" wait_until 10 test -s "$TF/agentmeterd-a.prom"
check "bob's textfile appears" wait_until 10 test -s "$TF/agentmeterd-b.prom"
# the files settle once each initial scan is committed
rep_cost() { inst_env "$1" "$C" report daily --json | jq -r '.totals.cost_usd'; }
settled() { grep -q 'agentmeter_events_total' "$TF/agentmeterd-$1.prom" &&
	[ "$(inst_env "$1" "$C" metrics | grep -v '^agentmeter_ingest_lag\|^agentmeter_daemon_start' | md5sum)" = \
	  "$(grep -v '^agentmeter_ingest_lag\|^agentmeter_daemon_start' "$TF/agentmeterd-$1.prom" | md5sum)" ]; }
check "alice's file matches \`agentmeterctl metrics\`" wait_until 10 settled a
check "bob's file matches \`agentmeterctl metrics\`" wait_until 10 settled b
for n in a b; do
	check "promtool check metrics accepts $n's file" "$PT" check metrics <"$TF/agentmeterd-$n.prom"
done
check "no temporary file left in the textfile directory" test -z "$(ls -A "$TF" | grep -v '\.prom$')"
check "the file is readable by node_exporter's user (mode 0644)" test "$(stat -c %a "$TF/agentmeterd-a.prom")" = 644
check "HELP lines are identical in both files" \
	cmp -s <(grep '^# HELP' "$TF/agentmeterd-a.prom") <(grep '^# HELP' "$TF/agentmeterd-b.prom")
check "no session, project or path labels" sh -c "! grep -qE 'session=|project=|path=' '$TF/agentmeterd-a.prom' '$TF/agentmeterd-b.prom'"

# ---- node_exporter and Prometheus -------------------------------------------
NPORT=$(free_port)
"$NE" --web.listen-address="127.0.0.1:$NPORT" --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TF" >"$T/node_exporter.log" 2>&1 &
NEPID=$!
check "node_exporter serves the textfiles" wait_until 15 sh -c "curl -sf http://127.0.0.1:$NPORT/metrics | grep -q 'agentmeter_events_total{'"
PPORT=$(free_port)
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: agentmeter
    static_configs:
      - targets: ['127.0.0.1:$NPORT']
YML
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$T/prometheus.log" 2>&1 &
PPID_=$!
q() { curl -sf --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"; }
scalar() { q "$1" | jq -r '.data.result[0].value[1] // empty'; }
scraped() { [ -n "$(scalar 'sum(agentmeter_events_total)')" ]; }
check "prometheus scrapes node_exporter" wait_until 60 scraped

# what the two ledgers' reports say
want() { # want: "cost input output cache_read cache_write events" summed over a and b
	for n in a b; do inst_env "$n" "$C" report daily --json | jq -r '.totals | [(.cost_usd // 0), (.input_tokens // 0), (.output_tokens // 0), (.cache_read_tokens // 0), (.cache_write_tokens // 0), .events] | @tsv'; done |
		awk '{c+=$1; i+=$2; o+=$3; r+=$4; w+=$5; e+=$6} END {printf "%.6f %d %d %d %d %d\n", c, i, o, r, w, e}'
}
got() {
	local by; by=$(q 'sum by (type) (agentmeter_tokens_total)')
	local t; t() { jq -r --arg t "$1" '[.data.result[] | select(.metric.type==$t) | .value[1]][0] // "0"' <<<"$by"; }
	printf "%.6f %d %d %d %d %d\n" "$(scalar 'sum(agentmeter_cost_usd_total)')" "$(t input)" "$(t output)" \
		"$(t cache_read)" "$(( $(t cache_write_5m) + $(t cache_write_1h) ))" "$(scalar 'sum(agentmeter_events_total)')"
}
agrees() { [ "$(got)" = "$(want)" ]; }
check "PromQL sums (cost, tokens by type, events) equal the two ledgers' report totals" wait_until 20 agrees
diag "prometheus: $(got); reports: $(want)"
is "$(scalar 'count(count by (user) (agentmeter_events_total))')" 2 "two users told apart by the user label"
check "the fixtures' cost is not zero" awk -v c="$(want | cut -d' ' -f1)" 'BEGIN {exit !(c > 0)}'

# ---- appends: the next scrape shows the new totals ---------------------------
before=$(want)
inst_env a $GEN session "$T/a/agent/sessions/--home-u-new--/new.jsonl" --calls 3 --seed 21 --small >/dev/null
moved() { [ "$(want)" != "$before" ]; }
wait_until 10 moved
after=$(want)
check "the report totals grew after the append" test "$after" != "$before"
check "after the append, PromQL equals the new report totals" wait_until 20 agrees
diag "prometheus: $(got); reports: $(want)"

# ---- restart: every counter stays where it was -------------------------------
counters() { grep -E '^agentmeter_[a-z_]*_total\{' "$TF/agentmeterd-a.prom" | sort; }
stop_inst a; ok $? "alice's daemon stops cleanly"
check "... and is gone" sh -c "! kill -0 ${DP[a]} 2>/dev/null"
# what it wrote last (at exit: it may have moved since the scrape above);
# each write renames a new file into place
c_before=$(counters)
ino_before=$(stat -c %i "$TF/agentmeterd-a.prom")
start_inst a "alice@laptop"; ok $? "alice's daemon restarts"
rewrote() { [ "$(stat -c %i "$TF/agentmeterd-a.prom" 2>/dev/null)" != "$ino_before" ]; }
check "the restarted daemon writes its file" wait_until 20 rewrote
is "$(counters | md5sum)" "$(echo "$c_before" | md5sum)" "after a restart every counter in the file is where it was"
check "after the restart PromQL still equals the report totals" wait_until 20 agrees
sleep 2
is "$(scalar 'sum(resets(agentmeter_tokens_total[5m])) + sum(resets(agentmeter_cost_usd_total[5m])) + sum(resets(agentmeter_events_total[5m]))')" 0 \
	"Prometheus saw no counter reset"
done_testing
