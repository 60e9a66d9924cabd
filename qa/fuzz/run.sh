#!/bin/sh
# qa/fuzz/run.sh BUILD SECONDS [TARGET] - run a fuzz target for SECONDS on
# one worker: fuzz_parse (pass 1, the default) or fuzz_sema (passes 1-3).
#
# Each target's corpus is BUILD/fuzz/corpus-TARGET, seeded from
# qa/fuzz/corpus, every *.stp under qa/translator/ and metrics/, and (for
# fuzz_sema) SystemTap's examples when qa/examples/run.sh has extracted
# them into BUILD/systemtap-doc.  Writes "PASSED FAILED SKIPPED" to
# BUILD/results/fuzz (fuzz_parse) or BUILD/results/fuzz_sema: "1 0 0" when
# nothing was found, "0 1 0" on a crash, leak, hang, out-of-memory or
# UBSan report (the reproducer path is printed); exits non-zero then.
# The last line gives the runs, and for the record the coverage figures
# libFuzzer printed last (cov: edges, ft: features).
build=${1:-build}
secs=${2:-60}
target=${3:-fuzz_parse}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/fuzz/$target
corpus=$build/fuzz/corpus-$target
artifacts=$build/fuzz/artifacts-$target
log=$build/fuzz/$target.log
result=$build/results/fuzz
[ "$target" = fuzz_parse ] || result=$build/results/$target

mkdir -p "$corpus" "$artifacts" "$build/results"
fail() {
	echo "0 1 0" >"$result"
	echo "fuzz: $*" >&2
	exit 1
}
[ -x "$bin" ] || fail "$bin is not built (make fuzz)"

seed() {	# seed DIR PREFIX: every *.stp under DIR, named after its path
	find "$1" -name '*.stp' 2>/dev/null | while read -r f; do
		cp "$f" "$corpus/$2$(printf '%s' "${f#"$1"/}" | tr / _)"
	done
}
cp "$top"/qa/fuzz/corpus/* "$corpus"/ 2>/dev/null
seed "$top/qa/translator" ""
seed "$top/metrics" metrics_
[ "$target" = fuzz_sema ] && seed "$build/systemtap-doc" examples_

rm -f "$artifacts"/*
PMSTAP_TAPSET_DIR=$top/tapset PMSTAP_RUNTIME_DIR=$top/runtime \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
	-max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" \
	"$corpus" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)
# a slow-unit-* is an input slower than 10 s, not a failure: reported below
repro=$(ls "$artifacts" 2>/dev/null | grep -v '^slow-unit-' | head -n 1)
slow=$(ls "$artifacts" 2>/dev/null | grep -c '^slow-unit-')
if [ $rc -ne 0 ] || [ -n "$repro" ]; then
	grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$log" | head -n 20 >&2
	[ -n "$repro" ] && echo "fuzz: reproducer: $artifacts/$repro" >&2
	fail "$target failed after ${runs:-?} runs (exit $rc); log: $log"
fi
echo "1 0 0" >"$result"
echo "  $target ${runs:-?} runs in ${secs}s (${cov:-no coverage figures}), no crash, leak or hang" \
	"$([ "$slow" -gt 0 ] && echo "($slow input(s) slower than 10 s: $artifacts)")"
