#!/bin/bash
# The team ledger when something is wrong, against a real PostgreSQL: no
# team.conf (nothing changes: no outbox in the ledger), a url that does not
# parse, a socket with no server behind it, a failed login (scram, a wrong
# password in ~/.pgpass), a password in a team.conf others may read, a
# schema newer than the daemon knows. Each is a clear error in `status`,
# and local metering goes on. When the configuration is fixed, the history
# the machine metered before is sent too, with a role that has only the
# writer and reader grants.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
. "$(dirname "$(readlink -f "$0")")/lib-pg.sh"
pg_have || skip_all "no PostgreSQL 15 server binaries ($PGBIN; Debian: postgresql-15)"
command -v jq >/dev/null || skip_all "no jq"
new_env
trap 'pg_cleanup; cleanup_team' EXIT
pg_init || { echo "1..0 # SKIP postgres would not start"; exit 0; }
use_test_user
. "$(dirname "$(readlink -f "$0")")/lib-team.sh"

mk_home C
mkdir -p "$T/C/home/.pi"; cp -r "$FIX/pi/agent" "$T/C/home/.pi/agent"
PI=$(ls "$T"/C/home/.pi/agent/sessions/--home-user-api--/*.jsonl)
cp "$TLIB/pi_call.py" "$T/pi_call.py"
CONF=$T/C/config/agentmeterd/team.conf
fix_owner
metered() { # metered DESCRIPTION: a new call is in the local report
	local n; n=$(local_events C)
	python3 "$T/pi_call.py" call "$PI" --cost 0.01 --model model-a
	check "$1: local metering goes on" wait_until 20 holds "[ \"\$(local_events C)\" = $((n + 1)) ]"
}
conf() { printf '%s\n' "$@" >"$CONF"; [ -n "${AS_USER:-}" ] && chown "$AS_USER:" "$CONF"; chmod 600 "$CONF"; }
reload() { kill -HUP "${DPIDS[C]}"; }
# err_is DESCRIPTION STATE PATTERN: status shows the state and an error matching
err_is() {
	check "$1: status says $2" wait_until 20 holds "[ \"\$(tstat C state)\" = $2 ] && tstat C last_error | grep -q \"$3\""
	diag "$1: $(tstat C last_error)"
}

# ---- no team.conf: nothing changes ----
start_d C
ok $? "the daemon starts without team.conf"
check "no team.conf: status says not configured" wait_until 10 holds '[ "$(ctl C status --json | jq .team.configured)" = false ]'
check "no team.conf: no team line in status" holds '! ctl C status | grep -q "^team "'
check "no team.conf: the ledger has no outbox DB" holds \
	'mdb_stat -n -a "$T/C/state/agentmeterd/ledger.mdb" | grep -q "Status of rows" && ! mdb_stat -n -a "$T/C/state/agentmeterd/ledger.mdb" | grep -q "Status of outbox"'
metered "no team.conf"
check "no team.conf: report --team says what is missing" holds \
	'ctl C report daily --team 2>&1 | grep -q "no team is configured"'

# ---- a url that does not parse ----
conf "url = postgresql://[oops" "machine = gamma"
reload
err_is "bad url" error "url does not parse"
check "bad url: status text shows it" holds 'ctl C status | grep -q "last error .*url does not parse"'
metered "bad url"

# ---- no server behind the socket ----
mkdir -p "$T/nopg"
conf "url = host=$T/nopg dbname=team" "machine = gamma"
reload
err_is "no server" retrying "No such file or directory"
metered "no server"

# ---- a server that accepts and never answers: the connect timeout ----
mkdir -p "$T/hang"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
conns = []
end = time.time() + 120
while time.time() < end:
    s.settimeout(1)
    try: conns.append(s.accept()[0])
    except OSError: pass
' "$T/hang/.s.PGSQL.5432" &
HANG=$!
wait_until 30 test -S "$T/hang/.s.PGSQL.5432"
[ -n "${AS_USER:-}" ] && chown -R "$AS_USER:" "$T/hang"
chmod 777 "$T/hang/.s.PGSQL.5432"
conf "url = host=$T/hang dbname=team" "machine = gamma" "connect_timeout = 1"
reload
err_is "a server that never answers" retrying "no connection within 1 s (connect_timeout)"
metered "a server that never answers"
kill "$HANG"; wait "$HANG" 2>/dev/null

# ---- a failed login ----
pg_init_team() {
	ctl C team init --url "$PGURL" >/dev/null
	pg_q "CREATE ROLE carol LOGIN PASSWORD 'right-horse'; GRANT agentmeter_writer, agentmeter_reader TO carol" >/dev/null
	{ echo "local all carol scram-sha-256"; cat "$PGD/data/pg_hba.conf"; } >"$PGD/hba" && cat "$PGD/hba" >"$PGD/data/pg_hba.conf"
	"${PG_AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" reload >/dev/null
}
pg_init_team
printf '*:*:*:carol:wrong-horse\n' >"$T/C/home/.pgpass"
[ -n "${AS_USER:-}" ] && chown "$AS_USER:" "$T/C/home/.pgpass"
chmod 600 "$T/C/home/.pgpass"
conf "url = host=$PGD dbname=team user=carol" "machine = gamma"
reload
err_is "failed login" retrying 'password authentication failed for user \"carol\"'
metered "failed login"
is "$(pg_q 'SELECT count(*) FROM agentmeter.usage')" 0 "failed login: nothing reached the server"

# ---- a password in a team.conf others may read ----
conf "url = host=$PGD dbname=team user=carol password=right-horse" "machine = gamma"
chmod 644 "$CONF"
reload
err_is "password in a readable team.conf" error "holds a password .*mode 0644"
metered "password in a readable team.conf"
chmod 600 "$CONF"
reload
check "a private team.conf: connected, and the history sent (writer and reader roles only)" \
	wait_until 30 holds 'drained C'
is "$(ctl C report daily --team --json | jq -c .totals)" "$(ctl C report daily --json | jq -c .totals)" \
	"everything metered before the team was configured is on the server"

# ---- a batch the server holds too long: the query timeout ----
# (held until the timeout has been seen, however slow the run: a fixed 3 s
# could end before a loaded ASan daemon's batch reached the server)
psql -X -q -h "$PGD" -U postgres -d team -c "BEGIN; LOCK TABLE agentmeter.usage IN SHARE MODE; SELECT pg_sleep(120)" \
	>/dev/null 2>&1 &
LPID=$!
# (the lock granted before the call is metered: a batch that came first
# went through, and no timeout was ever seen)
check "a batch held by a lock: the lock is taken" wait_until 20 holds \
	"[ \"\$(pg_q \"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'usage' AND l.mode = 'ShareLock' AND l.granted\")\" = 1 ]"
conf "url = host=$PGD dbname=team user=carol password=right-horse" "machine = gamma" "query_timeout = 1"
reload
python3 "$T/pi_call.py" call "$PI" --cost 0.01 --model model-a
err_is "a batch held by a lock" retrying "statement timeout"
psql -X -q -h "$PGD" -U postgres -d team -c \
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()" \
	>/dev/null 2>&1
wait "$LPID" 2>/dev/null
reload
check "the lock gone: the batch goes through" wait_until 30 holds 'drained C'
conf "url = host=$PGD dbname=team user=carol password=right-horse" "machine = gamma"
reload

# ---- a schema newer than this daemon ----
pg_q "UPDATE agentmeter.schema_info SET version = 99" >/dev/null
pg_q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agentmeterd'" >/dev/null
err_is "too new a schema" retrying "version 99, newer than this agentmeterd knows"
metered "too new a schema"
out=$(ctl C team init 2>&1); rc=$?
is "$rc" 1 "too new a schema: team init refuses"
check "too new a schema: team init says why" grep -q "version 99, newer than this agentmeterctl knows" <<<"$out"
check "too new a schema: report --team says why" holds 'ctl C report daily --team 2>&1 | grep -q "version 99, newer"'
pg_q "UPDATE agentmeter.schema_info SET version = 2" >/dev/null
reload
check "schema back: the calls metered meanwhile arrive" wait_until 30 holds 'drained C'
is "$(ctl C report daily --team --json | jq -c .totals)" "$(ctl C report daily --json | jq -c .totals)" \
	"the team report equals the local one again"

# ---- the server restored from an older backup: behind the ledger ----
terminate() { pg_q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agentmeterd'" >/dev/null; }
pg_q "DELETE FROM agentmeter.calls; DELETE FROM agentmeter.usage; UPDATE agentmeter.meters SET acked_seq = 0" >/dev/null
terminate
check "server behind: the daemon sends its whole ledger again" wait_until 30 holds \
	'drained C && [ "$(ctl C report daily --team --json | jq .totals.events)" = "$(local_events C)" ]'
check "server behind: logged" grep -q "lacks part of this ledger's history" "$T/C.log"
is "$(ctl C report daily --team --json | jq -c .totals)" "$(ctl C report daily --json | jq -c .totals)" \
	"server behind: the team report equals the local one"

# ---- the ledger restored from an older backup: the server ahead ----
pg_q "UPDATE agentmeter.meters SET acked_seq = acked_seq + 1000000" >/dev/null
terminate
check "server ahead: the daemon takes a new identity and sends everything" wait_until 30 holds \
	'drained C && [ "$(pg_q "SELECT count(*) FROM agentmeter.meters WHERE machine = '"'gamma'"'")" = 2 ]'
is "$(ctl C report daily --team --json | jq -c .totals)" "$(ctl C report daily --json | jq -c .totals)" \
	"server ahead: still each row once"

# ---- team.conf removed: the outbox is emptied, nothing accumulates ----
rm -f "$CONF"
reload
check "team.conf removed: not configured" wait_until 10 holds '[ "$(ctl C status --json | jq .team.configured)" = false ]'
metered "team.conf removed"
check "the daemon stops cleanly (exit 0; under ASan: no leak)" stop_d C
is "$(mdb_stat -n -s outbox "$T/C/state/agentmeterd/ledger.mdb" 2>/dev/null | sed -n 's/^ *Entries: //p')" 0 \
	"team.conf removed: the outbox is empty and a new call adds nothing to it"
stop_all
done_testing
