#!/bin/bash
# The man pages render without warnings and document every discovery
# variable the adapters declare (a new adapter's variable must be documented).
. "$(dirname "$(readlink -f "$0")")/lib.sh"
command -v mandoc >/dev/null || skip_all "needs mandoc"
M=$AM_SRCDIR/man
for page in agentmeterd.8 agentmeterctl.1; do
	out=$(mandoc -Tlint -Wwarning "$M/$page" 2>&1)
	is "$out" "" "mandoc -Tlint: $page has no warnings"
	out=$(groff -ww -z -man "$M/$page" 2>&1)
	is "$out" "" "groff -ww: $page has no warnings"
	check "$page renders" sh -c "mandoc -Tascii '$M/$page' | sed 's/.\x08//g' | grep -q 'SYNOPSIS'"
done
# the variables as the daemon itself declares them (built from the adapters)
vars=$("$D" --list-variables | cut -f1)
check "agentmeterd --list-variables lists the adapters' variables" [ "$(wc -w <<<"$vars")" -ge 10 ]
for v in $vars; do
	check "agentmeterd(8) documents $v" grep -q "$v" "$M/agentmeterd.8"
done
for f in input_tokens output_tokens cache_read_tokens cache_write_tokens reasoning_tokens total_tokens cost_usd unpriced_events events; do
	check "agentmeterctl(1) documents the JSON field $f" grep -q "$f" "$M/agentmeterctl.1"
done
done_testing
