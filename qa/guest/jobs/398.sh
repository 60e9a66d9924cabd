# 398: --runtime=kernel: recursive and mutually recursive functions in a
# kernel probe, which BPF refuses: a module's functions push their frames,
# MAXNESTING deep at most (then stap's soft error); the output is user
# context's.
. "$REPO/qa/guest/kctx.rc"
_kctx recursion '
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }
function even(n) { return n == 0 ? 1 : odd(n - 1) }
function odd(n) { return n == 0 ? 0 : even(n - 1) }
function rev(s) { return strlen(s) <= 1 ? s : rev(substr(s, 1, 100)) . substr(s, 0, 1) }
function sum(n) { t = 0; for (i = 1; i <= n; i++) t += i; return n ? t + sum(n - 1) : 0 }' '
	printf("fib(8)=%d even(7)=%d odd(7)=%d rev=%s sum=%d\n", fib(8), even(7), odd(7),
	       rev("stap"), sum(5))'
_kctx deep '
function down(n) { return n == 0 ? 0 : 1 + down(n - 1) }' '
	printf("%d\n", down(9))
	printf("%d\n", down(50))'
