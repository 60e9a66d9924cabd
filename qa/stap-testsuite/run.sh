#!/bin/bash
# qa/stap-testsuite/run.sh [--measure | --runtime=R] BUILD [DIR...] - SystemTap 4.8's own
# pass 1-4 tests (see README.md here), run the way stap's testsuite runs
# them (testsuite/lib/systemtap.exp, stap_run_batch): a file whose first
# line is "#! stap ARGS" runs as "stap ARGS FILE"; any other file is
# executed, finding "stap" in PATH.  The .exp files add no options: each
# test's own -pN says where it stops.  An ok test must exit 0, a ko test
# non-zero; no test may crash (die on a signal) or time out
# (STAP_TS_TIMEOUT seconds, default 120).
#
# DIRs: parseok parseko semok semko transok transko buildok (default: all
# but buildok, which compiles: pass 4).
#
# "stap" is a wrapper (BUILD/tmp/stap-testsuite/bin/stap) that runs
#   - pmstap (BUILD/bin/pmstap), translating for the qa guest's kernel,
#     Debian's 6.1: PMSTAP_SYSROOT from qa/guest/sysroot.sh (one short
#     boot when the snapshot is missing), the kernel stap's verdicts were
#     measured on;
#     (with --runtime=R: pmstap --runtime=R, e.g. kernel, the runtime stap
#     4.8 itself ran them with; the verdicts are printed, not written to
#     BUILD/results);
#   - with --measure: real stap ($STAP, default /usr/bin/stap) with
#     "-r KVER" of that same kernel (it needs that kernel's headers and its
#     debuginfo vmlinux; see README.md).  The tests it passes are written
#     to stap-4.8-passes.txt here.
# STAP_TS_LOCK=FILE: a pmstap run that does not stop before pass 5 (no
# -pN, -l, -L, -V, -h) holds flock FILE, for a machine where BPF loads
# must take turns with other work; unset (make check) takes no lock.
# The wrapper is a compiled program (wrapper.c), as stap is: tests that
# probe process("stap") see it, with real stap as with pmstap.
#
# Judged against stap-4.8-passes.txt (the tests stap 4.8 passes) and
# known-misses.txt (those of them pmstap is known to fail, with why):
#   FAIL     a test stap passes that pmstap fails and that is not a known
#            miss, or any test that crashes or times out
#   FIXED    a known miss that passes now: trim known-misses.txt (the
#            list is the default runtime's: not said with --runtime=R)
#   SKIP     a test of needs-kernel-debuginfo.txt (kernel.function("F@FILE"),
#            inline functions) on a machine without that kernel's vmlinux
#            with DWARF: counted with the known misses
# Prints per directory the tests stap passes, how many of those pmstap
# passes, and the misses.  Without DIR arguments, writes "PASSED FAILED
# SKIPPED" to BUILD/results/stap_testsuite: passed = stap's passes that
# pmstap passes, failed = FAIL lines, skipped = known misses.
# Exit status: 0 when there is no FAIL.

