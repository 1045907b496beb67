#!/bin/bash
# `report KIND --html` (issue 26): every kind is one self-contained page
# (no script, no URL, a CSP that forbids both) with inline SVG charts and
# the terminal's table with the same marks; ledger text is HTML-escaped
# (a project and a model named to break out). Headless Chromium, in a
# network namespace of its own, renders the totals and the charts (light,
# dark and print, checked by pixel colour) and its net log shows the page
# asked for nothing. The shared realgen corpora make a daily page too.
# Screenshots stay in $AM_BUILD/test-output/html/.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
new_env
export TZ=UTC
CHK="python3 $AM_SRCDIR/tests/lib/html_check.py"
OUT=$AM_BUILD/test-output/html
rm -rf "$OUT"; mkdir -p "$OUT"
# the browser gets no network at all where a namespace can be made
NS=(); unshare -n true 2>/dev/null && NS=(unshare -n)
chrome() {
	"${NS[@]}" chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync --disable-extensions \
		--host-resolver-rules='MAP * ~NOTFOUND' --hide-scrollbars \
		--user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@" 2>>"$T/chrome.err"
}
# light and dark palettes of html/report.c (series 0 and 1), the page backgrounds
L0=4e79a7 L1=f28e2b D0=6ea8e8 BG=ffffff DBG=0d1117
color() { awk -v c="$2" '$1 == c {print $2}' "$1"; }
# the totals as the table shows them, computed here from the JSON
totals_text() {
	"$C" report daily --json 2>/dev/null | python3 -c '
import json, sys
t = json.load(sys.stdin)["totals"]
mark = "~" if t["cost_source"] in ("computed", "mixed") else ""
print(mark + "$" + format(t["cost_usd"], ",.6f") + ("*" if t["unpriced_events"] else ""), format(t["total_tokens"], ","))'
}

python3 "$AM_SRCDIR/tests/lib/html_corpus.py" "$HOME/.pi/agent/sessions"
"$D" --once >/dev/null 2>&1; ok $? "ingest the corpus"

# ---- every kind the client knows (asked of its own completion)
kinds=$("$C" __complete report "")
check "the client lists eight report kinds" [ "$(wc -w <<<"$kinds")" -eq 8 ]
for k in $kinds; do
	"$C" report "$k" --html > "$T/$k.html" 2>/dev/null; rc=$?
	check "report $k --html: a whole page with a chart and the table" \
		sh -c "[ $rc -eq 0 ] && head -1 '$T/$k.html' | grep -qx '<!DOCTYPE html>' && tail -1 '$T/$k.html' | grep -qx '</html>' &&
		       grep -q '<svg viewBox=' '$T/$k.html' && grep -q '<table>' '$T/$k.html'"
	check "report $k --html: no script, no link, no URL; a CSP forbids them" \
		sh -c "! grep -Eiq '<script|<link|<img|<iframe|<object|<embed|[^-]src=|href=|url\(|@import|https?:|wss?:' '$T/$k.html' &&
		       grep -q \"Content-Security-Policy\\\" content=\\\"default-src 'none'; style-src 'unsafe-inline'\\\"\" '$T/$k.html'"
done
check "light and dark colour schemes, and a print style" \
	sh -c "grep -q 'prefers-color-scheme:dark' '$T/daily.html' && grep -q '@media print' '$T/daily.html' &&
	       grep -q 'name=\"color-scheme\" content=\"light dark\"' '$T/daily.html'"

# ---- ledger text is escaped
check "a project named <script>...: only its escaped form is in the page" \
	sh -c "grep -qF '/work/&lt;script&gt;alert(&quot;pwn&quot;)&lt;/script&gt;&#39;q' '$T/project.html' &&
	       ! grep -qF '<script>' '$T/project.html' && ! grep -qF '\"pwn\"' '$T/project.html'"
check "a model named m<b>\"x\"</b>: escaped in the model page" \
	sh -c "grep -qF 'm&lt;b&gt;&quot;x&quot;&lt;/b&gt;' '$T/model.html' && ! grep -qF '<b>' '$T/model.html'"

# ---- the same table as the terminal, the same marks
for k in daily project session model tool blocks; do
	"$C" report "$k" > "$T/$k.txt" 2>/dev/null
	$CHK terminal "$T/$k.txt" > "$T/$k.term"
	$CHK table "$T/$k.html" > "$T/$k.rows"
	check "report $k: the page's table is the terminal's, cell for cell ($(wc -l < "$T/$k.term") rows)" \
		sh -c "[ -s '$T/$k.term' ] && cmp -s '$T/$k.term' '$T/$k.rows' || diff '$T/$k.term' '$T/$k.rows' | sed 's/^/# /'"
