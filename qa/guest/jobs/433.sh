# 433: qa/432 with both runtimes in the guest: user addresses named in
# kernel context in a process that runs the probed program chrooted (a
# root of bind mounts: /usr, the build's bin folder at /opt/bin), under
# another path than the script names it by.  The module finds each
# probed file's inode as it loads (kern_path(), the file under the
# guest's overlay), the runner as bpf's loads (a page of it mapped):
# the names are those of the run outside, with the script's path.
. "$REPO/qa/guest/peer_both.rc"
D=$QA_BIN/dyn_stack
cat >"$tmp/n.stp" <<END
global names
probe process("$D").function("ds_inner")
{
	a = uaddr()
	names[sprintf("usymname: %s", usymname(a))] = 1
	names[sprintf("umodname: %s", umodname(a))] = 1
	names[sprintf("usymdata: %s", usymdata(a))] = 1
	names[sprintf("sprint_ustack:\n%s", sprint_ustack(ubacktrace()))] = 1
}
probe end { foreach (n+ in names) println(n) }
END
root=$tmp/root
cat >"$tmp/inroot.sh" <<END
mount --bind /usr '$root/usr' && mount --bind '$QA_BIN' '$root/opt/bin' &&
exec chroot '$root' /opt/bin/dyn_stack 1
END
mkroot="mkdir -p '$root/usr' '$root/opt/bin'; for l in lib lib64 bin; do ln -sfn usr/\$l '$root/'\$l; done"
_both outside "$tmp/n.stp" "$D 1"
_both inside "$tmp/n.stp" "unshare -m sh $tmp/inroot.sh" "$mkroot"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
show() { sed -E -e 's/0x[0-9a-f]{8,}/ADDR/g' -e "s|$QA_BIN/|BIN/|g" \
	-e 's/\+0x[0-9a-f]+\/0x[0-9a-f]+/+OFF\/SIZE/g' -e 's/\+0x[0-9a-f]+( |\])/+OFF\1/g' "$1"; }
show "$tmp/outside.kernel"
for rt in kernel bpf; do
	for w in outside inside; do show "$tmp/$w.$rt" >"$tmp/$w.$rt.f"; done
	diff "$tmp/outside.kernel.f" "$tmp/outside.$rt.f" && echo "$rt outside: the kernel runtime's names"
	diff "$tmp/outside.$rt.f" "$tmp/inside.$rt.f" && echo "$rt chrooted: the names of its run outside"
done
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
