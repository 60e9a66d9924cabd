# 365: $$parms at entry and $$return at the return of a kernel function,
# each probe's pp() as stap 4.8 names it (NAME@FILE:LINE, from the
# kernel's DWARF); $$parms$ and $$parms$$ formatted (the peer script
# kp_parms_pretty, stap 4.8's output there) with both runtimes
cat >"$tmp/t.stp" <<'END'
probe kernel.function("ksys_read") {
	if ($fd == 42)
		printf("%s\n%s\n", pp(), $$parms)
}
probe kernel.function("ksys_read").return {
	if ($fd == 42)
		printf("%s\n%s\n", pp(), $$return)
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 5" | sed 's/buf=0x[0-9a-f]*/buf=ADDR/'
rc=${PIPESTATUS[0]}
for rt in bpf kernel; do
	echo "kp_parms_pretty, $rt runtime:"
	$PMSTAP --runtime=$rt "$REPO/qa/guest/peer/kp_parms_pretty.stp" -c "$QA_BIN/lseek_args 7 -5 1"
	echo "status $?"
done
exit $rc
