/*
 * many_funcs.c - a workload of 128 functions for the uprobe_multi tests
 * (qa/170, qa/171: a large uprobe set on one link, issue 15).
 *
 *	many_funcs [R]		calls uf_<hex digit><octal digit> (uf_00 ..
 *				uf_f7, the I-th in that order) R * (I % 5 + 1)
 *				times, each call with an argument of its own
 *				(x), and each returns x + 1000; after each call
 *				of uf_00, the mark many_funcs:sem, which a
 *				semaphore guards: it fires only while a probe is
 *				on it.  Prints "uf_NN CALLS" per function and
 *				"sem FIRED" (the marks that fired): the control.
 *	many_funcs -wait [R]	the same, once a line is read from stdin; prints
 *				its pid first (for process(PID) probes)
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

unsigned short many_funcs_sem_semaphore __attribute__((section(".probes"))) = 0;
static volatile long sink;

#define F(K) NOINLINE long uf_##K(long x); NOINLINE long uf_##K(long x) { sink += x; return x + 1000; }
#define F8(D) F(D##0) F(D##1) F(D##2) F(D##3) F(D##4) F(D##5) F(D##6) F(D##7)
F8(0) F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7)
F8(8) F8(9) F8(a) F8(b) F8(c) F8(d) F8(e) F8(f)

#define E(K) { uf_##K, "uf_" #K },
#define E8(D) E(D##0) E(D##1) E(D##2) E(D##3) E(D##4) E(D##5) E(D##6) E(D##7)
static const struct {
	long (*fn)(long);
	const char *name;
} funcs[] = {
	E8(0) E8(1) E8(2) E8(3) E8(4) E8(5) E8(6) E8(7)
	E8(8) E8(9) E8(a) E8(b) E8(c) E8(d) E8(e) E8(f)
};
#define NFUNCS (int)(sizeof(funcs) / sizeof(funcs[0]))

int main(int argc, char **argv)
{
	long x = 1, fired = 0;
	int rounds, a = 1;
	char line[16];

	if (argc > 1 && strcmp(argv[1], "-wait") == 0) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		a = 2;
	}
	rounds = argc > a ? atoi(argv[a]) : 1;
	for (int i = 0; i < NFUNCS; i++) {
		int calls = rounds * (i % 5 + 1);

		for (int k = 0; k < calls; k++) {
			if (funcs[i].fn(x) != x + 1000)
				return 2;
			x += 7;
			if (i == 0 && many_funcs_sem_semaphore) {
				STAP_PROBE1(many_funcs, sem, x);
				fired++;
			}
		}
		printf("%s %d\n", funcs[i].name, calls);
	}
	printf("sem %ld\n", fired);
	return 0;
}