set -u
here=$(cd "$(dirname "$0")" && pwd)
measure= runtime=
case ${1:-} in
--measure) measure=1; shift ;;
--runtime=*) runtime=$1; shift ;;
esac
[ $# -ge 1 ] || { echo "usage: $0 [--measure | --runtime=R] BUILD [DIR...]" >&2; exit 2; }
build=$1
shift
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
dirs=${*:-parseok parseko semok semko transok transko}
all_dirs=$#
[ -z "$runtime" ] || all_dirs=1
timeout=${STAP_TS_TIMEOUT:-120}
tmp=$build/tmp/stap-testsuite${measure:+-stap}${runtime:+-${runtime#--runtime=}}
passes=$here/stap-4.8-passes.txt
known=$here/known-misses.txt
kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)

# The "stap" in the tests' PATH: wrapper.c, compiled, which runs
# $STAP_TS_EXEC after the words of $STAP_TS_PRE.
make_wrapper() {
	rm -rf "$tmp"
	mkdir -p "$tmp/bin" "$tmp/log"
	${CC:-cc} -g -O0 -Wall -o "$tmp/bin/stap" "$here/wrapper.c" ||
		{ echo "stap-testsuite: cannot compile wrapper.c" >&2; exit 2; }
	if [ -n "$measure" ]; then
		# with -r for another kernel stap stops after pass 4: no lock
		STAP_TS_EXEC=${STAP:-/usr/bin/stap} STAP_TS_PRE="-r $kver" STAP_TS_LOCK=
	else
		STAP_TS_EXEC=$build/bin/pmstap STAP_TS_PRE=$runtime STAP_TS_LOCK=${STAP_TS_LOCK-}
		export PMSTAP_SYSROOT=$sysroot
	fi
	export STAP_TS_EXEC STAP_TS_PRE STAP_TS_LOCK
	# the tests find their data (semlib, buildko) under $SRCDIR/testsuite
	mkdir -p "$tmp/src"
	ln -s "$here" "$tmp/src/testsuite"
	export SRCDIR=$tmp/src
}

# run_one DIR/NAME.stp: one test; prints "PASS|FAIL|CRASH|TIMEOUT DIR/NAME.stp"
run_one() {
	local t=$1 file=$here/$1 log=$tmp/log/${1//\//_}
	local first args rc
	export STAP_TS_CRASH=$log.crash
	first=$(head -n 1 "$file")
	if [[ $first =~ ^\#!\ stap\ (.*)$ ]]; then
		read -r -a args <<<"${BASH_REMATCH[1]}"
		(cd "$tmp" && timeout -s KILL "$timeout" stap "${args[@]}" "$file") >"$log" 2>&1 </dev/null
	else
		(cd "$tmp" && timeout -s KILL "$timeout" "$file") >"$log" 2>&1 </dev/null
	fi
	rc=$?
	if [ "$rc" -eq 137 ]; then
		echo "TIMEOUT $t"
	elif [ "$rc" -ge 128 ] || [ -s "$STAP_TS_CRASH" ]; then
		echo "CRASH $t"
	else
		case $t:$rc in
		*ok/*:0 | *ko/*:[1-9]*) echo "PASS $t" ;;
		*) echo "FAIL $t" ;;
		esac
	fi
}

if [ -n "$measure" ]; then
	[ -n "$kver" ] && [ -d "/lib/modules/$kver/build" ] ||
		{ echo "stap-testsuite: no kernel headers for -r (linux-headers-*-amd64)" >&2; exit 2; }
elif [ -n "${PMSTAP_SYSROOT:-}" ]; then
	sysroot=$PMSTAP_SYSROOT
else
	[ -x "$build/bin/pmstap" ] || { echo "stap-testsuite: $build/bin/pmstap is not built" >&2; exit 2; }
	sysroot=$(BUILD=$build "$here/../guest/sysroot.sh") || {
		echo "stap-testsuite: no snapshot of the qa guest's kernel (qa/guest/sysroot.sh failed):"
		echo "  the verdicts are stap's on that kernel, so the suite does not run"
		[ "$all_dirs" -ne 0 ] || { mkdir -p "$build/results"; echo "0 0 1" >"$build/results/stap_testsuite"; }
		exit 0
	}
fi
# Tests that need the kernel's debuginfo (a vmlinux with DWARF), which a
# machine may lack (no package installs the guest kernel's): skipped, with
# the reason, when pmstap finds none for the sysroot's kernel.
needs_dbg=$here/needs-kernel-debuginfo.txt
no_dbg=
if [ -z "$measure" ] &&
   ! PMSTAP_SYSROOT=$sysroot "$build/bin/pmstap" -l 'kernel.function("schedule@kernel/sched/core.c")' >/dev/null 2>&1; then
	no_dbg="the debuginfo of the guest's kernel (/usr/lib/debug/boot/vmlinux-$(cat "$sysroot/proc/sys/kernel/osrelease")) is not installed"
fi
make_wrapper
export PATH=$tmp/bin:$PATH SYSTEMTAP_TAPSET
export -f run_one
export here tmp timeout
if [ -z "$measure" ]; then
	SYSTEMTAP_TAPSET=$(cd "$here/../../tapset" && pwd)
else
	SYSTEMTAP_TAPSET=/usr/share/systemtap/tapset
fi

for d in $dirs; do
	[ -d "$here/$d" ] || { echo "stap-testsuite: no directory $d" >&2; exit 2; }
	(cd "$here" && ls "$d"/*.stp)
done | xargs -P "${STAP_TS_JOBS:-$(nproc)}" -I{} bash -c 'run_one {}' 2>/dev/null | sort -k2 >"$tmp/verdicts"

if [ -n "$measure" ]; then
	# the list keeps the other directories' lines
	keep=$(printf '%s/\n' $dirs)
	{
		echo "# The tests of qa/stap-testsuite that SystemTap $(${STAP:-stap} -V 2>&1 | sed -n '1s/.*(version \([^/]*\)\/.*/\1/p') passes, as"
		echo "# qa/stap-testsuite/run.sh --measure BUILD [DIR...] measured them: stap -r $kver"
		echo "# (the qa guest's kernel), with its headers and debuginfo; see README.md."
		{
			[ ! -f "$passes" ] || grep -v '^#' "$passes" | grep -v -F "$keep"
			awk '$1 == "PASS" { print $2 }' "$tmp/verdicts"
		} | sort
	} >"$passes.new"
	mv "$passes.new" "$passes"
	grep -v '^PASS' "$tmp/verdicts"
	for d in $dirs; do
		printf '%-8s stap passes %d of %d\n' "$d" \
			"$(grep -c "^PASS $d/" "$tmp/verdicts")" "$(grep -c " $d/" "$tmp/verdicts")"
	done
	exit 0
fi

# the verdicts against stap's
awk -v passes="$passes" -v known="$known" -v logs="$tmp/log" -v other="$runtime" \
    -v needs_dbg="$needs_dbg" -v no_dbg="$no_dbg" '
BEGIN {
	while ((getline l <passes) > 0)
		if (l !~ /^#/ && l != "")
			stap[l] = 1
	while (no_dbg != "" && (getline l <needs_dbg) > 0)
		if (l !~ /^#/ && l != "") {
			split(l, w, " ")
			nodbg[w[1]] = 1
		}
	while ((getline l <known) > 0)
		if (l !~ /^#/ && l != "") {
			split(l, w, " ")
			miss[w[1]] = 1
		}
}
{
	v = $1; t = $2; d = t; sub(/\/.*/, "", d)
	lg = t; sub(/\//, "_", lg)
	if (!(d in total))
		order[n++] = d
	total[d]++
	if (v == "CRASH" || v == "TIMEOUT") {
		printf "FAIL %s: %s (log: %s/%s)\n", t, tolower(v) == "crash" ? "crashed" : "timed out", logs, lg
		failed++
	}
	if (!(t in stap))
		next
	spass[d]++
	if (v == "PASS") {
		ppass[d]++
		passed++
		if ((t in miss) && other == "")
			printf "FIXED %s: a known miss passes now: take it off known-misses.txt\n", t
	} else if (t in miss) {
		skipped++
		misses[d] = misses[d] " " t
	} else if (t in nodbg) {
		printf "SKIP %s: %s\n", t, no_dbg
		skipped++
		misses[d] = misses[d] " " t
	} else if (v == "FAIL") {
		printf "FAIL %s: stap 4.8 passes it, pmstap does not (log: %s/%s)\n", t, logs, lg
		failed++
		misses[d] = misses[d] " " t
	}
}
END {
	for (i = 0; i < n; i++) {
		d = order[i]
		printf "%-8s %3d of the %3d tests stap 4.8 passes (%5.1f%%; %d tests)\n", d, ppass[d], spass[d],
			spass[d] ? 100 * ppass[d] / spass[d] : 100, total[d]
		if (misses[d] != "")
			printf "         missed:%s\n", misses[d]
		sp += spass[d]; pp += ppass[d]
	}
	printf "all      %3d of the %3d tests stap 4.8 passes (%5.1f%%)\n", pp, sp, sp ? 100 * pp / sp : 100
	print passed + 0, failed + 0, skipped + 0 >"/dev/stderr"
}' "$tmp/verdicts" 2>"$tmp/counts"
read -r p f s <"$tmp/counts"
echo "stap-testsuite: $p passed, $f failed, $s known misses"
if [ "$all_dirs" -eq 0 ]; then
	mkdir -p "$build/results"
	echo "$p $f $s" >"$build/results/stap_testsuite"
fi
[ "$f" -eq 0 ]
