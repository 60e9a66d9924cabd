#!/bin/bash
# bench/uprobe.sh BUILD - uprobe and uretprobe overhead: libbpf baseline, pmstap, bpftrace.
#
# The workload (uprobe_bench N) times N calls of bench_target(), a
# noinline function.  Each repetition runs it once with no probe (the
# base), then under each tool for each case, counting calls into one
# global:
#   entry   process("...").function("bench_target")         uprobe:...:bench_target
#   return  process("...").function("bench_target").return  uretprobe:...:bench_target
# ns/call = (t_probed - t_base) / N; the median over the repetitions and
# the ratio to the libbpf baseline.  BENCH_UN (calls, default 1000000),
# BENCH_REPS (default 5).  Results also go to BUILD/bench/results-uprobe.txt.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bench=$build/bench
pmstap=$build/bin/pmstap
work=$build/tmp/bench-uprobe
N=${BENCH_UN:-1000000}
REPS=${BENCH_REPS:-5}
mkdir -p "$work"
export PMSTAP_CACHE=${PMSTAP_CACHE:-$work/cache}
bin=$bench/uprobe_bench
pin=
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin="$(command -v taskset) -c ${BENCH_CPU:-1}"
fi

[ "$(id -u)" -eq 0 ] || { echo "bench-uprobe: needs root" >&2; exit 1; }
[ -x "$bin" ] && [ -x "$bench/uprobe_baseline" ] || {
	echo "bench-uprobe: not built (make bench-bins)" >&2; exit 1; }

declare -A samples why
suffix() { [ "$1" = return ] && echo ".return"; }

run_tool() {	# TOOL CASE: prints the workload's seconds
	local r=
	case $1 in
	baseline)
		[ "$2" = return ] && r=-r
		$pin "$bench/uprobe_baseline" $r "$bin" bench_target "$bin" "$N" 2>/dev/null ;;
	pmstap)
		"$pmstap" -e "global n probe process(\"$bin\").function(\"bench_target\")$(suffix "$2") { n++ } probe end { if (n < 0) println(n) }" \
			-c "$pin $bin $N" 2>/dev/null | head -n 1 ;;
	bpftrace)
		local p=uprobe
		[ "$2" = return ] && p=uretprobe
		bpftrace -q -e "$p:$bin:bench_target { @n = count(); } END { clear(@n); }" \
			-c "$pin $bin $N" 2>/dev/null | grep -E '^[0-9.]+$' | head -n 1 ;;
	esac
}

command -v bpftrace >/dev/null || why[bpftrace]="bpftrace is not installed"
# compile pmstap's scripts once, outside the timing
for c in entry return; do run_tool pmstap $c >/dev/null; done

for ((rep = 0; rep < REPS; rep++)); do
	samples[base]+=" $($pin "$bin" "$N")"
	for c in entry return; do
		for t in baseline pmstap bpftrace; do
			[ -n "${why[$t]:-}" ] && continue
			s=$(run_tool $t $c)
			[ -n "$s" ] && samples[$t.$c]+=" $s"
		done
	done
done

# median of (t - base) / N in ns
median_ns() {
	local base=$1
	shift
	printf '%s\n' "$@" | awk -v b="$base" -v n="$N" '{ print ($1 - b) * 1e9 / n }' |
		sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)] }'
}
base=$(printf '%s\n' ${samples[base]} | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
{
	echo "uprobe overhead: ns/call over the bare call (median of $REPS runs of $N calls)"
	printf '%-7s  %-16s  %-22s  %-22s\n' case "libbpf baseline" pmstap bpftrace
	for c in entry return; do
		b=$(median_ns "$base" ${samples[baseline.$c]:-})
		line=$(printf '%-7s  %-16s' $c "$b")
		for t in pmstap bpftrace; do
			if [ -n "${why[$t]:-}" ] || [ -z "${samples[$t.$c]:-}" ]; then
				cell="not available"
			else
				v=$(median_ns "$base" ${samples[$t.$c]})
				cell=$(awk -v v="$v" -v b="$b" 'BEGIN { printf "%.1f (%.2fx)", v, (b > 0 ? v / b : 0) }')
			fi
			line+=$(printf '  %-22s' "$cell")
		done
		echo "$line"
	done
	for t in bpftrace; do
		[ -n "${why[$t]:-}" ] && echo "$t: ${why[$t]}"
	done
} | tee "$bench/results-uprobe.txt"
