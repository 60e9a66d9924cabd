/*
 * every_syscall - a workload for the QA tests: each syscall number once
 *
 *	every_syscall [-3 N]
 *
 * Calls every x86_64 syscall number from 0 to 511 (the x32 numbers start
 * at 512), each in a child of its own made for it, with arguments that
 * make it fail early: every argument -1 (no descriptor, no address, no
 * valid flag), except the few where -1 means "create" or "all".  The child
 * starts a session first (vhangup() then has no terminal to hang up), makes
 * no core file (rt_sigreturn() kills it), and is killed by SIGALRM after
 * 100 ms (pause() waits); then it exits.  The parent waits for each child.
 * vfork is libc's vfork(), whose child may return from it.
 *
 * -3 N: then N ia32 getppid calls (int $0x80, number 64, which is semget on
 * x86_64) in a child named every_sc_ia32; then "ia32 calls made: N" (0 where
 * the kernel killed the child: no IA-32 emulation).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_NR 512

/* Syscall NR's arguments into A, where all -1 would do harm. */
static void arguments(long nr, long a[6])
{
	for (int i = 0; i < 6; i++)
		a[i] = -1;
	switch (nr) {
#ifdef SYS_msgget
	case SYS_msgget:	/* -1 flags: IPC_CREAT, a queue that outlives the test */
		a[1] = 0;
		break;
#endif
	case SYS_init_module:	/* -1 length: a vmalloc of 2^64 bytes, told in the log */
		a[0] = a[1] = 0;
		break;
	case SYS_flock:		/* -1: LOCK_MAND, which the kernel warns about in its log */
		a[1] = 0;
		break;
	case SYS_kill:		/* pid -1: every process (the signal is invalid, but still) */
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_sigqueueinfo:
	case SYS_rt_tgsigqueueinfo:
		a[0] = a[1] = INT_MAX;
		break;
	}
}

static void in_child(long nr)
{
	struct rlimit none = { 0, 0 };
	struct itimerval stop = { { 0, 0 }, { 0, 100000 } };
	long a[6];

	setsid();
	setrlimit(RLIMIT_CORE, &none);
	setitimer(ITIMER_REAL, &stop, NULL);
	arguments(nr, a);
	if (nr == SYS_vfork) {	/* the child returns on the parent's stack: libc's knows */
		if (vfork() == 0)
			_exit(0);
	} else {
		syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	_exit(0);
}

static void ia32_getppid(int n)
{
	prctl(PR_SET_NAME, "every_sc_ia32");
	for (int i = 0; i < n; i++) {
		long ret, nr = 64;

#if defined(__x86_64__)
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr) : "memory");
#else
		ret = nr;
#endif
		(void)ret;
	}
	_exit(0);
}

/* FN(ARG) in a child; its wait status (-1: no child). */
static int run(void (*fn)(long), long arg)
{
	pid_t pid = fork();
	int status = -1;

	if (pid == 0)
		fn(arg);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	return status;
}

static void ia32_child(long n)
{
	ia32_getppid((int)n);
}

int main(int argc, char **argv)
{
	long ia32 = 0;

	if (argc == 3 && strcmp(argv[1], "-3") == 0)
		ia32 = atol(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: every_syscall [-3 N]\n");
		return 2;
	}
	for (long nr = 0; nr < MAX_NR; nr++)
		run(in_child, nr);
	if (ia32 > 0) {
		/* a kernel without IA-32 emulation kills it at its first int $0x80 */
		int status = run(ia32_child, ia32);
		bool ran = WIFEXITED(status) && WEXITSTATUS(status) == 0;

		printf("ia32 calls made: %ld\n", ran ? ia32 : 0);
		if (!ran)
			fprintf(stderr, "every_syscall: the ia32 child was killed by signal %d: "
				"this kernel runs no ia32 syscalls\n",
				WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	return 0;
}
