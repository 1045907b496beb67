#!/bin/bash
# OpenClaw's gateway keeps its database connection open and commits one row
# per message. A WAL commit becomes visible when the writer publishes it in
# the -shm (a shared mapping: no inotify event), after its frames reached
# the -wal (an event): a read woken by the frames can see the old snapshot,
# and nothing else happens until the next message. Each row here must be
# counted without a later write (CI once saw a row wait forever).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
for tool in sqlite3 jq python3; do
	command -v "$tool" >/dev/null || skip_all "needs $tool"
done
python3 -c 'import sqlite3' 2>/dev/null || skip_all "python3 has no sqlite3 module"
new_env
M=$HOME/.openclaw/agents/main/agent/openclaw-agent.sqlite
mkdir -p "$(dirname "$M")"
sqlite3 "$M" <"$FIX/openclaw/schema.sql" >/dev/null
# vendor costs stay as written (gpt-5.1 is in our price table too)
mkdir -p "$XDG_CONFIG_HOME/agentmeterd"
echo 'price gpt-5.1 in=0 out=0 cache_read=0' >"$XDG_CONFIG_HOME/agentmeterd/prices.conf"
start_daemon --reconcile-interval=3600; ok $? "daemon starts"

coproc GW { python3 "$AM_SRCDIR/tests/lib/oc_gateway_writer.py" "$M" gw-session 2>>"$T/writer.log"; }
events_are() { [ "$(totals events)" = "$1" ]; }
N=25 missed=0 late=
for i in $(seq 1 $N); do
	echo "$i" >&"${GW[1]}"
	read -r -t 10 reply <&"${GW[0]}" || { missed=$N; break; }
	# no other write follows until it is counted
	if ! wait_until 5 events_are "$i"; then
		missed=$((missed + 1)); late="$late $i"
		wait_until 30 events_are "$i" || break
	fi
done
is "$missed" 0 "each of $N rows committed by a writer that stays connected is counted without a later write${late:+ (late:$late)}"
is "$(totals events)" "$N" "all $N rows, none twice"
is "$(totals input_tokens)" "$((N * 1000))" "their tokens"
exec {GW[1]}>&-
wait "$GW_PID" 2>/dev/null
# the writer gone (its close checkpoints the -wal into the file): no row twice
sleep 1.5
is "$(totals events)" "$N" "after the writer closed: still $N rows"
kill -0 "$DPID"; ok $? "daemon alive"
stop_daemon; ok $? "SIGTERM: exit 0"
! grep -qiE 'AddressSanitizer|runtime error' "$T/daemon.log"; ok $? "no sanitizer reports"
done_testing
