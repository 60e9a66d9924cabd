# 423: --runtime=kernel: $vars of two modules' functions in one script,
# each read through its own module's BTF (split BTF: each module's type
# ids start where vmlinux's end, so the second one read is moved past the
# first).  The guest's root is 9p, so a command reading files walks 9p
# fids (9pnet's p9_client_walk: $oldfid->clnt->trans_mod->name, types of
# 9pnet's) and looks them up (9p's v9fs_fid_lookup: $return->clnt->msize,
# 9p's copy of the same types); the workload is that command.
cat >"$tmp/mm.stp" <<'END'
global walks, lookups, bad, trans
probe module("9pnet").function("p9_client_walk") {
	if (pid() != target()) next
	walks++
	trans = kernel_string($oldfid->clnt->trans_mod->name)
}
probe module("9p").function("v9fs_fid_lookup").return {
	if (pid() != target()) next
	lookups++
	if ($return && $return->clnt->msize <= 0) bad++
}
probe end {
	printf("9pnet walks: %s, transport %s\n", walks > 0 ? "seen" : "none", trans)
	printf("9p fid lookups: %s, with a bad msize: %d\n", lookups > 0 ? "seen" : "none", bad)
}
END
$PMSTAP --runtime=kernel "$tmp/mm.stp" -c "cat /etc/hostname /etc/debian_version" >"$tmp/mm.out"
echo "status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
grep -v '^[a-z0-9.]*$' "$tmp/mm.out"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
