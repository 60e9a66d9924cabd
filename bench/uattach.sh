#!/bin/bash
# bench/uattach.sh BUILD [tp] - large uprobe sets and tracepoint sets:
# programs, attach and detach (issue 15).  With "tp", the tracepoints
# only (make bench-tpattach).
#
# The scripts:
#   pmstap   probe process("BUILD/bin/pmstap").function("*") { n++ }
#            (every function of pmstap with DWARF: about 4,100 uprobes)
#   many     process("BUILD/bin/many_funcs").function("uf_*") and its
#            .return, counting by ppfunc() (qa/170's: 256 uprobes)
# For each, pmstap -v's notes of a run of `-T 1` (the script attaches,
# runs a second and stops): BPF programs loaded, kernel attachments, the
# time to attach them and the time to take them down at exit; and pass 4
# with the headers cached.  Each on uprobe_multi links (Linux 6.6 and
# later) and with PMSTAP_NO_UMULTI=1 (a perf event per site, as before):
# the pmstap script's control takes about 8 minutes of the BPF lock (each
# perf event's close waits for an RCU grace period), so it runs only with
# BENCH_UATTACH_FULL=1.
#
# Then kernel.trace's case: the kernel has no link that takes many
# tracepoints, so BUILD/bench/tp_attach (bench/src/tp_attach.c) measures
# one program attached to every tracepoint of sched, irq, timer and kmem
# the two ways there are, one at a time: a perf event and link per
# tracepoint (what pmstap does for a kernel.trace probe that reads the
# record), and a raw tracepoint link each (the arguments, not the record).
# And pmstap's: `kernel.trace("*:*") ? { n++ }` (every tracepoint of this
# kernel; the syscall tracepoints through raw_syscalls, the ones BPF
# cannot attach skipped) and qa/175's sched, timer, task and signal
# tracepoints, each as compiled here (where the kernel gives raw
# tracepoint programs their cookie, Linux 6.10: one raw_tp program on a
# raw tracepoint link per tracepoint) and with PMSTAP_NO_RAWTP=1 (a perf
# event and link per tracepoint, as before); "*:*"'s control takes about
# two minutes of the BPF lock, so it runs only with BENCH_UATTACH_FULL=1.
#
# Loading takes the BPF lock (flock /tmp/bpf.lock).  Results also go to
# BUILD/bench/results-uattach.txt.

set -u
build=${1:-build}
only=${2:-}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
pmstap=$build/bin/pmstap
work=$build/tmp/bench-uattach
out=$build/bench/results-uattach.txt
export PMSTAP_CACHE=$work/cache
mkdir -p "$work" "$build/bench"
[ -x "$build/bin/many_funcs" ] || { echo "bench/uattach.sh: make qa-bins first" >&2; exit 2; }

echo "global n; probe process(\"$build/bin/pmstap\").function(\"*\") { n++ }" >"$work/pmstap.stp"
cat >"$work/many.stp" <<END
global calls, rets
probe process("$build/bin/many_funcs").function("uf_*") { calls[ppfunc()]++ }
probe process("$build/bin/many_funcs").function("uf_*").return { rets[ppfunc()]++ }
END
echo 'global n; probe kernel.trace("*:*") ? { n++ }' >"$work/all.stp"
echo 'global n; probe kernel.trace("sched:*"), kernel.trace("timer:*"), kernel.trace("task:*"),
	kernel.trace("signal:*") { n[pn()]++ }' >"$work/qa175.stp"

# pass4 SCRIPT: seconds of pmstap -p4 (the headers already cached)
pass4() {
	local t0 t1

	rm -rf "$PMSTAP_CACHE"/[0-9a-f]*[0-9a-f]
	t0=$(date +%s.%N)
	"$pmstap" -w -p4 "$1" >/dev/null 2>"$work/p4.err" || { echo "-"; return; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf("%.2f", $2 - $1) }'
}

# attach SCRIPT: "probes programs attachments attach_ms detach_ms" of a -T 1 run
attach() {
	flock -o /tmp/bpf.lock "$pmstap" -v -T 1 "$1" >/dev/null 2>"$work/attach.err"
	awk '
	/loaded [0-9]* BPF program/ { for (i = 1; i <= NF; i++) if ($i == "loaded") p = $(i + 1) }
	/attached [0-9]* kernel probe.* kernel attachments? in/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "attached") n = $(i + 1)
			if ($i == "with") a = $(i + 1)
		}
		t = $(NF - 1)
	}
	/detached [0-9]* kernel attachments? in/ { d = $(NF - 1) }
	END { printf("%s %s %s %s %s\n", n, p, a, t, d) }' "$work/attach.err"
}

# row NAME PATH [P4]: "| NAME | PATH | probes | programs | [P4 |] kernel
# attachments | attach | detach |" of a -T 1 run of NAME's script
row() {
	local n p a t d

	read -r n p a t d < <(attach "$work/$1.stp")
	printf "| %s | %s | %s | %s |%s %s | %s ms | %s ms |\n" "$1" "$2" "$n" "$p" "${3+ $3 |}" \
		"$a" "$t" "$d"
}

# uprobes: on uprobe_multi links, and a perf event each
uprobes() {
	echo "| script | path | uprobes | programs | pass 4, headers cached | kernel attachments | attach | detach |"
	echo "|---|---|---|---|---|---|---|---|"
	for s in many pmstap; do
		row "$s" uprobe_multi "$(pass4 "$work/$s.stp") s"
		if [ "$s" = many ] || [ -n "${BENCH_UATTACH_FULL:-}" ]; then
			PMSTAP_NO_UMULTI=1 row "$s" PMSTAP_NO_UMULTI=1 ""
		fi
	done
	echo
}

# pmstap's kernel.trace probes: raw tracepoint links, and a perf event each
tracepoints() {
	echo "| script | path | probes | programs | kernel attachments | attach | detach |"
	echo "|---|---|---|---|---|---|---|"
	row qa175 "as compiled"
	PMSTAP_NO_RAWTP=1 row qa175 PMSTAP_NO_RAWTP=1
	row all "as compiled"
	[ -z "${BENCH_UATTACH_FULL:-}" ] || PMSTAP_NO_RAWTP=1 row all PMSTAP_NO_RAWTP=1
	echo
}

"$pmstap" -w -p4 "$work/many.stp" >/dev/null 2>&1	# the headers, into the cache
{
	echo "# bench/uattach.sh on $(uname -r), $(nproc) CPUs, $(date -u +%F)"
	echo
	[ "$only" = tp ] || uprobes
	tracepoints
	echo "| tracepoints (sched, irq, timer, kmem) | attachments | attach | detach |"
	echo "|---|---|---|---|"
	flock -o /tmp/bpf.lock "$build/bench/tp_attach" sched irq timer kmem |
	while read -r how n a d; do
		[ "$how" = perf ] && how="perf event + link each" || how="raw tracepoint link each"
		printf "| %s | %s | %s ms | %s ms |\n" "$how" "$n" "$a" "$d"
	done
} | tee "$out"
