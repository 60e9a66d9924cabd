# 413: --runtime=kernel: kernel.statement probes are kprobes at the
# statement's address, found in the kernel's DWARF, with the variables
# in scope there.  The workload reads /dev/zero through descriptor 42,
# 20 reads of 1 byte and 5 of 100 (read_sizes), and each probe counts
# the reads of the command that it sees, against kernel.function's count
# of ksys_read as the control (also the C library's loader's reads):
#   - kernel.statement("ksys_read"): at its entry, $fd and $count;
#   - ksys_read@fs/read_write.c:613 ("ret = vfs_read(f.file, buf, count,
#     ppos);" in Debian's 6.1): $count, a parameter, in a register there;
#   - line 614 ("if (ret >= 0 && ppos)"), past vfs_read: $ret, a local
#     variable, what vfs_read returned (the whole size, from /dev/zero);
#   - kernel.statement(ADDR) at vmlinux's address of ksys_read, and with
#     -g, kernel.statement(ADDR).absolute at the running kernel's (from
#     /proc/kallsyms; the host's compile takes the snapshot's);
#   - a list of lines, ksys_read@fs/read_write.c:612-614 (612 has no code:
#     lines 613 and 614, each as often as the control), and a relative
#     line, ksys_read@fs/read_write.c+11 (ksys_read is declared at 602:
#     line 613), its pp() the line's;
#   - labels: do_faccessat's "retry" and "out" (fs/open.c), each reached
#     once per access or faccessat call: as often as the syscalls'
#     tracepoints fire for the command (test -r, -w and -x, and the
#     loader's access()).
# no debuginfo of the guest's kernel here: qa/413 does not run (it says why)
ls /usr/lib/debug/boot/vmlinux-*-amd64 >/dev/null 2>&1 || exit 0
cat >"$tmp/lines.stp" <<'END'
global control, entry, entry42, at613, at614, ret614
probe kernel.function("ksys_read") {
	if (pid() == target())
		control[$count]++
}
probe kernel.statement("ksys_read") {
	if (pid() == target()) {
		entry[$count]++
		if ($fd == 42)
			entry42++
	}
}
probe kernel.statement("ksys_read@fs/read_write.c:613") {
	if (pid() == target())
		at613[$count]++
}
probe kernel.statement("ksys_read@fs/read_write.c:614") {
	if (pid() == target()) {
		at614++
		ret614[$ret]++
	}
}
probe end {
	foreach (n in control) {
		all += control[n]
		bad += entry[n] != control[n] || at613[n] != control[n] || ret614[n] != control[n]
	}
	printf("control: %d reads of 1 byte, %d of 100\n", control[1], control[100])
	printf("entry: $count %d, %d (%d with $fd 42); line 613: $count %d, %d; line 614: "
	       "$ret %d, %d\n", entry[1], entry[100], entry42, at613[1], at613[100], ret614[1],
	       ret614[100])
	printf("every size counted as the control's at all three: %s (%s hits at 614)\n",
	       bad ? "no" : "yes", at614 == all ? "as many" : sprintf("%d", at614))
}
END
ks=/proc/kallsyms
[ -z "${GUEST_COMPILE_ONLY:-}" ] || ks=$(ls -d "$BUILD"/guest/sysroot-*/proc/kallsyms | tail -1)
vaddr=0x$(awk '$3 == "ksys_read" { print $1; exit }' /usr/lib/debug/boot/System.map-*-amd64)
raddr=0x$(awk '$3 == "ksys_read" { print $1; exit }' "$ks")
cat >"$tmp/addr.stp" <<END
global control, at_vaddr, at_raddr
probe kernel.function("ksys_read") { if (pid() == target()) control++ }
probe kernel.statement($vaddr) { if (pid() == target()) at_vaddr++ }
probe kernel.statement($raddr).absolute { if (pid() == target()) at_raddr++ }
probe end {
	printf("ksys_read %s times; at vmlinux's address: %s; absolute: %s\n",
	       control >= 25 ? "25 or more" : sprintf("%d", control),
	       at_vaddr == control ? "as often" : sprintf("%d", at_vaddr),
	       at_raddr == control ? "as often" : sprintf("%d", at_raddr))
}
END
cat >"$tmp/range.stp" <<'END'
global control, hits
probe kernel.function("ksys_read") { if (pid() == target()) control++ }
probe kernel.statement("ksys_read@fs/read_write.c:612-614") {
	if (pid() == target())
		hits[pp()]++
}
probe kernel.statement("ksys_read@fs/read_write.c+11") {
	if (pid() == target())
		hits["+11: " . pp()]++
}
probe end {
	foreach (p+ in hits)
		printf("%s: %s\n", p, hits[p] == control ? "as often as ksys_read" :
		       sprintf("%d times, ksys_read %d", hits[p], control))
}
END
work="$QA_BIN/read_sizes 1x20 100x5"
echo "lines:"
$PMSTAP --runtime=kernel "$tmp/lines.stp" -c "$work"
echo "status $?"
echo "a list of lines, a relative line:"
$PMSTAP --runtime=kernel "$tmp/range.stp" -c "$work"
echo "status $?"
cat >"$tmp/label.stp" <<'END'
global calls, hits
probe kernel.trace("syscalls:sys_enter_access"), kernel.trace("syscalls:sys_enter_faccessat*") {
	if (pid() == target())
		calls++
}
probe kernel.function("do_faccessat").label("*") {
	if (pid() == target())
		hits[pp()]++
}
probe end {
	printf("access and faccessat calls: %s\n", calls >= 3 ? "3 or more" : sprintf("%d", calls))
	foreach (p+ in hits)
		printf("%s: %s\n", p, hits[p] == calls ? "once a call" : sprintf("%d", hits[p]))
}
END
echo "labels:"
$PMSTAP --runtime=kernel "$tmp/label.stp" -c "sh -c 'test -r /etc/passwd; test -w /etc/passwd; test -x /bin/sh'"
echo "status $?"
echo "addresses (-g):"
$PMSTAP --runtime=kernel -g "$tmp/addr.stp" -c "$work"
echo "status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
