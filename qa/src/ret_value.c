/*
 * ret_value - the workload of qa/401: functions whose results a guru-mode
 * script changes through the registers (--runtime=kernel).  Prints what
 * ret_zero() and arg_gate() returned, what getppid() and getpgrp() gave,
 * and what dup3(1, 100, 0) returned and which descriptor it made, then
 * main returns 0: a script may make it exit with another status.  Built -O2, so that the parameter is in a register at the
 * entry and the results in rax.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* 0, from a register. */
__attribute__((noinline)) int ret_zero(void)
{
	__asm__ volatile("");
	return 0;
}

/* X when it is over 100, else 0: a script that writes $x at the entry gets it back. */
__attribute__((noinline)) int arg_gate(int x)
{
	__asm__ volatile("");
	return x > 100 ? x : 0;
}

int main(int argc, char **argv)
{
	int fd;

	(void)argv;
	printf("ret_zero returned %d\n", ret_zero());
	printf("arg_gate(%d) returned %d\n", argc, arg_gate(argc));
	printf("getppid is 4242: %s\n", getppid() == 4242 ? "yes" : "no");
	printf("getpgrp is 777: %s\n", getpgrp() == 777 ? "yes" : "no");
	fd = dup3(1, 100, 0);
	printf("dup3(1, 100, 0) returned %d; fd 100 open: %s, fd 101 open: %s\n", fd,
	       fcntl(100, F_GETFD) != -1 ? "yes" : "no", fcntl(101, F_GETFD) != -1 ? "yes" : "no");
	fflush(stdout);
	return 0;
}
