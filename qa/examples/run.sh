#!/bin/sh
# qa/examples/run.sh BUILD - pass 1 over SystemTap's 201 example scripts.
# qa/examples/run.sh BUILD --run - run those that elaborate for real (not
# part of make check: it takes minutes; see "--run:" below).
# qa/examples/run.sh BUILD --run-kernel - the same with --runtime=kernel,
# in the qa guest (see "--run-kernel:" below).
# qa/examples/run.sh BUILD --both - the two runs' results side by side.
#
# The examples come from Debian's systemtap-doc, extracted into
# BUILD/systemtap-doc (downloaded with apt-get only when not there yet).
# Every example .stp is run the way its .meta file's "test_check:" line
# runs it, with -pN dropped, from the script's own directory (so -Itapset/
# works): $$ becomes this shell's pid (as the shell would expand it),
# `which stap` the pmstap binary, and any other `command` nothing: pass 1
# runs no commands from .meta files (--run does, below).  (The one of a
# test_check line, hw_watch_addr's lookup of vm_dirty_ratio in
# /proc/kallsyms, finds nothing on the kernels here either, which leaves
# its address argument "0x".)
# Scripts without a .meta, or whose test_check is not a stap command, run
# with no options or arguments, as "stap -p1 FILE" would.
#
# Checked, for each script:
#   - pmstap -p1 parses it and the output parses again to the same text;
#   - or, for the scripts in qa/examples/expected-refusals, pmstap -p1
#     refuses it with the error text recorded there (real stap 4.8
#     refuses exactly these).
# Also reported, never failed: how many pass -p2 (elaboration needs the
# tapsets); the first error of each that does not goes to
# BUILD/examples-p2.txt.  Totals "PASSED FAILED SKIPPED" go to
# BUILD/results/examples.

set -f
mode=check
case $#:$2 in
1:) ;;
4:--run-kernel-one) mode=run-kernel-one; rundir=$3 ;;
2:--run) mode=run ;;
2:--run-kernel) mode=run-kernel ;;
2:--both) mode=both ;;
3:--run-one) mode=run-one ;;
*) echo "usage: $0 BUILD [--run | --run-kernel | --both]" >&2; exit 2 ;;
esac
build=$1
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
here=$(cd "$(dirname "$0")" && pwd)
refusals=$here/expected-refusals
pmstap=$build/bin/pmstap
tmp=$build/tmp/qa-examples
doc=$build/systemtap-doc
examples=$doc/usr/share/systemtap/examples
mkdir -p "$tmp" "$build/results"

if [ ! -x "$pmstap" ]; then
	echo "qa/examples: $pmstap is not built" >&2
	exit 2
fi

fetch_examples() {
	[ -d "$examples" ] && return 0
	echo "qa/examples: fetching systemtap-doc into $doc"
	find "$tmp" -maxdepth 1 -name 'systemtap-doc_*.deb' -delete
	# stale package lists (a machine set up long ago) need an update first
	(cd "$tmp" && { apt-get download systemtap-doc >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  apt-get download systemtap-doc >/dev/null 2>&1; }; }) || return 1
	deb=$(find "$tmp" -maxdepth 1 -name 'systemtap-doc_*.deb' | head -n 1)
	[ -n "$deb" ] && dpkg -x "$deb" "$doc"
}

if ! fetch_examples || [ ! -d "$examples" ]; then
	echo "qa/examples: no systemtap-doc examples (apt-get download systemtap-doc failed)" >&2
	echo "0 0 1" >"$build/results/examples"
	exit 1
fi

# The test_check command of script $1 (a path under $examples), or empty.
test_check() {
	meta=${1%.stp}.meta
	[ -f "$meta" ] || return 0
	sed -n 's/^test_check: *//p' "$meta" | head -n 1 | grep '^stap ' | sed 's/^stap //'
}

# The words of a test_check line, quoted as the shell would, with "-pN"
# and backquoted commands dropped (-pN alone, or inside a cluster such as
# -gp4; with $keep_p set, both kept and the commands run), into
# "$@"-ready text.
# Sets $words to a string safe to eval.
expand_words() {
	# shellcheck disable=SC2016 # the backquotes are text to remove
	line=$(printf '%s' "$1" | sed -e "s|\`which stap\`|$pmstap|g")
	[ -n "$keep_p" ] || line=$(printf '%s' "$line" | sed -e 's/`[^`]*`//g')
	# eval expands $$ (outside single quotes) to this shell's pid
	eval "set -- $line"
	words=
	for w in "$@"; do
		case $w in
		-p[0-9]) [ -n "$keep_p" ] || continue ;;
		-[a-zA-Z]*p[0-9]) [ -n "$keep_p" ] || w=$(printf '%s' "$w" | sed 's/p[0-9]//') ;;
		esac
		words="$words '$(printf '%s' "$w" | sed "s/'/'\\\\''/g")'"
	done
}

