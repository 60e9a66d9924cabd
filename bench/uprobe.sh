#!/bin/bash
# bench/uprobe.sh BUILD - uprobe and uretprobe overhead: libbpf baseline, pmstap, bpftrace,
# and pmstap --runtime=dyninst (the probe runs in the process: no trap).
#
# The workload (uprobe_bench N) times N calls of bench_target(), a
# noinline function, and prints the seconds.  Each tool counts the calls
# into one global:
#   entry   process("...").function("bench_target")         uprobe:...:bench_target
#           (pmstap twice: the BPF runtime, and --runtime=dyninst: column "dyninst")
#   return  process("...").function("bench_target").return  uretprobe:...:bench_target
#
# A uprobe hit costs microseconds in a VM and the machine's speed drifts
# by tens of percent between runs, so the tools are compared in pairs:
# each repetition runs, per case, the bare workload (its base) and every
# tool back to back, in an order that rotates from one repetition to the
# next.  ns/call = (t_probed - t_base) / N with that repetition's base.
# Per tool: the median and the range (min-max) of ns/call over the
# repetitions; the ratio to the baseline is the median of the
# per-repetition ratios (tool / baseline of the same repetition), which
# cancels the drift that a ratio of medians keeps.
#
# Then each tool's BPF program alone: its run time per hit from the
# kernel's statistics.
#
# BENCH_UN (calls, default 1000000), BENCH_REPS (default 7), BENCH_CPU
# (the CPU to pin the workload to, default 1), BENCH_PROG_UN (calls of
# the program-time runs, default 300000).  Results also go to
# BUILD/bench/results-uprobe.txt.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bench=$build/bench
pmstap=$build/bin/pmstap
work=$build/tmp/bench-uprobe
N=${BENCH_UN:-1000000}
REPS=${BENCH_REPS:-7}
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

tools="baseline pmstap dyninst bpftrace"
declare -A ns why	# ns[TOOL.CASE]: " v1 v2 ..." in repetition order ("-": no sample)
suffix() { case $1 in *return) echo ".return" ;; esac; }
# the case's function and the workload's mode: bench_target (4 bytes: the
# dyninst runtime traps there), or bench_framed (12 bytes: it jumps)
func() { case $1 in f*) echo bench_framed ;; *) echo bench_target ;; esac; }
mode() { case $1 in f*) echo framed ;; esac; }
cases="entry return fentry freturn"

run_tool() {	# TOOL CASE: prints the workload's seconds
	local r=
	case $1 in
	base)
		$pin "$bin" "$N" $(mode "$2") ;;
	baseline)
		[ -n "$(suffix "$2")" ] && r=-r
		$pin "$bench/uprobe_baseline" $r "$bin" "$(func "$2")" "$bin" "$N" $(mode "$2") \
			2>/dev/null ;;
	pmstap|dyninst)
		"$pmstap" --runtime=$([ "$1" = dyninst ] && echo dyninst || echo bpf) -e "global n probe process(\"$bin\").function(\"$(func "$2")\")$(suffix "$2") { n++ } probe end { if (n < 0) println(n) }" \
			-c "$pin $bin $N $(mode "$2")" 2>/dev/null | head -n 1 ;;
	bpftrace)
		local p=uprobe
		[ -n "$(suffix "$2")" ] && p=uretprobe
		bpftrace -q -e "$p:$bin:$(func "$2") { @n = count(); } END { clear(@n); }" \
			-c "$pin $bin $N $(mode "$2")" 2>/dev/null | grep -E '^[0-9.]+$' | head -n 1 ;;
	esac
}

