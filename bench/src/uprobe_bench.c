/*
 * uprobe_bench.c - the workload of bench/uprobe.sh: N calls of
 * bench_target(), a noinline function, timed; prints the seconds taken.
 * With "framed", N calls of bench_framed() instead: the same with a local
 * in memory, so it is long enough (12 bytes) for the dyninst runtime's
 * 5-byte jump; bench_target is 4 bytes, where that runtime traps.
 *
 * With a thread count T, T threads make the N calls each, at once, and
 * the seconds are the wall time of all of them (bench/dyninst-threads.sh).
 *
 *	uprobe_bench N [framed [T]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pthread.h>
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

static long calls;
static int (*fn)(int);

static void *calls_thread(void *arg)
{
	volatile int sink = 0;

	for (long i = 0; i < calls; i++)
		sink += fn((int)i);
	return arg;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t tid[64];
	struct timespec a, b;

	calls = argc > 1 ? atol(argv[1]) : 1000000;
	fn = argc > 2 && !strcmp(argv[2], "framed") ? bench_framed : bench_target;
	if (nthreads > 64)
		nthreads = 64;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&tid[t], NULL, calls_thread, NULL);
	for (int t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	if (nthreads <= 0)
		calls_thread(NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.9f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
