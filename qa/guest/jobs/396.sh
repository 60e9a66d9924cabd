# 396: --runtime=kernel: print, println, sprint and sprintln of @hist_log and @hist_linear
# in a kernel probe, which BPF refuses: the module sends the buckets
# merged over the CPUs, pmstap prints them as stap does; the output is
# user context's.  And foreach over their buckets.
. "$REPO/qa/guest/kctx.rc"
_kctx hist 'global s, l, t' '
	for (i = 1; i <= 100; i++) {
		s <<< i * 3
		l <<< i * 3
		t[i % 2] <<< i
	}
	printf("%d %d %d %d %d\n", @count(s), @sum(s), @min(s), @max(s), @avg(s))
	print(@hist_log(s))
	println(@hist_linear(l, 0, 300, 50))
	print(@hist_log(t[1]))
	l <<< -5; l <<< 1000
	print(@hist_linear(l, 0, 300, 50))'
# sprint and sprintln: the histogram printed into a string in the module,
# cut at MAXSTRINGLEN as user context cuts it
_kctx hist_sprint 'global s, l' '
	for (i = 1; i <= 6; i++) {
		s <<< i * 3
		l <<< i * 40
	}
	x = sprint(@hist_log(s))
	printf("%d bytes\n%s", strlen(x), x)
	printf("[%s]\n", sprintln(@hist_linear(l, 0, 300, 50)))
	for (i = 1; i <= 100; i++)
		s <<< i * 1000
	y = sprint(@hist_log(s))
	printf("%d bytes, cut: %s\n", strlen(y), substr(y, strlen(y) - 20, 20))'
# delete of a scalar statistic in a kernel probe: every CPU's partial
_kctx stat_delete 'global s' '
	s <<< 3; s <<< 5
	printf("%d %d\n", @count(s), @sum(s))
	delete s
	printf("%d %d\n", @count(s), @sum(s))
	s <<< 7
	printf("%d %d %d\n", @count(s), @min(s), @max(s))'
# foreach over a histogram's buckets (lowered in pass 2 to a loop every
# runtime has; BPF runs it too)
_kctx hist_foreach "$(printf 'global s, t, u\nprobe never { u <<< 1 }')" \
	"$(sed -n '/^	for (i = 0; i < 10/,/^	println("buckets of u/p' "$REPO/qa/guest/peer/kctx_hist_foreach.stp")"
