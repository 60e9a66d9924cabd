#!/bin/sh
# mk/run-unit.sh BUILD TEST... - run the CUnit suites, record the totals.
build=$1
shift
p=0 f=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^unit: ' | tail -n 1)
	tp=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) passed.*/\1/p')
	tf=$(printf '%s' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$tp" ] || [ $rc -gt 1 ]; then
		# crashed before reporting: count the suite as one failure
		tp=0 tf=1
	fi
	if [ "$tf" -gt 0 ] || [ $rc -ne 0 ]; then
		printf '%s\n' "$out"
	fi
	printf '  unit %-24s %s\n' "$(basename "$t")" "$line"
	p=$((p + tp)) f=$((f + tf))
done
mkdir -p "$build/results"
echo "$p $f 0" >"$build/results/unit"
[ "$f" -eq 0 ]
