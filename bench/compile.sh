#!/bin/bash
# bench/compile.sh [--detail] BUILD [BUILD2] - scripts that probe every
# syscall (issue 15): programs, instructions, verifier time and pass 4 time.
#
# The scripts: SystemTap's process/strace.stp and process/errsnoop.stp
# (from systemtap-doc, unpacked into BUILD/systemtap-doc by qa/examples/run.sh
# or by this script), and the one-liner `probe syscall.* { counts[name]++ }`;
# in the details table also process/ltrace.stp (`-c ls`, its .meta's run
# line: 312 uprobes on the plt returns of ls and its libraries, each
# handler with a foreach).  --detail: that table alone, not the figures;
# BENCH_COMPILE_SCRIPTS="NAME..." (strace errsnoop oneliner ltrace) limits
# it to those.
# For each, with BUILD's pmstap (and BUILD2's, another build of another
# commit, in the same run, for a before/after table):
#
#   programs  BPF programs loaded (bpf(BPF_PROG_LOAD) calls of the script's
#             programs that succeeded, counted by strace)
#   insns     instructions the verifier processed, summed over them
#             (verified_insns in /proc/PID/fdinfo of pmstap's program
#             descriptors, while the script runs), or pmstap -v's count
#             where it gives one
#   verifier  time in those BPF_PROG_LOAD calls, summed (strace -T): the
#             kernel's verification and JIT
#   pass 4    pmstap -p4 wall time with PMSTAP_CACHE an empty directory
#             (cold: the precompiled headers made too),
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
elif [ "${1:-}" = --figures ]; then	# (internal) the figures' runs that load
	figures_only=1
	shift
elif [ "${1:-}" = --table ]; then	# the last run's figures table again
	table_only=1
	shift
elif [ "${1:-}" = --detail ]; then	# the details table alone
	detail_only=1
	shift