# Like test_check, the test_installcheck command of script $1 when it is a
# stap command.
test_installcheck() {
	meta=${1%.stp}.meta
	[ -f "$meta" ] || return 0
	sed -n 's/^test_installcheck: *//p' "$meta" | head -n 1 | grep '^stap ' | sed 's/^stap //'
}

# The expected refusal line for script $1 (relative path), if any.
refusal_of() {
	grep -v '^#' "$refusals" | awk -F' *\\| *' -v s="$1" '$1 == s { print $2 }'
}

# --run: run every example that elaborates for real, as its .meta file's
# test_installcheck line runs it (that line's options, arguments and -c
# command; its backquoted commands run by the shell, as stap's own
# harness runs that line: mbrwatch's finds a disk, hw_watch_addr's an
# address in /proc/kallsyms; -pN kept, so the
# interactive games stop after pass 4 as their line says), with -T 2 added
# when the line has no -T, under "timeout 20", with -v to see the last pass
# reached.  Scripts whose line is not a stap command run with their
# test_check words instead.  The build cache is BUILD/tmp/qa-examples-run/
# cache, emptied first, so passes 3 and 4 really run.  With
# EXAMPLES_LOCK=FILE (a machine where BPF loads take turns), each script
# is first built (-p4, no lock, no time limit but 300 s), then run under
# flock FILE.  EXAMPLES_ONLY=REGEX runs again only the scripts whose path
# (such as process/strace.stp) it matches, in both modes; the report
# keeps the last run's results of the others.

rundir=${rundir:-$build/tmp/qa-examples-run}

# run_words SCRIPT [OPTION]: $words, the command line of SCRIPT's --run
# (OPTION first), $dir its directory and $p4 set when the line stops at
# pass 4; false when SCRIPT does not elaborate (pass 2) with them.
run_words() {
	rel=$1 dir=$examples/${1%/*} base=${1##*/}
	expand_words "$(test_check "$examples/$rel")"
	case " $words " in *"'$base'"*) ;; *) words=" '$base'$words" ;; esac
	[ -n "${2:-}" ] && words=" '$2'$words"
	(cd "$dir" && eval "\"\$pmstap\" -p2 $words" >/dev/null 2>&1) || return 1
	cmd=$(test_installcheck "$examples/$rel")
	if [ -n "$cmd" ]; then
		keep_p=1
		expand_words "$cmd"
		keep_p=
		case " $words " in *"'$base'"*) ;; *) words=" '$base'$words" ;; esac
		[ -n "${2:-}" ] && words=" '$2'$words"
	fi
	case " $words " in *" '-T' "*) ;; *) words="$words '-T' '2'" ;; esac
	p4=
	case " $words " in *" '-p4' "*) p4=1 ;; esac
	return 0
}

# result SCRIPT STATUS LAST MSG: one line "script|class|reason|command"
# into $rundir/res for a run of $words that exited with STATUS after
# pass LAST, MSG its first error.
result() {
	rc=$2 last=$3 msg=$4
	[ -n "$msg" ] || msg="exit status $rc"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		class=timeout msg="still running after $run_limit s (last: pass ${last:-none})"
	elif [ "$rc" -eq 0 ]; then
		class=runs msg=
		[ -n "$p4" ] && class=compiles-p4
	else
		case $last in
		2) class="refused-p3" ;;
		3) class="refused-p4" ;;
		4|5) class=run-failed ;;
		*) class=other ;;
		esac
	fi
	printf '%s|%s|%s|pmstap%s\n' "$1" "$class" "$(printf '%s' "$msg" | tr '|' '/')" \
		"$(printf '%s' "$words" | tr -d "'")" >"$rundir/res/$(printf '%s' "$1" | tr / _)"
}

# The last pass a -v run's stderr in file $1 reached, and its first error
# (else its first line that is not one of -v's notes).
last_pass() { grep -o '^Pass [1-5]:' "$1" | tail -n 1 | cut -c6; }
first_error() {
	grep -v '^Pass [1-5]:' "$1" | grep -m 1 -i 'error:' ||
		grep -v -e '^Pass [1-5]:' -e '^pmstap: note: ' -e '^pmstap: option .* has no effect' "$1" |
		grep -m 1 .
}
run_limit=20

