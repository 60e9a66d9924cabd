# 365: $$parms at entry and $$return at the return of a kernel function
cat >"$tmp/t.stp" <<'END'
probe kernel.function("ksys_read") {
	if ($fd == 42)
		println($$parms)
}
probe kernel.function("ksys_read").return {
	if ($fd == 42)
		println($$return)
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 5" | sed 's/buf=0x[0-9a-f]*/buf=ADDR/'
exit ${PIPESTATUS[0]}
