#!/bin/bash
# bench/run.sh BUILD - per-event probe overhead: libbpf baseline, pmstap, bpftrace.
#
# The workload (getppid_bench N) times a tight loop of N getppid() calls.
# Each repetition runs it once with no probe (the base), then once under
# each tool for each case, the probe on syscalls:sys_enter_getppid:
#   count  one global counter          stap: n++          bpftrace: @n = count()
#   pid    a counter per pid           stap: c[pid()]++   bpftrace: @c[pid] = count()
#   hist   a log2 histogram of pid     stap: h <<< pid()  bpftrace: @h = hist(pid)
# ns/event = (t_probed - t_base) / N, with the base of the same
# repetition (the tools' order rotates between repetitions); the table
# shows the median over the repetitions and the ratio to the libbpf
# baseline.  A tool that cannot run prints "not available" and why.
#
# Environment: BENCH_N (calls per run, default 2000000), BENCH_REPS
# (repetitions, default 5), BENCH_CPU (pin the workload to this CPU with
# taskset, default 1 when there are 2 or more CPUs), PMSTAP_CACHE.
# Results also go to BUILD/bench/results.txt.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bench=$build/bench
pmstap=$build/bin/pmstap
work=$build/tmp/bench
N=${BENCH_N:-2000000}
REPS=${BENCH_REPS:-5}
CASES="count pid hist"
TOOLS="baseline pmstap bpftrace"
mkdir -p "$work"
export PMSTAP_CACHE=${PMSTAP_CACHE:-$work/cache}

die() {
	echo "bench: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root to load BPF programs"
for b in bench_baseline getppid_bench; do
	[ -x "$bench/$b" ] || die "$bench/$b is not built (make bench-bins)"
done

pin=
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin="$(command -v taskset) -c ${BENCH_CPU:-1}"
fi
workload="$pin $bench/getppid_bench -o $work/t $N"

stap_script() {
	case $1 in
	count) echo 'global n; probe kernel.trace("syscalls:sys_enter_getppid") { n++ } probe end { printf("%d events\n", n) }' ;;
	pid) echo 'global c; probe kernel.trace("syscalls:sys_enter_getppid") { c[pid()]++ } probe end { t = 0; foreach (p in c) t += c[p]; printf("%d events\n", t) }' ;;
	hist) echo 'global h; probe kernel.trace("syscalls:sys_enter_getppid") { h <<< pid() } probe end { printf("%d events\n", @count(h)) }' ;;
	esac
}

bpftrace_script() {
	case $1 in
	count) echo 'tracepoint:syscalls:sys_enter_getppid { @n = count(); }' ;;
	pid) echo 'tracepoint:syscalls:sys_enter_getppid { @c[pid] = count(); }' ;;
	hist) echo 'tracepoint:syscalls:sys_enter_getppid { @h = hist(pid); }' ;;
	esac
}

# run_tool TOOL CASE: run the workload under TOOL; the loop's ns in $work/t.
run_tool() {
	rm -f "$work/t"
	case $1 in
	none) $workload ;;
	baseline) "$bench/bench_baseline" "$2" $workload ;;
	pmstap) "$pmstap" -e "$(stap_script "$2")" -c "$workload" ;;
	bpftrace) bpftrace -e "$(bpftrace_script "$2")" -c "$workload" ;;
	esac >"$work/out.$1" 2>"$work/err.$1"
	[ -s "$work/t" ]
}

# Which tools can run here, and why not.
declare -A why
if [ ! -x "$pmstap" ]; then
	why[pmstap]="pmstap is not built"
elif ! "$pmstap" -e "$(stap_script count)" -c "$bench/getppid_bench 1" \
	>"$work/probe.pmstap" 2>&1; then
	why[pmstap]=$(grep -m1 -i 'error' "$work/probe.pmstap" || echo "pmstap failed")
fi
if ! command -v bpftrace >/dev/null; then
	echo "bench: bpftrace is missing: apt-get install -y bpftrace" >&2
	apt-get install -y bpftrace >"$work/apt.log" 2>&1 ||
		why[bpftrace]="bpftrace is not installed and apt-get failed (see $work/apt.log)"
fi
if [ -z "${why[bpftrace]:-}" ] &&
	! bpftrace -e "$(bpftrace_script count)" -c "$bench/getppid_bench 1" >/dev/null 2>"$work/probe.bpftrace"; then
	why[bpftrace]="bpftrace failed: $(grep -m1 -v RLIMIT "$work/probe.bpftrace")"
fi

declare -A samples
# rotate the tools' order on each repetition so no tool always runs first
rotate() {
	local n=$1
	shift
	while [ "$n" -gt 0 ]; do
		set -- "${@:2}" "$1"
		n=$((n - 1))
	done
	echo "$@"
}

for ((r = 1; r <= REPS; r++)); do
	order=$(rotate $(((r - 1) % 3)) $TOOLS)
	for c in $CASES; do
		run_tool none "$c" || die "the workload failed: $(cat "$work/err.none")"
		base=$(cat "$work/t")
		samples[base]="${samples[base]:-} $base"
		for tool in $order; do
			[ -n "${why[$tool]:-}" ] && continue
			if run_tool "$tool" "$c"; then
				samples[$tool.$c]="${samples[$tool.$c]:-} $(($(cat "$work/t") - base))"
			else
				why[$tool]="$tool failed on case $c: $(head -c 200 "$work/err.$tool")"
			fi
		done
	done
	echo "bench: repetition $r of $REPS done" >&2
done

# median of the numbers given, as ns/event with one decimal
median_ns() {
	printf '%s\n' "$@" | sort -n | awk -v n="$N" '
		{ v[NR] = $1 }
		END {
			if (NR == 0) exit 1
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.1f", m / n
		}'
}

{
	echo "Per-event overhead of a probe on syscalls:sys_enter_getppid"
	echo "workload: $N getppid() calls timed with CLOCK_MONOTONIC${pin:+, pinned with '$pin'}"
	echo "ns/event = (t_probed - t_base) / N; median of $REPS repetitions"
	echo "base loop: $(median_ns ${samples[base]}) ns/call with no probe"
	echo
	printf '%-6s  %-22s  %-22s  %-22s\n' case "libbpf baseline" pmstap bpftrace
	for c in $CASES; do
		b=$(median_ns ${samples[baseline.$c]:-}) || b=
		line=$(printf '%-6s' "$c")
		for tool in $TOOLS; do
			if [ -n "${why[$tool]:-}" ] || [ -z "${samples[$tool.$c]:-}" ]; then
				cell="not available"
			else
				v=$(median_ns ${samples[$tool.$c]})
				if [ -n "$b" ]; then
					cell=$(awk -v v="$v" -v b="$b" 'BEGIN { printf "%.1f ns (%.2fx)", v, (b > 0 ? v / b : 0) }')
				else
					cell="$v ns"
				fi
			fi
			line="$line  $(printf '%-22s' "$cell")"
		done
		echo "$line"
	done
	for tool in $TOOLS; do
		[ -n "${why[$tool]:-}" ] && echo "$tool: not available: ${why[$tool]}"
	done
	true
} | tee "$bench/results.txt"