# TOOLS rotated left by K
rotate() {
	local k=$1 a
	shift
	a=("$@")
	for ((i = 0; i < ${#a[@]}; i++)); do
		printf '%s ' "${a[(i + k) % ${#a[@]}]}"
	done
}

command -v bpftrace >/dev/null || why[bpftrace]="bpftrace is not installed"
# compile pmstap's scripts once, outside the timing
for c in $cases; do
	[ -n "$(run_tool pmstap $c)" ] || why[pmstap]="pmstap failed: run $pmstap by hand"
	[ -n "$(run_tool dyninst $c)" ] || why[dyninst]="pmstap --runtime=dyninst failed: run it by hand"
done

for ((rep = 0; rep < REPS; rep++)); do
	for c in $cases; do
		base=$(run_tool base $c)
		for t in $(rotate $rep $tools); do
			[ -n "${why[$t]:-}" ] && continue
			s=$(run_tool $t $c)
			v=-
			[ -n "$s" ] && v=$(awk -v t="$s" -v b="$base" -v n="$N" \
				'BEGIN { printf "%.1f", (t - b) * 1e9 / n }')
			ns[$t.$c]+=" $v"
		done
	done
done

# The programs' own cost per hit, from the kernel's BPF statistics
# (kernel.bpf_stats_enabled, on only meanwhile): the trap around them
# does not enter it, so it is steady where the totals above drift.
# TOOL CASE PROGRAM-NAME: ns/hit of the last sample taken while it runs
# PN calls (BENCH_PROG_UN, default 300000: long enough to sample).
PN=${BENCH_PROG_UN:-300000}
prog_ns() {
	local pid last= cur
	(N=$PN; run_tool "$1" "$2" >/dev/null) &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		cur=$(bpftool prog show -j 2>/dev/null | python3 -c "
import json, sys
for p in json.load(sys.stdin):
    if p.get('name', '').startswith('$3') and p.get('run_cnt'):
        print('%.1f' % (p['run_time_ns'] / p['run_cnt']))" 2>/dev/null | tail -n 1)
		[ -n "$cur" ] && last=$cur
		sleep 0.1
	done
	wait $pid
	echo "${last:--}"
}
declare -A prog
if command -v bpftool >/dev/null && command -v python3 >/dev/null &&
   old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null) &&
   sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null; then
	for c in entry return; do
		[ $c = entry ] && b=on_entry || b=on_return
		prog[baseline.$c]=$(prog_ns baseline $c $b)
		[ -z "${why[pmstap]:-}" ] && prog[pmstap.$c]=$(prog_ns pmstap $c probe_0)
		[ -z "${why[bpftrace]:-}" ] && prog[bpftrace.$c]=$(prog_ns bpftrace $c bench_target)
	done
	sysctl -q -w kernel.bpf_stats_enabled="$old"
fi

# median and min-max of the numbers among the arguments ("-" skipped)
summary() {
	printf '%s\n' "$@" | grep -v '^-$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.1f %.1f-%.1f", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2, v[1], v[NR] }'
}

# median of the per-repetition ratios T[i] / B[i]: args "T-values" "B-values"
paired_ratio() {
	paste -d ' ' <(printf '%s\n' $1) <(printf '%s\n' $2) |
		awk '$1 != "-" && $2 != "-" && $2 > 0 { print $1 / $2 }' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.2fx", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}

{
	echo "uprobe overhead: ns/call over the bare call, $REPS repetitions of $N calls, tools interleaved"
	echo "each cell: median (min-max); ratio: median of the per-repetition ratios to the baseline"
	printf '%-7s  %-24s  %-34s  %-34s  %-34s\n' case "libbpf baseline" pmstap "pmstap --runtime=dyninst" \
		bpftrace
	for c in $cases; do
		line=$(printf '%-7s' $c)
		for t in $tools; do
			if [ -n "${why[$t]:-}" ] || [ -z "$(summary ${ns[$t.$c]:-})" ]; then
				cell="not available"
			else
				set -- $(summary ${ns[$t.$c]})
				cell="$1 ($2)"
				[ $t != baseline ] && [ -z "${why[baseline]:-}" ] &&
					cell+=" $(paired_ratio "${ns[$t.$c]}" "${ns[baseline.$c]:-}")"
			fi
			[ $t = baseline ] && line+=$(printf '  %-24s' "$cell") ||
				line+=$(printf '  %-34s' "$cell")
		done
		echo "$line"
	done
	if [ ${#prog[@]} -gt 0 ]; then
		echo "BPF program run time per hit (kernel.bpf_stats_enabled), ns:"
		for c in entry return; do
			line=$(printf '%-7s' $c)
			for t in $tools; do
				line+=$(printf '  %-10s' "$t=${prog[$t.$c]:--}")
			done
			echo "$line"
		done
	fi
	for t in pmstap dyninst bpftrace; do
		[ -n "${why[$t]:-}" ] && echo "$t: ${why[$t]}"
	done
} | tee "$bench/results-uprobe.txt"
