#!/bin/sh
# qa/translator/run.sh BUILD [DIR...] [--accept] - the translator goldens.
#
# Each case is qa/translator/DIR/NAME.stp.  An optional first line
#	# pmstap-args: -g foo bar
# gives extra options and script arguments (they follow the file name;
# pmstap takes options after the script too); @BIN@ there is BUILD/bin.
#
#   parseok  pmstap -p1 exits 0; its output, parsed again with -p1, prints
#            the same text; and it equals NAME.p1 when that file exists.
#   parseko  pmstap -p1 exits non-zero; stderr equals NAME.err exactly.
#   semok    pmstap -p2 exits 0; stdout equals NAME.p2 when that file exists,
#            a user probe's address masked (pc=.dynamic+ADDR).
#   semko    pmstap -p2 exits non-zero; stderr equals NAME.err exactly.
#   transko  pmstap -p3 exits non-zero; stderr equals NAME.err exactly.
#   transok  pmstap -p3 exits 0; the generated C equals NAME.p3, once what
#            depends on the machine is masked (STP_NCPUS, the build folder
#            and the offsets of the point texts that name it, the identity
#            of the files probed: build-id, size, time).
#   buildok  has its own runner, buildok/check.sh (it compiles and loads).
#
# A mismatch leaves the actual output in NAME.bad beside the case and shows
# a diff; a pass removes a stale NAME.bad.  The totals "PASSED FAILED
# SKIPPED" go to BUILD/results/translator.  --accept rewrites the expected
# files from the actual output (NAME.err; NAME.p1 for parseok; NAME.p2 for
# semok where one exists): for developers, after reading the diffs.
# Run from anywhere: paths in diagnostics are relative to the repository.

usage() {
	echo "usage: $0 BUILD [parseok|parseko|semok|semko|transok|transko...] [--accept]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
build=$1
shift
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
cd "$(dirname "$0")/../.." || exit 2

accept=false
dirs=
for a in "$@"; do
	case $a in
	--accept) accept=true ;;
	parseok|parseko|semok|semko|transok|transko) dirs="$dirs $a" ;;
	*) usage ;;
	esac
done
[ -n "$dirs" ] || dirs="parseok parseko semok semko transok transko"

pmstap=$build/bin/pmstap
# A folder per run: two runs at once must not read each other's outputs.
tmp=$build/tmp/qa-translator.$$
mkdir -p "$tmp" "$build/results"
trap 'rm -rf "$tmp"' EXIT
if [ ! -x "$pmstap" ]; then
	echo "qa/translator: $pmstap is not built" >&2
	exit 2
fi

passed=0 failed=0 skipped=0

# The extra arguments of case $1, from its "# pmstap-args:" line.
case_args() {
	sed -n '1s/^# *pmstap-args: *//p' "$1" | sed "s|@BIN@|$build/bin|g"
}

# fail CASE WHY EXPECTED-FILE ACTUAL-FILE: record, keep .bad, show a diff.
fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
	cp "$4" "${1%.stp}.bad"
	if [ -f "$3" ]; then
		diff -u "$3" "$4" | sed -n '3,40p'
	else
		sed -n '1,20p' "$4"
	fi
}

pass() {
	passed=$((passed + 1))
	rm -f "${1%.stp}.bad"
}

# compare CASE EXPECTED ACTUAL WHAT: pass, accept, or fail.
compare() {
	if $accept; then
		cp "$3" "$2"
		pass "$1"
	elif cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "$4 differs from ${2##*/}" "$2" "$3"
	fi
}

# run PASS CASE: pmstap -pPASS CASE ARGS; sets rc, out/err files.
run() {
	out=$tmp/out err=$tmp/err
	# shellcheck disable=SC2046 # the arguments are words, as on a command line
	"$pmstap" -p"$1" "$2" $(case_args "$2") >"$out" 2>"$err"
	rc=$?
}

check_parseok() {
	run 1 "$1"
	if [ $rc -ne 0 ]; then
		fail "$1" "pmstap -p1 exited with status $rc" /dev/null "$err"
		return
	fi
	cp "$out" "$tmp/first.stp"
	# shellcheck disable=SC2046
	if ! "$pmstap" -p1 "$tmp/first.stp" $(case_args "$1") >"$tmp/second" 2>"$tmp/err2"; then
		cat "$tmp/err2" >>"$tmp/first.stp"
		fail "$1" "the -p1 output does not parse again" /dev/null "$tmp/first.stp"
		return
	fi
	if ! cmp -s "$tmp/first.stp" "$tmp/second"; then
		fail "$1" "the -p1 output of the -p1 output differs (no round trip)" \
			"$tmp/first.stp" "$tmp/second"
		return
	fi
	if $accept || [ -f "${1%.stp}.p1" ]; then
		compare "$1" "${1%.stp}.p1" "$out" "the -p1 output"
	else
		pass "$1"
	fi
}

check_ko() {
	run "$2" "$1"
	if [ $rc -eq 0 ]; then
		cat "$out" "$err" >"$tmp/both"
		fail "$1" "pmstap -p$2 succeeded, but an error was expected" /dev/null "$tmp/both"
		return
	fi
	compare "$1" "${1%.stp}.err" "$err" "stderr"
}

check_semok() {
	run 2 "$1"
	if [ $rc -ne 0 ]; then
		fail "$1" "pmstap -p2 exited with status $rc" /dev/null "$err"
	elif [ -f "${1%.stp}.p2" ]; then
		# a user probe's address depends on the build of the file probed (libc)
		sed -E 's|/\* pc=([.a-z]+)\+0x[0-9a-f]+ \*/|/* pc=\1+ADDR */|' "$out" >"$tmp/masked"
		compare "$1" "${1%.stp}.p2" "$tmp/masked" "the -p2 output"
	else
		pass "$1"
	fi
}

# The generated C with what depends on the machine masked.
mask_p3() {
	sed -E -e 's/^#define STP_NCPUS [0-9]+$/#define STP_NCPUS N/' \
		-e "s|$build/bin|BIN|g" \
		-e '/BIN/,/stp_point_at/s/^(static const uint32_t stp_point_at\[STP_NPROBES\][^=]*= \{).*\};$/\1 OFFSETS };/' \
		-e 's/^(\t\{ "[^"]*", )"[0-9a-f]*", [0-9]+, [0-9]+ \},$/\1"BUILD-ID", SIZE, MTIME },/' \
		-e 's/^(\t\{ [0-9]+, probe_[0-9]+, STP_DYN_CODE, [0-9]+, "BIN[^"]*", )0x[0-9a-f]+, 0x[0-9a-f]+, 0x[0-9a-f]+,/\1OFFSET, LO, HI,/'
}

check_transok() {
	run 3 "$1"
	if [ $rc -ne 0 ]; then
		fail "$1" "pmstap -p3 exited with status $rc" /dev/null "$err"
		return
	fi
	mask_p3 <"$out" >"$tmp/masked"
	compare "$1" "${1%.stp}.p3" "$tmp/masked" "the -p3 output"
}

for dir in $dirs; do
	for c in qa/translator/"$dir"/*.stp; do
		[ -f "$c" ] || continue
		case $dir in
		parseok) check_parseok "$c" ;;
		parseko) check_ko "$c" 1 ;;
		semok) check_semok "$c" ;;
		semko) check_ko "$c" 2 ;;
		transok) check_transok "$c" ;;
		transko) check_ko "$c" 3 ;;
		esac
	done
done

echo "$passed $failed $skipped" >"$build/results/translator"
echo "qa/translator: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
