#!/bin/bash
# make bench (AM_BENCH_TEAM_SCALE=1), the team ledger at a team's scale:
# MACHINES machines (16), each a year of CALLS calls (250,000) written as
# four parts of a quarter of the calls each, all over the same year
# (tests/bench/gen_team.py). One throwaway PostgreSQL 15 (fsync on).
#   1. part 0 of every machine (1M rows): each machine's ledger made with
#      `agentmeterd --once`, team.conf added, PUSHERS (12) daemons started
#      at once, then the rest: rows per second until every backlog is 0.
#   2. the team reports at 1M rows, median of RUNS (5).
#   3. parts 1-3 added (4M rows), ingested with the team configured, the
#      same push of PUSHERS at once, the reports again; the rows-only
#      reading (a version-1 server) for comparison; sizes on the server.
# The server must hold every generated call once, and the team report's
# totals must equal the generator's. The same density at both sizes (a
# quarter of the calls per machine, the same year and machines): the
# reports' output is the same size, so what grows is only the rows.
# Usage: tests/bench/team-scale.sh BUILD_DIR   (as root: postgres and the
# daemons run as amtestsys)
set -eu
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CORP=${AM_BENCH_CORPORA:-$B/bench-corpora}
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}/team-scale
PGBIN=${AM_PGBIN:-/usr/lib/postgresql/15/bin}
MACHINES=${AM_BENCH_TEAM_MACHINES:-16}
CALLS=${AM_BENCH_TEAM_CALLS:-250000}
PUSHERS=${AM_BENCH_TEAM_PUSHERS:-12}
RUNS=${AM_BENCH_RUNS:-5}
BASE=${AM_BENCH_TEAM_BASELINE:-} # another agentmeterctl: its reports timed in pairs with this build's
PART=$((CALLS / 4))
FILES=$((PART / 100))
[ -x "$PGBIN/initdb" ] || { echo "team-scale bench: no PostgreSQL 15 ($PGBIN)"; exit 0; }
[ "$PUSHERS" -le "$MACHINES" ] || PUSHERS=$MACHINES

# ---- the corpus: MACHINES x 4 parts ------------------------------------------------
C=$CORP/team-scale-$MACHINES-$CALLS
if [ ! -f "$C/.done" ]; then
	rm -rf "$C"; mkdir -p "$C"
	echo "generating $MACHINES x $CALLS calls ..." >&2
	for m in $(seq -w 1 "$MACHINES"); do
		mkdir -p "$C/m$m"
		for p in 0 1 2 3; do
			printf 'python3 %q %q --calls %d --files %d --seed %d >%q\n' "$SRC/tests/bench/gen_team.py" \
				"$C/m$m/p$p" "$PART" "$FILES" "$(( 1$m * 10 + p ))" "$C/m$m/p$p.json"
		done
	done >"$C/gen.sh"
	xargs -P 2 -d '\n' -n 1 sh -c <"$C/gen.sh"
	touch "$C/.done"
fi
chmod -R a+rX "$CORP"
sum_expected() { # sum_expected FIELD PARTS...: the generator's total over every machine
	local f=$1; shift
	for m in $(seq -w 1 "$MACHINES"); do for p in "$@"; do jq ".$f" "$C/m$m/p$p.json"; done; done |
		python3 -c 'import sys; print(sum(int(x) for x in sys.stdin))'
}

# ---- postgres ------------------------------------------------------------------------
rm -rf "$W"; mkdir -p "$W"; chmod 755 "$W"
AS=()
if [ "$(id -u)" -eq 0 ]; then
	id amtestsys >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin amtestsys
	AS=(setpriv --reuid=amtestsys --regid="$(id -g amtestsys)" --clear-groups env HOME=/nonexistent)
	chown amtestsys: "$W"
