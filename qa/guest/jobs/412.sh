# 412: --runtime=kernel: uprobes in a module beyond process("PATH"):
# 1. process("PATH").mark("sem"), a marker behind a semaphore, which the
#    kernel raises while the uprobe is on (uprobe_register_refctr()):
#    it fires as often as the workload saw it raised, and more than 0
#    times; uf_00's entries count as its calls.
# 2. process(PID).function("uf_*"): two many_funcs wait, with other call
#    counts; the probes keep the first's hits only, so every count is the
#    first's control.  The first's pid is the one the host compile saw
#    (its own many_funcs, then ns_last_pid here), so that the guest runs
#    the build made on the host.
# 3. print_ubacktrace() and sprint_ubacktrace() at proc_work's first
#    getppid (main -> flame -> level1 -> level2; tracepoints),
#    print_ubacktrace() in a uprobe at level2 and ubacktrace() at level1's
#    second call: the frames named, the same as the bpf runtime's but
#    the last (6.1's verifier finds ubacktrace() in that uprobe's program
#    too large); addresses left out: they move with ASLR.
# The programs are copied to a tmpfs first (see tmpfs.rc).
. "$REPO/qa/guest/tmpfs.rc"
M=$(_tmpfs_copy many_funcs)
work=$(_tmpfs_copy proc_work)

cat >"$tmp/sem.stp" <<END
global sem, calls
probe process("$M").mark("sem") { sem++ }
probe process("$M").function("uf_00") { calls++ }
probe end { printf("sem %d\nuf_00 %d\n", sem, calls) }
END
echo "== a mark with a semaphore"
$PMSTAP --runtime=kernel "$tmp/sem.stp" -c "$M 5" >"$tmp/sem.out"
echo "status $?"
if [ -z "${GUEST_COMPILE_ONLY:-}" ]; then
	grep -E '^(sem|uf_00) ' "$tmp/sem.out" | sort | uniq -c | awk '
		$1 != 2 { print "differs from the workload: " $2 " " $3 }
		$2 == "sem" && $3 > 0 && $1 == 2 { print "mark fired as often as raised:", $3 }
		$2 == "uf_00" && $1 == 2 { print "uf_00 entered as often as called:", $3 }'
fi

# process(PID): the first workload's pid, as the host compile saw it
rm -f "$tmp/go.a" "$tmp/go.b"
mkfifo "$tmp/go.a" "$tmp/go.b"
exec 7<>"$tmp/go.a" 8<>"$tmp/go.b"	# open both ends: nothing blocks
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	"$M" -wait <"$tmp/go.a" >"$tmp/host.out" &
	hold=$!
	for i in $(seq 100); do grep -q . "$tmp/host.out" && break; sleep 0.1; done
	echo "$hold" >"$tmp/a.pid"
else
	hold=$(cat "$tmp/a.pid")
fi
cat >"$tmp/pid.stp" <<END
global calls
probe process($hold).function("uf_*") { calls[ppfunc()]++ }
probe end {
	foreach (f in calls)
		printf("%s %d\n", f, calls[f])
}
END
cat >"$tmp/go.sh" <<END
#!/bin/sh
echo go >"$tmp/go.a"
echo go >"$tmp/go.b"
while ! grep -q '^sem' "$tmp/a.out" || ! grep -q '^sem' "$tmp/b.out"; do sleep 0.1; done
END
chmod +x "$tmp/go.sh"
echo "== process(PID): one of two processes"
if [ -z "${GUEST_COMPILE_ONLY:-}" ]; then
	echo $((hold - 1)) >/proc/sys/kernel/ns_last_pid
	"$M" -wait 2 <"$tmp/go.a" >"$tmp/a.out" &
	[ "$!" = "$hold" ] || echo "the first workload's pid is $!, not $hold"
	"$M" -wait 1 <"$tmp/go.b" >"$tmp/b.out" &
	for i in $(seq 100); do grep -q . "$tmp/a.out" && grep -q . "$tmp/b.out" && break; sleep 0.1; done
fi
$PMSTAP --runtime=kernel "$tmp/pid.stp" -c "$tmp/go.sh" >"$tmp/pid.out"
echo "status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && kill "$hold"
if [ -z "${GUEST_COMPILE_ONLY:-}" ]; then
	wait
	grep '^uf_' "$tmp/a.out" | sort >"$tmp/a.control"
	sort "$tmp/pid.out" >"$tmp/pid.sorted"
	if cmp -s "$tmp/a.control" "$tmp/pid.sorted"; then
		echo "$(wc -l <"$tmp/pid.sorted") functions, each as often as the first workload called it"
	else
		diff "$tmp/a.control" "$tmp/pid.sorted"
	fi
fi

getppid=$(awk '$2 == "__NR_getppid" { print $3 }' /usr/include/x86_64-linux-gnu/asm/unistd_64.h)
cat >"$tmp/bt.stp" <<END
global n, m, k, s, e
probe kernel.trace("sys_enter") {
	if (pid() != target() || \$id != $getppid || n++)
		next
	printf("tracepoint:\\n")
	print_ubacktrace()
}
probe kernel.trace("sys_exit") {	/* the first getppid's: no call comes in between */
	if (pid() == target() && n == 1 && !s++)
		printf("%s\\n", sprint_ubacktrace())
	if (pid() == target() && n == 3 && !e++)
		exit()
}
probe process("$work").function("level2") {
	if (!m++) {
		printf("uprobe:\\n")
		print_ubacktrace()
	}
}
probe process("$work").function("level1") {
	if (k++ == 1)
		printf("%s\\n", ubacktrace())
}
END
echo "== user backtraces"
$PMSTAP --runtime=kernel "$tmp/bt.stp" -c "$work flame 3 0" >"$tmp/bt.kmod" 2>"$tmp/bt.kmod.err"
echo "kernel: status $?"
# the bpf runtime's, less ubacktrace() at level1: 6.1's verifier finds that program too large
sed '/function("level1")/,/^}/d; s/, k,/,/' "$tmp/bt.stp" >"$tmp/bt_bpf.stp"
$PMSTAP "$tmp/bt_bpf.stp" -c "$work flame 3 0" >"$tmp/bt.bpf" 2>"$tmp/bt.bpf.err"
echo "bpf: status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
# the workload's own "done" comes when it comes; the addresses move with ASLR
for r in kmod bpf; do
	grep -vx done "$tmp/bt.$r" | sed -E "s/0x[0-9a-f]+/ADDR/g; s|$tmp/bin/||g" >"$tmp/bt.$r.frames"
done
sed -E 's/^(ADDR )+ADDR$/ADDRS/' "$tmp/bt.kmod.frames"
cat "$tmp/bt.kmod.err" "$tmp/bt.bpf.err"
if head -n -1 "$tmp/bt.kmod.frames" | cmp -s - "$tmp/bt.bpf.frames"; then
	echo "the same frames on both runtimes"
else
	head -n -1 "$tmp/bt.kmod.frames" | diff - "$tmp/bt.bpf.frames"
fi
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
