# 380: --runtime=kernel: kernel.trace (its arguments), kernel.function and
# .return (arguments and $return), kprobe.function.return and printf from
# kernel context, run in a module; the output is the bpf runtime's, byte for byte.
cat >"$tmp/t.stp" <<'END'
global sizes, rets, reads, execs
probe kernel.trace("sched:sched_process_exec") {
	if (pid() == target())
		execs[kernel_string($bprm->filename)]++
}
probe kernel.function("ksys_read") {
	if ($fd == 42) {
		sizes[$count]++
		if (sizes[$count] == 3)
			printf("third read of %d bytes\n", $count)
	}
}
probe kernel.function("ksys_read").return {
	if ($fd == 42)
		rets[$count, $return]++
}
probe kprobe.function("ksys_read").return {
	if (pid() == target())
		reads++
}
probe end {
	foreach (f in execs)
		printf("exec %s %d\n", f, execs[f])
	foreach (n+ in sizes)
		printf("count=%d reads=%d\n", n, sizes[n])
	foreach ([n+, r] in rets)
		printf("count=%d return=%d reads=%d\n", n, r, rets[n, r])
	printf("target reads >= 105: %s\n", reads >= 105 ? "yes" : "no")
}
END
for rt in kernel bpf; do
	$PMSTAP --runtime=$rt "$tmp/t.stp" -c "$QA_BIN/read_sizes 1x100 100x5" >"$tmp/out.$rt" 2>"$tmp/err.$rt"
	echo "$rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
sed "s|$QA_BIN|QA_BIN|" "$tmp/out.kernel"
cat "$tmp/err.kernel" "$tmp/err.bpf"
diff "$tmp/out.kernel" "$tmp/out.bpf" && echo "the same output on both runtimes"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
