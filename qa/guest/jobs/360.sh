# 360: kernel.function("ksys_read"): a hit per read, $count typed by BTF
cat >"$tmp/t.stp" <<'END'
global hits, sizes
probe kernel.function("ksys_read") {
	if ($fd == 42) {
		hits++
		sizes[$count]++
	}
}
probe end {
	printf("hits=%d\n", hits)
	foreach (n+ in sizes)
		printf("count=%d reads=%d\n", n, sizes[n])
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 1x100 100x5"
