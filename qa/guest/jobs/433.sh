# 433: qa/432 with both runtimes in the guest: user addresses named in
# kernel context in a process that runs the probed program chrooted (a
# root of bind mounts: /usr, the build's bin folder at /opt/bin), under
# another path than the script names it by.  The module finds each
# probed file's inode as it loads (kern_path(), the file under the
# guest's overlay), the runner as bpf's loads (a page of it mapped):
# the names are those of the run outside, with the script's path.
. "$REPO/qa/guest/peer_both.rc"
D=$QA_BIN/dyn_stack
. "$REPO/qa/usym_chroot.rc"
_usym_chroot_files "process(\"$D\").function(\"ds_inner\")"
_both outside "$tmp/n.stp" "$D 1"
_both inside "$tmp/n.stp" "unshare -m sh $tmp/inroot.sh" _usym_chroot_root
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
_usym_chroot_show "$tmp/outside.kernel"
for rt in kernel bpf; do
	for w in outside inside; do _usym_chroot_show "$tmp/$w.$rt" >"$tmp/$w.$rt.f"; done
	diff "$tmp/outside.kernel.f" "$tmp/outside.$rt.f" && echo "$rt outside: the kernel runtime's names"
	diff "$tmp/outside.$rt.f" "$tmp/inside.$rt.f" && echo "$rt chrooted: the names of its run outside"
done
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
