# 422: user and kernel addresses named as strings in a kernel probe (kept
# in a variable or an array, not printed straight away), with both
# runtimes: user ones in the probed file from its symbols, which the
# module carries, those of another file (libc's, at the syscall entry) as
# stap's module names those of a file it has no symbols for (the file
# mapped there, the offset in it, its extent), kernel ones by the kernel
# (%pS).  A uprobe on many_funcs' uf_00 and the syscall entries of the
# same process; timer.profile on spin.
M=$QA_BIN/many_funcs
cat >"$tmp/names.stp" <<END
global done, sys, keys
probe process("$M").function("uf_00") {
	if (done++) next
	a = uaddr()
	h = sprintf("0x%x", a)
	m = umodname(a)
	printf("umodname: %s\n", m == "$M" ? "the program" : m)
	d = usymdata(a)
	printf("usymdata: %s\n", d =~ "^uf_00\\\\+0x[0-9a-f]+/0x[0-9a-f]+ \\\\[$M\\\\]\$" ? "sym+off/size [path]" : d)
	printf("usymname: %s\n", usymname(a) == h ? "hex" : usymname(a))
	b = tokenize(sprint_ubacktrace(), "\n")
	printf("sprint_ubacktrace: %s\n", b =~ "^uf_00\\\\+0x[0-9a-f]+ \\\\[many_funcs\\\\]\$" ? "sym+off [file]" : b)
	k = tokenize(sprint_backtrace(), "\n")
	printf("sprint_backtrace: %s\n", k =~ "^[a-zA-Z_0-9.]+\\\\+0x[0-9a-f]+/0x[0-9a-f]+ \\\\[[a-z_0-9]+\\\\]\$" ? "sym+off/size [module]" : k)
	keys[m, usymdata(a)]++
}
probe kernel.trace("sys_enter") {
	if (pid() != target() || !done || sys++) next
	a = uaddr()
	m = umodname(a)
	printf("syscall: %s\n", m =~ "/libc\\\\.so\\\\.6\$" ? "libc" : m)
	d = usymdata(a)
	printf("syscall usymdata: %s\n", d =~ "^0x[0-9a-f]+ \\\\[/.*/libc\\\\.so\\\\.6\\\\+0x[0-9a-f]+/0x[0-9a-f]+\\\\]\$" ? "path+off/size" : d)
	printf("syscall usymname: %s\n", usymname(a) == sprintf("0x%x", a) ? "hex" : usymname(a))
}
probe end {
	foreach ([m, d] in keys)
		printf("key: %s\n", m == "$M" ? "kept" : m)
}
END
for rt in bpf kernel; do
	echo "== $rt runtime"
	$PMSTAP --runtime=$rt "$tmp/names.stp" -c "$M 3" 2>&1 | grep -v '^uf_\|^sem '
	echo "status ${PIPESTATUS[0]}"
done
# In interrupt context (timer.profile's hrtimer in the module, a perf
# event's handler with BPF) the file is found too: the module lets the
# mm's lock go from an irq_work and reads the path from the dentries.
cat >"$tmp/prof.stp" <<END
global names
probe timer.profile {
	if (pid() != target() || !user_mode()) next
	try { m = umodname(uaddr()) } catch (e) { m = "" }
	if (m == "$QA_BIN/spin") names["the program"]++
}
probe end { foreach (m in names) printf("timer.profile: %s\n", m) }
END
for rt in bpf kernel; do
	echo "== $rt runtime, timer.profile"
	$PMSTAP --runtime=$rt "$tmp/prof.stp" -c "$QA_BIN/spin 300"
	echo "status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
