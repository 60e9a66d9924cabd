#!/bin/sh
# qa/translator/listing.sh BUILD [--accept] - pmstap -l / -L goldens.
#
# Each case is qa/translator/listing/NAME.cmd, lines of
#	# comment
#	needs: tracefs btf bpftool	skip unless this machine has them
#	args: -L 'lt.*'		pmstap's arguments, as shell words ($dir is the
#				case directory, for -I "$dir/tapset")
#	env: TMPDIR='/x y'	its environment's changes, as shell words
#	status: 1		the exit status expected (default 0)
#	expect: COMMAND		stdout must equal COMMAND's output (else NAME.out)
# stdout must equal NAME.out (or the expect: command's output), and stderr
# NAME.err (empty when there is no NAME.err).  A mismatch leaves NAME.bad
# (stdout, then stderr) and shows a diff.  The totals "PASSED FAILED
# SKIPPED" go to BUILD/results/listing.  --accept rewrites NAME.out and
# NAME.err (not for expect: cases) from the actual output.

usage() {
	echo "usage: $0 BUILD [--accept]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
build=$1
accept=false
[ "$2" = --accept ] && accept=true
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
cd "$(dirname "$0")/../.." || exit 2

pmstap=$build/bin/pmstap
tmp=$build/tmp/qa-listing
dir=qa/translator/listing
mkdir -p "$tmp" "$build/results"
if [ ! -x "$pmstap" ]; then
	echo "qa/translator/listing: $pmstap is not built" >&2
	exit 2
fi

passed=0 failed=0 skipped=0

field() {
	sed -n "s/^$2: *//p" "$1"
}

# What NEEDS lists that this machine lacks, or nothing.
missing() {
	for need in $1; do
		case $need in
		tracefs) [ -d /sys/kernel/tracing/events ] || echo "no tracefs at /sys/kernel/tracing" ;;
		btf) [ -r /sys/kernel/btf/vmlinux ] || echo "no kernel BTF" ;;
		bpftool) command -v bpftool >/dev/null || echo "no bpftool" ;;
		*) echo "unknown need '$need'" ;;
		esac
	done
}

fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
	cat "$tmp/out" "$tmp/err" >"${1%.cmd}.bad"
	[ -n "$3" ] && diff -u "$3" "$4" | sed -n '3,40p'
}

check() {
	c=$1 name=${1%.cmd}
	why=$(missing "$(field "$c" needs)")
	if [ -n "$why" ]; then
		skipped=$((skipped + 1))
		echo "SKIP ${c##*/}: $why"
		return
	fi
	# shellcheck disable=SC2046 # the args line is shell words
	eval "set -- $(field "$c" args)"
	eval "env $(field "$c" env) \"\$pmstap\" \"\$@\"" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	want=$(field "$c" status)
	expect=$(field "$c" expect)
	if [ -n "$expect" ]; then
		sh -c "$expect" >"$tmp/want"
	elif $accept; then
		cp "$tmp/out" "$name.out"
		if [ -s "$tmp/err" ]; then cp "$tmp/err" "$name.err"; else rm -f "$name.err"; fi
		cp "$tmp/out" "$tmp/want"
	else
		cp "$name.out" "$tmp/want" 2>/dev/null || : >"$tmp/want"
	fi
	if [ -f "$name.err" ]; then cp "$name.err" "$tmp/want-err"; else : >"$tmp/want-err"; fi
	if [ "$rc" -ne "${want:-0}" ]; then
		fail "$c" "exit status $rc, expected ${want:-0}" "$tmp/want-err" "$tmp/err"
	elif ! cmp -s "$tmp/want" "$tmp/out"; then
		fail "$c" "stdout differs" "$tmp/want" "$tmp/out"
	elif ! cmp -s "$tmp/want-err" "$tmp/err"; then
		fail "$c" "stderr differs" "$tmp/want-err" "$tmp/err"
	else
		passed=$((passed + 1))
		rm -f "$name.bad"
	fi
}

for c in "$dir"/*.cmd; do
	check "$c"
done

echo "$passed $failed $skipped" >"$build/results/listing"
echo "qa/translator/listing: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
