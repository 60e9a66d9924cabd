/*
 * uprobe_target.c - a workload for the user-space probe tests (qa/300-319).
 *
 *	uprobe_target [N]	work_start() first thing, then N rounds of:
 *				work_add(i, 2 * i) (returns 3 * i), work_sub(i, 1)
 *				every round, work_mul(i, 3) on odd rounds,
 *				ulib_square(i) in libuprobe_lib.so, and the SDT
 *				marks uprobe_target:round (i, -i, "round") and
 *				uprobe_target:traced (uprobe_traced.c: it has a
 *				semaphore, and fires only while it is raised); then
 *				prints whether the semaphore was ever raised
 *	uprobe_target -loop S	the same rounds, one every 10 ms for S seconds
 *				(for -x PID); prints its pid first
 *
 * Functions are noinline so that each call is a probe hit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sdt.h>

int ulib_square(int x);
int traced_mark(int i);		/* uprobe_traced.c: the mark with a semaphore */

#define NOINLINE __attribute__((noinline))

NOINLINE int work_start(void);
NOINLINE int work_add(int a, int b);
NOINLINE long work_sub(long a, long b);
NOINLINE unsigned work_mul(unsigned a, unsigned b);

static volatile int sink;

NOINLINE int work_start(void)
{
	sink = 1;
	return 42;
}

NOINLINE int work_add(int a, int b)
{
	return a + b;
}

NOINLINE long work_sub(long a, long b)
{
	return a - b;
}

NOINLINE unsigned work_mul(unsigned a, unsigned b)
{
	return a * b;
}

static int semaphore_seen;

static void one_round(int i)
{
	char tag[8] = "round";	/* on the stack: a page a probe can read */

	sink += work_add(i, 2 * i);
	sink += (int)work_sub(i, 1);
	if (i % 2)
		sink += (int)work_mul((unsigned)i, 3);
	sink += ulib_square(i);
	STAP_PROBE3(uprobe_target, round, i, (long)-i, tag);
	semaphore_seen |= traced_mark(i);
}

int main(int argc, char **argv)
{
	struct timespec tick = { 0, 10 * 1000000 };
	int n;

	work_start();
	if (argc > 2 && strcmp(argv[1], "-loop") == 0) {
		int rounds = atoi(argv[2]) * 100;

		printf("%d\n", (int)getpid());
		fflush(stdout);
		for (int i = 1; i <= rounds; i++) {
			one_round(i);
			nanosleep(&tick, NULL);
		}
		return 0;
	}
	n = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 1; i <= n; i++)
		one_round(i);
	printf("semaphore %s\n", semaphore_seen ? "raised" : "never raised");
	return 0;
}
