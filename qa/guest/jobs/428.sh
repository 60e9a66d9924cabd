# 428: --runtime=kernel: the probed program's addresses named as strings
# in its probes, from the file's symbols the module carries, as stap's
# module does (qa/guest/peer/uprobe_usym.stp: the same lines as stap's):
# probefunc() is usymname(uaddr()), in a .return the caller; usymdata()
# the symbol, the offset, the distance to the next symbol and the file;
# bpf the same.  Then sprint_ubacktrace()'s first line kept as a string.
# (qa/215 runs the bpf and dyninst runtimes on the host.)
. "$REPO/qa/guest/peer_both.rc"
_peer_both uprobe_usym
T=$(_tmpfs_copy dwarf_target)
cat >"$tmp/bt.stp" <<END
global frames
probe process("$T").function("dt_fact").return {
	bt = sprint_ubacktrace()
	frames[substr(bt, 0, strpos(bt, "\n"))]++
}
probe end {
	foreach (l+ in frames)
		printf("%s %d\n", l, frames[l])
}
END
$PMSTAP --runtime=kernel "$tmp/bt.stp" -c "$T" 2>&1
echo "status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
