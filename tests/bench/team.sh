#!/bin/bash
# make bench, the team ledger: a throwaway PostgreSQL 15 on a Unix socket in
# BENCH_DIR (fsync on, as a server would run), a ledger of ~200k rows
# (gen_pi.py's dense corpus, metered by `agentmeterd --once` without a
# team), then team.conf added and the live daemon started: the history walk
# and the push of the 200k-row backlog, timed from start to an empty
# backlog (rows per second), with the daemon's memory sampled while it
# drains. Also the outbox's cost for one machine: `--once` over the same
# corpus into a fresh ledger without and with a team configured.
# Usage: tests/bench/team.sh BUILD_DIR   (run as root: postgres runs as amtestsys)
set -eu
B=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CORP=${AM_BENCH_CORPORA:-$B/bench-corpora}
W=${AM_BENCH_DIR:-/tmp/agentmeterd-bench}/team
PGBIN=${AM_PGBIN:-/usr/lib/postgresql/15/bin}
FILES=${AM_BENCH_TEAM_FILES:-1000}
PAIRS=${AM_BENCH_TEAM_PAIRS:-200}
RUNS=${AM_BENCH_RUNS:-3}
[ -x "$PGBIN/initdb" ] || { echo "team bench: no PostgreSQL 15 ($PGBIN): apt-get install postgresql-15"; exit 0; }
rm -rf "$W"; mkdir -p "$W" "$CORP"
chmod 755 "$W"

# ---- the corpus: FILES x PAIRS small calls ------------------------------------
C=$CORP/team-$FILES-$PAIRS
if [ ! -f "$C/.done" ]; then
	rm -rf "$C"; mkdir -p "$C/home/.pi/agent"
	echo "generating $((FILES * PAIRS)) calls in $FILES files ..." >&2
	python3 "$SRC/tests/lib/gen_pi.py" corpus "$C/home/.pi/agent/sessions" --files "$FILES" --pairs "$PAIRS" \
		--forks 0 --seed 7 --small >"$C/expected.json"
	touch "$C/.done"
fi
chmod -R a+rX "$CORP"

# ---- postgres ----------------------------------------------------------------
AS=()
if [ "$(id -u)" -eq 0 ]; then
	id amtestsys >/dev/null 2>&1 || useradd -M -d /nonexistent -s /usr/sbin/nologin amtestsys
	AS=(setpriv --reuid=amtestsys --regid="$(id -g amtestsys)" --clear-groups env HOME=/nonexistent)
