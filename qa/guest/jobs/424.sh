# 424: kernel.statement with both runtimes: the peer scripts (each the
# same beside stap 4.8's module) with --runtime=kernel, then with bpf,
# whose output must be the kernel runtime's: $$parms, $$vars, $$locals at
# each line of ksys_lseek and of do_sys_open's inline instance, the entry
# of ksys_read, two of its lines, every line of it; $$parms$ and $$parms$$
# at ksys_lseek's lines; a struct on do_statx's stack frame (DW_OP_fbreg).
for s in kstmt_vars kstmt_inline_vars kstmt_entry kstmt_lines kstmt_every_line \
	kstmt_vars_pretty kstmt_fbreg; do
	work=$(sed -n 's/^# workload: //p' "$REPO/qa/guest/peer/$s.stp" | sed "s|QA_BIN|$QA_BIN|")
	for rt in kernel bpf; do
		$PMSTAP --runtime=$rt "$REPO/qa/guest/peer/$s.stp" -c "$work" >"$tmp/$s.$rt" 2>&1
		echo "$s --runtime=$rt: status $?"
	done
	[ -n "${GUEST_COMPILE_ONLY:-}" ] && continue
	cat "$tmp/$s.kernel"
	diff "$tmp/$s.kernel" "$tmp/$s.bpf" && echo "$s: bpf's output is the kernel runtime's"
done
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