done
check "the daily TOTAL carries the marks ~ and * (computed and unpriced parts)" \
	grep -qE $'^TOTAL\t.*\t~\\$[0-9,]+\\.[0-9]{6}\\*$' "$T/daily.rows"
check "an unknown cost shows the dash in the page (the unpriced model)" \
	grep -qE $'^mystery/mystery-model\tpi\t.*\t\xe2\x80\x94$' "$T/model.rows"
check "the legend of the marks" grep -qF "* some events unpriced (not in the sum), — unknown (not zero)" "$T/daily.html"

# ---- the daemon's answer makes the same page; an empty range; usage errors
start_daemon; ok $? "daemon starts"
"$C" report daily --html > "$T/daily-daemon.html" 2>/dev/null
check "through the daemon: the same page (but the time it was made)" \
	bash -c "diff <(grep -v '^<p>Made by' '$T/daily.html') <(grep -v '^<p>Made by' '$T/daily-daemon.html') >/dev/null"
"$C" report monthly --html --since 2000-01-01 --until 2000-01-31 > "$T/empty.html" 2>/dev/null; rc=$?
check "an empty range: a page that says so, without a chart" \
	sh -c "[ $rc -eq 0 ] && grep -q 'no usage recorded for this selection' '$T/empty.html' && ! grep -q '<svg' '$T/empty.html'"
"$C" report daily --html --json >/dev/null 2>"$T/err"; rc=$?
check "--html with --json: a usage error" sh -c "[ $rc -eq 2 ] && grep -q 'html' '$T/err'"
stop_daemon

# ---- what Chromium makes of it. Once per suite: the ASan build makes the
# same bytes (checked above), where the browser would add nothing
if ldd "$C" 2>/dev/null | grep -q libasan; then
	skip "the browser checks run with the normal build"
	done_testing
fi
if ! command -v chromium >/dev/null || ! command -v pdftoppm >/dev/null; then
	skip "needs chromium and pdftoppm (tests/deps.sh installs them)"
	done_testing
fi
chrome --dump-dom "file://$T/project.html" > "$T/project.dom"
is "$($CHK count "$T/project.dom" script)" 0 "Chromium's DOM of the project page holds no script element"
check "... and shows the name as text" grep -qxF "/work/<script>alert(\"pwn\")</script>'q" <($CHK text "$T/project.dom")
# (one browser run: the page's DOM, its net log and the light screenshot below)
chrome --log-net-log="$T/net.json" --net-log-capture-mode=Everything --dump-dom \
	--screenshot="$OUT/daily.png" --window-size=1100,1300 "file://$T/daily.html" > "$T/daily.dom"
is "$($CHK table "$T/daily.dom")" "$(cat "$T/daily.term")" "Chromium's table of the daily page is the terminal's"
read -r want_cost want_tokens < <(totals_text)
$CHK text "$T/daily.dom" > "$T/daily.text"
check "the rendered page shows the total cost $want_cost (card and table) and $want_tokens tokens" \
	sh -c "[ \$(grep -cxF '$want_cost' '$T/daily.text') -ge 2 ] && grep -qxF '$want_tokens' '$T/daily.text'"

# nothing fetched: the net log holds no request of the page's
is "$($CHK netlog "$T/net.json" | wc -l)" 0 "the net log: the page asked for nothing"
printf '<!DOCTYPE html><img src="http://agentmeter.invalid/x.png"><link rel=stylesheet href="https://agentmeter.invalid/s.css">' > "$T/control.html"
chrome --log-net-log="$T/net2.json" --net-log-capture-mode=Everything --dump-dom "file://$T/control.html" >/dev/null
is "$($CHK netlog "$T/net2.json" | sort | tr '\n' ' ')" "http://agentmeter.invalid/x.png https://agentmeter.invalid/s.css " \
	"... where a page with an image and a style sheet from the network shows both"

# the charts, by colour: light (taken above), dark, print
diag "screenshot: $OUT/daily.png"
$CHK colors "$OUT/daily.png" $L0 $L1 $D0 > "$T/light.colors"
check "light: white page, the first model's bars ($(color "$T/light.colors" $L0) px) and the second's ($(color "$T/light.colors" $L1) px)" \
	sh -c "grep -qx 'corner $BG' '$T/light.colors' && [ $(color "$T/light.colors" $L0) -gt 5000 ] && [ $(color "$T/light.colors" $L1) -gt 200 ]"
