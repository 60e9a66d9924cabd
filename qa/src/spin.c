/*
 * spin - a workload for the QA tests: burn CPU time
 *
 *	spin MSEC
 *
 * Runs a busy loop in user space until the process has used MSEC
 * milliseconds of CPU time (CLOCK_PROCESS_CPUTIME_ID), then exits 0.
 * Sampling probes (timer.profile, perf.sw.cpu_clock) see it on a CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	volatile unsigned long sink = 0;
	long long until;
	long i;

	if (argc != 2) {
		fprintf(stderr, "usage: spin MSEC\n");
		return 2;
	}
	until = cpu_ns() + atoll(argv[1]) * 1000000LL;
	while (cpu_ns() < until)
		for (i = 0; i < 10000; i++)
			sink += i;
	return 0;
}
