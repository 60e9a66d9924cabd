# 406: --runtime=kernel: process.syscall and process.syscall.return in a
# module.  A -c command's getppid calls (exactly 1000, and 3 in the
# child it forks: strace agrees, qa/163) are counted at entry and at
# return by number ($syscall), by process.syscall (target()'s tree) and
# by process("PATH") (the command's file); the write to descriptor 9 has
# $arg1 9 and $arg3 37 and returns 37, the close of a descriptor not
# open returns -EBADF, as with the bpf runtime (qa/163).  The command is
# copied to a tmpfs first: on the guest's overlay root the kernel's inode
# of a running file is not the one stat() gives, which process("PATH")
# compares with.
. "$REPO/qa/guest/tmpfs.rc"
work=$(_tmpfs_copy usyscall_work)
read -r _ _ getppid _ write _ close <<<"$("$work" 0)"
cat >"$tmp/sc.stp" <<END
global enter, ret, path_enter, marked, wfd, wlen, wret, cret
probe process.syscall {
	if (\$syscall == \$1)
		enter++
	if (\$syscall == \$2 && \$arg1 == 9) {
		wfd = \$arg1
		wlen = \$arg3
		marked[tid()] = 1
	}
}
probe process.syscall.return {
	if (\$syscall == \$1)
		ret++
	if (\$syscall == \$2 && tid() in marked) {
		wret = \$return
		delete marked[tid()]
	}
	if (\$syscall == \$3 && \$return < 0)
		cret = \$return
}
probe process("$work").syscall { if (\$syscall == \$1) path_enter++ }
probe end {
	printf("getppid: %d entered, %d returned, process(PATH): %d\n", enter, ret, path_enter)
	printf("write(%d, ..., %d) = %d\n", wfd, wlen, wret)
	printf("close: %d\n", cret)
}
END
$PMSTAP --runtime=kernel "$tmp/sc.stp" -c "$work 1000" "$getppid" "$write" "$close" | grep -v '^nr '
echo "status ${PIPESTATUS[0]}"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
