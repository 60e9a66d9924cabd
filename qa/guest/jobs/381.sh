# 381: --runtime=kernel under faults: a handler that divides by zero at
# every hit (one soft error, stap's text, the run stops with status 1:
# the bpf runtime's output); a pmstap killed with SIGKILL leaves its module,
# which the next run removes and says so; nothing stays loaded.
cat >"$tmp/div.stp" <<'END'
global n
probe kernel.function("ksys_read") {
	if ($fd == 42) {
		n++
		printf("read %d of %d bytes\n", n, $count)
		n += 10 / ($count - $count)
	}
}
probe end { printf("end: %d reads\n", n) }
END
cat >"$tmp/hold.stp" <<'END'
probe kernel.function("ksys_read") { if ($fd == 4242) println("never") }
END
for rt in kernel bpf; do
	timeout 60 $PMSTAP --runtime=$rt "$tmp/div.stp" -c "$QA_BIN/read_sizes 1x3" >"$tmp/out.$rt" 2>&1
	echo "$rt: status $?"
done
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel "$tmp/hold.stp"
	exit 0
fi
sed "s|$tmp|TMP|" "$tmp/out.kernel"
diff "$tmp/out.kernel" "$tmp/out.bpf" && echo "the same output on both runtimes"

# SIGKILL: wait for the module, kill pmstap, find the module left, run again
$PMSTAP --runtime=kernel "$tmp/hold.stp" >/dev/null 2>&1 &
pid=$!
for i in $(seq 600); do
	grep -q "^pmstap_kmod_$pid " /proc/modules && break
	sleep 0.1
done
grep -q "^pmstap_kmod_$pid " /proc/modules && echo "module loaded"
kill -9 $pid
wait $pid 2>/dev/null
grep -q "^pmstap_kmod_$pid " /proc/modules && echo "module left behind by the killed pmstap"
timeout 60 $PMSTAP --runtime=kernel "$tmp/hold.stp" -c true 2>&1 | sed "s/_$pid\b/_PID/; s/pmstap $pid\b/pmstap PID/"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