fi
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
build2=${2:-}
[ -n "$build2" ] && case $build2 in /*) ;; *) build2=$(pwd)/$build2 ;; esac
work=$build/tmp/bench-compile
out=$build/bench/results-compile.txt
# each run loads its programs, but the "kept" rows' (runtime/user/keep.c):
# their keepers' sockets in a folder of the bench's own
export PMSTAP_KEEP_LOADED=0 PMSTAP_KEEP_DIR=$work/keep
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
cp "$examples/strace.stp" "$examples/errsnoop.stp" "$examples/ltrace.stp" "$work/"
fig_scripts="strace errsnoop oneliner u2000"
detail_scripts=${BENCH_COMPILE_SCRIPTS:-strace errsnoop oneliner ltrace}
# sargs NAME: the options a script of the details table runs with
sargs() {
	[ "$1" = ltrace ] && echo "-c ls"
}
# u2000: a uprobe on each of 2,000 functions of a program made here (as
# qa/src/many_funcs.c's, -g -O0)
if [ -z "${figures_only:-}${table_only:-}${detail_only:-}" ]; then
	awk 'BEGIN {
		print "#define N __attribute__((noinline))\nvolatile long s;"
		for (i = 0; i < 2000; i++) printf("N long f_%d(long x) { s += x; return x + %d; }\n", i, i)
		print "int main(int c, char **v) {\n\tlong r = 0;\n"
		for (i = 0; i < 2000; i++) printf("\tr += f_%d(c);\n", i)
		print "\treturn r == 0;\n}" }' >"$work/funcs2000.c"
	cc -std=gnu11 -g -O0 -o "$work/funcs2000" "$work/funcs2000.c" ||
		{ echo "bench/compile.sh: cannot build funcs2000" >&2; exit 2; }
	echo "global n; probe process(\"$work/funcs2000\").function(\"f_*\") { n[ppfunc()]++ }" \
		>"$work/u2000.stp"
	# the figures' copies: a begin probe that prints once all is attached
	for s in $fig_scripts; do
		{ cat "$work/$s.stp"; echo 'probe begin { printf("bench: begun\n") }'; } >"$work/fig-$s.stp"
	done
	if ! command -v bpftrace >/dev/null; then
		echo "bench: bpftrace is missing: apt-get install -y bpftrace" >&2
		apt-get install -y bpftrace >"$work/apt.log" 2>&1 ||
			echo "bench: apt-get install bpftrace failed (see $work/apt.log)" >&2
	fi
	[ -x /usr/bin/time ] || apt-get install -y time >>"$work/apt.log" 2>&1 ||
		{ echo "bench/compile.sh: needs GNU time (apt-get install -y time)" >&2; exit 2; }
fi

now() { date +%s.%N; }

# pass4 PMSTAP DIR SCRIPT: seconds of pmstap -p4 with PMSTAP_CACHE=DIR.
pass4() {
	local t0 t1

	t0=$(now)
	# shellcheck disable=SC2046	# sargs' words
	PMSTAP_CACHE=$2 "$1" -w -p4 $(sargs "$(basename "$3" .stp)") "$3" >/dev/null \
		2>"$work/p4.err" || {
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

# run PMSTAP CACHE SCRIPT: "programs insns verifier_ms" of a short run
# (insns: -v's "N instructions verified" where pmstap says it, else read
# while it runs: ltrace's run ends with ls, before they can be read).
run() {
	local pid n i=0 c prev=0 vi np v

	# shellcheck disable=SC2046	# sargs' words
	PMSTAP_CACHE=$2 strace -f -T -e trace=bpf -o "$work/strace.out" "$1" -v -T 1 \
		$(sargs "$(basename "$3" .stp)") "$3" >/dev/null 2>"$work/run.err" &
	pid=$!
	# pmstap (strace's child): its programs, once their number stops growing
	while [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do
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
	v=$(sed -n 's/.*loaded [0-9]* BPF programs*: \([0-9]*\) instructions verified.*/\1/p' \
		"$work/run.err")
	[ -n "$v" ] && vi=$v
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
	# shellcheck disable=SC2046	# sargs' words
	PMSTAP_CACHE=$2 "$1" -v -T 1 $(sargs "$(basename "$3" .stp)") "$3" >/dev/null \
		2>"$work/attach.err"
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

	for s in $detail_scripts; do
		rm -rf "$work/cold" "$work/warm"
		mkdir -p "$work/cold" "$work/warm"
		cold=$(pass4 "$pmstap" "$work/cold" "$work/$s.stp")
		# a cache with the headers, not this script
		pass4 "$pmstap" "$work/warm" "$work/oneliner.stp" >/dev/null
		find "$work/warm" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
		warm=$(pass4 "$pmstap" "$work/warm" "$work/$s.stp")
		echo "$s $cold $warm"
	done >"$work/$1.p4"
	# the objects that load() runs, made here, outside the lock
	rm -rf "$work/load-$1"
	for s in $detail_scripts; do
		pass4 "$pmstap" "$work/load-$1" "$work/$s.stp" >/dev/null
	done
}

# load LABEL BUILD: programs, instructions and verifier time, into $work/LABEL.load.
load() {
	local pmstap=$2/bin/pmstap s

	for s in $detail_scripts; do
		echo "$s $(run "$pmstap" "$work/load-$1" "$work/$s.stp")" \
			"$(attach "$pmstap" "$work/load-$1" "$work/$s.stp")"
	done >"$work/$1.load"
	[ "$2" = "$3" ] || return 0	# the old attach too, with this build
	for s in $detail_scripts; do
		[ "$s" = ltrace ] && continue	# no syscall probes
		echo "$s $(PMSTAP_NO_DISPATCH=1 attach "$pmstap" "$work/load-$1" "$work/$s.stp")"
	done >"$work/$1.nodispatch"
}

if [ -n "${load_only:-}" ]; then
	load "$(basename "$load_only")" "$load_only" "$build"
	exit
fi

# ---- the figures: pmstap, stap and bpftrace side by side (issue 15) ----

