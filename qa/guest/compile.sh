#!/bin/bash
# qa/guest/compile.sh - $PMSTAP while a guest job runs on the host first
# (qa/guest/run-jobs.sh): pmstap -p4 against the guest's kernel snapshot
# (PMSTAP_SYSROOT) into the cache the guest uses, so that pmstap there
# finds the build made.  Nothing runs: the output is the log's.
{
	echo "== pmstap -p4 $*"
	"$GUEST_PMSTAP" -p4 "$@"
	echo "== status $?"
} >>"$GUEST_COMPILE_LOG" 2>&1
exit 0
