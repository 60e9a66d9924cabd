# 428: --runtime=kernel: the probed program's addresses named as strings
# in its probes, from the file's symbols the module carries, as stap's
# module does (qa/guest/peer/uprobe_usym.stp: the same lines as stap's):
# probefunc() is usymname(uaddr()), in a .return the caller; usymdata()
# the symbol, the offset, the distance to the next symbol and the file;
# bpf the same.  Then sprint_ubacktrace()'s first line kept as a string,
# and probefunc() in a timer.profile sample of user code.
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
# probefunc() of a timer.profile sample in user mode: usymname(uaddr()),
# from the symbols of spin, which a process probe names (in interrupt
# context: the module reads the file's path from its dentries)
# (a sample may name any of spin's symbols: a PLT stub's is _init, as stap
# names it; a name that is not spin's is a fault)
S=$QA_BIN/spin
syms=$(nm --defined-only "$S" | awk 'NF == 3 { printf "\tspin[\"%s\"] = 1\n", $3 }')
cat >"$tmp/prof.stp" <<END
global names, started, spin
probe begin {
$syms
}
probe process("$S").function("main") { started++ }
probe timer.profile {
	if (pid() != target() || !user_mode()) next
	f = probefunc()
	names[f =~ "^0x[0-9a-f]+\$" ? "hex" : f in spin ? f : "other: " . f]++
}
probe end {
	printf("main sampled: %s\n", names["main"] ? "yes" : "no")
	foreach (f+ in names)
		if (f =~ "^other")
			println(f)
}
END
for rt in kernel bpf; do
	echo "== $rt: timer.profile"
	$PMSTAP --runtime=$rt "$tmp/prof.stp" -c "$S 300" 2>&1
	echo "status $?"
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
