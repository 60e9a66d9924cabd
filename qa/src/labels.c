/*
 * labels - a function with goto labels, for .label() probes (qa/189):
 * work(N) passes label "again" N times (N > 0) and label "fail" once
 * when N < 0.  Runs work(ARG) (default 3), then work(-1).
 */
#include <stdio.h>
#include <stdlib.h>

int work(int n);

__attribute__((noinline)) int work(int n)
{
	int total = 0;

	if (n < 0)
		goto fail;
again:
	total += n;
	if (--n > 0)
		goto again;
	return total;
fail:
	fprintf(stderr, "negative\n");
	return -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	printf("%d\n", work(n));
	printf("%d\n", work(-1));
	return 0;
}
