# 395: --runtime=kernel: foreach with sorting and a limit in a kernel
# probe (by value and by key, ascending and descending, multi-key, a value
# variable, a limit expression, nested sorted loops, break and continue;
# over statistics, sorted on @count, @sum and @variance, and over slices),
# which BPF refuses: the module sorts; the output is user context's.
. "$REPO/qa/guest/kctx.rc"
_kctx foreach 'global a, b' '
	for (i = 0; i < 20; i++)
		a[i % 7, sprintf("k%02d", i)] = i * 13 % 37
	foreach ([x, y] in a- limit 5)
		printf("%d %s %d\n", x, y, a[x, y])
	foreach ([x, y+] in a limit 3)
		printf("key %d %s\n", x, y)
	foreach (v = [x, y-] in a limit 2 + 2)
		printf("desc %d %s %d\n", x, y, v)
	foreach ([x, y] in a+ limit 4)
		printf("asc %d %s\n", x, y)
	b["z"] = 1; b["a"] = 2; b["m"] = 3; b["q"] = -4
	foreach (k in b-)
		printf("%s=%d ", k, b[k])
	println("")
	foreach (k+ in b limit 2)
		printf("%s ", k)
	println("")
	foreach ([x-, y] in a limit 3) {
		printf("%d:", x)
		foreach (k in b+) {
			if (k == "m")
				continue
			if (b[k] > 2)
				break
			printf(" %s", k)
		}
		println("")
	}
	foreach ([x, y] in a limit 0)
		println("never")'
_kctx more 'global s, a' "$(sed -n '/^	for (k = 1/,/^	printf("%d in a/p' "$REPO/qa/guest/peer/kctx_foreach_more.stp")"
