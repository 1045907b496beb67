#!/bin/bash
# Runs every libFuzzer target of BUILD for SECONDS each (make fuzz), with a
# corpus seeded from fixtures/, the target's seeds and the kept
# regressions, and prints, per target, its executions and CPU time. Usage: run.sh BUILD SECONDS TARGET...
set -u
cd "$(dirname "$0")/../.."
build=$1 secs=$2; shift 2
status=0
printf '%-22s %12s %10s %s\n' target executions cpu_s result
for t in "$@"; do
	corpus=$build/corpus/$t
	mkdir -p "$corpus"
	seeds=(fixtures)
	[ -d "tests/fuzz/seeds/$t" ] && seeds+=("tests/fuzz/seeds/$t")
	[ -d "tests/fuzz/regressions/$t" ] && seeds+=("tests/fuzz/regressions/$t")
	log=$build/fuzz-$t.log
	start=$(awk '{print $14+$15}' /proc/$$/stat)
	/usr/bin/time -f '%U %S' -o "$build/time-$t" \
		"$build/fuzz/fuzz-$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
		-artifact_prefix="$build/crash-$t-" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cpu=$(awk '{printf "%.1f", $1+$2}' "$build/time-$t")
	res=ok; [ "$rc" -ne 0 ] && { res="CRASH (see $log)"; status=1; }
	printf '%-22s %12s %10s %s\n' "$t" "${runs:-?}" "$cpu" "$res"
done
exit $status
