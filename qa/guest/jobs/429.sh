# 429: user stacks kept by a probe (ubacktrace()) named after their
# process is gone, in the end probe, with both runtimes: each capture
# notes the build ids of the files its frames are in, which the kernel
# runtime reads from the process's memory (the kernel does not export
# build_id_parse()), and the runner names the frames from those files.
# dt_fact's recursion gives five stacks; libc's frames show as "libc".
T=$QA_BIN/dwarf_target
cat >"$tmp/gone.stp" <<END
global bt, names
probe process("$T").function("dt_fact") { bt[ubacktrace()]++ }
probe end {
	foreach (b in bt)
		names[sprint_ustack(b)] = 1
	foreach (s+ in names) {
		print(s)
		println("--")
	}
}
END
for rt in kernel bpf; do
	$PMSTAP --runtime=$rt "$tmp/gone.stp" -c "$T" >"$tmp/gone.$rt" 2>&1
	echo "--runtime=$rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
sed -E "s|$QA_BIN/||; s/^.*libc\.so\.6.*$/libc/" "$tmp/gone.kernel"
diff "$tmp/gone.kernel" "$tmp/gone.bpf" && echo "bpf's output is the kernel runtime's"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
