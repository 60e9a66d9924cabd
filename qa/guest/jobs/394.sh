# 394: --runtime=kernel: the syscall tapset in a module.  syscalls:sys_enter_*
# and sys_exit_* are events of raw_syscalls, with records and no
# arguments: the module probes raw_syscalls:sys_enter/sys_exit for the
# syscall's number and builds the event's record, so syscall.NAME and
# syscall.NAME.return give name, argstr, the argument variables and
# retstr as with the bpf runtime (the same output), and int_arg() reads the
# syscall's registers.
cat >"$tmp/sys.stp" <<'END'
global n, mine
probe syscall.openat {
	if (pid() == target() && isinstr(filename, "/dev/zero")) {
		printf("%s(%s)\n", name, argstr)
		mine[tid()] = 1
	}
}
probe syscall.openat.return, syscall.dup2.return, syscall.close.return {
	if (pid() == target() && mine[tid()])
		printf("%s = %s\n", name, retstr)
}
probe syscall.dup2, syscall.close {
	if (pid() == target() && mine[tid()])
		printf("%s(%s)\n", name, argstr)
}
probe syscall.read {
	if (pid() == target() && fd == 42) {
		n++
		mine[tid()] = n <= 2 || n == 25
		if (mine[tid()])
			printf("%s(%s) %d %d int_arg(1)=%d ulong_arg(3)=%d\n", name, argstr, fd,
			       count, int_arg(1), ulong_arg(3))
	} else {
		mine[tid()] = 0
	}
}
probe syscall.read.return {
	if (pid() == target() && mine[tid()])
		printf("%s = %s\n", name, retstr)
}
probe end { printf("reads of fd 42: %d\n", n) }
END
# every syscall (stap's syscall.* and syscall.*.return: some 700 probes in one module)
cat >"$tmp/all.stp" <<'END'
global calls
probe syscall.* { if (pid() == target()) calls[name]++ }
probe syscall.*.return { if (pid() == target()) calls[name . ".return"]++ }
probe end {
	foreach (k+ in calls)
		if (k =~ "^(dup2|close|exit_group|openat)(\\.return)?$")
			printf("%s %d\n", k, calls[k])
	printf("read, read.return >= 25: %s\n", calls["read"] >= 25 && calls["read.return"] >= 25 ?
	       "yes" : sprintf("%d, %d", calls["read"], calls["read.return"]))
	n = 0
	foreach (k in calls)
		n++
	printf("more than 10 kinds of call: %s\n", n > 10 ? "yes" : "no")
}
END
$PMSTAP --runtime=kernel "$tmp/all.stp" -c "$QA_BIN/read_sizes 1x20 100x5" >"$tmp/all.out" 2>&1
echo "syscall.*: status $?"
for rt in kernel bpf; do
	$PMSTAP --runtime=$rt "$tmp/sys.stp" -c "$QA_BIN/read_sizes 1x20 100x5" >"$tmp/out.$rt" 2>&1
	echo "$rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
for rt in kernel bpf; do
	# the buffer's address changes from run to run (ASLR)
	sed -i 's/0x[0-9a-f]\{6,\}/BUF/' "$tmp/out.$rt"
done
cat "$tmp/out.kernel"
diff "$tmp/out.kernel" "$tmp/out.bpf" && echo "the same output on both runtimes"
cat "$tmp/all.out"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
