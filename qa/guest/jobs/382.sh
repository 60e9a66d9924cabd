# 382: @defined() choices in kernel function return probes, run (issue 20):
# ksys_read.return reads its parameters under choices that name one it
# lacks ($nosuch): ?:, if/else, && and ||.  The entry probe saves only
# what the chosen branches read, so the module and the BPF program load,
# and at each return of read_sizes's reads of fd 42 the saved $count is
# the $return (pmstap's own descriptor 42, on some runs its signalfd,
# is not counted).  The same output on both runtimes.
cat >"$tmp/t.stp" <<'END'
global same, differ, counts, lacks = 0
probe kernel.function("ksys_read").return {
	if (pid() != target() || (@defined($fd) ? $fd : $nosuch) != 42)
		next
	if (@defined($nosuch))
		n = $nosuch
	else
		n = $count
	if (n == $return)
		same[n]++
	else
		differ++
	if (@defined($nosuch) && $nosuch > 0)
		lacks++
	if (!@defined($nosuch) || $nosuch == 0)
		counts[@defined($count) ? $count : $nosuch]++
}
probe end {
	foreach (n+ in same)
		printf("count == return == %d: %d reads\n", n, same[n])
	printf("count != return: %d\n", differ)
	printf("under @defined($nosuch): %d\n", lacks)
	foreach (n+ in counts)
		printf("counts[%d] = %d\n", n, counts[n])
}
END
for rt in kernel bpf; do
	$PMSTAP --runtime=$rt "$tmp/t.stp" -c "$QA_BIN/read_sizes 1x100 100x5" >"$tmp/out.$rt" 2>"$tmp/err.$rt"
	echo "$rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
cat "$tmp/out.kernel"
cat "$tmp/err.kernel" "$tmp/err.bpf"
diff "$tmp/out.kernel" "$tmp/out.bpf" && echo "the same output on both runtimes"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
