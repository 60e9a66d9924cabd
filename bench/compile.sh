#!/bin/bash
# bench/compile.sh BUILD [BUILD2] - scripts that probe every syscall (issue 15):
# programs, instructions, verifier time and pass 4 time.
#
# The scripts: SystemTap's process/strace.stp and process/errsnoop.stp
# (from systemtap-doc, unpacked into BUILD/systemtap-doc by qa/examples/run.sh
# or by this script), and the one-liner `probe syscall.* { counts[name]++ }`
# For each, with BUILD's pmstap (and BUILD2's, another build of another
# commit, in the same run, for a before/after table):
#
#   programs  BPF programs loaded (bpf(BPF_PROG_LOAD) calls of the script's
#             programs that succeeded, counted by strace)
#   insns     instructions the verifier processed, summed over them
#             (verified_insns in /proc/PID/fdinfo of pmstap's program
#             descriptors, while the script runs)
#   verifier  time in those BPF_PROG_LOAD calls, summed (strace -T): the
#             kernel's verification and JIT
#   pass 4    pmstap -p4 wall time with PMSTAP_CACHE an empty directory
#             (cold: the precompiled headers and tapset object made too),
#             then again in a cache that has those but not the script
#             ("headers cached": what a new script costs once pmstap has run)
#   attach    kernel attachments made and the time to make them, and the
#             time to take them down at exit (pmstap -v's notes, a run of
#             its own, not under strace); for BUILD also with
#             PMSTAP_NO_DISPATCH=1, each syscall probe on its own tracepoint
#             as before the dispatch (runtime/user/attach_syscall.c)
#
# Loading takes the BPF lock (flock /tmp/bpf.lock) as every loading
# command here must.  Results also go to BUILD/bench/results-compile.txt.

set -u
if [ "${1:-}" = --load ]; then	# (internal) the runs that load, under the lock
	load_only=$2
	shift 2