# vpass N FILE: pass N's milliseconds in FILE, pmstap's -v ("... in 123 ms.")
# or stap's -v ("... in 10usr/2sys/123real ms."); "-" when FILE has none.
vpass() {
	awk -v p="Pass $1:" 'index($0, p) == 1 && / in [0-9][0-9a-z\/]* ms\.?$/ {
		t = $0; sub(/ ms\.?$/, "", t); sub(/.* /, "", t); sub(/.*\//, "", t)
		sub(/real/, "", t); v = t }
	END { print v == "" ? "-" : v }' "$2"
}

# first PMSTAP CACHE SCRIPT: "first_ms attach_ms rss_kb p2 p3 p4" of a
# `pmstap -v -T 1` run with PMSTAP_CACHE=CACHE: the time from the exec of
# pmstap to its first line of output (the begin probe the script copies
# here end with: begin probes run once every probe is attached), attach
# time as -v says it, peak RSS (GNU time: the largest of pmstap and the
# compilers it waits for) and passes 2-4 (pass 4 "-" when cached).
first() {
	local t0 t1

	rm -f "$work/first.t"
	t0=$(now)
	PMSTAP_CACHE=$2 /usr/bin/time -f %M -o "$work/first.rss" "$1" -v -T 1 "$3" \
		2>"$work/first.err" | { IFS= read -r _ && now >"$work/first.t"; cat >/dev/null; }
	t1=$(cat "$work/first.t" 2>/dev/null)
	awk -v a="$t0" -v b="${t1:-$t0}" -v ok="${t1:+1}" \
		'BEGIN { if (ok) printf("%.0f ", (b - a) * 1000); else printf("- ") }'
	awk '/attached [0-9]* kernel probe.* kernel attachments? in/ { a = $(NF - 1) }
	END { printf("%s ", a == "" ? "-" : a) }' "$work/first.err"
	echo "$(tail -1 "$work/first.rss") $(vpass 2 "$work/first.err") $(vpass 3 "$work/first.err")" \
		"$(vpass 4 "$work/first.err")"
}

# pmstap_figures PMSTAP: for each script, a cold run (PMSTAP_CACHE empty:
# headers and script compiled), a cached one, and one with the headers
# cached but not the script, into
# $work/fig.pmstap.  Under the BPF lock.
pmstap_figures() {
	local s

	for s in $fig_scripts; do
		rm -rf "$work/fig-cache"
		mkdir -p "$work/fig-cache"
		echo "$s cold $(first "$1" "$work/fig-cache" "$work/fig-$s.stp")"
		echo "$s cached $(PMSTAP_NO_MANIFEST=1 first "$1" "$work/fig-cache" "$work/fig-$s.stp")"
		first "$1" "$work/fig-cache" "$work/fig-$s.stp" >/dev/null	# its manifest
		echo "$s manifest $(first "$1" "$work/fig-cache" "$work/fig-$s.stp")"
		# a run that leaves a keeper, then one that takes its programs
		PMSTAP_KEEP_LOADED=60 first "$1" "$work/fig-cache" "$work/fig-$s.stp" >/dev/null
		echo "$s kept $(PMSTAP_KEEP_LOADED=60 first "$1" "$work/fig-cache" "$work/fig-$s.stp")"
		rm -f "$work"/keep/k-*	# its keeper goes
		# the script's build gone, the shared pieces kept: as stap's
		# "stapconf cached, module not"
		find "$work/fig-cache" -mindepth 1 -maxdepth 1 -type d -regextype egrep \
			-regex '.*/[0-9a-f]{64}' -exec rm -rf {} +
		echo "$s headers $(first "$1" "$work/fig-cache" "$work/fig-$s.stp")"
	done >"$work/fig.pmstap"
}

