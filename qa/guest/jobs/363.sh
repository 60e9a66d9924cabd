# 363: kernel.function("ksys_*"): one probe per function and inline
# instance (the kernel's DWARF is installed, as stap resolves it);
# @defined($fd) per function, false where $fd cannot be read (an inline
# instance where only its value on entry describes it)
listed=$($PMSTAP -l 'kernel.function("ksys_*")' | wc -l)
cat >"$tmp/t.stp" <<'END'
global hits, others
probe kernel.function("ksys_*") {
	if (@defined($fd) && $fd == 42)
		hits[pp()]++
	else
		others++	# a body on every function: none is elided as doing nothing
}
probe end {
	foreach (p+ in hits)
		printf("%s hits=%d\n", p, hits[p])
	if (others < 0)
		println("never")	# others is read: not printed at the end
}
END
derived=$($PMSTAP -p2 "$tmp/t.stp" | grep -c '^kernel.function(')
$PMSTAP -v "$tmp/t.stp" -c "$QA_BIN/read_sizes 2x6" 2>"$tmp/err"
rc=$?
attached=$(sed -n 's/.*attached \([0-9]*\) kernel probes.*/\1/p' "$tmp/err")
echo "functions listed: $([ "$listed" -ge 5 ] && echo "5 or more" || echo "$listed")"
echo "probes attached = probes derived: $([ "$attached" = "$derived" ] && echo yes || echo "no ($attached, $derived)")"
echo "probes derived >= functions listed: $([ "$derived" -ge "$listed" ] && echo yes || echo "no ($derived, $listed)")"
[ $rc = 0 ] || cat "$tmp/err" >&2
exit $rc
