#!/bin/bash
# Prices end to end: a call pi could not price (cost 0 with tokens) gets the
# table's price, a vendor cost is kept, an unknown model stays unpriced;
# status shows the table's date and the unpriced rows by model; a user
# override is applied by `agentmeterctl reprice` and by SIGHUP (rollups
# moved with the rows), a bad override is reported with its line and
# ignored; the OpenClaw fixture's vendor 0 is priced too.
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v jq >/dev/null || skip_all "needs jq"
new_env
export TZ=UTC PI_CODING_AGENT_DIR=$T/pi
cp -a "$FIX/prices/pi" "$PI_CODING_AGENT_DIR"
OV=$XDG_CONFIG_HOME/agentmeterd/prices.conf
mkdir -p "$(dirname "$OV")"
checked=$(sed -n 's/^checked \([0-9-]*\)$/\1/p' "$AM_SRCDIR/data/prices.conf")

model() { # model KEY FIELD: a field of the model report's row for KEY
	"$C" report model --json 2>/dev/null | jq -c --arg k "$1" ".rows[] | select(.key == \$k) | .$2"
}
usd() { jq -n "$1 | . * 1e6 | round / 1e6"; } # rounded like the report

"$D" --once >"$T/once.log" 2>&1
ok $? "--once exits 0"
is "$(model anthropic/claude-sonnet-4-5 cost_usd)" "0.00105" "a vendor cost is kept"
is "$(model anthropic/claude-sonnet-4-5 cost_source)" '"vendor-reported"' "... and marked as the vendor's"
is "$(model openai/gpt-5 cost_usd)" "$(usd '(1000 * 1.25 + 100 * 10) / 1e6')" \
	"pi's 0 with tokens: priced at gpt-5's list price by --once"
is "$(model openai/gpt-5 cost_source)" '"computed"' "... and marked computed"
is "$(model local/mystery-1 cost_usd)" "null" "an unknown model is unpriced, not \$0"
is "$(model local/mystery-1 unpriced_events)" "1" "... and counted as unpriced"

start_daemon || { done_testing; }
st=$("$C" status --json)
is "$(jq -r .prices.table <<<"$st")" "$checked" "status: the table's date"
is "$(jq -r .prices.price_source <<<"$st")" "table-$checked" "status: its price source label"
is "$(jq -c '[.prices.unpriced_rows, [.prices.unpriced_by_model[] | .model, .rows]]' <<<"$st")" \
	'[1,["mystery-1",1]]' "status: unpriced rows by model"
"$C" status | grep -q "^prices        table of $checked"
ok $? "status text shows the table"

# an override: gpt-5 at a negotiated input price; `reprice` applies it
echo 'price gpt-5 in=2   # negotiated' > "$OV"
out=$("$C" reprice); rc=$?
is "$rc" 0 "agentmeterctl reprice exits 0"
diag "$out"
grep -q "1 of 3 rows changed" <<<"$out"
ok $? "reprice changed the one computed row (vendor and unknown rows untouched)"
is "$(model openai/gpt-5 cost_usd)" "$(usd '(1000 * 2 + 100 * 10) / 1e6')" \
	"the override's input price, the table's output price (partial entry inherits)"
is "$(model anthropic/claude-sonnet-4-5 cost_usd)" "0.00105" "the vendor cost is never repriced"
is "$("$C" report daily --json | jq .totals.cost_usd)" "$(usd '0.00105 + (1000 * 2 + 100 * 10) / 1e6')" \
	"rollups moved with the rows"
is "$("$C" report session --json | jq '.rows[0].cost_usd')" "$(usd '0.00105 + (1000 * 2 + 100 * 10) / 1e6')" \
	"session sums moved with the rows"
is "$("$C" status --json | jq -c '[.prices.override.loaded, .prices.override.entries]')" '[true,1]' \
	"status: the override is loaded"

# SIGHUP: the override now names the unknown model too; rows follow
printf 'price gpt-5 in=2\nprice mystery-1 in=1 out=1\n' > "$OV"
kill -HUP "$DPID"
wait_until 10 sh -c "[ \"\$('$C' status --json | jq .prices.unpriced_rows)\" = 0 ]"
ok $? "after SIGHUP the model the override added is priced"
is "$(model local/mystery-1 cost_usd)" "$(usd '(2000 * 1 + 200 * 1) / 1e6')" "... at the override's price"

# a bad override: reported with its line, ignored as a whole, never fatal
printf 'price gpt-5 in=2\nprice mystery-1 in=cheap\n' > "$OV"
kill -HUP "$DPID"
wait_until 10 sh -c "'$C' status --json | jq -e '.prices.override.error // empty' >/dev/null"
ok $? "a bad override shows in status"
is "$("$C" status --json | jq -r .prices.override.error)" \
	"line 2: in=cheap is not a price in USD per 1M tokens (up to 6 decimals)" "... with its line and why"
grep -q "prices.conf: price override ignored, line 2" "$T/daemon.log"
ok $? "... and in the log"
kill -0 "$DPID"
ok $? "the daemon keeps running"
wait_until 10 sh -c "[ \"\$('$C' status --json | jq .prices.unpriced_rows)\" = 1 ]"
ok $? "the built-in table alone again: mystery-1 unpriced again"
is "$(model openai/gpt-5 cost_usd)" "$(usd '(1000 * 1.25 + 100 * 10) / 1e6')" "gpt-5 back at the list price"
"$C" status | grep -q "override .*prices.conf ignored: line 2"
ok $? "status text shows the bad override"
stop_daemon

# the sums repricing moved equal sums rebuilt from the rows
before=$("$C" report session --json | jq -c .)
"$D" --rebuild-rollups >/dev/null 2>&1
is "$("$C" report session --json | jq -c .)" "$before" "rebuilt sums equal the repriced ones"

# a vendor 0 in OpenClaw (built on pi): priced too; every other cost is
# the vendor's (expected.json sums those)
rm -f "$OV"
fresh=$T/oc
mkdir -p "$fresh/state"
XDG_STATE_HOME=$fresh/state OPENCLAW_STATE_DIR=$FIX/openclaw/state PI_CODING_AGENT_DIR=$T/none \
	"$D" --once >/dev/null 2>&1
got=$(XDG_STATE_HOME=$fresh/state "$C" report daily --json 2>/dev/null | jq -c '.totals | [.cost_usd, .unpriced_events]')
vendor=$(jq '.cases.state.cost_nano / 1e9' "$FIX/openclaw/expected.json")
is "$got" "[$(usd "$vendor + (500 * 1.25 + 20 * 10) / 1e6"),0]" \
	"OpenClaw state dir: vendor costs plus gpt-5.1's cost-0 row at the list price"
done_testing
