# 361: kernel.function("ksys_read").return: $return, and $fd read at entry
cat >"$tmp/t.stp" <<'END'
global rets
probe kernel.function("ksys_read").return {
	if ($fd == 42)
		rets[$return]++
}
probe end {
	foreach (r+ in rets)
		printf("return=%d calls=%d\n", r, rets[r])
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 3x2 4096x3"
