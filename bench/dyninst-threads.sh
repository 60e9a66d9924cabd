#!/bin/bash
# bench/dyninst-threads.sh BUILD - does a probed call scale with the
# threads under --runtime=dyninst?  uprobe_bench makes N calls of
# bench_framed() in each of T threads at once (T = 1, then 2); the wall
# time of T threads over that of one is 1.0 when the probe scales.
#   count   n++          one global, an atomic add every thread shares
#   stat    s <<< 1      a statistic: each thread's slot, nothing shared
# Each repetition runs the bare workload and both probes for T = 1 and 2;
# per case: the median over the repetitions of ns a call, and of the
# 2-thread / 1-thread wall time ratio.  No root needed.
# BENCH_UN (calls a thread, default 2000000), BENCH_REPS (default 5).
# Results also go to BUILD/bench/results-dyninst-threads.txt.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
bin=$build/bench/uprobe_bench
pmstap=$build/bin/pmstap
N=${BENCH_UN:-2000000}
REPS=${BENCH_REPS:-5}
work=$build/tmp/bench-dyninst-threads
mkdir -p "$work"
export PMSTAP_CACHE=${PMSTAP_CACHE:-$work/cache}
[ -x "$bin" ] || { echo "bench-dyninst-threads: not built (make bench-bins)" >&2; exit 1; }

body() {	# CASE: the probe's statement
	case $1 in count) echo 'n++' ;; stat) echo 's <<< 1' ;; esac
}

run() {	# CASE THREADS: the workload's seconds
	if [ "$1" = base ]; then
		"$bin" "$N" framed "$2"
		return
	fi
	"$pmstap" --runtime=dyninst -e "global n, s probe process(\"$bin\").function(\"bench_framed\") { $(body "$1") } probe end { if (n < 0 || @count(s) < 0) println(n) }" \
		-c "$bin $N framed $2" 2>/dev/null | head -n 1
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

declare -A ns ratio
run count 1 >/dev/null	# compile outside the timing
run stat 1 >/dev/null
for ((r = 0; r < REPS; r++)); do
	b1=$(run base 1)
	b2=$(run base 2)
	for c in count stat; do
		t1=$(run $c 1)
		t2=$(run $c 2)
		ns[$c.1]+=" $(awk -v t="$t1" -v b="$b1" -v n="$N" 'BEGIN { printf "%.1f", (t - b) * 1e9 / n }')"
		ns[$c.2]+=" $(awk -v t="$t2" -v b="$b2" -v n="$N" 'BEGIN { printf "%.1f", (t - b) * 1e9 / n }')"
		ratio[$c]+=" $(awk -v a="$t2" -v b="$t1" 'BEGIN { printf "%.2f", a / b }')"
	done
	ratio[base]+=" $(awk -v a="$b2" -v b="$b1" 'BEGIN { printf "%.2f", a / b }')"
done

{
	echo "dyninst probes and threads: $REPS repetitions of $N calls a thread ($(nproc) CPUs)"
	printf '%-6s  %-18s  %-18s  %s\n' case "ns/call, 1 thread" "ns/call, 2 threads" \
		"wall time 2 threads / 1 (1.00: scales)"
	printf '%-6s  %-18s  %-18s  %s\n' bare - - "$(median ${ratio[base]})"
	for c in count stat; do
		printf '%-6s  %-18s  %-18s  %s\n' $c "$(median ${ns[$c.1]})" "$(median ${ns[$c.2]})" \
			"$(median ${ratio[$c]})"
	done
} | tee "$build/bench/results-dyninst-threads.txt"
