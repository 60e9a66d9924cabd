#!/bin/sh
# mk/summary.sh DIR - add up the suites' results and print the closing line.
# Each suite writes DIR/NAME with one line: "PASSED FAILED SKIPPED".
dir=$1
p=0 f=0 s=0 n=0
for r in "$dir"/*; do
	[ -f "$r" ] || continue
	read -r rp rf rs <"$r"
	printf '  %-12s %4d passed, %d failed, %d skipped\n' "$(basename "$r")" "$rp" "$rf" "$rs"
	p=$((p + rp)) f=$((f + rf)) s=$((s + rs)) n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "check: no suite reported results" >&2; exit 1; }
echo "check: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
