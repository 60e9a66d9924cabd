/*
 * getppid_bench - the benchmark workload: a tight loop of getppid() calls
 *
 *	getppid_bench [-o FILE] N
 *
 * Makes N getppid system calls (through syscall(2), so nothing is cached)
 * and prints the loop's elapsed time in nanoseconds, measured with
 * CLOCK_MONOTONIC around the loop only, to FILE (default stdout).  The
 * probe overhead per event is then (t_probed - t_unprobed) / N.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	long long t0, t1;
	long n, i;
	FILE *f = stdout;
	int c;

	while ((c = getopt(argc, argv, "o:")) != -1) {
		if (c != 'o')
			goto usage;
		out = optarg;
	}
	if (optind != argc - 1)
		goto usage;
	n = atol(argv[optind]);
	if (n <= 0)
		goto usage;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns();

	if (out && !(f = fopen(out, "w"))) {
		fprintf(stderr, "getppid_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "%lld\n", t1 - t0);
	return fclose(f) == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: getppid_bench [-o FILE] N\n");
	return 2;
}
