# 397: --runtime=kernel: array slices with `in` and `delete` in a kernel
# probe ([1, *], [*, "k3"], [*, *]): the module walks the array; the
# output is user context's (and the bpf runtime's: qa/155).
. "$REPO/qa/guest/kctx.rc"
_kctx slice 'global a, s' '
	for (i = 0; i < 12; i++)
		a[i % 3, sprintf("k%d", i % 4)] = i
	printf("%d %d %d %d\n", [1, *] in a, [*, "k3"] in a, [*, "nope"] in a, [*, *] in a)
	delete a[*, "k1"]
	printf("%d %d\n", [*, "k1"] in a, [1, *] in a)
	delete a[1, *]
	printf("%d %d\n", [1, *] in a, [2, "k2"] in a)
	n = 0
	foreach ([x, y] in a)
		n++
	printf("%d left\n", n)
	delete a[*, *]
	printf("%d\n", [*, *] in a)
	s[1, 2] <<< 5; s[2, 2] <<< 6; s[3, 1] <<< 7
	delete s[*, 2]
	printf("%d %d %d\n", [*, 2] in s, [3, *] in s, @count(s[3, 1]))'
