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
. "$REPO/qa/guest/peer_both.rc"
_both gone "$tmp/gone.stp" "$T"
_both_compare gone -e "s|$QA_BIN/||; s/^.*libc\.so\.6.*$/libc/"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
