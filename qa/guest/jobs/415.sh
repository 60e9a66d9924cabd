# 415: kernel.data("pid_max") (a hardware breakpoint on the variable, the
# symbol looked up when the probe is registered: the guest's kernel lists
# data symbols) with both runtimes: the workload writes
# /proc/sys/kernel/pid_max 6 times (its own value back), and .write
# counts 6 hits, all in the workload; .rw, in a run of its own (under
# qemu's emulation two watchpoints on one address do not both see an
# access), counts those and the reads (a fork reads pid_max), so more
# than 6.  Five watchpoints need
# five debug registers on every CPU, x86 has 4: the module cannot
# register the fifth, and pmstap says why.
cat >"$tmp/pidmax.stp" <<'END'
global w, mine, point
probe kernel.data("pid_max").write {
	w++
	if (pid() == target())
		mine++
	point = pp()
}
probe end { printf("%s: %d hits, %d by the workload\n", point, w, mine) }
END
cat >"$tmp/rw.stp" <<'END'
global rw, point
probe kernel.data("pid_max").rw {
	rw++
	point = pp()
}
probe end { printf("%s: %s\n", point, rw > 6 ? "more than 6 hits" : sprintf("%d hits", rw)) }
END
cat >"$tmp/five.stp" <<'END'
global n
probe kernel.data("pid_max").write { n++ }
probe kernel.data("pid_max_min").write { n++ }
probe kernel.data("pid_max_max").write { n++ }
probe kernel.data("overflowuid").write { n++ }
probe kernel.data("overflowgid").write { n++ }
probe begin { println("ran"); exit() }
END
work='v=$(cat /proc/sys/kernel/pid_max); for i in 1 2 3 4 5 6; do echo $v >/proc/sys/kernel/pid_max; done'
for rt in kernel bpf; do
	echo "$rt runtime:"
	$PMSTAP --runtime=$rt "$tmp/pidmax.stp" -c "sh -c '$work'"
	echo "status $?"
	$PMSTAP --runtime=$rt "$tmp/rw.stp" -c "sh -c '$work'"
	echo "status $?"
done
echo "five watchpoints, kernel runtime:"
$PMSTAP --runtime=kernel "$tmp/five.stp" 2>&1 | sed "s|$tmp/||"
echo "status ${PIPESTATUS[0]}"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
