#!/usr/bin/env bash
# Runs the libFuzzer targets of a BP_FUZZ build, each for SECONDS, and prints the
# executions per target. usage: scripts/fuzz.sh BUILD_DIR SECONDS [TARGET...]
# The committed seeds (fuzz/corpus/NAME/) are read only; what the fuzzer finds goes
# to BUILD_DIR/fuzz-corpus/NAME/, crashes to BUILD_DIR/fuzz-artifacts/ (reproduce
# with BUILD_DIR/fuzz/fuzz_NAME FILE; keep a fixed crash as a regression seed in
# fuzz/corpus/NAME/). Exit 1 if any target crashed, leaked, or timed out.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz.sh BUILD_DIR SECONDS [TARGET...]}
secs=${2:?usage: fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for exe in "$build"/fuzz/fuzz_*; do
		[ -x "$exe" ] && targets+=("$(basename "$exe" | sed 's/^fuzz_//')")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets built in $build/fuzz" >&2; exit 1; }

passed=0 failed=0
mkdir -p "$build/fuzz-artifacts" "$build/fuzz-logs"
for t in "${targets[@]}"; do
	exe=$build/fuzz/fuzz_$t
	work=$build/fuzz-corpus/$t
	log=$build/fuzz-logs/$t.log
	mkdir -p "$work"
	seeds=()
	[ -d "fuzz/corpus/$t" ] && seeds=("fuzz/corpus/$t")
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: 2 GiB is plenty for
	# parsers and keeps a runaway allocation a finding, not a dead machine.
	"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/fuzz-artifacts/$t-" "$work" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	corpus=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$log" | tail -1 | sed 's/corp: //')
	if [ $rc -eq 0 ]; then
		printf 'ok   fuzz %-16s %10s executions in %ss, corpus %s\n' "$t" "${execs:-?}" "$secs" "${corpus:-?}"
		passed=$((passed + 1))
	else
		printf 'FAIL fuzz %-16s exit %d after %s executions; log %s\n' "$t" "$rc" "${execs:-?}" "$log"
		grep -E 'ERROR|SUMMARY|fuzz property|Test unit written|^ *#[0-9]+ 0x' "$log" | head -30
		failed=$((failed + 1))
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
