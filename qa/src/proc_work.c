/*
 * proc_work - workloads for the process/thread and backtrace tests
 * (qa/340-359):
 *
 *	proc_work threads N	start N threads, each exits at once; join them
 *	proc_work stack N	N getppid() system calls from main -> level1 ->
 *				level2, made in level2 itself (an inline syscall),
 *				so that a frame-pointer walk names all three;
 *				a millisecond apart
 *	proc_work flame A B	A getppid() calls from main -> level1 -> level2,
 *				then B from main -> flame_b -> level2; print
 *				"done" and wait for a signal (alive while its
 *				stacks are named: qa/153's flame graph)
 *	proc_work fork		fork a child that exits 7; wait for it
 *	proc_work addr		print the addresses of main, level1 and level2
 *	proc_work hold N S	start N threads that sleep; print "ready" once they
 *				run, then sleep S seconds (a process that runs
 *				already when a script starts)
 *	proc_work exec PROG ARG...	execv() PROG (an image that ends at exec)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg)
{
	return arg;
}

static void *thread_sleep(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static int hold(int n, int secs)
{
	pthread_t t;

	for (int i = 0; i < n && i < 64; i++)
		if (pthread_create(&t, NULL, thread_sleep, NULL) != 0)
			return 1;
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}

static int threads(int n)
{
	pthread_t t[64];

	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

long level1(void);
long level2(void);
long flame_b(void);

__attribute__((noinline)) long level2(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) long level1(void)
{
	long r = level2();

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) long flame_b(void)
{
	long r = level2();

	__asm__ volatile("" ::: "memory");
	return r + 2;
}

static int flame(int a, int b)
{
	for (int i = 0; i < a; i++)
		level1();
	for (int i = 0; i < b; i++)
		flame_b();
	printf("done\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 1;
	pid_t child;
	int status;

	if (strcmp(mode, "threads") == 0)
		return threads(n);
	if (strcmp(mode, "stack") == 0) {
		for (int i = 0; i < n; i++) {
			level1();
			usleep(1000);	/* alive while the runner names its frames */
		}
		return 0;
	}
	if (strcmp(mode, "flame") == 0)
		return flame(n, argc > 3 ? atoi(argv[3]) : 0);
	if (strcmp(mode, "fork") == 0) {
		child = fork();
		if (child == 0)
			_exit(7);
		waitpid(child, &status, 0);
		return WEXITSTATUS(status) == 7 ? 0 : 1;
	}
	if (strcmp(mode, "hold") == 0)
		return hold(n, argc > 3 ? atoi(argv[3]) : 30);
	if (strcmp(mode, "exec") == 0 && argc > 2) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	if (strcmp(mode, "addr") == 0) {
		printf("main %p\nlevel1 %p\nlevel2 %p\n", (void *)main, (void *)level1,
		       (void *)level2);
		return 0;
	}
	fprintf(stderr, "usage: proc_work threads|stack|flame|fork|addr|hold|exec [N]\n");
	return 2;
}
