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
	pg_initdb "$PGD/data" || return 1
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
# pg_initdb DIR: a new cluster there. Under tests/run-all.sh (which sets
# AM_TEST_CACHE, a directory of its own) initdb runs once and each test
# copies what it made (~0.3 s instead of ~2.5 s, six times a run); the
# settings of each test's server are added to its copy (pg_init).
pg_initdb() {
	local dest=$1 tpl=${AM_TEST_CACHE:-}/pg-template
	if [ -z "${AM_TEST_CACHE:-}" ] || [ ! -d "$AM_TEST_CACHE" ]; then
		"${PG_AS[@]}" "$PGBIN/initdb" -D "$dest" -U postgres -A trust -E UTF8 --locale=C --no-sync \
			>"$PGD/initdb.log" 2>&1 || { sed 's/^/#   /' "$PGD/initdb.log"; return 1; }
		return 0
	fi
	# one test makes it, those starting meanwhile wait for it
	(
		flock 9 || exit 1
		[ -f "$tpl/made" ] && exit 0
		rm -rf "$tpl" && mkdir -p "$tpl" && chmod 700 "$tpl" || exit 1
		[ ${#PG_AS[@]} -gt 0 ] && chown amtestsys: "$tpl"
		"${PG_AS[@]}" "$PGBIN/initdb" -D "$tpl/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
			>"$PGD/initdb.log" 2>&1 || { sed 's/^/#   /' "$PGD/initdb.log"; exit 1; }
		touch "$tpl/made"
	) 9>>"$AM_TEST_CACHE/pg-template.lock" || return 1
	cp -a "$tpl/data" "$dest"
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
