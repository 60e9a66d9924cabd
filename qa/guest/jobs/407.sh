# 407: inline kernel functions found in the kernel's DWARF, probed at
# each inline instance's entry (a kprobe at SYMBOL+offset), their $params
# read where DWARF says they are there, checked against a control:
#   - context_switch (always inlined into __schedule on 6.1): $prev and
#     $next against sched:sched_switch's, which fires just before on the
#     same CPU with the same two tasks: every pair agrees, and the
#     command's switches away are counted as often by both.  The kernel
#     runtime only: __schedule is notrace, and the kernel refuses a BPF
#     (trace) kprobe there, which pmstap says at pass 3;
#   - file_ppos (inlined into ksys_read and others), with both runtimes:
#     its $file is the $file that vfs_read gets next in the same thread;
#     the same with .inline, which keeps the inline instances alone;
#   - finish_task_switch, out of line only as the clone
#     finish_task_switch.isra.0 (so not in BTF), with both runtimes: its
#     $prev, from DWARF at the clone's entry, is the task that
#     sched_switch switched away from last on that CPU.
# no debuginfo of the guest's kernel here: qa/407 does not run (it says why)
ls /usr/lib/debug/boot/vmlinux-*-amd64 >/dev/null 2>&1 || exit 0
cat >"$tmp/cs.stp" <<'END'
global last, agree, disagree, away_cs, away_tp
probe kernel.trace("sched:sched_switch") {
	last[cpu()] = $prev->pid * 4194304 + $next->pid
	if ($prev->pid == target())
		away_tp++
}
probe kernel.function("context_switch") {
	if (last[cpu()]) {	/* not before the tracepoint was attached */
		if (last[cpu()] == $prev->pid * 4194304 + $next->pid)
			agree++
		else
			disagree++
	}
	last[cpu()] = 0
	if ($prev->pid == target())
		away_cs++
}
probe end {
	printf("pairs: %s, %d disagree\n", agree > 0 ? "agree" : "none", disagree)
	printf("the command switched away: %s\n", away_cs == away_tp && away_cs >= 8
	       ? "as often at both" : sprintf("%d times at context_switch, %d at sched_switch",
					      away_cs, away_tp))
}
END
cat >"$tmp/ppos.stp" <<'END'
global f, agree, disagree
probe kernel.function("file_ppos") {
	if (pid() == target())
		f[tid()] = $file
}
probe kernel.function("vfs_read") {
	if (pid() != target() || !(tid() in f))
		next
	if (f[tid()] == $file)
		agree++
	else
		disagree++
	delete f[tid()]
}
probe end {
	printf("file_ppos's $file is vfs_read's: %s, %d times not\n",
	       agree >= 25 ? "25 times or more" : sprintf("%d times", agree), disagree)
}
END
cat >"$tmp/fts.stp" <<'END'
global lastprev, agree, disagree
probe kernel.trace("sched:sched_switch") {
	lastprev[cpu()] = $prev->pid + 1
}
probe kernel.function("finish_task_switch") {
	if (lastprev[cpu()]) {
		if (lastprev[cpu()] == $prev->pid + 1)
			agree++
		else
			disagree++
	}
	lastprev[cpu()] = 0
}
probe end {
	printf("finish_task_switch's $prev: %s, %d disagree\n", agree >= 8 ? "agrees" : "too few",
	       disagree)
}
END
work='for i in 1 2 3 4 5 6 7 8; do sleep 0.01; done'
echo "context_switch, bpf runtime:"
$PMSTAP "$tmp/cs.stp" -c "sh -c '$work'" 2>&1 | sed "s|$tmp|TMP|"
echo "status ${PIPESTATUS[0]}"
echo "context_switch, kernel runtime:"
$PMSTAP --runtime=kernel "$tmp/cs.stp" -c "sh -c '$work'"
echo "status $?"
sed 's/kernel.function("file_ppos")/kernel.function("file_ppos").inline/' "$tmp/ppos.stp" \
	>"$tmp/ppos_inline.stp"
for rt in bpf kernel; do
	echo "file_ppos, $rt runtime:"
	$PMSTAP --runtime=$rt "$tmp/ppos.stp" -c "$QA_BIN/read_sizes 1x20 100x5"
	echo "status $?"
	echo "file_ppos.inline (its inline instances alone), $rt runtime:"
	$PMSTAP --runtime=$rt "$tmp/ppos_inline.stp" -c "$QA_BIN/read_sizes 1x20 100x5"
	echo "status $?"
	echo "finish_task_switch, $rt runtime:"
	$PMSTAP --runtime=$rt "$tmp/fts.stp" -c "sh -c '$work'"
	echo "status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
