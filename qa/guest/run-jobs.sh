#!/bin/bash
# qa/guest/run-jobs.sh - run QA jobs inside one boot of the guest.
#
#	qa/guest/run-jobs.sh JOB.sh...
#
# A job is a bash script (qa/guest/jobs/NNN.sh) that runs pmstap and its
# workloads; in the guest it runs from the source tree, with REPO, BUILD,
# PMSTAP, QA_BIN, tmp (the same path on both sides) and a PMSTAP_CACHE
# shared with this machine.  Each job first runs here with GUEST_COMPILE_ONLY
# set and a PMSTAP that compiles for the guest's kernel (compile.sh,
# sysroot.sh): the guest then finds every build and compiles nothing.  A
# job must do nothing else here but write its scripts (guard anything
# more with GUEST_COMPILE_ONLY).  Each job's stdout, stderr, exit status
# and seconds land in $BUILD/guest/results/NNN.{out,err,rc,secs}, the host
# compile's log in NNN.compile.
#
# A job that hangs the guest (its kernel stops: a deadlock in a probe, an
# RCU stall) cannot end the boot itself, and the console may go on
# printing the kernel's complaints: when a job has run GUEST_JOB_TIMEOUT
# + GUEST_HANG_GRACE (120) seconds, the guest's own timeout with time to
# spare, this machine kills qemu, prints what the guest's kernel said,
# keeps the boot's console (NNN.console) and boots again for the jobs
# left, this one first: a vCPU of an emulated guest on a busy machine
# can stop taking timer interrupts (RCU stalls).  The run again is the
# job's result, and NNN.hung says it hung once (check.sh reports it); a
# job that hangs the guest twice fails (NNN.rc 125, the reason in
# NNN.err, the second console in NNN.console2).  At most
# GUEST_HANG_BOOTS (4) boots.  Exit status: the last boot's (boot.sh),
# 125 when a job hung twice.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
case $BUILD in /*) ;; *) BUILD=$(cd "$BUILD" && pwd) ;; esac
export BUILD
xfer=$BUILD/guest/xfer
results=$BUILD/guest/results
[ $# -gt 0 ] || { echo "usage: qa/guest/run-jobs.sh JOB.sh..." >&2; exit 2; }
mkdir -p "$xfer/cache" "$results"
# one run at a time in a build tree: they share $xfer (a test run alone
# beside make check-guest or the examples' guest run emptied its jobs)
exec 8>"$BUILD/guest/run-jobs.lock"
flock 8
rm -rf "$xfer/jobs" "$xfer/out"
mkdir -p "$xfer/jobs" "$xfer/out"
# the host's compile runs each job from qa/: a relative path would not hold there
jobs_abs=()
for j in "$@"; do
	jobs_abs+=("$(cd "$(dirname "$j")" && pwd)/$(basename "$j")")
done
set -- "${jobs_abs[@]}"
for j in "$@"; do
	cp "$j" "$xfer/jobs/"
	rm -f "$results/$(basename "$j" .sh)".*
done

# Each job runs on the host first with a $PMSTAP that only compiles
# (compile.sh), for the guest's kernel: clang's minutes under emulation
# become seconds here.  The script paths ($tmp) are the same on both sides:
# they are part of the cache key.
compile_on_host()
{
	local sysroot j n

	sysroot=$("$here/sysroot.sh") || {
		echo "guest: no snapshot of the guest's kernel: the guest compiles (slowly)" >&2
		return 0
	}
	for j in "$@"; do
		n=$(basename "$j" .sh)
		rm -rf "$BUILD/guest/tmp/$n"
		mkdir -p "$BUILD/guest/tmp/$n"
		(cd "$repo/qa" && PMSTAP_SYSROOT=$sysroot PMSTAP_CACHE=$xfer/cache PMSTAP_CACHE_MB=$cache_mb \
			REPO=$repo QA_BIN=$BUILD/bin tmp=$BUILD/guest/tmp/$n GUEST_COMPILE_ONLY=1 \
			GUEST_PMSTAP=$pmstap PMSTAP=$here/compile.sh \
			GUEST_COMPILE_LOG=$results/$n.compile \
			timeout ${GUEST_JOB_TIMEOUT:-120} bash "$j" >/dev/null 2>&1) &
		# two at a time: this machine may have only two cores
		[ $(jobs -rp | wc -l) -lt 2 ] || wait -n || true
	done
	wait
}
# Copies of pmstap, tapset/ and runtime/ (1 MB), so that an edit or a make
# meanwhile (in another window) cannot change them between the compile here
# and the run there: the cache key names them all (tapset/ and runtime/ by
# content, pmstap by its time: copied only when it changed).
tree=$BUILD/guest/tree
pmstap=$tree/bin/pmstap
mkdir -p "$tree/bin"
cmp -s "$BUILD/bin/pmstap" "$pmstap" || cp "$BUILD/bin/pmstap" "$pmstap"
rm -rf "$tree/tapset" "$tree/runtime"
cp -r "$repo/tapset" "$repo/runtime" "$tree/"
export PMSTAP_TAPSET_DIR=$tree/tapset PMSTAP_RUNTIME_DIR=$tree/runtime
# The guest finds every build only if none was pruned meanwhile: with
# pmstap's default limit (256 MB) the last jobs' builds evicted the first
# jobs', which the guest then compiled itself, 4-8 times slower.  The
# limit still bounds what runs of other trees leave in this cache.
cache_mb=4096
t0=$(date +%s)
compile_on_host "$@"
echo "guest: compiled on the host in $(($(date +%s) - t0)) s" >&2

cat >"$xfer/run.sh" <<END
#!/bin/bash
# written by qa/guest/run-jobs.sh: runs in the guest, cwd /xfer
export REPO=$repo BUILD=$BUILD PMSTAP=$pmstap QA_BIN=$BUILD/bin
export PMSTAP_CACHE=/xfer/cache PMSTAP_CACHE_MB=$cache_mb LC_ALL=C PMSTAP_KEEP_LOADED=0
export PMSTAP_TAPSET_DIR=$tree/tapset PMSTAP_RUNTIME_DIR=$tree/runtime
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
for j in /xfer/jobs/*.sh; do
	n=\$(basename "\$j" .sh)
	[ -e /xfer/out/\$n.rc ] && continue	# ran in an earlier boot
	: >/xfer/out/\$n.started
	export tmp=$BUILD/guest/tmp/\$n
	mkdir -p "\$tmp"
	t0=\$(date +%s.%N)
	(cd "$repo/qa" && timeout ${GUEST_JOB_TIMEOUT:-120} bash "\$j") >/xfer/out/\$n.out 2>/xfer/out/\$n.err
	echo \$? >/xfer/out/\$n.rc
	echo "\$(date +%s.%N) \$t0" | awk '{ printf "%.1f\n", \$1 - \$2 }' >/xfer/out/\$n.secs
	echo "GUEST: job \$n rc=\$(cat /xfer/out/\$n.rc) \$(cat /xfer/out/\$n.secs)s"
done
exit 0
END
chmod 755 "$xfer/run.sh"

# The job the guest runs now: started, not ended.
running_job()
{
	local f n

	for f in "$xfer"/out/*.started; do
		[ -e "$f" ] || continue
		n=$(basename "$f" .started)
		[ -e "$xfer/out/$n.rc" ] || { echo "$n"; return; }
	done
}

# Watch boot.sh (pid $1) while it runs: kill qemu if one job runs for
# $hang_secs seconds (by this machine's clock) and print that job's name.
watch_boot()
{
	local cur= since=0 n now

	while kill -0 "$1" 2>/dev/null; do
		sleep 2
		n=$(running_job) now=$(date +%s)
		if [ "$n" != "$cur" ]; then
			cur=$n since=$now
		elif [ -n "$cur" ] && [ $((now - since)) -ge "$hang_secs" ]; then
			kill -KILL "$(cat "$xfer/qemu.pid" 2>/dev/null)" 2>/dev/null
			echo "$cur"
			return
		fi
	done
}

hang_secs=$((${GUEST_JOB_TIMEOUT:-120} + ${GUEST_HANG_GRACE:-120}))
rm -f "$xfer/qemu.pid"
failed=0
set +e
for ((boot = 1; ; boot++)); do
	"$here/boot.sh" "$xfer" &
	bpid=$!
	hung=$(watch_boot "$bpid")
	wait "$bpid"
	rc=$?
	[ -n "$hung" ] || break
	# what the guest's kernel said after the last job's end
	awk '/^GUEST: / { n = 0; next } n++ < 60 { print "guest console: " $0 }' "$xfer/console.log" >&2
	if [ -e "$xfer/out/$hung.hung" ]; then
		failed=$((failed + 1))
		echo 125 >"$xfer/out/$hung.rc"
		echo "$hang_secs" >"$xfer/out/$hung.secs"
		mv "$xfer/console.log" "$xfer/out/$hung.console2"
		echo "guest: job $hung hung the guest again: no end after $hang_secs s; qemu killed, the console is in $results/$hung.console2" |
			tee -a "$xfer/out/$hung.err" >&2
	else
		mv "$xfer/console.log" "$xfer/out/$hung.console"
		echo "guest: job $hung hung the guest: no end after $hang_secs s; qemu killed, the console is in $results/$hung.console; it runs again in a new boot" |
			tee "$xfer/out/$hung.hung" >&2
		rm -f "$xfer/out/$hung".{out,err,started}
	fi
	left=0
	for j in "$xfer"/jobs/*.sh; do
		[ -e "$xfer/out/$(basename "$j" .sh).rc" ] || left=$((left + 1))
	done
	[ "$left" -gt 0 ] || break
	if [ "$boot" -ge "${GUEST_HANG_BOOTS:-4}" ]; then
		echo "guest: $left jobs not run: $boot boots hung (GUEST_HANG_BOOTS)" >&2
		break
	fi
	echo "guest: booting again for the $left jobs left" >&2
done
set -e
rm -f "$xfer"/out/*.started
cp "$xfer"/out/* "$results/" 2>/dev/null || true
[ "$failed" = 0 ] || exit 125
exit $rc
