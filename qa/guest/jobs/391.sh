# 391: --runtime=kernel: perf.sw.* and perf.type(1).config(N) probes in the
# module (a software perf event on each CPU, the handler run on each
# overflow with the event's registers): the workload's page faults, counted
# by two probes on the same event alike, and cpu_clock samples of spin;
# the same output as the bpf runtime's.  A hardware counter (perf.hw.*)
# overflows in NMI context: pass 3 refuses it for the module.
cat >"$tmp/perf.stp" <<'END'
global faults, tc, clock
probe perf.sw.page_faults.sample(1) {
	if (pid() == target())
		faults++
}
probe perf.type(1).config(2).sample(1) {
	if (pid() == target())
		tc++
}
probe perf.sw.cpu_clock.sample(1000000) {
	if (pid() == target() && user_mode())
		clock++
}
probe end {
	printf("page faults of the workload: %s\n", faults > 10 ? "more than 10" : sprint(faults))
	printf("perf.type(1).config(2), the same events: %s\n",
	       faults == tc ? "as many" : sprintf("%d and %d", faults, tc))
	printf("cpu_clock samples of spin in user mode: %s\n", clock > 5 ? "more than 5" :
	       sprint(clock))
}
END
cat >"$tmp/hw.stp" <<'END'
global n
probe perf.hw.cpu_cycles { n++ }
END
. "$REPO/qa/guest/peer_both.rc"
_both perf "$tmp/perf.stp" "$QA_BIN/spin 200"
_both_compare perf
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
$PMSTAP --runtime=kernel -p3 "$tmp/hw.stp" 2>&1 >/dev/null | sed "s|$tmp/||" | grep -A1 error:
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
