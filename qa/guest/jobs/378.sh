# 378: --runtime=kernel: process("PATH").library("LIB") probes in PATH's
# processes only.  The module's uprobe on LIB fires in every process that
# maps it; uprobe_target and its stripped copy load the same
# libuprobe_lib.so ($ORIGIN), and process("uprobe_target")'s library
# probe must count uprobe_target's 5 rounds, not the copy's 3 (qa/184 is
# the bpf runtime's).  Copied to a tmpfs first (see tmpfs.rc).
. "$REPO/qa/guest/tmpfs.rc"
T=$(_tmpfs_copy uprobe_target)
_tmpfs_copy uprobe_target.stripped >/dev/null
_tmpfs_copy libuprobe_lib.so >/dev/null

cat >"$tmp/lib.stp" <<END2
global n
probe process("$T").library("libuprobe_lib.so").function("ulib_square") {
	n[execname()]++
}
probe end {
	foreach (e+ in n)
		printf("%s: %d\n", e, n[e])
}
END2
$PMSTAP --runtime=kernel "$tmp/lib.stp" -c "sh -c '$T 5 >/dev/null; $T.stripped 3 >/dev/null'"
echo "status $?"
