#!/bin/sh
# qa/translator/buildok/check.sh BUILD [NAME...] - scripts that must build and load.
#
# And errors/NAME.stp, scripts pass 3 must refuse: pmstap -p3 exits
# non-zero and its stderr equals errors/NAME.err exactly (constructs that
# cannot run where their probe runs).  A mismatch leaves NAME.bad.
#
# Each qa/translator/buildok/NAME.stp (an optional first line
# "# pmstap-args: ..." gives options) must pass pmstap -p4; then, as root
# with bpftool, every BPF program of its script.bpf.o must pass the
# kernel's verifier (bpftool prog loadall, pinned under /sys/fs/bpf and
# removed), and every symbol script.so needs must be one pmstap exports.
# A failure shows pmstap's or the verifier's last lines.  The totals
# "PASSED FAILED SKIPPED" go to BUILD/results/buildok.

[ $# -ge 1 ] || { echo "usage: $0 BUILD [NAME...]" >&2; exit 2; }
build=$1
shift
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
cd "$(dirname "$0")" || exit 2

pmstap=$build/bin/pmstap
tmp=$build/tmp/buildok
mkdir -p "$tmp" "$build/results"
[ -x "$pmstap" ] || { echo "buildok: $pmstap is not built" >&2; exit 2; }

verify=false
if [ "$(id -u)" = 0 ] && command -v bpftool >/dev/null && [ -d /sys/fs/bpf ]; then
	verify=true
else
	echo "buildok: not root or no bpftool: checking -p4 only"
fi
libs=$(ldd "$pmstap" | awk '$3 ~ /^\// {print $3}')
# shellcheck disable=SC2086
nm -D --defined-only "$pmstap" $libs 2>/dev/null | awk 'NF == 3 {print $3}' | sed 's/@.*//' |
	sort -u >"$tmp/exported"

passed=0 failed=0 skipped=0

fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
	sed -n '1,25p' "$3"
}

# Every symbol script.so needs is pmstap's or one of its libraries'.
check_so() {
	nm -D --undefined-only "$1" | awk '$1 == "U" {print $2}' | sed 's/@.*//' | sort -u |
		comm -23 - "$tmp/exported" >"$tmp/missing"
	! grep -q . "$tmp/missing"
}

names=$*
[ -n "$names" ] || names=$(ls *.stp | sed 's/\.stp$//')
for name in $names; do
	script=$name.stp
	args=$(sed -n '1s/^# *pmstap-args: *//p' "$script")
	# shellcheck disable=SC2086
	if ! "$pmstap" -p4 $args "$script" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		fail "$name" "pmstap -p4 failed" "$tmp/$name.err"
		continue
	fi
	obj=$(sed -n '1p' "$tmp/$name.out")
	so=$(sed -n '2p' "$tmp/$name.out")
	if ! check_so "$so"; then
		fail "$name" "script.so needs symbols pmstap does not export" "$tmp/missing"
		continue
	fi
	if $verify; then
		pin=/sys/fs/bpf/pmstap-buildok-$$
		if ! bpftool prog loadall "$obj" "$pin" >"$tmp/$name.verifier" 2>&1; then
			rm -rf "$pin"
			tail -n 25 "$tmp/$name.verifier" >"$tmp/$name.tail"
			fail "$name" "the verifier refused it" "$tmp/$name.tail"
			continue
		fi
		rm -rf "$pin"
	fi
	passed=$((passed + 1))
done

# The refusals, unless names were given.
for script in $([ -n "$*" ] || ls errors/*.stp 2>/dev/null); do
	case_=${script%.stp}
	if (cd errors && "$pmstap" -p3 "${script#errors/}") >/dev/null 2>"$tmp/refusal.err"; then
		echo "$case_ exited 0" >"$tmp/refusal.why"
		fail "$case_" "pmstap -p3 accepted it" "$tmp/refusal.why"
	elif ! cmp -s "$case_.err" "$tmp/refusal.err"; then
		cp "$tmp/refusal.err" "$case_.bad"
		diff -u "$case_.err" "$tmp/refusal.err" >"$tmp/refusal.diff"
		fail "$case_" "not the expected diagnostics" "$tmp/refusal.diff"
	else
		rm -f "$case_.bad"
		passed=$((passed + 1))
	fi
done

echo "buildok: $passed passed, $failed failed, $skipped skipped"
echo "$passed $failed $skipped" >"$build/results/buildok"
[ "$failed" -eq 0 ]
