# 393: --runtime=kernel: timer.profile in the module (a per-CPU hrtimer
# each tick, the interrupted task's context: pid, execname, user_mode,
# addr, and in the module register()), and timer.s/ms/us/ns/hz/jiffies,
# which run in pmstap for this runtime as for the others; the same output
# as the bpf runtime's.
cat >"$tmp/prof.stp" <<'END'
global cpus, spun, user, regs_ok, bad
probe timer.profile {
	if (cpu() < 0 || cpu() >= $1)
		bad++
	else
		cpus[cpu()]++
	if (execname() == "spin" && pid() != 0) {
		spun[cpu()]++
		if (user_mode()) {
			user++
%( runtime == "kernel" %?
			regs_ok += register("rip") == addr() && addr() != 0
%:
			regs_ok += addr() != 0
%)
		}
	}
}
probe end {
	n = 0
	foreach (c in cpus)
		n++
	printf("cpus seen: %d of %d\n", n, $1)
	n = 0
	foreach (c in spun)
		n++
	printf("cpus the workload was sampled on: %d of %d\n", n, $1)
	printf("user-mode samples of the workload: %s\n", user > 10 ? "more than 10" : sprint(user))
	printf("their addr() agrees: %s\n", regs_ok == user ? "all" : sprint(regs_ok))
	printf("bad cpu numbers: %d\n", bad)
}
END
cat >"$tmp/timers.stp" <<'END'
global t, reads
probe kernel.function("ksys_read") { reads++ }
probe timer.ms(20) { t["ms(20)"]++ }
probe timer.us(30000) { t["us(30000)"]++ }
probe timer.ns(40000000) { t["ns(40000000)"]++ }
probe timer.hz(25) { t["hz(25)"]++ }
probe timer.jiffies(10) { t["jiffies(10)"]++ }
probe timer.s(1) { t["s(1)"]++; exit() }
probe end {
	foreach (k+ in t)
		printf("timer.%s fired: %s\n", k, t[k] >= (k == "s(1)" ? 1 : 5) ? "yes" : sprint(t[k]))
	printf("ksys_read seen from the timers' globals: %s\n", reads > 0 ? "yes" : "no")
}
END
ncpus=$(nproc)
cat >"$tmp/work.sh" <<END
for c in \$(seq 0 $((ncpus - 1))); do taskset -c \$c $QA_BIN/spin 300 & done
wait
END
for rt in kernel bpf; do
	$PMSTAP --runtime=$rt "$tmp/prof.stp" $ncpus -c "sh $tmp/work.sh" >"$tmp/prof.$rt" 2>&1
	echo "timer.profile, $rt: status $?"
	$PMSTAP --runtime=$rt "$tmp/timers.stp" >"$tmp/timers.$rt" 2>&1
	echo "timers, $rt: status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
sed "s/ $ncpus of $ncpus\$/ all of NCPUS/" "$tmp/prof.kernel"
cmp "$tmp/prof.kernel" "$tmp/prof.bpf" && echo "timer.profile: the same output on both runtimes"
cat "$tmp/timers.kernel"
cmp "$tmp/timers.kernel" "$tmp/timers.bpf" && echo "timers: the same output on both runtimes"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
