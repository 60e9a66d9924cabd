/*
 * kdata_work GO1 GO2 N - a workload for qa/177 (kernel.data probes): a
 * kernel address that it writes an exact number of times, its own
 * task_struct's personality (personality(2) stores to it on every call
 * but a query's).
 *
 * It waits until a writer opens the FIFO GO1, asks personality(0xffffffff)
 * (a query: no store; the test's probe on the syscall finds the task),
 * prints its pid; waits for GO2; then sets its personality to what it
 * is, N times (N stores), prints "stores: N" and exits.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void wait_fifo(const char *path)
{
	int fd = open(path, O_RDONLY);	/* blocks until a writer opens it */

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	long n, pers;

	if (argc != 4) {
		fprintf(stderr, "usage: kdata_work GO1 GO2 N\n");
		return 2;
	}
	n = atol(argv[3]);
	wait_fifo(argv[1]);
	pers = syscall(SYS_personality, 0xffffffffUL);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	wait_fifo(argv[2]);
	for (long i = 0; i < n; i++)
		syscall(SYS_personality, (unsigned long)pers);
	printf("stores: %ld\n", n);
	fflush(stdout);
	return 0;
}