# (one browser run: the dark screenshot and the print below)
chrome --force-dark-mode --screenshot="$OUT/daily-dark.png" --window-size=1100,1300 \
	--no-pdf-header-footer --print-to-pdf="$OUT/daily.pdf" "file://$T/daily.html" >/dev/null
diag "screenshot: $OUT/daily-dark.png"
$CHK colors "$OUT/daily-dark.png" $D0 $L0 > "$T/dark.colors"
check "dark: dark page, the dark palette's bars ($(color "$T/dark.colors" $D0) px), none of the light palette" \
	sh -c "grep -qx 'corner $DBG' '$T/dark.colors' && [ $(color "$T/dark.colors" $D0) -gt 5000 ] && [ $(color "$T/dark.colors" $L0) -eq 0 ]"
pdftoppm -r 60 -png -f 1 -l 1 -singlefile "$OUT/daily.pdf" "$OUT/daily-print"
diag "print: $OUT/daily.pdf, page 1: $OUT/daily-print.png"
$CHK colors "$OUT/daily-print.png" $L0 $D0 > "$T/print.colors"
check "print (dark preferred): white paper and the light palette ($(color "$T/print.colors" $L0) px)" \
	sh -c "grep -qx 'corner $BG' '$T/print.colors' && [ $(color "$T/print.colors" $L0) -gt 300 ] && [ $(color "$T/print.colors" $D0) -eq 0 ]"

# ---- the shared realgen corpora: report daily --html > r.html
RG=$AM_SAMPLES/realgen
if [ -d "$RG" ]; then
	rm -rf "$XDG_STATE_HOME/agentmeterd"
	# the homes the harnesses read by default, copied (the databases' -wal/-shm
	# need a directory SQLite may write, and shared/ may be read-only)
	RH=$T/realgen-home
	mkdir -p "$RH/.local/share"
	for d in "gemini-cli-*/gemini-home .gemini" "qwen-code-*/qwen-home .qwen" "cline-*/cline-home .cline" \
		"opencode-*/data/opencode .local/share/opencode" "copilot-cli-*/copilot-home .copilot" \
		"droid-*/factory-home .factory"; do
		set -- $d
		src=$(ls -d "$RG"/$1 2>/dev/null | head -1)
		[ -n "$src" ] && cp -r "$src" "$RH/$2"
	done
	env HOME="$RH" CLAUDE_CONFIG_DIR="$(ls -d "$RG"/claude-code-*/claude-config | head -1)" \
	    CODEX_HOME="$(ls -d "$RG"/codex-*/codex-home | head -1)" \
	    PI_CODING_AGENT_DIR="$(ls -d "$RG"/pi-*/agent | head -1)" \
	    OPENCLAW_STATE_DIR="$(ls -d "$RG"/openclaw-*/state | head -1)" \
	    "$D" --once >/dev/null 2>&1
	ok $? "realgen: ingest the corpora of every harness with an adapter"
	(cd "$T" && "$C" report daily --html > r.html 2>/dev/null); ok $? "realgen: report daily --html > r.html"
	cp "$T/r.html" "$OUT/realgen-daily.html"
	read -r want_cost want_tokens < <(totals_text)
	chrome --dump-dom --screenshot="$OUT/realgen-daily.png" --window-size=1100,1300 "file://$T/r.html" > "$T/r.dom"
	$CHK text "$T/r.dom" > "$T/r.text"
	check "realgen: Chromium renders the totals ($want_cost, $want_tokens tokens)" \
		sh -c "grep -qxF '$want_cost' '$T/r.text' && grep -qxF '$want_tokens' '$T/r.text'"
	diag "screenshot: $OUT/realgen-daily.png"
	$CHK colors "$OUT/realgen-daily.png" $L0 $L1 > "$T/rg.colors"
	check "realgen: the charts render (series colours: $(color "$T/rg.colors" $L0) and $(color "$T/rg.colors" $L1) px)" \
		sh -c "[ $(color "$T/rg.colors" $L0) -gt 1000 ] && [ $(color "$T/rg.colors" $L1) -gt 100 ]"
else
	skip "no shared samples at $RG"
fi
done_testing
