#!/bin/bash
# `agentmeterctl web` (issue 50): the URL with the secret comes first; no
# secret, a wrong one or a foreign Host header gets no data; CSP and no
# CORS; the secret file is 0600. Then a real Chromium (puppeteer-core,
# installed into $AM_BUILD/node by npm when missing; skipped without it)
# shows the totals, a call appended now without a reload, the page after a
# daemon restart with nothing lost or doubled, and no figure without the
# secret; screenshots light, dark and phone in $AM_BUILD/test-output/web/.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
CALL="python3 $AM_SRCDIR/tests/lib/pi_call.py"
S=$HOME/.pi/agent/sessions/--home-u-proj--/s.jsonl
OUT=$AM_BUILD/test-output/web
rm -rf "$OUT"; mkdir -p "$OUT"
$CALL header "$S" --cwd '/home/u/<u>proj'
$CALL call "$S" --cost 0.25 --model 'model-<i>a' --tokens 1000
start_daemon; ok $? "daemon starts"
echo "$DPID" > "$T/dpid"

"$C" web --listen 127.0.0.1:0 >"$T/web.out" 2>"$T/web.err" &
WPID=$!
trap 'kill "$WPID" 2>/dev/null; [ -s "$T/dpid" ] && kill "$(cat "$T/dpid")" 2>/dev/null; cleanup_env' EXIT
wait_until 10 test -s "$T/web.out"
URL=$(head -1 "$T/web.out")
like "$URL" "http://127.0.0.1:" "the first line is the URL"
check "... with a 256-bit secret as token" grep -Eqx 'http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{64}' "$T/web.out"
PORT=$(sed -n 's|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/web.out")
TOK=${URL#*token=}
SEC=$XDG_RUNTIME_DIR/agentmeterctl-web/secret
is "$(stat -c %a "$SEC" 2>/dev/null) $(stat -c %a "$(dirname "$SEC")" 2>/dev/null)" "600 700" \
	"the secret is kept in a 0600 file under \$XDG_RUNTIME_DIR (directory 0700)"
is "$(cat "$SEC")" "$TOK" "... the one in the URL"
is "$("$C" web --url)" "http://127.0.0.1:8791/?token=$TOK" "web --url prints the installed socket's URL with the same secret"

B=http://127.0.0.1:$PORT
get() { # get NAME CURL-ARGS...: status in $T/NAME.code, headers .h, body .b
	local n=$1; shift
	curl -s -o "$T/$n.b" -D "$T/$n.h" -w '%{http_code}' "$@" > "$T/$n.code"
}
get ok "$B/api/state?token=$TOK"
is "$(cat "$T/ok.code")" 200 "/api/state with the secret: 200"
is "$(jq -r '.totals.today.cost_usd' "$T/ok.b")" 0.25 "... today's cost from the ledger"
check "... a Content-Security-Policy that allows only the page's own resources" \
	grep -qi "^content-security-policy: default-src 'none'; script-src 'self'; style-src 'self';" "$T/ok.h"
get page "$B/?token=$TOK"
check "the page loads its script and style from the server itself only" \
	sh -c "grep -q '<script src=\"/app.js\"' '$T/page.b' && ! grep -Eq 'https?://|//[a-z]' '$T/page.b'"
for what in "none:$B/api/state:401" "wrong:$B/api/state?token=$(printf '0%.0s' $(seq 64)):403" \
	    "short:$B/api/state?token=x:403" "page:$B/:401" "events:$B/events:401"; do
	n=${what%%:*}; rest=${what#*:}; want=${rest##*:}; u=${rest%:*}
	get "$n" "$u"
	is "$(cat "$T/$n.code")" "$want" "$n secret ($u): $want"
	check "... and no data" sh -c "! grep -Eq 'cost|token|0\\.25|model' '$T/$n.b' || grep -q 'secret needed' '$T/$n.b'"
done
get rebind -H "Host: rebind.example:$PORT" "$B/api/state?token=$TOK"
is "$(cat "$T/rebind.code")" 403 "Host: rebind.example:$PORT (DNS rebinding), even with the secret: 403"
check "... and no data" sh -c "! grep -q 'cost_usd' '$T/rebind.b'"
get host2 -H "Host: localhost:$PORT" "$B/api/state?token=$TOK"
is "$(cat "$T/host2.code")" 200 "Host: localhost:$PORT is this listener: 200"
get origin -H "Origin: http://evil.example" "$B/api/state?token=$TOK"
is "$(cat "$T/origin.code")" 403 "a request from another origin: 403"
check "no response carries a CORS header" sh -c "! cat '$T'/*.h | grep -qi '^access-control-'"
get post -X POST "$B/api/state?token=$TOK"
is "$(cat "$T/post.code")" 405 "POST: 405"
curl -sN --max-time 1 "$B/events?token=$TOK" > "$T/sse.out"
check "/events: a server-sent event with the state at once" \
	sh -c "grep -q '^event: state' '$T/sse.out' && grep '^data: ' '$T/sse.out' | head -1 | cut -c7- | jq -e '.totals.today.cost_usd == 0.25' >/dev/null"

# ---- the browser
PUP=$AM_BUILD/node/node_modules/puppeteer-core
# an ASan build's run may use the normal build's copy
[ ! -d "$PUP" ] && [ -d "$AM_SRCDIR/build/node/node_modules/puppeteer-core" ] &&
	PUP=$AM_SRCDIR/build/node/node_modules/puppeteer-core
if [ ! -d "$PUP" ] && command -v npm >/dev/null; then
	# into a directory of its own, moved in place whole: a test running at
	# the same time never sees half of it
	NT=$(mktemp -d "$AM_BUILD/node.XXXXXX")
	if timeout 180 npm install --prefix "$NT" --prefer-offline --no-audit --no-fund --silent puppeteer-core >"$T/npm.log" 2>&1; then
		mv -T "$NT" "$AM_BUILD/node" 2>/dev/null || rm -rf "$NT"
		PUP=$AM_BUILD/node/node_modules/puppeteer-core
	else
		diag "npm install puppeteer-core failed: $(tail -1 "$T/npm.log")"
		rm -rf "$NT"
	fi
fi
if ! command -v chromium >/dev/null || ! command -v node >/dev/null || [ ! -d "$PUP" ]; then
	skip "the browser checks: needs chromium, node and puppeteer-core ($PUP)"
else
	# the daemon stops, a call lands meanwhile, the daemon starts again
	cat > "$T/restart.sh" <<RESTART
kill -TERM "\$(cat '$T/dpid')"; for i in \$(seq 100); do kill -0 "\$(cat '$T/dpid')" 2>/dev/null || break; sleep 0.05; done
$CALL call '$S' --cost 0.5 --model model-c --tokens 500
"$D" --log-target=console >>"$T/daemon.log" 2>&1 </dev/null & echo \$! > '$T/dpid'
for i in \$(seq 200); do "$C" version >/dev/null 2>&1 && exit 0; sleep 0.05; done; exit 1
RESTART
	DPID= # the restart script owns the daemon from here (its pid in $T/dpid)
	env WEB_URL="$URL" WEB_PORT="$PORT" CHROMIUM="$(command -v chromium)" OUT="$OUT" PUPPETEER="$PUP" \
		APPEND="$CALL call '$S' --cost 1.5 --model model-b --tokens 3000" RESTART="bash '$T/restart.sh'" \
		WANT1='$0.250000' WANT2='$1.750000' WANT3='$2.250000' CALLS3=3 \
		timeout 60 node "$AM_SRCDIR/tests/lib/web_browser.js" > "$T/browser.out" 2>&1
	while IFS= read -r l; do
		case $l in
		"RESULT "*) r=${l#RESULT }; ok "${r%% *}" "browser: ${r#* }" ;;
		*) echo "# $l" ;;
		esac
	done < "$T/browser.out"
	grep -q '^RESULT ' "$T/browser.out" || ok 1 "browser: the puppeteer script ran"
	check "screenshots light, dark and phone in $OUT" \
		test -s "$OUT/web-light.png" -a -s "$OUT/web-dark.png" -a -s "$OUT/web-phone.png"
fi

kill -TERM "$WPID"; wait "$WPID"; rc=$?
is "$rc" 0 "SIGTERM: web exits 0"
done_testing
