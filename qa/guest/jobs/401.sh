# 401: --runtime=kernel -g: a script changes what functions return and
# the arguments they run on through the registers, as stap's module does:
# process("P").function("F").return { $return = N } (a uretprobe: the
# task's pt_regs), the entry's { $x = N } (a parameter in rdi), main's
# $return (the exit status), and kernel.function("F").return and
# kprobe.function("F").return { $return = N } (kretprobes: what the
# syscall gives the program), and kernel.function("ksys_dup3") { $newfd
# = N } and its .return's $return = N (kernel functions with BTF: the
# handler's copy of the arguments and the kprobe's registers; dup3(1,
# 100) makes fd 101).  A control run of the program without the
# script gets 0 and its parent's ids.  The binary is copied to a tmpfs
# first (see tmpfs.rc).
. "$REPO/qa/guest/tmpfs.rc"
prog=$(_tmpfs_copy ret_value)
d=${prog%/*}
cat >"$tmp/r.stp" <<END
global main_was, main_now, ppid_now, pgrp_now, dup_now
probe process("$d/ret_value").function("ret_zero").return { \$return = 7 }
probe process("$d/ret_value").function("arg_gate") { \$x = 500 }
probe process("$d/ret_value").function("main").return {
	main_was = \$return
	\$return = 3
	main_now = \$return
}
probe kernel.function("__x64_sys_getppid").return {
	if (execname() != "ret_value")
		next
	\$return = 4242
	ppid_now = \$return
}
probe kprobe.function("__x64_sys_getpgrp").return {
	if (execname() != "ret_value")
		next
	\$return = 777
	pgrp_now = \$return
}
probe kernel.function("ksys_dup3") {
	if (execname() == "ret_value")
		\$newfd = \$newfd + 1
}
probe kernel.function("ksys_dup3").return {
	if (execname() != "ret_value")
		next
	\$return = 4242
	dup_now = \$return
}
probe end {
	printf("main returned %d, \$return then %d; getppid's %d, getpgrp's %d, ksys_dup3's %d\n",
	       main_was, main_now, ppid_now, pgrp_now, dup_now)
}
END
w="$d/ret_value; echo \"exit status \$?\""
$PMSTAP --runtime=kernel -g "$tmp/r.stp" -c "sh -c '$w'" >"$tmp/out" 2>"$tmp/err"
echo "kernel: status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "== without the script"
sh -c "$w"
echo "== with it"
cat "$tmp/out"
cat "$tmp/err"
echo "== without it again"
sh -c "$w"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
