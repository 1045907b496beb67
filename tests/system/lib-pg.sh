# A throwaway PostgreSQL for the team ledger tests: Debian's postgresql-15,
# initdb into the test's directory, a Unix socket there and no TCP, run as
# an unprivileged user (amtestsys when the tests run as root). Sourced
# after lib.sh's new_env. Sets PGD (its directory), PGURL (a libpq url as
# the superuser "postgres", database "team"), and pg_* helpers.
PGBIN=${AM_PGBIN:-/usr/lib/postgresql/15/bin}
PG_AS=()
pg_have() { [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] && command -v psql >/dev/null; }
pg_init() {
	PGD=$T/pg
	mkdir -p "$PGD"
	if [ "$(id -u)" -eq 0 ]; then
		id amtestsys >/dev/null 2>&1 || { useradd -M -d /nonexistent -s /usr/sbin/nologin amtestsys 2>/dev/null || id amtestsys >/dev/null; }
		chown amtestsys: "$PGD"
		PG_AS=(setpriv --reuid=amtestsys --regid="$(id -g amtestsys)" --clear-groups env HOME=/nonexistent)
	fi
	chmod 700 "$PGD"
	"${PG_AS[@]}" "$PGBIN/initdb" -D "$PGD/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
		>"$PGD/initdb.log" 2>&1 || { sed 's/^/#   /' "$PGD/initdb.log"; return 1; }
	cat >>"$PGD/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$PGD'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 32MB
max_connections = 40
log_min_messages = warning
CONF
	PGURL="host=$PGD dbname=team user=postgres"
	pg_start || return 1
	pg_psql postgres -c 'CREATE DATABASE team' >/dev/null
}
pg_start() {
	"${PG_AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -l "$PGD/server.log" -w -t 30 start >/dev/null 2>&1 ||
		{ echo "# postgres did not start:"; sed 's/^/#   /' "$PGD/server.log" | tail -20; return 1; }
}
# pg_stop [MODE]: fast (default) or immediate
pg_stop() { "${PG_AS[@]}" "$PGBIN/pg_ctl" -D "$PGD/data" -m "${1:-fast}" -w -t 30 stop >/dev/null 2>&1; }
# pg_psql DB ARGS...: psql as the superuser, unaligned, quiet
pg_psql() { local db=$1; shift; psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGD" -U postgres -d "$db" "$@"; }
# pg_q SQL: one value from the team database
pg_q() { pg_psql team -c "$1"; }
pg_cleanup() { [ -n "${PGD:-}" ] && [ -d "$PGD/data" ] && pg_stop immediate; }
