/*
 * uprobe_bench.c - the workload of bench/uprobe.sh: N calls of
 * bench_target(), a noinline function, timed; prints the seconds taken.
 * With "framed", N calls of bench_framed() instead: the same with a local
 * in memory, so it is long enough (12 bytes) for the dyninst runtime's
 * 5-byte jump; bench_target is 4 bytes, where that runtime traps.
 *
 *	uprobe_bench N [framed]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <string.h>

int bench_target(int x);
int bench_framed(int x);

__attribute__((noinline)) int bench_target(int x)
{
	__asm__ __volatile__("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int bench_framed(int x)
{
	volatile int v = x;	/* a local in memory: a few more instructions */

	return v + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int (*fn)(int) = argc > 2 && !strcmp(argv[2], "framed") ? bench_framed : bench_target;
	struct timespec a, b;
	volatile int sink = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sink += fn((int)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.9f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
