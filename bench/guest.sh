#!/bin/bash
# bench/guest.sh BUILD - what one kernel.trace hit costs in the qa guest
# (Debian's 6.1 kernel under qemu, which loads modules), for pmstap's BPF
# runtime, pmstap --runtime=kernel and real SystemTap 4.8's module, all in
# one boot of the guest (issue 11's "make bench in the guest").
#
# The workload (getppid_bench N) times a loop of N getppid() calls; every
# probe is on raw_syscalls:sys_enter, which each of those calls hits once
# (stap 4.8 cannot probe the syscalls:* tracepoints, so the probe cannot
# sit on sys_enter_getppid as `make bench`'s does).  The cases:
#   count  n++          pid  c[pid()]++          hist  h <<< pid()
# Each repetition runs the workload once with no probe (the base) and
# once under each tool for each case, the tools' order rotating between
# repetitions; ns/event = (t_probed - t_base) / N, the median over the
# repetitions.  The guest is emulated (TCG): its nanoseconds are not this
# machine's; the tools compare with each other in the same run.
#
# pmstap compiles here for the guest's kernel (qa/guest/run-jobs.sh), stap
# builds its modules here (stap -r KVER -p4, as qa/guest/peer.sh does);
# without stap its column says "not available" and why.
# Environment: BENCH_N (calls per run, default 500000; emulated syscalls are
# slow), BENCH_REPS (default 3).  Results also go to
# BUILD/bench/results-guest.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
export BUILD=$build
N=${BENCH_N:-500000}
REPS=${BENCH_REPS:-3}
CASES="count pid hist"
TOOLS="bpf kernel stap"
work=$build/guest/bench
out=$build/bench/results-guest.txt
mkdir -p "$work/home" "$build/bench"
rm -f "$work"/*.stp "$work"/*.ko

die() {
	echo "bench-guest: $*" >&2
	exit 1
}
[ -x "$build/bench/getppid_bench" ] || die "$build/bench/getppid_bench is not built (make bench-bins)"
"$repo/qa/guest/boot.sh" --check >/dev/null 2>&1 ||
	die "the qa guest cannot boot here: $("$repo/qa/guest/boot.sh" --check 2>&1 | tail -1)"

script() {
	local body
	case $1 in
	count) body='global n; probe kernel.trace("raw_syscalls:sys_enter") { n++ } probe end { printf("%d events\n", n) }' ;;
	pid) body='global c; probe kernel.trace("raw_syscalls:sys_enter") { c[pid()]++ } probe end { t = 0; foreach (p in c) t += c[p]; printf("%d events\n", t) }' ;;
	hist) body='global h; probe kernel.trace("raw_syscalls:sys_enter") { h <<< pid() } probe end { printf("%d events\n", @count(h)) }' ;;
	esac
	echo "$body" >"$work/$1.stp"
}
for c in $CASES; do
	script "$c"
done

# stap's modules, built here for the guest's kernel
declare -A why
. "$repo/qa/guest/stap.rc"
if stap_peer_find; then
	kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
	stap_peer_runtime "$work"
	for c in $CASES; do
		(cd "$work" && SYSTEMTAP_DIR=$work/home "$stap" -R "$work/runtime" -r "$kver" -p4 \
			-m "bench_$c" "$work/$c.stp" >/dev/null 2>"$work/stap-$c.log") ||
			why[stap]="stap cannot build the $c case (see $work/stap-$c.log)"
	done
else
	why[stap]=$stap_missing
fi

# The job: every run in one boot, each sample a line "TOOL CASE NS".
job=$work/bench.sh
{
	echo "# written by bench/guest.sh"
	echo "w=\"$build/bench/getppid_bench -o \$tmp/t $N\""
	echo "export SYSTEMTAP_DIR=$work/home${stapio:+ SYSTEMTAP_STAPIO=$stapio}"
	echo 'run() {	# run TOOL CASE: the loop'"'"'s ns in $tmp/t'
	echo '	rm -f $tmp/t'
	echo '	case $1 in'
	echo '	none) $w ;;'
	echo "	bpf) \$PMSTAP $work/\$2.stp -c \"\$w\" ;;"
	echo "	kernel) \$PMSTAP --runtime=kernel $work/\$2.stp -c \"\$w\" ;;"
	echo "	stap) $staprun -c \"\$w\" $work/bench_\$2.ko ;;"
	echo '	esac >$tmp/out.$1 2>$tmp/err.$1'
	echo '	[ -s $tmp/t ] && echo "$1 $2 $(cat $tmp/t)" ||'
	echo '		echo "failed $1 $2 $(head -c 300 $tmp/err.$1 | tr "\n" " ")"'
	echo '}'
	echo 'if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then'
	for c in $CASES; do
		echo "	\$PMSTAP $work/$c.stp; \$PMSTAP --runtime=kernel $work/$c.stp"
	done
	echo '	exit 0'
	echo 'fi'
	echo "tools=\"$(for t in $TOOLS; do [ -n "${why[$t]:-}" ] || printf '%s ' "$t"; done)\""
	echo "for r in \$(seq $REPS); do"
	echo '	set -- $tools'
	echo '	for i in $(seq $(((r - 1) % $#))); do set -- "${@:2}" "$1"; done'
	echo "	for c in $CASES; do"
	echo '		run none $c'
	echo '		for t in "$@"; do run $t $c; done'
	echo '	done'
	echo 'done'
} >"$job"

n_runs=$((REPS * 3 * 4))
export GUEST_JOB_TIMEOUT=${GUEST_JOB_TIMEOUT:-$((n_runs * 30))}
export GUEST_TIMEOUT=$((GUEST_JOB_TIMEOUT + 120))
echo "bench-guest: $n_runs runs of $N calls in one boot (up to ${GUEST_JOB_TIMEOUT} s)" >&2
"$repo/qa/guest/run-jobs.sh" "$job" >"$work/run-jobs.log" 2>&1
res=$build/guest/results/bench
[ -s "$res.out" ] || die "the guest did not run the job (see $work/run-jobs.log, $build/guest/xfer/console.log)"
[ "$(cat "$res.rc")" = 0 ] || die "the job stopped with status $(cat "$res.rc"): $(tail -3 "$res.err")"

# per tool and case, the median of (probed - base of the same repetition)
awk -v N="$N" -v cases="$CASES" -v tools="$TOOLS" -v reps="$REPS" '
	$1 == "failed" { failed[$2] = $0; next }
	$1 == "none" { base = $3; b[++nb] = $3; next }
	{ k = $1 SUBSEP $2; s[k, ++ns[k]] = $3 - base }
	function median(k, n,   i, j, t, v) {
		for (i = 1; i <= n; i++) v[i] = s[k, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	END {
		nt = split(tools, T, " "); nc = split(cases, C, " ")
		for (i = 1; i <= nb; i++) base_sum += b[i]
		printf "Per-event cost of a kernel.trace(\"raw_syscalls:sys_enter\") probe in the qa guest (qemu TCG)\n"
		printf "workload: %d getppid() calls; median of %d repetitions; base loop %.1f ns/call\n\n",
			N, reps, nb ? base_sum / nb / N : 0
		printf "%-6s", "case"
		for (t = 1; t <= nt; t++) printf "  %-24s", (T[t] == "bpf" ? "pmstap (bpf)" : T[t] == "kernel" ? "pmstap --runtime=kernel" : "stap 4.8 module")
		printf "\n"
		for (c = 1; c <= nc; c++) {
			printf "%-6s", C[c]
			for (t = 1; t <= nt; t++) {
				k = T[t] SUBSEP C[c]
				if (ns[k]) printf "  %-24s", sprintf("%.1f ns", median(k, ns[k]) / N)
				else printf "  %-24s", "not available"
			}
			printf "\n"
		}
		for (f in failed) print "failed: " failed[f]
	}' "$res.out" | tee "$out"
for t in $TOOLS; do
	[ -n "${why[$t]:-}" ] && echo "$t: not available: ${why[$t]}" | tee -a "$out"
done
true
