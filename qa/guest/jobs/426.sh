# 426: probes resolved from DWARF, each the same as stap 4.8's module in
# the peer run, with both runtimes (the kernel runtime's output, then
# bpf's the same): kp_mod_dwarf, module("dummy") from dummy.ko's DWARF
# (an @FILE wildcard, inline instances and their $len located by the
# module's DWARF); kp_twice, static functions the kernel has three of,
# each probed in the file named.  dummy is loaded first: a BPF kprobe
# needs its module there when it attaches.
[ -n "${GUEST_COMPILE_ONLY:-}" ] || modprobe dummy numdummies=0 || echo "cannot load dummy"
. "$REPO/qa/guest/peer_both.rc"
_peer_both kp_mod_dwarf kp_twice
[ -n "${GUEST_COMPILE_ONLY:-}" ] || rmmod dummy || echo "cannot unload dummy"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
