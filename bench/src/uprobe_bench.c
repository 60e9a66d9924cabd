/*
 * uprobe_bench.c - the workload of bench/uprobe.sh: N calls of
 * bench_target(), a noinline function, timed; prints the seconds taken.
 *
 *	uprobe_bench N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int bench_target(int x);

__attribute__((noinline)) int bench_target(int x)
{
	__asm__ __volatile__("" ::: "memory");
	return x + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec a, b;
	volatile int sink = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sink += bench_target((int)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.9f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
