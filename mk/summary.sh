#!/bin/sh
# mk/summary.sh DIR - add up the suites' results and print the closing line.
# Each suite writes DIR/NAME with one line: "PASSED FAILED SKIPPED", and
# may say why its tests failed in DIR/failures/NAME: those are repeated
# after the totals (at most 60 lines a suite), so that the end of a long
# log, which is all a CI report keeps, shows them.
dir=$1
p=0 f=0 s=0 n=0
for r in "$dir"/*; do
	[ -f "$r" ] || continue
	read -r rp rf rs <"$r"
	printf '  %-12s %4d passed, %d failed, %d skipped\n' "$(basename "$r")" "$rp" "$rf" "$rs"
	p=$((p + rp)) f=$((f + rf)) s=$((s + rs)) n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "check: no suite reported results" >&2; exit 1; }
for r in "$dir"/failures/*; do
	[ -s "$r" ] || continue
	echo "failures in $(basename "$r"):"
	sed -n '1,60p' "$r"
	[ "$(wc -l <"$r")" -le 60 ] || echo "    ... ($(wc -l <"$r") lines in $r)"
done
echo "check: $p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
