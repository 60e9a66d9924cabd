/*
 * getppid_loop - a workload for the QA tests: exact numbers of getppid()
 *
 *	getppid_loop [-t THREADS] [-d USEC] [-p PIDFILE] N
 *
 * Makes exactly N getppid system calls in each of THREADS threads (default
 * 1; the main thread makes none when THREADS > 1), then exits 0.  N of 0
 * loops until killed.  -d sleeps USEC microseconds after each call.  -p
 * writes the process id to PIDFILE first (written to a temporary name and
 * renamed, so a reader never sees it half written).
 *
 * The calls go through syscall(2) so no C library can cache or skip them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long ncalls;
static long delay_us;

static void usage(void)
{
	fprintf(stderr, "usage: getppid_loop [-t THREADS] [-d USEC] [-p PIDFILE] N\n");
	exit(2);
}

static long parse_count(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0)
		usage();
	return v;
}

static void nap(void)
{
	struct timespec ts = {
		.tv_sec = delay_us / 1000000,
		.tv_nsec = (delay_us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void *calls(void *arg)
{
	long i;

	for (i = 0; ncalls == 0 || i < ncalls; i++) {
		syscall(SYS_getppid);
		if (delay_us)
			nap();
	}
	return arg;
}

static void write_pidfile(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 ||
	    rename(tmp, path) != 0) {
		fprintf(stderr, "getppid_loop: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	pthread_t tids[64];
	long nthreads = 1, i;
	int c;

	while ((c = getopt(argc, argv, "t:d:p:")) != -1) {
		switch (c) {
		case 't':
			nthreads = parse_count(optarg);
			if (nthreads < 1 || nthreads > 64)
				usage();
			break;
		case 'd':
			delay_us = parse_count(optarg);
			break;
		case 'p':
			write_pidfile(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	ncalls = parse_count(argv[optind]);

	if (nthreads == 1) {
		calls(NULL);
		return 0;
	}
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&tids[i], NULL, calls, NULL) != 0) {
			fprintf(stderr, "getppid_loop: cannot create a thread\n");
			return 1;
		}
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
