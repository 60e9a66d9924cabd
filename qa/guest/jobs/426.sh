# 426: probes resolved from DWARF, each the same as stap 4.8's module in
# the peer run, with both runtimes (the kernel runtime's output, then
# bpf's the same): kp_mod_dwarf, module("dummy") from dummy.ko's DWARF
# (an @FILE wildcard, inline instances and their $len located by the
# module's DWARF); kp_twice, static functions the kernel has three of,
# each probed in the file named; kp_plain_inline, a plain name's inline
# instance in its own file (__fdget in __fdget_pos); kp_probefunc and
# kp_return_addr, probefunc() and addr() as
# stap's symname(addr()): the function an inline instance is in, and in
# a .return the caller (BPF makes a kretprobe of such a .return, whose
# registers hold the return address, where an fexit program has none).
# Then kp_plain_header's put_page (a header's function, inlined in
# copy_strings, which probefunc() names) with BPF, which leaves out its
# points in notrace functions (the main copy among them), saying so.
# kp_mod_dwarf's setup loads dummy: a BPF
# kprobe needs its module there when it attaches.
. "$REPO/qa/guest/peer_both.rc"
_peer_both kp_mod_dwarf kp_twice kp_plain_inline kp_probefunc kp_return_addr
[ -n "${GUEST_COMPILE_ONLY:-}" ] || rmmod dummy || echo "cannot unload dummy"
# a module's init and exit code, which stap's blocklist leaves to
# modules: the kernel runtime probes it as the module comes and goes
# (dummy not loaded at the start); BPF cannot (notrace), and says so
cat >"$tmp/ie.stp" <<'END'
global hits
probe module("dummy").function("*@drivers/net/dummy.c"), module("dummy").function("*").inline {
	if (execname() == "modprobe" || execname() == "rmmod")
		hits[sprintf("%s: %s", execname(), pp())]++
}
probe end {
	foreach (k+ in hits)
		println(k)
}
END
$PMSTAP --runtime=kernel "$tmp/ie.stp" -c "sh -c 'modprobe dummy numdummies=1 && rmmod dummy'" 2>&1
echo "status $?"
$PMSTAP --runtime=bpf -p2 "$tmp/ie.stp" 2>&1 | grep -A2 warning | sed "s|$tmp/||"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
$PMSTAP --runtime=bpf "$REPO/qa/guest/peer/kp_plain_header.stp" -c "cat /etc/debian_version" 2>&1 |
	sed "s|$REPO/qa/guest/peer/||"
echo "status ${PIPESTATUS[0]}"
