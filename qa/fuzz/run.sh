#!/bin/sh
# qa/fuzz/run.sh BUILD SECONDS - fuzz pass 1 for SECONDS on one worker.
#
# The corpus is BUILD/fuzz/corpus, seeded from qa/fuzz/corpus and every
# *.stp under qa/translator/.  Writes "PASSED FAILED SKIPPED" to
# BUILD/results/fuzz: "1 0 0" when nothing was found, "0 1 0" on a crash,
# leak, hang, out-of-memory or UBSan report (the reproducer path is
# printed); exits non-zero then.
build=${1:-build}
secs=${2:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/fuzz/fuzz_parse
corpus=$build/fuzz/corpus
artifacts=$build/fuzz/artifacts
log=$build/fuzz/fuzz.log

mkdir -p "$corpus" "$artifacts" "$build/results"
fail() {
	echo "0 1 0" >"$build/results/fuzz"
	echo "fuzz: $*" >&2
	exit 1
}
[ -x "$bin" ] || fail "$bin is not built (make fuzz)"

cp "$top"/qa/fuzz/corpus/* "$corpus"/ 2>/dev/null
find "$top/qa/translator" -name '*.stp' | while read -r f; do
	cp "$f" "$corpus/$(printf '%s' "${f#"$top"/qa/translator/}" | tr / _)"
done

rm -f "$artifacts"/*
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" \
	"$corpus" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
repro=$(ls "$artifacts" 2>/dev/null | head -n 1)
if [ $rc -ne 0 ] || [ -n "$repro" ]; then
	grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$log" | head -n 20 >&2
	[ -n "$repro" ] && echo "fuzz: reproducer: $artifacts/$repro" >&2
	fail "failed after ${runs:-?} runs (exit $rc); log: $log"
fi
echo "1 0 0" >"$build/results/fuzz"
echo "  fuzz    ${runs:-?} runs in ${secs}s, no crash, leak or hang"