fi
PGD=$W/pg
mkdir -p "$PGD"; [ ${#AS[@]} -gt 0 ] && chown amtestsys: "$W" "$PGD"
chmod 700 "$PGD"
"${AS[@]}" "$PGBIN/initdb" -D "$PGD/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nshared_buffers = 256MB\n" "$PGD" >>"$PGD/data/postgresql.conf"
"${AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w start >/dev/null
trap '"${AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -m immediate stop >/dev/null 2>&1 || true' EXIT
psql -X -q -h "$PGD" -U postgres -d postgres -c 'CREATE DATABASE team' >/dev/null
URL="host=$PGD dbname=team user=postgres"

# a user's world under W: HOME is the corpus; state, runtime, config apart
world() { # world NAME: sets E (the env prefix)
	local n=$1
	mkdir -p "$W/$n/state" "$W/$n/run" "$W/$n/config/agentmeterd"
	chmod 700 "$W/$n/run"
	[ ${#AS[@]} -gt 0 ] && chown -R amtestsys: "$W/$n"
	E=(env HOME="$C/home" XDG_STATE_HOME="$W/$n/state" XDG_RUNTIME_DIR="$W/$n/run" XDG_CONFIG_HOME="$W/$n/config")
	[ ${#AS[@]} -gt 0 ] && E=(setpriv --reuid=amtestsys --regid="$(id -g amtestsys)" --clear-groups "${E[@]}")
	return 0
}
team_conf() { printf 'url = %s\nmachine = bench\n' "$URL" >"$W/$1/config/agentmeterd/team.conf"; }
secs() { python3 -c "print('%.3f' % (($2 - $1) / 1e9))"; }

# ---- the outbox's cost on one machine: --once without and with a team ----------
echo "== agentmeterd --once over $((FILES * PAIRS)) calls ($(du -sh "$C/home" | cut -f1)), median of $RUNS:"
for mode in off on; do
	ts=()
	for i in $(seq "$RUNS"); do
		rm -rf "$W/once"; world once
		[ $mode = on ] && team_conf once
		t0=$(date +%s%N)
		"${E[@]}" "$B/agentmeterd" --once --no-metrics-file >/dev/null 2>&1
		t1=$(date +%s%N)
		ts+=("$(secs "$t0" "$t1")")
	done
	size=$(du -k "$W/once/state/agentmeterd/ledger.mdb" | cut -f1)
	med=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
	ent=$(mdb_stat -n -s outbox "$W/once/state/agentmeterd/ledger.mdb" 2>/dev/null | sed -n 's/^ *Entries: //p')
	echo "   team $mode: ${med} s (runs: ${ts[*]}), ledger $((size / 1024)) MB, outbox entries ${ent:-none}"
done

# ---- the backlog: a metered history, then a team configured -------------------
rm -rf "$W/d"; world d
"${E[@]}" "$B/agentmeterd" --once --no-metrics-file >/dev/null 2>&1
"${E[@]}" "$B/agentmeterctl" team init --url "$URL" >/dev/null
team_conf d
rows=$("${E[@]}" "$B/agentmeterctl" --socket "$W/none.sock" report daily --json 2>/dev/null | jq .totals.events)
echo "== push of a ${rows}-row history (the walk queues it, then batches of <= 5000 entries):"
t0=$(date +%s%N)
"${E[@]}" "$B/agentmeterd" --log-target=console --no-metrics-file >"$W/d.log" 2>&1 &
DP=$!
peak_rss=0; peak_anon=0; n=0; done_at=
while kill -0 $DP 2>/dev/null; do
	rss=$(awk '/^VmRSS/ {print $2}' /proc/$DP/status 2>/dev/null || echo 0)
	anon=$(awk '/^RssAnon/ {print $2}' /proc/$DP/status 2>/dev/null || echo 0)
	[ "${rss:-0}" -gt "$peak_rss" ] && peak_rss=$rss
	[ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
	st=$("${E[@]}" "$B/agentmeterctl" status --json 2>/dev/null || true)
	if [ -n "$st" ] && [ "$(jq -r '.team.state + "/" + (.team.backlog|tostring) + "/" + (.team.filling|tostring)' <<<"$st")" = connected/0/false ]; then
		done_at=$(date +%s%N); break
	fi
	n=$((n + 1)); [ $n -gt 3000 ] && break
	sleep 0.1
done
sent=$(jq .team.rows_sent <<<"$st"); calls=$(jq .team.calls_sent <<<"$st"); batches=$(jq .team.batches <<<"$st")
kill $DP; wait $DP 2>/dev/null || true
if [ -z "$done_at" ]; then echo "   did not drain; log:"; tail -5 "$W/d.log"; exit 1; fi
el=$(secs "$t0" "$done_at")
on_server=$(psql -X -A -t -h "$PGD" -U postgres -d team -c 'SELECT count(*) FROM agentmeter.usage')
echo "   $sent rows and $calls tool calls in $batches batches, $el s from start: $(python3 -c "print(int($sent / $el))") rows/s"
echo "   on the server: $on_server rows ($rows in the ledger)"
echo "   daemon memory while draining: peak RSS $((peak_rss / 1024)) MB, private (anon) $((peak_anon / 1024)) MB"
psql -X -A -t -h "$PGD" -U postgres -d team -c \
	"SELECT 'server: ' || pg_size_pretty(pg_total_relation_size('agentmeter.usage')) || ' for usage with its indexes, '
	 || pg_size_pretty(pg_total_relation_size('agentmeter.calls')) || ' for calls'" | sed 's/^/   /'
