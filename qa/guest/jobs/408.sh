# 408: pmdastap serves a script that a line "# runtime: kernel" runs as
# a kernel module, through a pmcd of the guest's own (this job's pmcd.conf
# and PMNS; the host's pmcd is not touched): the PMDA reads the module's
# data in place, mapped from the module's device that the script's child
# passes it, and serves stap.qa408.* as for a BPF script: the counts the
# workload made (7 runs of /bin/true, 3 of /bin/false, dd's 5 writes of
# 4096 bytes and 3 of 512: the workload is the control), the doc comment's
# help and units, one instance a key and "lo-hi" instances for the
# histogram, printf's lines as stap.scripts.output* (events).  The script's process killed, the PMDA removes the module it
# held and starts the script again, counting from 0 in a new module.  At
# the end, pmcd stops, and the PMDA removes the module.
# The module is compiled on the host (the same cache key as the PMDA's:
# the same script name, text and options, see pmda/child.c).
script=$tmp/auto/qa408.stp
mkdir -p "$tmp/auto"
chmod 755 "$tmp/auto"
cat >"$script" <<'END'
# runtime: kernel
/**
 * Programs the workload ran, by name.  Counted at each exec.
 * @units count
 * @semantics counter
 */
global execs[64]

/**
 * Bytes each write(2) of dd asked for.  A power-of-two histogram.
 * @units bytes
 */
global writes

probe kernel.trace("sched:sched_process_exec") {
	if (execname() == "true" || execname() == "false")
		execs[execname()]++
	if (execname() == "false")
		printf("false ran, %d times now\n", execs["false"])
}
probe kernel.trace("syscalls:sys_enter_write") {
	if (execname() == "dd")
		writes <<< $count
}
probe end { print(@hist_log(writes)) }
END
chmod 644 "$script"
. ./guest/pmcd.rc
_pmda_compile "$script"

_pmcd_start
wait_for "qa408 to run" 100 value_is '"running"' stap.scripts.status qa408 ||
	{ _value stap.scripts.error qa408; cat "$pmda_log"; }
echo "modules of the kernel runtime: $(grep -c '^pmstap_kmod_' /proc/modules)"
echo "== the workload"
for i in 1 2 3 4 5 6 7; do /bin/true; done
for i in 1 2 3; do /bin/false; done
dd if=/dev/zero of=/dev/null bs=4096 count=5 status=none
dd if=/dev/zero of=/dev/null bs=512 count=3 status=none
wait_for "the counts" 30 value_is 3 stap.qa408.execs false
wait_for "the writes" 30 value_is 8 stap.qa408.writes.count
wait_for "the output" 30 value_is 3 stap.scripts.output_lines qa408
echo "== values"
pminfo -f stap.qa408.execs stap.qa408.writes.count stap.qa408.writes.sum \
	stap.qa408.writes.min stap.qa408.writes.max stap.qa408.writes.hist | ids
pmprobe -v stap.qa408.writes.count stap.qa408.execs
echo "== output (events)"
echo "lines: $(_value stap.scripts.output_lines qa408), the last: $(_value stap.scripts.last_output qa408)"
pminfo -f stap.scripts.output_text | sed -n '/"qa408"\] value/,/now"$/p' | ids
echo "== help and units"
pminfo -dtT stap.qa408.execs stap.qa408.writes.sum | ids
echo "== the script"
pminfo -f stap.scripts.status stap.scripts.errors | grep -E '^stap|qa408' | ids
pminfo -f stap.probes.attached | grep -E '^stap|qa408' | ids
echo "== the script's process killed: the PMDA removes its module, starts it again"
old=$(grep -o '^pmstap_kmod_[0-9]*' /proc/modules)
modules() { grep -o '^pmstap_kmod_[0-9]*' /proc/modules | tr '\n' ' '; }
new_module() { [ -n "$(modules)" ] && [ "$(modules)" != "$old " ]; }
pkill -KILL -x stap:qa408
wait_for "a new module" 60 new_module
wait_for "qa408 to run again" 60 value_is '"running"' stap.scripts.status qa408
grep -q "^$old " /proc/modules && echo "the old module is still there" ||
	echo "modules: $(modules | wc -w), the old one gone"
for i in 1 2; do /bin/true; done
wait_for "the new counts" 30 value_is 2 stap.qa408.execs true
pminfo -f stap.qa408.execs | ids
echo "restarts: $(_value stap.scripts.restarts qa408)"
echo "== pmcd stops"
kill $pmcd
wait $pmcd
gone() { ! grep -q '^pmstap_kmod_' /proc/modules; }
wait_for "the module to go" 30 gone && echo "no module left"
grep -E 'qa408' "$pmda_log" | grep -iE 'error|warning|cannot' | grep -v 'killed by signal 9'  # ours
exit 0
