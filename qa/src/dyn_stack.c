/*
 * dyn_stack - user stacks for the dyninst runtime's backtrace test
 * (qa/375): main -> ds_outer -> ds_middle -> ds_inner, every function with
 * a frame pointer (built -O0 -fno-omit-frame-pointer), so that a
 * frame-pointer walk from ds_inner names them all.
 *
 *	dyn_stack N [FIFO]	the chain N times, print the sum of what
 *				ds_outer returned; then, with FIFO, open it and
 *				read to its end before exiting (the process is
 *				alive until the test writes to it)
 *	dyn_stack lost		ds_inner called from ds_astray with a frame
 *				pointer that points nowhere (0x10): a walk
 *				ends there
 *	dyn_stack loop		ds_inner called from ds_astray with a frame
 *				pointer to a frame that links to itself (its
 *				return address ds_outer's): a walk goes on
 *				until its buffer is full
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long ds_outer(long i);
long ds_middle(long i);
long ds_inner(long i);
long ds_astray(long i, uintptr_t fp);

__attribute__((noinline)) long ds_inner(long i)
{
	__asm__ __volatile__("" ::: "memory");
	return i * 2;
}

__attribute__((noinline)) long ds_middle(long i)
{
	long r = ds_inner(i + 1);

	__asm__ __volatile__("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) long ds_outer(long i)
{
	long r = ds_middle(i);

	__asm__ __volatile__("" ::: "memory");
	return r + 1;
}

/* ds_inner(I) with %rbp = FP: on a 16-byte aligned stack below the red zone; %rbp put back. */
__attribute__((noinline)) long ds_astray(long i, uintptr_t fp)
{
	long r;

	__asm__ __volatile__("mov %%rsp, %%rbx\n\t"
			     "sub $128, %%rsp\n\t"
			     "and $-16, %%rsp\n\t"
			     "push %%rbp\n\t"
			     "push %%rbp\n\t"
			     "mov %[fp], %%rbp\n\t"
			     "call ds_inner\n\t"
			     "pop %%rbp\n\t"
			     "pop %%rbp\n\t"
			     "mov %%rbx, %%rsp"
			     : "=a"(r), "+D"(i)
			     : [fp] "r"(fp)
			     : "rbx", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc");
	return r;
}

/* A frame that is its own next one, returning to ds_outer. */
static uintptr_t loop_frame[2];

static int wait_fifo(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		return 1;
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long n, sum = 0;

	if (argc == 2 && strcmp(argv[1], "lost") == 0) {
		printf("astray %ld\n", ds_astray(1, 0x10));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "loop") == 0) {
		loop_frame[0] = (uintptr_t)loop_frame;
		loop_frame[1] = (uintptr_t)ds_outer;
		printf("astray %ld\n", ds_astray(1, (uintptr_t)loop_frame));
		return 0;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: dyn_stack N [FIFO] | lost | loop\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	for (long i = 0; i < n; i++)
		sum += ds_outer(i);
	printf("sum %ld\n", sum);
	fflush(stdout);
	return argc == 3 ? wait_fifo(argv[2]) : 0;
}
