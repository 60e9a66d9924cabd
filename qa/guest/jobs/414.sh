# 414: --runtime=kernel: module("dummy").function(...), its .return,
# module("dummy").statement("F") and kprobe.module("dummy").function(...):
# kprobes by "dummy:F", the functions found in dummy.ko (the guest's
# kernel snapshot had not loaded it).  The workload makes one dummy
# device (dummy_dev_init runs once, in ip, and returns 0), sends 7 UDP
# datagrams through it from the shell (each one dummy_xmit in the
# shell's process: the device has no ARP and no queue), the control being
# net:net_dev_xmit, and deletes it.  Then, dummy unloaded, the same script
# waits for it, as stap's module does (saying so): the workload loads it
# (modprobe), as above, unloads it, loads it again and makes one more
# device: every count as before, but dummy_dev_init twice.
cat >"$tmp/m.stp" <<'END'
global init, init_ret, init_rv, xmit, xmit_ret, xmit_stmt, kxmit, control
probe module("dummy").function("dummy_dev_init") {
	if (execname() == "ip")
		init++
}
probe module("dummy").function("dummy_dev_init").return {
	if (execname() == "ip") {
		init_ret++
		init_rv = $return
	}
}
probe module("dummy").function("dummy_xmit") { if (pid() == target()) xmit++ }
probe module("dummy").function("dummy_xmit").return { if (pid() == target()) xmit_ret++ }
probe module("dummy").statement("dummy_xmit") { if (pid() == target()) xmit_stmt++ }
probe kprobe.module("dummy").function("dummy_xmit") { if (pid() == target()) kxmit++ }
probe kernel.trace("net:net_dev_xmit") {
	if (pid() == target() && kernel_string($dev->name) == "pmstapd0")
		control++
}
probe end {
	printf("dummy_dev_init: %d, returned %d times, $return %d\n", init, init_ret, init_rv)
	printf("dummy_xmit: %d, .return %d, .statement %d, kprobe.module %d; net_dev_xmit %d\n",
	       xmit, xmit_ret, xmit_stmt, kxmit, control)
}
END
cat >"$tmp/work.sh" <<'END'
set -e
ip link add pmstapd0 type dummy
ip link set pmstapd0 up
ip addr add 10.213.0.1/24 dev pmstapd0
for i in 1 2 3 4 5 6 7; do echo x >/dev/udp/10.213.0.2/9; done
ip link del pmstapd0
END
cat >"$tmp/work2.sh" <<END
set -e
modprobe dummy numdummies=0
. $tmp/work.sh
rmmod dummy
modprobe dummy numdummies=0
ip link add pmstapd1 type dummy
ip link del pmstapd1
rmmod dummy
END
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel "$tmp/m.stp" -c "bash $tmp/work.sh"
	exit 0
fi
modprobe dummy numdummies=0 || echo "cannot load dummy"
echo "dummy loaded:"
$PMSTAP --runtime=kernel "$tmp/m.stp" -c "bash $tmp/work.sh"
echo "status $?"
rmmod dummy || echo "cannot unload dummy"
echo "dummy not loaded, then loaded by the workload, unloaded and loaded again:"
$PMSTAP --runtime=kernel "$tmp/m.stp" -c "bash $tmp/work2.sh" 2>&1
echo "status $?"
echo "dummy loaded at the end: $(grep -c "^dummy " /proc/modules)"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
