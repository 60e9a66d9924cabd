# 411: --runtime=kernel: process.begin/end and thread.begin/end in a
# module, on the sched tracepoints as the bpf runtime's (and process.end
# of an image that ends at an exec, a kprobe at begin_new_exec()).
# 1. A -c command that execs itself and forks a child: its events in
#    order, with pid(), ppid() and execname() of the task each is about.
# 2. Counts against the workload's: proc_work threads 7 starts and ends
#    7 threads; process("PATH") sees the command's file (a tmpfs copy: the
#    kernel's inode of a file on the guest's overlay root is not the one
#    stat() gives).
# 3. process(PID).begin fires once for a process that runs already when
#    the script starts, and process.begin (no -c) for it too; its threads
#    get thread.begin.  Its pid is fixed (ns_last_pid) so that the script
#    compiled on the host is the one the guest runs.
. "$REPO/qa/guest/tmpfs.rc"
work=$(_tmpfs_copy proc_work)
cat >"$tmp/ev.stp" <<'END'
function who:string() { return pid() == target() ? "target" : "child" }
probe process.begin
{
	printf("begin %s %s parent=%s\n", who(), execname(), ppid() == target() ? "target" : "other")
}
probe process.end { printf("end %s %s\n", who(), execname()) }
END
echo "== events of $work exec $work fork" | sed "s|$tmp/bin/||g"
$PMSTAP --runtime=kernel "$tmp/ev.stp" -c "$work exec $work fork"
echo "status $?"

cat >"$tmp/n.stp" <<END
global pb, pe, tb, te, xb, xe, tids
probe process.begin { pb++ }
probe process.end { pe++ }
probe thread.begin { tb++; tids[tid()] = 1 }
probe thread.end { if (tid() in tids) te++ }
probe process("$work").begin { xb++ }
probe process("$work").end { xe++ }
probe end {
	printf("process.begin %d, process.end %d\n", pb, pe)
	printf("thread.begin %d, thread.end of those %d\n", tb, te)
	printf("process(PATH).begin %d, .end %d\n", xb, xe)
}
END
echo "== counts of $work threads 7" | sed "s|$tmp/bin/||g"
$PMSTAP --runtime=kernel "$tmp/n.stp" -c "$work threads 7"
echo "status $?"

pid=23456
cat >"$tmp/pid.stp" <<END
global byp, all, tb
probe process($pid).begin { byp++ }
probe process.begin { if (pid() == $pid) all++ }
probe thread.begin { if (pid() == $pid) tb++ }
probe begin { printf("begin\n") }
probe timer.ms(100) { exit() }
probe end { printf("process(PID).begin %d, process.begin %d, thread.begin %d\n", byp, all, tb) }
END
if [ -z "${GUEST_COMPILE_ONLY:-}" ]; then
	echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid
	"$work" hold 3 60 >"$tmp/hold.out" &
	holder=$!
	[ "$holder" = "$pid" ] || echo "the holder's pid is $holder, not $pid"
	for i in $(seq 100); do grep -q ready "$tmp/hold.out" && break; sleep 0.1; done
fi
echo "== a process running already, its pid given"
$PMSTAP --runtime=kernel "$tmp/pid.stp"
echo "status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
kill "$holder"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
