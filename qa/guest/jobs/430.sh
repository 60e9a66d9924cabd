# 430: a run's programs kept for the next (runtime/user/keep.c) on
# Debian's 6.1, the kernel Debian 12's users run: no raw tracepoint
# cookies there, so tracepoint probes are tp programs on perf event links,
# and the syscalls go through the dispatchers.  The second run takes the
# first's programs and prints what it printed (qa/316 on this host's
# 6.18).  The keeper's socket is in a tmpfs of the job's own.
cat >"$tmp/t.stp" <<'END'
global calls, bytid, lat, names
probe kernel.trace("syscalls:sys_enter_getppid") {
	if (pid() == target()) {
		calls++
		bytid[tid()]++
		lat <<< calls
	}
}
probe syscall.* { if (pid() == target()) names[name]++ }
probe end {
	foreach (t in bytid)
		threads++
	printf("calls %d, threads %d, sum %d, getppid %d\n", calls, threads, @sum(lat),
	       names["getppid"])
}
global threads
END
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	"$PMSTAP" -c "$QA_BIN/getppid_loop 20" "$tmp/t.stp"
	exit 0
fi
keep=$tmp/keep
mkdir -p "$keep"
mount -t tmpfs -o mode=0700 qa430 "$keep" || echo "cannot mount a tmpfs on $keep"
for run in 1 2; do
	PMSTAP_KEEP_LOADED=60 PMSTAP_KEEP_DIR=$keep "$PMSTAP" -v -c "$QA_BIN/getppid_loop 20" \
		"$tmp/t.stp" >"$tmp/out.$run" 2>"$tmp/err.$run"
	echo "run $run: exit status $?"
	cat "$tmp/out.$run"
	if grep -q 'took [0-9]* loaded BPF programs' "$tmp/err.$run"; then
		echo "run $run took its programs from a keeper"
	elif grep -q 'loaded [0-9]* BPF programs' "$tmp/err.$run"; then
		echo "run $run loaded its programs"
	fi
	grep -o 'not keeping .*' "$tmp/err.$run"
	grep -q 'for the next run .*pmstap-keep, pid' "$tmp/err.$run" && echo "run $run left a keeper"
done
cmp -s "$tmp/out.1" "$tmp/out.2" && echo "both printed the same"
rm -f "$keep"/k-*
umount "$keep"
