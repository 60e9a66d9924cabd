#!/bin/bash
# qa/guest/run.sh - run one command line in the qa guest (Debian's own
# kernel under qemu, with modules and kprobes), for a user or a test that
# wants the kernel runtime on a machine whose kernel cannot load modules.
#
#	qa/guest/run.sh [--] pmstap ARGS...
#	qa/guest/run.sh [--] COMMAND ARGS...
#
# "pmstap" is this tree's (build/bin/pmstap).  Its scripts are compiled
# here first, for the guest's kernel (as run-jobs.sh does for the QA's
# jobs), so the guest compiles nothing; then the guest boots and runs the
# command in the current directory (the guest sees this machine's files,
# read-only: what the command writes there is gone with the guest).
# Its stdout comes out on stdout, its stderr on stderr, and run.sh exits
# with its exit status (124 when GUEST_JOB_TIMEOUT, default 120 s, ran
# out); 2 with a line on stderr when the guest could not run it.
#
#	qa/guest/run.sh pmstap --runtime=kernel -e 'probe begin { println(42); exit() }'
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
case $BUILD in /*) ;; *) BUILD=$(cd "$BUILD" && pwd) ;; esac
export BUILD
[ "${1:-}" = -- ] && shift
if [ $# -eq 0 ]; then
	echo "usage: qa/guest/run.sh [--] pmstap ARGS... | COMMAND ARGS..." >&2
	exit 2
fi
"$here/boot.sh" --check 2>&1 | sed 's/^/guest: /' >&2
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 2

# The job: the command in this directory; pmstap is whatever $PMSTAP is
# (the compiler here, the real one there).  GUEST_COMPILE_ONLY: the
# compile here runs pmstap's command line only.
work=$BUILD/guest/cmdline
mkdir -p "$work"
job=$work/cmdline.sh
{
	printf 'cd %q || exit 2\n' "$PWD"
	if [ "$1" = pmstap ]; then
		shift
		printf '"$PMSTAP"'
	else
		printf '[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0\n'
	fi
	printf ' %q' "$@"
	printf '\n'
} >"$job"

res=$BUILD/guest/results/cmdline
exec 9>"$BUILD/guest/cmdline.lock"
flock 9		# one run at a time: they share $BUILD/guest/xfer
"$here/run-jobs.sh" "$job" >"$work/run-jobs.log" 2>&1
if [ ! -s "$res.rc" ]; then
	echo "guest: the command did not run (see $work/run-jobs.log and" \
		"$BUILD/guest/xfer/console.log)" >&2
	exit 2
fi
cat "$res.out"
cat "$res.err" >&2
exit "$(cat "$res.rc")"
