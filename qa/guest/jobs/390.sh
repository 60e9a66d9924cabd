# 390: --runtime=kernel: int_arg() and the other *_arg() functions,
# register() and u_register() in kernel.function and kprobe.function
# handlers read the probed function's registers (the pt_regs of its
# kprobe): at every one of 25 reads they agree with the DWARF/BTF
# $fd, $buf, $count and $return; in a tracepoint there are none (a soft
# error in stap's form).
cat >"$tmp/args.stp" <<'END'
global agree, disagree, ret_agree, ret_disagree, kp
probe kernel.function("ksys_read") {
	if ($fd != 42)
		next
	if (int_arg(1) == $fd && uint_arg(1) == $fd && s32_arg(1) == $fd &&
	    long_arg(3) == $count && ulong_arg(3) == $count && u64_arg(3) == $count &&
	    pointer_arg(2) == $buf && register("rdi") == $fd && register("edi") == $fd &&
	    u_register("rsi") == $buf && u_register("edx") == $count)
		agree++
	else
		disagree++
}
probe kernel.function("ksys_read").return {
	if ($fd != 42)
		next
	if (register("rax") == $return && returnval() == $return && u_register("eax") == $return)
		ret_agree++
	else
		ret_disagree++
}
probe kprobe.function("ksys_read") {
	if (int_arg(1) == 42 && pid() == target())
		kp[ulong_arg(3)]++
}
probe end {
	printf("entry: %d agree, %d disagree\n", agree, disagree)
	printf("return: %d agree, %d disagree\n", ret_agree, ret_disagree)
	foreach (n+ in kp)
		printf("kprobe.function: %d reads of %d bytes\n", kp[n], n)
}
END
cat >"$tmp/tp.stp" <<'END'
probe kernel.trace("sched:sched_process_exec") {
	if (pid() == target())
		printf("rdi %d\n", register("rdi"))
}
probe end { println("end") }
END
$PMSTAP --runtime=kernel "$tmp/args.stp" -c "$QA_BIN/read_sizes 1x20 100x5"
echo "args: status $?"
$PMSTAP --runtime=kernel "$tmp/tp.stp" -c true 2>&1 | sed "s|$tmp|TMP|"
echo "tracepoint: status ${PIPESTATUS[0]}"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
