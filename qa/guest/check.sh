#!/bin/bash
# qa/guest/check.sh BUILD - make check-guest: every guest job in one boot of
# the qa guest (compiled on this machine first, see run-jobs.sh), then the
# tests of group "guest" against their results.  Writes "P F S" to
# BUILD/results/guest.  Installs nothing: the guest's packages come from
# mk/deps.sh (make deps); without them the tests do not run and say why.
#
# It never hangs make check: the whole guest run (the kernel snapshot,
# compiling, the boot and every job) has GUEST_CHECK_TIMEOUT seconds
# (default 420; it takes about 90); past that qemu is killed and every
# test without a result fails.
here=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$here/../../build}" && pwd)
export BUILD
limit=${GUEST_CHECK_TIMEOUT:-420}
mkdir -p "$BUILD/results"
if "$here/boot.sh" --check; then
	start=$(date +%s)
	GUEST_TIMEOUT=$limit timeout -k 10 "$limit" "$here/run-jobs.sh" "$here"/jobs/*.sh >/dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "check-guest: error: the guest run did not finish in $limit s and was killed (GUEST_CHECK_TIMEOUT); see $BUILD/guest/xfer/console.log" >&2
	elif [ $rc != 0 ]; then
		echo "check-guest: error: the guest run failed (status $rc); see $BUILD/guest/xfer/console.log" >&2
	else
		echo "check-guest: compiled here, then one guest boot ran $(ls "$here"/jobs/*.sh | wc -l) jobs; $secs s in all"
	fi
fi
# the tests use the results of this run: none boots the guest again
GUEST_NO_BOOT=1 QA_RESULTS=guest exec "$here/../check" -g guest