fi
PGD=$W/pg
mkdir -p "$PGD"; [ ${#AS[@]} -gt 0 ] && chown amtestsys: "$PGD"
chmod 700 "$PGD"
"${AS[@]}" "$PGBIN/initdb" -D "$PGD/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nshared_buffers = 512MB\nmax_connections = 40\n" \
	"$PGD" >>"$PGD/data/postgresql.conf"
"${AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w start >/dev/null
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -m immediate stop >/dev/null 2>&1 || true' EXIT
pq() { psql -X -A -t -h "$PGD" -U postgres -d team -c "$1"; }
psql -X -q -h "$PGD" -U postgres -d postgres -c 'CREATE DATABASE team' >/dev/null
URL="host=$PGD dbname=team user=postgres"

# machine m's world: HOME with its sessions, state, runtime, config apart
world() { # world M: sets E
	local m=$1
	E=(env HOME="$W/m$m/home" XDG_STATE_HOME="$W/m$m/state" XDG_RUNTIME_DIR="$W/m$m/run" XDG_CONFIG_HOME="$W/m$m/config")
	[ ${#AS[@]} -gt 0 ] && E=(setpriv --reuid=amtestsys --regid="$(id -g amtestsys)" --clear-groups "${E[@]}")
	return 0
}
add_part() { # add_part M P: the part's sessions into the machine's home (hard links)
	local d="$W/m$1/home/.pi/agent/sessions" p
	mkdir -p "$d"
	for p in "$C/m$1/p$2"/*/; do
		p=${p%/}
		cp -al "$p" "$d/$(basename "$p")p$2" 2>/dev/null || cp -a "$p" "$d/$(basename "$p")p$2"
	done
}
secs() { python3 -c "print('%.3f' % (($2 - $1) / 1e9))"; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

for m in $(seq -w 1 "$MACHINES"); do
	mkdir -p "$W/m$m/state" "$W/m$m/run" "$W/m$m/config/agentmeterd"
	chmod 700 "$W/m$m/run"
	add_part "$m" 0
done
[ ${#AS[@]} -gt 0 ] && chown -R amtestsys: "$W"/m*

ingest_all() {
	local t0 t1
	t0=$(date +%s%N)
	for m in $(seq -w 1 "$MACHINES"); do
		world "$m"; "${E[@]}" "$B/agentmeterd" --once --no-metrics-file >/dev/null 2>&1
	done
	t1=$(date +%s%N)
	echo "   ingested on $MACHINES machines (agentmeterd --once each, one after another): $(secs "$t0" "$t1") s"
}

drained() { # drained M: the daemon's backlog is empty and its history queued
	world "$1"
	local st; st=$("${E[@]}" "$B/agentmeterctl" status --json 2>/dev/null) || return 1
	[ "$(jq -r '.team.state + "/" + (.team.backlog|tostring) + "/" + (.team.filling|tostring)' <<<"$st")" = connected/0/false ]
}

push() { # push FIRST LAST: start those machines' daemons at once; time until all drained
	local first=$1 last=$2 t0 t1 m n=0 left before after
	before=$(pq "SELECT count(*) FROM agentmeter.usage")
	t0=$(date +%s%N)
	for m in $(seq -w "$first" "$last"); do
		world "$m"
		"${E[@]}" "$B/agentmeterd" --log-target=console --no-metrics-file >"$W/m$m/daemon.log" 2>&1 &
		PIDS+=($!)
	done
	while :; do
		left=0
		for m in $(seq -w "$first" "$last"); do drained "$m" || left=$((left + 1)); done
		[ "$left" -eq 0 ] && break
		n=$((n + 1)); [ $n -gt 6000 ] && { echo "   did not drain"; exit 1; }
		sleep 0.2
	done
	t1=$(date +%s%N)
	after=$(pq "SELECT count(*) FROM agentmeter.usage")
	local el; el=$(secs "$t0" "$t1")
	echo "   machines $first-$last ($((10#$last - 10#$first + 1)) at once): $((after - before)) new rows on the server in $el s" \
		"from start: $(python3 -c "print(int(($after - $before) / $el))") rows/s"
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
	PIDS=()
}

reports() { # reports: the three team reports, median of RUNS; with BASE, paired with that agentmeterctl
	local k ts tb t0 t1 i
	world 01
	echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
	for k in "daily" "daily --by machine" "model"; do
		# shellcheck disable=SC2086
		"${E[@]}" "$B/agentmeterctl" report $k --team --url "$URL" --json --tz UTC >"$W/rep.json" 2>/dev/null
		if [ -n "$BASE" ]; then
			# shellcheck disable=SC2086
			"${E[@]}" "$BASE" report $k --team --url "$URL" --json --tz UTC >"$W/rep-base.json" 2>/dev/null
			cmp -s "$W/rep.json" "$W/rep-base.json" || { echo "   report $k: not the baseline's output"; exit 1; }
		fi
		ts=(); tb=()
		for i in $(seq "$RUNS"); do
			t0=$(date +%s%N)
			# shellcheck disable=SC2086
			"${E[@]}" "$B/agentmeterctl" report $k --team --url "$URL" --json --tz UTC >/dev/null 2>&1
			t1=$(date +%s%N)
			ts+=("$(secs "$t0" "$t1")")
			[ -n "$BASE" ] || continue
			t0=$(date +%s%N)
			# shellcheck disable=SC2086
			"${E[@]}" "$BASE" report $k --team --url "$URL" --json --tz UTC >/dev/null 2>&1
			t1=$(date +%s%N)
			tb+=("$(secs "$t0" "$t1")")
		done
		printf '   %-28s median %s s (runs: %s), %s rows\n' "report $k --team" \
			"$(printf '%s\n' "${ts[@]}" | median)" "${ts[*]}" "$(jq '.rows | length' "$W/rep.json")"
		[ -n "$BASE" ] && printf '   %-28s median %s s (runs: %s, paired): %sx this build\n' "  baseline" \
			"$(printf '%s\n' "${tb[@]}" | median)" "${tb[*]}" \
			"$(python3 -c "print('%.2f' % ($(printf '%s\n' "${tb[@]}" | median) / $(printf '%s\n' "${ts[@]}" | median)))")"
	done
	return 0
}

check_totals() { # check_totals PARTS...: the server and the report against the generator
	local want cost got gcost
	want=$(sum_expected events "$@"); cost=$(sum_expected cost_nano "$@")
	got=$(pq "SELECT count(*) FROM agentmeter.usage")
	world 01
	"${E[@]}" "$B/agentmeterctl" report daily --team --url "$URL" --json --tz UTC >"$W/rep.json"
	gcost=$(jq -r '.totals.cost_usd' "$W/rep.json")
	echo "   on the server: $got rows, generated $want; report --team: $(jq .totals.events "$W/rep.json") events," \
		"\$$gcost (generated \$$(python3 -c "print('%.6f' % ($cost / 1e9))"))"
	[ "$got" = "$want" ] && [ "$(jq .totals.events "$W/rep.json")" = "$want" ] &&
		[ "$(python3 -c "print(round($gcost * 1e9))")" = "$cost" ] ||
		{ echo "   MISMATCH"; exit 1; }
}

# ---- 1M rows -------------------------------------------------------------------------
world 01
"${E[@]}" "$B/agentmeterctl" team init --url "$URL" >/dev/null
echo "== team of $MACHINES machines, part 0 ($((MACHINES * PART)) calls):"
ingest_all
for m in $(seq -w 1 "$MACHINES"); do
	printf 'url = %s\nmachine = m%s\nuser = u%s\n' "$URL" "$m" "$m" >"$W/m$m/config/agentmeterd/team.conf"
done
echo "== push (history walk + batches):"
push 1 "$PUSHERS"
[ "$PUSHERS" -lt "$MACHINES" ] && push "$((PUSHERS + 1))" "$MACHINES"
check_totals 0
echo "== reports at $(pq "SELECT count(*) FROM agentmeter.usage") rows ($(pq "SELECT count(*) FROM agentmeter.rollups") rollups per 15 minutes, $(pq "SELECT count(*) FROM agentmeter.rollups_hourly") per hour):"
reports

# ---- 4M rows -------------------------------------------------------------------------
for m in $(seq -w 1 "$MACHINES"); do for p in 1 2 3; do add_part "$m" "$p"; done; done
[ ${#AS[@]} -gt 0 ] && chown -R amtestsys: "$W"/m*/home
echo "== parts 1-3 added ($((MACHINES * PART * 3)) calls), ingested with the team configured (outbox):"
ingest_all
echo "== push:"
push 1 "$PUSHERS"
[ "$PUSHERS" -lt "$MACHINES" ] && push "$((PUSHERS + 1))" "$MACHINES"
check_totals 0 1 2 3
echo "== reports at $(pq "SELECT count(*) FROM agentmeter.usage") rows ($(pq "SELECT count(*) FROM agentmeter.rollups") rollups per 15 minutes, $(pq "SELECT count(*) FROM agentmeter.rollups_hourly") per hour):"
reports
echo "== the same from the rows (the server read as version 1, no rollups), one run each:"
pq "UPDATE agentmeter.schema_info SET version = 1" >/dev/null
RUNS=1 BASE= reports
pq "UPDATE agentmeter.schema_info SET version = 2" >/dev/null
echo "== on the server:"
pq "SELECT '   usage: ' || pg_size_pretty(pg_total_relation_size('agentmeter.usage')) || ' with indexes, '
    || (pg_total_relation_size('agentmeter.usage') / greatest(count(*), 1)) || ' bytes a row; calls: '
    || pg_size_pretty(pg_total_relation_size('agentmeter.calls')) || '; rollups: '
    || pg_size_pretty(pg_total_relation_size('agentmeter.rollups')) FROM agentmeter.usage"
