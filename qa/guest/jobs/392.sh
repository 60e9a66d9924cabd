# 392: --runtime=kernel: process("PATH").function and .return through
# the kernel's uprobe API in the module: $vars from DWARF, $return,
# int_arg() and register() on the task's registers (register()'s substr
# once failed 6.1's verifier on the bpf runtime: bounds clang tested on a
# copy), a library's function;
# the same output as the bpf runtime's.  The binary is copied to a tmpfs
# first (see tmpfs.rc).
d=$tmp/bin
if [ -z "${GUEST_COMPILE_ONLY:-}" ]; then
	mkdir -p "$d"
	mountpoint -q "$d" || mount -t tmpfs none "$d"
fi
mkdir -p "$d"
cp "$QA_BIN/uprobe_target" "$QA_BIN/libuprobe_lib.so" "$d/"
cat >"$tmp/u.stp" <<END
global adds, subs, rets, sq
probe process("$d/uprobe_target").function("work_add") {
	adds++
	if (adds <= 3)
		printf("work_add(%d, %d) int_arg(1)=%d int_arg(2)=%d rdi=%d esi=%d %s\n", \$a, \$b,
		       int_arg(1), int_arg(2), register("rdi"), register("esi"),
		       user_mode() ? "user" : "kernel")
}
probe process("$d/uprobe_target").function("work_add").return {
	rets += \$return == 3 * \$a
}
probe process("$d/uprobe_target").function("work_sub") { subs++ }
probe process("$d/libuprobe_lib.so").function("ulib_square").return {
	sq[\$return]++
}
probe end {
	printf("work_add: %d calls, %d returns of 3a; work_sub: %d calls\n", adds, rets, subs)
	foreach (v+ in sq limit 3)
		printf("ulib_square returned %d\n", v)
}
END
for rt in kernel bpf; do
	LD_LIBRARY_PATH=$d $PMSTAP --runtime=$rt "$tmp/u.stp" -c "$d/uprobe_target 5" >"$tmp/out.$rt" 2>&1
	echo "$rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
# the workload's own line, in any order with the script's
sed -i "s|$d|BIN|g; /^semaphore /d" "$tmp/out.kernel" "$tmp/out.bpf"
cat "$tmp/out.kernel"
diff "$tmp/out.kernel" "$tmp/out.bpf" && echo "the same output on both runtimes"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