# run_one SCRIPT: its result line.
run_one() {
	name=$(printf '%s' "$1" | tr / _)
	wd=$rundir/w/$name
	mkdir -p "$wd" "$rundir/res"
	if ! run_words "$1"; then
		echo "$1|not-p2||" >"$rundir/res/$name"
		return
	fi
	lock=
	if [ -n "${EXAMPLES_LOCK:-}" ] && [ -z "$p4" ]; then
		(cd "$dir" && eval "timeout 300 \"\$pmstap\" -p4 $words" </dev/null >/dev/null 2>&1)
		lock="flock -o $EXAMPLES_LOCK"
	fi
	(cd "$dir" && eval "$lock timeout $run_limit \"\$pmstap\" -v $words" \
		</dev/null >"$wd/out" 2>"$wd/err")
	rc=$?
	result "$1" $rc "$(last_pass "$wd/err")" "$(first_error "$wd/err")"
}

if [ "$mode" = run-one ]; then
	PMSTAP_CACHE=$rundir/cache
	export PMSTAP_CACHE
	run_one "$3"
	exit 0
fi

# report FILE: the per-script results of $rundir/res into FILE, and the
# summary with the reasons counted.
report() {
	report=$1
	: >"$report"
	find "$rundir/res" -type f -exec cat {} + | LC_ALL=C sort | awk -F'|' -v report="$report" '
	$2 == "not-p2" { next }
	{
		n++; count[$2]++
		if ($2 == "refused-p3" && $3 ~ /is not available on this kernel/)
			nokernel++
		if ($2 == "runs" || $2 == "compiles-p4")
			printf "%s: %s\n    %s\n", $1, $2, $4 >report
		else
			printf "%s: %s: %s\n    %s\n", $1, $2, $3, $4 >report
		if ($2 != "runs" && $2 != "compiles-p4" && $2 != "timeout") {
			m = $3
			sub(/^[^ :]*:[0-9]+:[0-9]+: /, "", m)
			sub(/^(pmstap: )?(error|ERROR): /, "", m)
			sub(/ \(probe .*$/, "", m)
			sub(/ at [^ ]*:[0-9]+:[0-9]+$/, "", m)
			gsub(/0x[0-9a-f]+/, "0x...", m)
			gsub(/'\''[^'\'']*'\''/, "'\''...'\''", m)
			key = $2 ": " m
			if (!(key in reason))
				order[++nr] = key
			reason[key]++
		}
	}
	END {
		printf "qa/examples --run: %d elaborate; %d run unchanged (exit 0); " \
			"%d compile with -p4 as their .meta says; %d refused at pass 3 " \
			"(%d of them: probe not available on this kernel); " \
			"%d refused at pass 4; %d fail to attach or run; %d time out; %d other\n",
			n, count["runs"], count["compiles-p4"], count["refused-p3"], nokernel,
			count["refused-p4"], count["run-failed"], count["timeout"], count["other"]
		print "reasons (count, class: first error with quoted names elided):"
		for (i = 1; i <= nr; i++)
			printf "%4d  %s\n", reason[order[i]], order[i] | "sort -k1,1nr -s"
		close("sort -k1,1nr -s")
		printf "per-script results in %s\n", report
	}'
}

# both: once both reports exist, BUILD/examples-run-both.txt puts each
# script's result on this host (--run, the BPF runtime) beside its result
# in the qa guest (--run-kernel), and counts the scripts that run
# unchanged on either: what this machine runs of SystemTap's examples.
both() {
	host=$build/examples-run.txt guest=$build/examples-run-kernel.txt
	[ -f "$host" ] && [ -f "$guest" ] || return 0
	awk '
	FNR == 1 { side++ }
	/^[^ ].*\.stp: / {
		s = $1; sub(/:$/, "", s)
		c = $2; sub(/:$/, "", c)
		if (!(s in seen)) { seen[s] = 1; order[++n] = s }
		res[s, side] = c
	}
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]; h = res[s, 1]; g = res[s, 2]
			if (h == "") h = "not-p2"
			if (g == "") g = "not-p2"
			if (h == "runs" || g == "runs") runs++
			else if (h == "compiles-p4" || g == "compiles-p4") p4++
			if (h == "runs") host++
			if (g == "runs" && h != "runs") guest++
			printf "%s: host %s, guest %s\n", s, h, g
		}
		printf "qa/examples: %d elaborate on this host or for the guest; %d run unchanged " \
			"(%d on this host with the BPF runtime, %d more only with --runtime=kernel " \
			"in the qa guest); %d more compile with -p4 as their .meta says\n",
			n, runs, host, guest, p4 > "/dev/stderr"
	}' "$host" "$guest" 2>&1 >"$build/examples-run-both.txt" |
		tee -a "$build/examples-run-both.txt"
}