# stap_figures: stap -r KVER -p4 of each script (the module built, not
# loaded: this host loads no modules), into $work/fig.stap: strace first
# in an empty SYSTEMTAP_DIR (stapconf, tracepoint queries and module
# built: cold), then each script with those cached and its module not.
stap_figures() {
	local kver s dir=$work/stap-home ms

	: >"$work/fig.stap"
	rm -f "$work/fig.stap.cold" "$work/fig.stap.why"
	. "$here/../qa/guest/stap.rc"
	stap_peer_find >/dev/null 2>&1 || { echo "stap: $stap_missing" >"$work/fig.stap.why"; return; }
	kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
	[ -n "$kver" ] && [ -d "/lib/modules/$kver/build" ] ||
		{ echo "stap: no /lib/modules/*-amd64/build to build against" >"$work/fig.stap.why"; return; }
	echo "$kver" >"$work/fig.stap.kver"
	stap_peer_runtime "$work"
	rm -rf "$dir"
	for s in strace $fig_scripts; do
		[ -d "$dir" ] && rm -f "$dir"/cache/*/stap_*	# the module, not stapconf
		(cd "$work" && SYSTEMTAP_DIR=$dir /usr/bin/time -f %M -o "$work/stap.rss" "$stap" -v \
			-r "$kver" -R "$work/runtime" --suppress-handler-errors --skip-badvars -p4 \
			-m "bench_$s" "$work/$s.stp" >/dev/null 2>"$work/stap.err") ||
			{ echo "$s - - - - - failed: $(grep -m1 -i error "$work/stap.err")" >>"$work/fig.stap"; continue; }
		[ -f "$work/fig.stap.cold" ] && ms=warm || { ms=cold; touch "$work/fig.stap.cold"; }
		echo "$s $ms $(vpass 2 "$work/stap.err") $(vpass 3 "$work/stap.err")" \
			"$(vpass 4 "$work/stap.err") $(tail -1 "$work/stap.rss") $(vpass 1 "$work/stap.err")" \
			>>"$work/fig.stap"
	done
	rm -f "$work/fig.stap.cold"
}

# bpftrace_first NAME PROGRAM: "first_ms total_ms rss_kb" of bpftrace
# PROGRAM (its probes, and a BEGIN that prints "attached" and exits: the
# printf reaches stdout through bpftrace's perf buffer, which it reads
# only once every probe is attached), into $work/fig.bpftrace.
bpftrace_first() {
	local t0 t1 t2

	rm -f "$work/first.t"
	t0=$(now)
	BPFTRACE_MAX_PROBES=10000 /usr/bin/time -f %M -o "$work/bt.rss" bpftrace -e "$2"' BEGIN { printf("attached\n"); exit(); }' \
		2>"$work/bt.err" | { grep -q '^attached' && now >"$work/first.t"; cat >/dev/null; }
	t2=$(now)
	t1=$(cat "$work/first.t" 2>/dev/null)
	awk -v n="$1" -v a="$t0" -v b="${t1:-$t0}" -v c="$t2" -v ok="${t1:+1}" -v r="$(tail -1 "$work/bt.rss")" \
		'BEGIN { if (ok) printf("%s %.0f %.0f %s\n", n, (b - a) * 1000, (c - a) * 1000, r)
			 else printf("%s - - -\n", n) }' >>"$work/fig.bpftrace"
}

# bpftrace_figures: bpftrace's attach of the tracepoints the scripts use
# (every syscalls:sys_enter_* and sys_exit_*; sys_enter_* alone for the
# one-liner) and of the 2,000 functions, under the BPF lock.
bpftrace_figures() {
	: >"$work/fig.bpftrace"
	command -v bpftrace >/dev/null || return
	bpftrace_first strace 'tracepoint:syscalls:sys_enter_*, tracepoint:syscalls:sys_exit_* { @n = count(); }'
	bpftrace_first oneliner 'tracepoint:syscalls:sys_enter_* { @c[probe] = count(); }'
	bpftrace_first u2000 "uprobe:$work/funcs2000:f_* { @c[func] = count(); }"
}

if [ -n "${figures_only:-}" ]; then
	pmstap_figures "$build/bin/pmstap"
	bpftrace_figures
	exit
fi

# one hold of the BPF lock for the figures' runs that load programs
if [ -z "${table_only:-}${detail_only:-}" ]; then
	flock -o /tmp/bpf.lock "$0" --figures "$build"
	stap_figures
fi

# secs N: N milliseconds as seconds; msu N: as milliseconds, or seconds
# from 1000 on ("-" stays)
secs() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf("%.2f s", v / 1000); else printf("%s", v) }'; }
mb() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9]+$/) printf("%.0f MB", v / 1024); else printf("%s", v) }'; }
msu() { case $1 in [0-9][0-9][0-9][0-9]*) secs "$1" ;; [0-9]*) echo "$1 ms" ;; *) echo "$1" ;; esac; }

[ -n "${detail_only:-}" ] || {
	echo "# bench/compile.sh on $(uname -r), $(nproc) CPUs ($(cat /proc/loadavg | cut -d' ' -f1-3) load), $(date -u '+%F %H:%M') UTC"
	echo
	echo "| script | tool, cache | pass 2 | pass 3 | pass 4 | start to first output | attach (-v) | peak RSS |"
	echo "|---|---|---|---|---|---|---|---|"
	for s in $fig_scripts; do
		case $s in
		oneliner) name='`probe syscall.* { counts[name]++ }`' ;;
		u2000) name="2,000 uprobes (\`process(\"funcs2000\").function(\"f_*\")\`)" ;;
		*) name=$s.stp ;;
		esac
		grep "^$s " "$work/fig.pmstap" | while read -r _ how first att rss p2 p3 p4; do
			case $how in
			cold) how="cold (empty PMSTAP_CACHE)" ;;
			headers) how="headers cached (PCH, tapset object), the script not" ;;
			manifest) how="cached, its manifest (passes 1-4 skipped)" ;;
			kept) how="cached, its manifest, its programs kept loaded by the last run (PMSTAP_KEEP_LOADED)" ;;
			*) how="cached, passes 1-2 run (PMSTAP_NO_MANIFEST=1)" ;;
			esac
			[ "$p3" = - ] && p3=cached || p3=$(msu "$p3")
			[ "$p4" = - ] && p4=cached || p4=$(secs "$p4")
			printf "| %s | pmstap, %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$how" \
				"$(msu "$p2")" "$p3" "$p4" "$(secs "$first")" "$(msu "$att")" "$(mb "$rss")"
			name=
		done
		grep "^$s " "$work/fig.stap" | while read -r _ how p2 p3 p4 rss why; do
			case $how in
			cold) how="cold (empty SYSTEMTAP_DIR: stapconf, tracepoint queries built)" ;;
			warm) how="stapconf cached, module not" ;;
			*) how="$rss $why" rss=- why=- ;;
			esac
			# passes 1-4: the least its start could take (the module not loaded)
			tot=$(awk -v a="$why" -v b="$p2" -v c="$p3" -v d="$p4" \
				'BEGIN { if (d ~ /^[0-9]+$/) printf("%d", a + b + c + d); else printf("-") }')
			printf "| | stap -r %s -p4, %s | %s | %s | %s | > %s (passes 1-4; the module is not loaded here) | | %s |\n" \
				"$(cat "$work/fig.stap.kver")" "$how" "$(msu "$p2")" "$(msu "$p3")" \
				"$(secs "$p4")" "$(secs "$tot")" "$(mb "$rss")"
		done
		[ "$s" = errsnoop ] && b=strace || b=$s
		grep "^$b " "$work/fig.bpftrace" | while read -r _ first total rss; do
			printf "| | bpftrace %s (BEGIN after attach; exit %s) | | | | %s | | %s |\n" \
				"$(bpftrace --version 2>/dev/null | sed 's/.* v*//')" "$(secs "$total")" \
				"$(secs "$first")" "$(mb "$rss")"
		done
	done
	[ -s "$work/fig.stap.why" ] && cat "$work/fig.stap.why"
	command -v bpftrace >/dev/null || echo "bpftrace: not installed"
} | tee "$out"

# the programs, verifier and pass 4 details, and a before/after table of
# two builds: with BENCH_BEFORE (a second argument) or BENCH_COMPILE_DETAIL=1
[ -z "${table_only:-}" ] || exit 0
[ -n "$build2" ] || [ -n "${BENCH_COMPILE_DETAIL:-}${detail_only:-}" ] || exit 0
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
} | tee -a "$out"
