#!/bin/bash
# qa/guest/check.sh BUILD - make check-guest: every guest job in one boot of
# the qa guest (compiled on this machine first, see run-jobs.sh), then the
# tests of group "guest" against their results.  Writes "P F S" to
# BUILD/results/guest.  Installs nothing: the guest's packages come from
# mk/deps.sh (make deps); without them the tests do not run and say why.
#
# It never hangs make check, and a busy machine does not fail it: the
# guest run (the kernel snapshot, compiling here, the boot and every job)
# is killed when it stalls, when for GUEST_CHECK_STALL seconds (default
# 300) no job finished compiling here and the guest wrote nothing on its
# console; every test without a result then fails.  Each job has
# GUEST_JOB_TIMEOUT seconds (240 here, twice run.sh's: the emulated guest
# runs a job's dozen pmstap runs in 100 s on a quiet host, and in more
# beside the host's other work) to compile and as much to run; a job
# that hangs the guest's kernel is killed with the guest after
# GUEST_HANG_GRACE seconds more, and the jobs after it run in a new boot
# (run-jobs.sh).
here=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$here/../../build}" && pwd)
export BUILD
stall=${GUEST_CHECK_STALL:-300}
export GUEST_JOB_TIMEOUT=${GUEST_JOB_TIMEOUT:-240}
mkdir -p "$BUILD/results"

# What the run has done so far: compile logs and console bytes.
progress()
{
	cat "$BUILD"/guest/results/*.compile "$BUILD/guest/xfer/console.log" 2>/dev/null | wc -c
}

if "$here/boot.sh" --check; then
	start=$(date +%s)
	njobs=$(ls "$here"/jobs/*.sh | wc -l)
	# the boot's own limit only backs the watchdog up
	GUEST_TIMEOUT=$((120 * njobs + 120)) setsid "$here/run-jobs.sh" "$here"/jobs/*.sh >/dev/null &
	pid=$! last=-1 idle=0 stalled=
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		now=$(progress)
		if [ "$now" != "$last" ]; then
			last=$now idle=0
		elif [ $((idle += 5)) -ge "$stall" ]; then
			stalled=1
			kill -TERM -- "-$pid" 2>/dev/null
			sleep 10
			kill -KILL -- "-$pid" 2>/dev/null
			break
		fi
	done
	wait "$pid"
	rc=$?
	secs=$(($(date +%s) - start))
	if [ -n "$stalled" ]; then
		echo "check-guest: error: the guest run made no progress for $stall s and was killed (GUEST_CHECK_STALL); see $BUILD/guest/xfer/console.log" >&2
	elif [ $rc = 125 ]; then
		echo "check-guest: error: a job hung the guest (named above); the jobs after it ran in another boot; $secs s in all" >&2
	elif [ $rc != 0 ]; then
		echo "check-guest: error: the guest run failed (status $rc); see $BUILD/guest/xfer/console.log" >&2
	else
		echo "check-guest: compiled here, then one guest boot ran $njobs jobs; $secs s in all"
	fi
	for f in "$BUILD"/guest/results/*.hung; do
		[ -e "$f" ] && echo "check-guest: warning: $(sed 's/^guest: //' "$f")" >&2
	done
fi
# the tests use the results of this run: none boots the guest again
GUEST_NO_BOOT=1 QA_RESULTS=guest exec "$here/../check" -g guest