if [ "$mode" = both ]; then
	both
	exit 0
fi

# A fresh run, or with EXAMPLES_ONLY a new result for the scripts it
# names, the others' kept from the last run (the report covers all).
fresh_rundir() {
	if [ -n "${EXAMPLES_ONLY:-}" ] && [ -d "$rundir/res" ]; then
		rm -rf "$rundir/jobs" "$rundir"/lines*
		return
	fi
	rm -rf "$rundir"
}

if [ "$mode" = run ]; then
	fresh_rundir
	mkdir -p "$rundir/res" "$rundir/w" "$rundir/cache"
	listed=$(grep -v '^#' "$refusals" | awk -F' *\\| *' 'NF > 1 { print $1 }')
	(cd "$examples" && find . -name '*.stp' | sed 's|^\./||' | LC_ALL=C sort) |
		grep -vxF "$listed" | grep -E "${EXAMPLES_ONLY:-.}" |
		xargs -P 2 -n 1 sh "$here/run.sh" "$build" --run-one
	report "$build/examples-run.txt"
	both
	exit 0
fi

# --run-kernel: the same runs with --runtime=kernel in the qa guest
# (Debian's 6.1 kernel under qemu, qa/guest/), in one boot: the scripts
# that elaborate for the guest's kernel (PMSTAP_SYSROOT, its snapshot) are
# compiled here by qa/guest/run-jobs.sh and run there with -T 2 under
# "timeout 60" (module loads are slow under emulation).  The report goes
# to BUILD/examples-run-kernel.txt.  Compiling about 130 modules takes
# half an hour on 2 cores; the build cache is the guest's, kept.
if [ "$mode" = run-kernel-one ]; then	# (internal) one script's line of the job
	name=$(printf '%s' "$4" | tr / _)
	if run_words "$4" --runtime=kernel; then
		# a .meta line's $$ (psig's -x $$) is this shell's pid here: in
		# the guest, the job's shell's
		words=$(printf '%s' "$words" | sed "s/'$$'/'@PID@'/g")
		printf "r '%s' '%s' %s\n" "$4" "$dir" "$words"
		printf '%s\n%s\n' "$p4" "$words" >"$rundir/words/$name"	# for its result
	else
		echo "$4|not-p2||" >"$rundir/res/$name"
	fi
	exit 0
fi
if [ "$mode" = run-kernel ]; then
	PMSTAP_SYSROOT=$("$here/../guest/sysroot.sh") || {
		echo "qa/examples: no snapshot of the qa guest's kernel (qa/guest/sysroot.sh)" >&2
		exit 2
	}
	export PMSTAP_SYSROOT BUILD=$build
	rundir=$build/tmp/qa-examples-kernel
	fresh_rundir
	mkdir -p "$rundir/res" "$rundir/jobs" "$rundir/words"
	listed=$(grep -v '^#' "$refusals" | awk -F' *\\| *' 'NF > 1 { print $1 }')
	(cd "$examples" && find . -name '*.stp' | sed 's|^\./||' | LC_ALL=C sort) |
		grep -vxF "$listed" | grep -E "${EXAMPLES_ONLY:-.}" |
		xargs -P 2 -n 1 sh "$here/run.sh" "$build" --run-kernel-one "$rundir" >"$rundir/lines"
	# four jobs, so that run-jobs.sh compiles two at a time here
	split -n l/4 -d -a 1 "$rundir/lines" "$rundir/lines."
	jobs=
	for i in 0 1 2 3; do	# (globbing is off: set -f)
		part=$rundir/lines.$i job=$rundir/jobs/examples$i.sh
		[ -s "$part" ] || continue
		jobs="$jobs $job"
		cat >"$job" <<'END'
