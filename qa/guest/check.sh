#!/bin/bash
# qa/guest/check.sh BUILD - make check-guest: every guest job in one boot of
# the qa guest, then the tests of group "guest" against their results.
# Writes "P F S" to BUILD/results/guest.  Installs nothing: the guest's
# packages come from mk/deps.sh --guest (make deps-guest).
here=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-$here/../../build}" && pwd)
export BUILD
mkdir -p "$BUILD/results"
if "$here/boot.sh" --check; then
	start=$(date +%s)
	"$here/run-jobs.sh" "$here"/jobs/*.sh >/dev/null ||
		echo "check-guest: the guest run failed (status $?): see $BUILD/guest/xfer/console.log" >&2
	echo "check-guest: one guest boot ran $(ls "$here"/jobs/*.sh | wc -l) jobs in $(($(date +%s) - start)) s"
fi
saved=
[ -f "$BUILD/results/qa" ] && saved=$(cat "$BUILD/results/qa")
"$here/../check" -g guest
rc=$?
mv "$BUILD/results/qa" "$BUILD/results/guest"
[ -n "$saved" ] && echo "$saved" >"$BUILD/results/qa"
exit $rc
