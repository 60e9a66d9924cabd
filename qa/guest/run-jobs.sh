#!/bin/bash
# qa/guest/run-jobs.sh - run QA jobs inside one boot of the guest.
#
#	qa/guest/run-jobs.sh JOB.sh...
#
# A job is a bash script (qa/guest/jobs/NNN.sh) that runs pmstap and its
# workloads; in the guest it runs from the source tree, with REPO, BUILD,
# PMSTAP, QA_BIN and a PMSTAP_CACHE that lasts from one boot to the next
# (so scripts compiled once are not compiled again under emulation).
# Each job's stdout, stderr, exit status and seconds land in
# $BUILD/guest/results/NNN.{out,err,rc,secs}.  Exit status: boot.sh's.
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
for j in "$@"; do
	cp "$j" "$xfer/jobs/"
	rm -f "$results/$(basename "$j" .sh)".*
done

cat >"$xfer/run.sh" <<END
#!/bin/bash
# written by qa/guest/run-jobs.sh: runs in the guest, cwd /xfer
export REPO=$repo BUILD=$BUILD PMSTAP=$BUILD/bin/pmstap QA_BIN=$BUILD/bin
export PMSTAP_CACHE=/xfer/cache LC_ALL=C
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
for j in /xfer/jobs/*.sh; do
	n=\$(basename "\$j" .sh)
	export tmp=/tmp/job.\$n
	mkdir -p "\$tmp"
	t0=\$(date +%s.%N)
	(cd "$repo/qa" && timeout ${GUEST_JOB_TIMEOUT:-300} bash "\$j") >/xfer/out/\$n.out 2>/xfer/out/\$n.err
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