# written by qa/examples/run.sh --run-kernel: r SCRIPT DIR WORDS... runs one
# example, then prints "SCRIPT|STATUS|LAST PASS|FIRST ERROR"
r() {
	s=$1 d=$2
	shift 2
	n=$#	# @PID@: this shell's pid, as $$ of the .meta line
	while [ "$n" -gt 0 ]; do
		a=$1
		shift
		[ "$a" = @PID@ ] && a=$$
		set -- "$@" "$a"
		n=$((n - 1))
	done
	if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
		(cd "$d" && "$PMSTAP" "$@" </dev/null)
		return
	fi
	(cd "$d" && timeout 60 "$PMSTAP" -v "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
	echo "$s|$rc|$(last_pass "$tmp/err")|$(first_error "$tmp/err" | tr '|\n' '/ ')"
}
END
		# the same reading of the run's stderr as --run's
		sed -n -e '/^last_pass() {/p' -e '/^first_error() {/,/^}/p' "$here/run.sh" >>"$job"
		cat "$part" >>"$job"
	done
	n=$(wc -l <"$rundir/lines")
	echo "qa/examples: $n examples elaborate with --runtime=kernel; compiling here, then one guest boot" >&2
	GUEST_JOB_TIMEOUT=${GUEST_JOB_TIMEOUT:-3000} GUEST_TIMEOUT=${GUEST_TIMEOUT:-7200} \
		"$here/../guest/run-jobs.sh" $jobs >"$rundir/run-jobs.log" 2>&1
	run_limit=60
	for i in 0 1 2 3; do
		part=$rundir/lines.$i out=$build/guest/results/examples$i.out
		[ -s "$part" ] || continue
		[ -s "$out" ] || {
			echo "qa/examples: the guest ran no examples of $part (see $rundir/run-jobs.log)" >&2
			continue
		}
		while IFS='|' read -r rel rc last msg; do
			[ -n "$rc" ] || continue
			{ IFS= read -r p4; IFS= read -r words; } <"$rundir/words/$(printf '%s' "$rel" | tr / _)"
			result "$rel" "$rc" "$last" "$msg"
		done <"$out"
	done
	report "$build/examples-run-kernel.txt"
	both
	exit 0
fi

passed=0 failed=0 parsed=0 refused=0 p2_passed=0 p2_failed=0
: >"$build/examples-p2.txt"
listed=$(grep -v '^#' "$refusals" | awk -F' *\\| *' 'NF > 1 { print $1 }')

fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
	[ -n "$3" ] && sed -n '1,6p' "$3"
}

# check SCRIPT (relative to $examples): pass 1, then the report-only pass 2.
check() {
	rel=$1 dir=$examples/${1%/*} base=${1##*/}
	expand_words "$(test_check "$examples/$rel")"
	case " $words " in *"'$base'"*) ;; *) words=" '$base'$words" ;; esac
	refusal=$(refusal_of "$rel")
	(cd "$dir" && eval "\"\$pmstap\" -p1 $words" >"$tmp/out.stp" 2>"$tmp/err")
	rc=$?
	if [ -n "$refusal" ]; then
		if [ $rc -eq 0 ]; then
			fail "$rel" "parsed, but stap refuses it: $refusal"
		elif ! grep -qF -- "$refusal" "$tmp/err"; then
			fail "$rel" "refused without the expected error '$refusal'" "$tmp/err"
		else
			passed=$((passed + 1)) refused=$((refused + 1))
		fi
		return
	fi
	if [ $rc -ne 0 ]; then
		fail "$rel" "pmstap -p1 failed" "$tmp/err"
		return
	fi
	if ! (cd "$dir" && eval "\"\$pmstap\" -p1 \"\$tmp/out.stp\" $(echo "$words" | sed "s|'$base'||")" \
		>"$tmp/again.stp" 2>"$tmp/err2"); then
		fail "$rel" "the -p1 output does not parse again" "$tmp/err2"
		return
	fi
	if ! cmp -s "$tmp/out.stp" "$tmp/again.stp"; then
		diff -u "$tmp/out.stp" "$tmp/again.stp" >"$tmp/diff"
		fail "$rel" "the -p1 output of the -p1 output differs (no round trip)" "$tmp/diff"
		return
	fi
	passed=$((passed + 1)) parsed=$((parsed + 1))
	if (cd "$dir" && eval "\"\$pmstap\" -p2 $words" >/dev/null 2>"$tmp/err"); then
		p2_passed=$((p2_passed + 1))
	else
		p2_failed=$((p2_failed + 1))
		printf '%s: %s\n' "$rel" "$(grep -m 1 'error' "$tmp/err" || head -n 1 "$tmp/err")" \
			>>"$build/examples-p2.txt"
	fi
}

total=0
for s in $(cd "$examples" && find . -name '*.stp' | sed 's|^\./||' | LC_ALL=C sort); do
	total=$((total + 1))
	check "$s"
done

# A listed refusal whose script is gone is a stale list.
for r in $listed; do
	[ -f "$examples/$r" ] || fail "$r" "listed in expected-refusals, but there is no such example"
done

nref=$(printf '%s\n' "$listed" | grep -c .)
echo "$passed $failed 0" >"$build/results/examples"
echo "qa/examples: $total scripts: $parsed of $((total - nref)) parse and round-trip, $refused of $nref refused as stap refuses them; $failed failed"
echo "qa/examples: -p2 (report only): $p2_passed of $((p2_passed + p2_failed)) elaborate; first errors in $build/examples-p2.txt"
[ $failed -eq 0 ]
