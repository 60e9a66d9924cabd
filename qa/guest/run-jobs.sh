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
# compile's log in NNN.compile.  Exit status: boot.sh's.
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
export PMSTAP_CACHE=/xfer/cache PMSTAP_CACHE_MB=$cache_mb LC_ALL=C
export PMSTAP_TAPSET_DIR=$tree/tapset PMSTAP_RUNTIME_DIR=$tree/runtime
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
for j in /xfer/jobs/*.sh; do
	n=\$(basename "\$j" .sh)
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
set +e
"$here/boot.sh" "$xfer"
rc=$?
set -e
cp "$xfer"/out/* "$results/" 2>/dev/null || true
exit $rc
