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
 *
 * kdata_work --hw-check: the control of whether this machine delivers
 * hardware breakpoints at all (a PVM guest's kernel takes them but never
 * fires them): a write watchpoint of its own on one of its variables,
 * which it then stores to 4 times; prints "watchpoint hits: H of 4" (H
 * from the perf event's count) and exits 0, or 1 when the event cannot
 * be opened.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

static volatile int watched;

static int hw_check(void)
{
	struct perf_event_attr a;
	uint64_t hits = 0;
	int fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uintptr_t)&watched;
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("kdata_work: perf_event_open (a breakpoint)");
		return 1;
	}
	for (int i = 0; i < 4; i++)
		watched = i;
	if (read(fd, &hits, sizeof(hits)) != (ssize_t)sizeof(hits)) {
		perror("kdata_work: read (the breakpoint's count)");
		return 1;
	}
	printf("watchpoint hits: %llu of 4\n", (unsigned long long)hits);
	return 0;
}

int main(int argc, char **argv)
{
	long n, pers;

	if (argc == 2 && strcmp(argv[1], "--hw-check") == 0)
		return hw_check();
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