fi
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
build2=${2:-}
[ -n "$build2" ] && case $build2 in /*) ;; *) build2=$(pwd)/$build2 ;; esac
work=$build/tmp/bench-compile
out=$build/bench/results-compile.txt
examples=$build/systemtap-doc/usr/share/systemtap/examples/process
mkdir -p "$work" "$build/bench"

if [ ! -f "$examples/strace.stp" ]; then
	(cd "$work" && apt-get download systemtap-doc >/dev/null 2>&1) &&
		dpkg -x "$work"/systemtap-doc_*.deb "$build/systemtap-doc" ||
		{ echo "bench/compile.sh: cannot fetch systemtap-doc" >&2; exit 2; }
fi
for t in strace flock; do
	command -v $t >/dev/null || { echo "bench/compile.sh: needs $t" >&2; exit 2; }
done
echo 'global counts; probe syscall.* { counts[name]++ }' >"$work/oneliner.stp"
cp "$examples/strace.stp" "$examples/errsnoop.stp" "$work/"

now() { date +%s.%N; }

# pass4 PMSTAP DIR SCRIPT: seconds of pmstap -p4 with PMSTAP_CACHE=DIR.
pass4() {
	local t0 t1

	t0=$(now)
	PMSTAP_CACHE=$2 "$1" -w -p4 "$3" >/dev/null 2>"$work/p4.err" || {
		echo "pass 4 of $3 failed: $(tail -3 "$work/p4.err")" >&2
		echo "-"
		return
	}
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf("%.2f", $2 - $1) }'
}

# insns PID: "verified_instructions programs" of the BPF programs PID holds
# open (/proc/PID/fdinfo: verified_insns, Linux 5.16 and later).
insns() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
	awk '/^prog_type:/ { n++ } /^verified_insns:/ { v += $2 } END { print v + 0, n + 0 }'
}

# run PMSTAP CACHE SCRIPT: "programs insns verifier_ms" of a short run.
run() {
	local pid n i=0 c prev=0 vi np

	PMSTAP_CACHE=$2 strace -f -T -e trace=bpf -o "$work/strace.out" "$1" -T 1 "$3" \
		>/dev/null 2>&1 &
	pid=$!
	# pmstap (strace's child): its programs, once their number stops growing
	while [ $i -lt 600 ]; do
		i=$((i + 1))
		sleep 0.2
		n=$(pgrep -P $pid | head -1)
		[ -n "$n" ] || continue
		c=$(insns "$n" | cut -d' ' -f2)
		[ "$c" != 0 ] && [ "$c" = "$prev" ] && break
		prev=$c
	done
	read -r vi np < <(insns "$n")
	wait $pid
	awk -v vi="$vi" '
	/BPF_PROG_LOAD/ && /prog_name="probe_/ && !/= -1/ {
		n++
		t = $NF; gsub(/[<>]/, "", t); ms += t * 1000
	}
	END { printf("%d %d %.0f\n", n, vi, ms) }' "$work/strace.out"
}

# attach PMSTAP CACHE SCRIPT: "attachments attach_ms detach_ms" of a short
# run (pmstap -v; "- - -" from a build whose -v does not say).
attach() {
	"$1" -v -T 1 "$3" >/dev/null 2>"$work/attach.err"
	awk '
	/attached [0-9]* kernel probe.* kernel attachments? in/ {
		for (i = 1; i <= NF; i++) if ($i == "with") n = $(i + 1)
		a = $(NF - 1)
	}
	/detached [0-9]* kernel attachments? in/ { d = $(NF - 1) }
	END { printf("%s %s %s\n", n == "" ? "-" : n, a == "" ? "-" : a, d == "" ? "-" : d) }' \
		"$work/attach.err"
}

# compile LABEL BUILD: the pass 4 times of each script, into $work/LABEL.p4.
compile() {
	local pmstap=$2/bin/pmstap s cold warm

	for s in strace errsnoop oneliner; do
		rm -rf "$work/cold" "$work/warm"
		mkdir -p "$work/cold" "$work/warm"
		cold=$(pass4 "$pmstap" "$work/cold" "$work/$s.stp")
		# a cache with the headers and the tapset object, not this script
		pass4 "$pmstap" "$work/warm" "$work/oneliner.stp" >/dev/null
		find "$work/warm" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
		warm=$(pass4 "$pmstap" "$work/warm" "$work/$s.stp")
		echo "$s $cold $warm"
	done >"$work/$1.p4"
	# the objects that load() runs, made here, outside the lock
	rm -rf "$work/load-$1"
	for s in strace errsnoop oneliner; do
		pass4 "$pmstap" "$work/load-$1" "$work/$s.stp" >/dev/null
	done
}

# load LABEL BUILD: programs, instructions and verifier time, into $work/LABEL.load.
load() {
	local pmstap=$2/bin/pmstap s

	for s in strace errsnoop oneliner; do
		echo "$s $(run "$pmstap" "$work/load-$1" "$work/$s.stp")" \
			"$(attach "$pmstap" "$work/load-$1" "$work/$s.stp")"
	done >"$work/$1.load"
	[ "$2" = "$3" ] || return 0	# the old attach too, with this build
	for s in strace errsnoop oneliner; do
		echo "$s $(PMSTAP_NO_DISPATCH=1 attach "$pmstap" "$work/load-$1" "$work/$s.stp")"
	done >"$work/$1.nodispatch"
}

if [ -n "${load_only:-}" ]; then
	load "$(basename "$load_only")" "$load_only" "$build"
	exit
fi

labels=$(basename "$build")
[ -n "$build2" ] && labels="$(basename "$build2") $labels"
builds=$build
[ -n "$build2" ] && builds="$build2 $build"
for b in $builds; do
	compile "$(basename "$b")" "$b"
done
# one hold of the BPF lock for every run that loads programs
flock -o /tmp/bpf.lock bash -c "for b in $builds; do \"$0\" --load \"\$b\" \"$build\"; done"

{
	echo "# bench/compile.sh on $(uname -r), $(nproc) CPUs, $(date -u +%F)"
	echo
	echo "| build | script | programs | instructions verified | verifier | pass 4 cold | pass 4, headers cached | kernel attachments | attach | detach |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for l in $labels; do
		join <(sort "$work/$l.load") <(sort "$work/$l.p4") |
		while read -r s np vi vms na ams dms cold warm; do
			printf "| %s | %s | %s | %s | %s ms | %s s | %s s | %s | %s ms | %s ms |\n" \
				"$l" "$s" "$np" "$vi" "$vms" "$cold" "$warm" "$na" "$ams" "$dms"
		done
	done
	l=$(basename "$build")
	sort "$work/$l.nodispatch" | while read -r s na ams dms; do
		printf "| %s, PMSTAP_NO_DISPATCH=1 | %s | | | | | | %s | %s ms | %s ms |\n" \
			"$l" "$s" "$na" "$ams" "$dms"
	done
} | tee "$out"
