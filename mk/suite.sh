#!/bin/bash
# mk/suite.sh BUILD NAME COMMAND... - run one of make check's suites.
# Its output is shown as it comes; its "FAIL" lines, each with the three
# lines after it, go to BUILD/results/failures/NAME, which mk/summary.sh
# repeats after the totals.  Exits with COMMAND's status.
build=$1 name=$2
shift 2
# each run of a suite is a test of its own: none keeps its loaded programs
# for a next run (runtime/user/keep.c); qa/316 tests the keeping
export PMSTAP_KEEP_LOADED=0
mkdir -p "$build/results/failures"
log=$build/results/failures/$name.log
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
grep -A3 '^FAIL' "$log" >"$build/results/failures/$name"
rm -f "$log"
exit "$rc"
