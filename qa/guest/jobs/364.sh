# 364: kprobe.function("ksys_read") and its .return (a kretprobe: $return from ax)
cat >"$tmp/t.stp" <<'END'
global calls, returns, threes
probe kprobe.function("ksys_read") {
	if (pid() == target())
		calls++
}
probe kprobe.function("ksys_read").return {
	if (pid() == target()) {
		returns++
		if ($return == 3)
			threes++
	}
}
probe end {
	printf("returns of 3: %d\n", threes)
	printf("calls = returns: %s\n", calls == returns ? "yes" : sprintf("no (%d, %d)", calls, returns))
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 3x4"
