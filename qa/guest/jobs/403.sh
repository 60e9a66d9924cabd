# 403: --runtime=kernel: procfs("NAME").read and .write in the module, as
# stap's module runtime makes them: files in /proc/systemtap/MODULE (-m
# names MODULE) with stap's modes (0444 with a .read probe, 0222 with a
# .write probe, less the .read probe's umask and the first .write
# probe's); a reader (cat) gets what the .read handler put in $value, a
# writer's text (echo) is the .write handlers' $value, in pieces of
# MAXSTRINGLEN - 1 bytes; one file may have both; the folder goes at the
# end (/proc/systemtap stays, as stap leaves it).  maxsize(N): the answer
# is cut at N - 1 bytes and the handler raises stap's error, as the bpf
# runtime's FIFOs do.  A second run of the module is refused.  One process
# has a file open at a time: another one's open waits, and gives up when
# the script ends (which closes the file the first one holds).
dir=/proc/systemtap/qa403
cat >"$tmp/t.stp" <<'END'
global execs, last = "nothing", kept = "empty"
probe kernel.trace("sched:sched_process_exec") { if (execname() == "true") execs++ }
probe procfs("execs").read { $value = sprintf("%d\n", execs) }
probe procfs("last").umask(0022).read { $value = last }
probe procfs("cmd").write {
	last = $value
	printf("written: %s", $value)
	if ($value == "quit\n")
		exit()
}
probe procfs("open").umask(0).write { printf("open: %d bytes\n", strlen($value)) }
probe procfs("open").write { printf("open again: %d bytes\n", strlen($value)) }
probe procfs("rw").read { $value = "kept: " . kept }
probe procfs("rw").write { kept = $value }
probe procfs("rw2").umask(0002).read { $value = "x\n" }
probe procfs("rw2").umask(0040).write { last = $value }
probe procfs("big").read.maxsize(4096) {
	for (i = 0; i < 30; i++)
		$value .= sprintf("line %02d of a long answer\n", i)
}
probe end { printf("end\n") }
END
cat >"$tmp/small.stp" <<'END'
probe procfs("small").read.maxsize(8) { $value = "0123"; $value .= "456789" }
probe end { printf("end\n") }
END
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel -m qa403 "$tmp/t.stp"
	$PMSTAP --runtime=kernel -m qa403 "$tmp/small.stp"
	exit 0
fi

# wait_for WHAT CMD...: up to 60 s, polling
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	echo "timed out waiting for $what"
	return 1
}

klog0=$(dmesg | wc -l)
[ "$klog0" -gt 0 ] || echo "no kernel log to read"
timeout 120 $PMSTAP --runtime=kernel -m qa403 "$tmp/t.stp" >"$tmp/run.out" 2>&1 &
pid=$!
wait_for "the files" test -e "$dir/rw2"
echo "== the files and their modes"
(cd "$dir" && stat -c '%n %A' execs last cmd open rw rw2 big)
echo "== a second run of the module"
timeout 60 $PMSTAP --runtime=kernel -m qa403 "$tmp/small.stp" 2>&1
echo "status $?"

echo "== the counter: 3 runs of true between two reads"
a=$(cat "$dir/execs")
for i in 1 2 3; do /bin/true; done
b=$(cat "$dir/execs")
echo "rose by $((b - a))"

echo "== what echo writes, the .write handler gets"
echo hello >"$dir/cmd"
wait_for "the write" grep -q "^written: hello" "$tmp/run.out"
cat "$dir/last"
echo "== 1000 bytes: each .write handler of the file, once a piece"
head -c 1000 /dev/zero | tr '\0' x >"$dir/open"
wait_for "the pieces" grep -q "^open again: 489" "$tmp/run.out"
echo "== read and write on one file"
cat "$dir/rw"
echo
echo forty-two >"$dir/rw"
cat "$dir/rw"
echo "== .maxsize(4096): 30 lines"
cat "$dir/big" | sed -n '1p;$p;$='
echo "== the end while one process holds a file open and another waits to open it"
sleep 120 <"$dir/rw" &
holder=$!
wait_for "the holder" test "$(readlink /proc/$holder/fd/0)" = "$dir/rw"
cat "$dir/rw" >"$tmp/waiter.out" 2>&1 &
waiter=$!
wait_for "the waiter" grep -q "^stp_kprocfs_open" /proc/$waiter/wchan &&
	echo "the second opener waits in open()"
echo quit >"$dir/cmd"
wait $pid
echo "exit status $?"
wait $waiter
echo "waiter: status $?, $(sed 's/^cat: //' "$tmp/waiter.out")"
kill $holder
cat "$tmp/run.out"
echo "== after the end"
[ -e "$dir" ] && echo "$dir is still there" || echo "the folder is gone"
[ -d /proc/systemtap ] && echo "/proc/systemtap stays"

echo "== maxsize(8): cut at 7 bytes, stap's error"
timeout 60 $PMSTAP --runtime=kernel -m qa403 "$tmp/small.stp" >"$tmp/small.out" 2>&1 &
pid=$!
wait_for "the file" test -e "$dir/small"
cat "$dir/small"
echo
wait $pid
echo "exit status $?"
sed "s|$tmp|TMP|" "$tmp/small.out"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
echo "kernel warnings meanwhile: $(dmesg | tail -n +$((klog0 + 1)) | grep -c -E 'WARNING|BUG|Call Trace')"
