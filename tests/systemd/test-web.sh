# `agentmeterctl install --web` under the real user manager (issue 50): the
# socket unit listens, the first request starts agentmeterd-web.service
# through systemd (socket activation), the Host check holds there too, the
# service exits when idle while the socket stays, the next request starts it
# again, and uninstall removes both units. Sourced by test-service.sh (after
# its uninstall), or alone: AM_SYSTEMD_TEST=test-web.sh tests/systemd/run.sh.
if ! declare -f check >/dev/null; then # alone: the helpers test-service.sh has
	n=0; fail=0; web_alone=1
	pass() { n=$((n+1)); echo "ok $n - $1"; }
	flunk() { n=$((n+1)); fail=$((fail+1)); echo "not ok $n - $1"; }
	check() {
		local _o; _o=$(eval "$2" 2>&1)
		if [ $? -eq 0 ]; then pass "$1"; return 0; fi
		flunk "$1"; [ -n "$_o" ] && printf '%s\n' "$_o" | tail -n 15 | sed 's/^/#   /'
		return 1
	}
	poll() {
		local end=$(( $(date +%s%N) + $1 * 1000000000 ))
		while :; do eval "$2" >/dev/null 2>&1 && return 0
			[ "$(date +%s%N)" -ge "$end" ] && return 1; sleep 0.2; done
	}
	UNITS=$H/.config/systemd/user
	RUNUNITS=$XDG_RUNTIME_DIR/systemd/user
	install -d -m 0755 "$WORK/bin" && install -m 0755 "$AM_BUILD/agentmeterd" "$AM_BUILD/agentmeterctl" "$WORK/bin/"
	CTL=$WORK/bin/agentmeterctl
fi
wprop() { AS systemctl --user show -p "$1" --value "agentmeterd-web.$2"; }
wdiag() {
	{ AS systemctl --user status agentmeterd-web.socket agentmeterd-web.service --no-pager -l
	  journalctl _SYSTEMD_USER_UNIT=agentmeterd-web.service --no-pager -o cat | tail -n 15; } 2>&1 | sed 's/^/# web diag: /'
}
# a free port of this host (the namespace shares its network)
WPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$RUNUNITS/agentmeterd.service.d" "$RUNUNITS/agentmeterd-web.service.d"
printf '[Service]\nWatchdogSec=3s\nRestartSec=200ms\nTimeoutStartSec=20s\nTimeoutStopSec=10s\nLimitCORE=0\n' \
	> "$RUNUNITS/agentmeterd.service.d/90-test.conf"
printf '[Service]\nEnvironment=AGENTMETER_WEB_IDLE_SEC=2\n' > "$RUNUNITS/agentmeterd-web.service.d/90-test.conf"
chown -R "$U:$G" "$XDG_RUNTIME_DIR/systemd"

out=$(AS "$CTL" install --web --listen "127.0.0.1:$WPORT" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   install --web: /'
check "install --web exits 0 and writes the socket and service units with the marker" \
	"[ $rc -eq 0 ] && head -1 '$UNITS/agentmeterd-web.socket' | grep -q '^# Written by agentmeterctl install' &&
	 grep -qx 'ListenStream=127.0.0.1:$WPORT' '$UNITS/agentmeterd-web.socket' &&
	 grep -qx 'ExecStart=$CTL web' '$UNITS/agentmeterd-web.service'"
check "systemd-analyze verify --user passes for both" \
	"AS systemd-analyze verify --user --man=no '$UNITS/agentmeterd-web.socket' '$UNITS/agentmeterd-web.service'"
check "the socket listens, enabled; the service waits for a connection" \
	"[ \"\$(wprop ActiveState socket)\" = active ] && [ \"\$(AS systemctl --user is-enabled agentmeterd-web.socket)\" = enabled ] &&
	 [ \"\$(wprop ActiveState service)\" = inactive ] && [ \"\$(wprop ExecMainPID service)\" = 0 ]" || wdiag
URL=$(AS "$CTL" web --url 2>&1)
TOK=${URL#*token=}
check "web --url: the installed socket's address with the secret" \
	"grep -Eqx 'http://127\\.0\\.0\\.1:$WPORT/\\?token=[0-9a-f]{64}' <<< '$URL'"
code=$(curl -s --max-time 10 -o "$WORK/web-state.json" -w '%{http_code}' "http://127.0.0.1:$WPORT/api/state?token=$TOK")
check "the first request starts agentmeterd-web.service through systemd and gets the state" \
	"[ '$code' = 200 ] && jq -e '.totals.month and .live == true' '$WORK/web-state.json' >/dev/null &&
	 [ \"\$(wprop ExecMainPID service)\" != 0 ]" || wdiag
P1=$(wprop ExecMainPID service)
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H "Host: rebind.example:$WPORT" "http://127.0.0.1:$WPORT/api/state?token=$TOK")
check "Host: rebind.example:$WPORT through the socket: 403" "[ '$code' = 403 ]"
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WPORT/api/state")
check "no secret through the socket: 401" "[ '$code' = 401 ]"
check "idle, the service exits on its own (status 0); the socket stays" \
	"poll 15 '[ \"\$(wprop ActiveState service)\" = inactive ]' && [ \"\$(wprop Result service)\" = success ] &&
	 [ \"\$(wprop ExecMainStatus service)\" = 0 ] && [ \"\$(wprop ActiveState socket)\" = active ]" || wdiag
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WPORT/?token=$TOK")
check "the next request starts a new one" \
	"[ '$code' = 200 ] && [ \"\$(wprop ExecMainPID service)\" != '$P1' ]" || wdiag

rm -rf "$RUNUNITS/agentmeterd.service.d" "$RUNUNITS/agentmeterd-web.service.d"
out=$(AS "$CTL" uninstall 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/#   uninstall: /'
check "uninstall removes the web units too and the manager forgets them" \
	"[ $rc -eq 0 ] && left=\$(find '$UNITS' -name 'agentmeterd*' 2>/dev/null); echo \"\$left\"; [ -z \"\$left\" ] &&
	 [ \"\$(wprop LoadState socket)\" = not-found ]"
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WPORT/" 2>/dev/null)
check "nothing listens on the port any more" "[ '$code' = 000 ]"
if [ -n "${web_alone:-}" ]; then
	echo "1..$n"
	exit $(( fail > 0 ? 1 : 0 ))
fi
